/* SPDX-License-Identifier: MIT */
/*
 * cli/html.h — the little HTML and SVG writer of `orrery report` (cli/html.c): text
 * escaped for HTML, and charts drawn as inline SVG (no script, no external file).
 */
#ifndef ORRERY_CLI_HTML_H
#define ORRERY_CLI_HTML_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* s with & < > " ' escaped, and bytes that are not UTF-8 as U+FFFD. */
void html_text(FILE *f, const char *s);

/* A horizontal bar chart: one row per label, each row's segments stacked left to right. */
struct html_seg {
	double value;
	const char *color; /* CSS color */
	const char *name;  /* of the segment, for its tooltip */
};

struct html_bar {
	const char *label;
	const char *tip; /* names the row in tooltips instead of label; NULL: label */
	const struct html_seg *segs;
	size_t nsegs;
};

/*
 * bars[0..n) as an SVG of width px, one 18 px row each, scaled to the largest row
 * total (or to max when it is larger); unit names the values in the tooltips ("ms").
 */
void html_bars(FILE *f, const struct html_bar *bars, size_t n, double max, int width,
	       const char *unit);
/* A legend: one colored square and name per segment kind. */
void html_legend(FILE *f, const char *const *names, const char *const *colors, size_t n);

/*
 * One bar along a time window [0, total): segments at their offsets (start, length),
 * colored by kind, as an SVG of width px and 28 px high, ticks every round interval (at
 * most 24; none, and no segment, when total is not finite or below 1e-290).
 */
struct html_span {
	double start, length;
	const char *color, *name;
};
void html_timeline(FILE *f, const struct html_span *s, size_t n, double total, int width,
		   const char *unit);

/*
 * Lines over npoints evenly spaced x values from 0 to xmax, each with its name as a
 * tooltip, scaled to the largest finite y (values below 0 and NaN drawn at 0, infinity
 * at the top); an SVG of width px and 160 px high, with at most 24 y and x ticks each in
 * yunit and xunit.  A largest y below 1e-290 (or none above 0) draws no line, as zeros.
 */
struct html_line {
	const double *y;
	const char *color, *name;
};
void html_lines(FILE *f, const struct html_line *lines, size_t n, size_t npoints, double xmax,
		int width, const char *xunit, const char *yunit);

#endif
