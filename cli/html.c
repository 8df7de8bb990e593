/* SPDX-License-Identifier: MIT */
/*
 * The HTML and SVG of `orrery report` (cli/html.h).  Every chart is an inline <svg>
 * with a <title> per mark for its tooltip, so that the page needs no script and no
 * network: it opens from a file on any machine.
 */
#include <math.h>
#include <string.h>

#include "cli.h"
#include "html.h"
#include "banned.h"

#define ROW_PX   18
#define LABEL_PX 150

void html_text(FILE *f, const char *s)
{
	while (s && *s) {
		size_t n = orr_utf8_len(s);

		if (!n) { /* not UTF-8 */
			fputs("\xef\xbf\xbd", f);
			s++;
			continue;
		}
		switch (*s) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
				fputc(' ', f);
			else
				fwrite(s, 1, n, f);
		}
		s += n;
	}
}

/*
 * An axis is drawn only up to a finite maximum of at least AXIS_MIN: below, a tick would
 * be subnormal or 0 and value / max would overflow, so such a maximum is drawn as 0 (an
 * empty chart, as a series of zeros is).  Each axis has at most MAX_TICKS ticks, counted,
 * so that no value can make a tick loop endless.
 */
#define AXIS_MIN  1e-290
#define MAX_TICKS 24

/* max, or 0 when an axis cannot be drawn to it (not finite, or too small). */
static double axis_max(double max)
{
	return isfinite(max) && max >= AXIS_MIN ? max : 0;
}

/* v / max clamped to [0, 1] (NaN and values below 0 at 0, above max at 1). */
static double frac_of(double v, double max)
{
	double r = max > 0 ? v / max : 0;

	return r > 1 ? 1 : r > 0 ? r : 0;
}

static double total_of(const struct html_bar *b)
{
	double t = 0;

	for (size_t i = 0; i < b->nsegs; i++)
		t += b->segs[i].value > 0 ? b->segs[i].value : 0;
	return t;
}

void html_bars(FILE *f, const struct html_bar *bars, size_t n, double max, int width,
	       const char *unit)
{
	double plot = width - LABEL_PX - 70;

	for (size_t i = 0; i < n; i++)
		max = total_of(&bars[i]) > max ? total_of(&bars[i]) : max;
	max = axis_max(max);
	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%zu\" "
		"role=\"img\">\n",
		width, n * ROW_PX + 4);
	for (size_t i = 0; i < n; i++) {
		double x = LABEL_PX, y = (double)i * ROW_PX + 2;

		fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", LABEL_PX - 6, y + 13);
		html_text(f, bars[i].label);
		fputs("</text>\n", f);
		for (size_t k = 0; k < bars[i].nsegs; k++) {
			const struct html_seg *s = &bars[i].segs[k];
			double w = frac_of(s->value, max) * plot;

			if (w <= 0)
				continue;
			fprintf(f,
				"<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" "
				"fill=\"%s\"><title>",
				x, y, w, ROW_PX - 4, s->color);
			html_text(f, bars[i].tip ? bars[i].tip : bars[i].label);
			fputs(": ", f);
			html_text(f, s->name);
			fprintf(f, " %.3f %s</title></rect>\n", s->value, unit);
			x += w;
		}
		fprintf(f, "<text x=\"%.2f\" y=\"%.1f\">%.3f</text>\n", x + 4, y + 13,
			total_of(&bars[i]));
	}
	fputs("</svg>\n", f);
}

void html_legend(FILE *f, const char *const *names, const char *const *colors, size_t n)
{
	fputs("<div class=\"legend\">", f);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "<span><i style=\"background:%s\"></i>", colors[i]);
		html_text(f, names[i]);
		fputs("</span>", f);
	}
	fputs("</div>\n", f);
}

/*
 * A round tick interval: 1, 2 or 5 times a power of ten, about total / parts; 0 (no
 * ticks) when total is not a drawable axis maximum.
 */
static double tick_of(double total, double parts)
{
	double raw = axis_max(total) / parts, p, tick;

	if (!(raw > 0))
		return 0;
	p = pow(10, floor(log10(raw)));
	tick = raw / p < 2 ? p : raw / p < 5 ? 2 * p : 5 * p;
	return isnormal(tick) ? tick : 0;
}

/* The number of ticks from 0 to total every tick, at most MAX_TICKS. */
static int ticks_of(double total, double tick)
{
	int n = 0;

	while (tick > 0 && n < MAX_TICKS && (double)n * tick / total <= 1.0001)
		n++;
	return n;
}

void html_timeline(FILE *f, const struct html_span *s, size_t n, double total, int width,
		   const char *unit)
{
	double plot = width - 20, tick;
	int nticks;

	total = axis_max(total);
	tick = tick_of(total, 8);
	nticks = ticks_of(total, tick);

	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"40\" "
		"role=\"img\">\n",
		width);
	for (size_t i = 0; i < n && total > 0; i++) {
		double x = 10 + frac_of(s[i].start, total) * plot;
		double w = frac_of(s[i].length, total) * plot;

		if (w <= 0)
			continue;
		fprintf(f,
			"<rect x=\"%.2f\" y=\"2\" width=\"%.2f\" height=\"20\" fill=\"%s\">"
			"<title>",
			x, w, s[i].color);
		html_text(f, s[i].name);
		fprintf(f, ": %.3f %s at %.3f</title></rect>\n", s[i].length, unit, s[i].start);
	}
	for (int k = 0; k < nticks; k++)
		fprintf(f, "<text x=\"%.2f\" y=\"36\" text-anchor=\"middle\">%g</text>\n",
			10 + frac_of(k * tick, total) * plot, k * tick);
	fputs("</svg>\n", f);
}

/* The largest finite y of lines, or 0 when an axis cannot be drawn to it. */
static double ymax_of(const struct html_line *lines, size_t n, size_t npoints)
{
	double ymax = 0;

	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < npoints; k++)
			if (isfinite(lines[i].y[k]) && lines[i].y[k] > ymax)
				ymax = lines[i].y[k];
	return axis_max(ymax);
}

void html_lines(FILE *f, const struct html_line *lines, size_t n, size_t npoints, double xmax,
		int width, const char *xunit, const char *yunit)
{
	const int height = 160, left = 60, bottom = 20;
	double plot_w = width - left - 10, plot_h = height - bottom - 8;
	double ymax = ymax_of(lines, n, npoints), ytick = tick_of(ymax, 4), xtick;
	int nyticks = ticks_of(ymax, ytick), nxticks;

	xmax = axis_max(xmax);
	xtick = tick_of(xmax, 8);
	nxticks = ticks_of(xmax, xtick);
	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"role=\"img\">\n",
		width, height);
	for (int k = 0; k < nyticks; k++) {
		double py = 8 + plot_h - frac_of(k * ytick, ymax) * plot_h;

		fprintf(f,
			"<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>"
			"<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g %s</text>\n",
			left, width - 10, py, py, left - 4, py + 4, k * ytick, yunit);
	}
	for (int k = 0; k < nxticks; k++)
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g %s</text>\n",
			left + frac_of(k * xtick, xmax) * plot_w, height - 4, k * xtick, xunit);
	for (size_t i = 0; i < n && ymax > 0 && npoints > 1; i++) {
		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"",
			lines[i].color);
		for (size_t k = 0; k < npoints; k++)
			fprintf(f, "%s%.1f,%.1f", k ? " " : "",
				left + (double)k / (double)(npoints - 1) * plot_w,
				8 + plot_h - frac_of(lines[i].y[k], ymax) * plot_h);
		fputs("\"><title>", f);
		html_text(f, lines[i].name);
		fputs("</title></polyline>\n", f);
	}
	fputs("</svg>\n", f);
}
