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
			double w = max > 0 && s->value > 0 ? s->value / max * plot : 0;

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

/* A round tick interval: 1, 2 or 5 times a power of ten, about total / 8. */
static double tick_of(double total)
{
	double raw = total / 8, p;

	if (!(raw > 0))
		return 1;
	p = pow(10, floor(log10(raw)));
	return raw / p < 2 ? p : raw / p < 5 ? 2 * p : 5 * p;
}

void html_timeline(FILE *f, const struct html_span *s, size_t n, double total, int width,
		   const char *unit)
{
	double plot = width - 20, tick = tick_of(total);

	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"40\" "
		"role=\"img\">\n",
		width);
	for (size_t i = 0; i < n && total > 0; i++) {
		double x = 10 + s[i].start / total * plot, w = s[i].length / total * plot;

		if (w <= 0)
			continue;
		fprintf(f,
			"<rect x=\"%.2f\" y=\"2\" width=\"%.2f\" height=\"20\" fill=\"%s\">"
			"<title>",
			x, w, s[i].color);
		html_text(f, s[i].name);
		fprintf(f, ": %.3f %s at %.3f</title></rect>\n", s[i].length, unit, s[i].start);
	}
	for (double t = 0; total > 0 && t <= total * 1.0001; t += tick)
		fprintf(f, "<text x=\"%.2f\" y=\"36\" text-anchor=\"middle\">%g</text>\n",
			10 + t / total * plot, t);
	fputs("</svg>\n", f);
}

void html_lines(FILE *f, const struct html_line *lines, size_t n, size_t npoints, double xmax,
		int width, const char *xunit, const char *yunit)
{
	const int height = 160, left = 60, bottom = 20;
	double plot_w = width - left - 10, plot_h = height - bottom - 8, ymax = 0;
	double ytick, xtick = tick_of(xmax);

	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < npoints; k++)
			ymax = lines[i].y[k] > ymax ? lines[i].y[k] : ymax;
	ytick = tick_of(ymax * 2); /* about four lines */
	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"role=\"img\">\n",
		width, height);
	for (double y = 0; ymax > 0 && y <= ymax * 1.0001; y += ytick) {
		double py = 8 + plot_h - y / ymax * plot_h;

		fprintf(f,
			"<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>"
			"<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g %s</text>\n",
			left, width - 10, py, py, left - 4, py + 4, y, yunit);
	}
	for (double x = 0; xmax > 0 && x <= xmax * 1.0001; x += xtick)
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g %s</text>\n",
			left + x / xmax * plot_w, height - 4, x, xunit);
	for (size_t i = 0; i < n && ymax > 0 && npoints > 1; i++) {
		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"",
			lines[i].color);
		for (size_t k = 0; k < npoints; k++)
			fprintf(f, "%s%.1f,%.1f", k ? " " : "",
				left + (double)k / (double)(npoints - 1) * plot_w,
				8 + plot_h - fmax(0, lines[i].y[k]) / ymax * plot_h);
		fputs("\"><title>", f);
		html_text(f, lines[i].name);
		fputs("</title></polyline>\n", f);
	}
	fputs("</svg>\n", f);
}
