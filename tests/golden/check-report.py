#!/usr/bin/env python3
"""Checks a page `orrery report` wrote
    check-report.py PAGE.html [--png SHOT.png] [--replay REPLAY.json]

- one HTML document (doctype, html, head with a UTF-8 charset and a title, body), its
  tags balanced;
- self-contained: no <script>, no <link>, <img>, <iframe> or <object>, no src= or href=
  attribute, no url(...) in styles;
- every section, each chart section with marks when the trace has rank-steps: inline
  <svg> that are well-formed XML, every rect with finite, non-negative coordinates and
  a tooltip (title);
- with --replay (`orrery replay --format=json` of the same trace), the step-time chart
  shows each rank-step's measured and predicted time, in order, to the microsecond;
- with --png, a screenshot of it (a browser's) that is not blank: its pixels are not
  all one color.
"""
import html.parser
import json
import re
import struct
import sys
import xml.dom.minidom
import zlib

SECTIONS = ["steps", "breakdown", "skew", "idle", "critical-path", "kernels", "ops",
            "collectives"]
VOID = {"meta", "br", "hr", "img", "input", "link", "area", "base", "col", "embed", "source",
        "track", "wbr", "rect", "line", "path", "circle"}


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.ids, self.errors, self.tags = [], set(), [], {}

    def handle_starttag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        for k in ("src", "href"):
            if k in a:
                self.errors.append("<%s %s=%r>: loads something" % (tag, k, a[k]))
        if tag in ("script", "link", "img", "iframe", "object"):
            self.errors.append("<%s>: not self-contained" % tag)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append("</%s> closes <%s>" % (tag, self.stack[-1] if self.stack else ""))
            return
        self.stack.pop()


def png_not_blank(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("%s: not a PNG" % path)
    pos, idat, w, h = 8, b"", 0, 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    # rows start with a filter byte; a blank page has very few distinct bytes
    distinct = len(set(raw[i] for i in range(0, len(raw), 7)))
    if w < 100 or h < 100 or distinct < 16:
        sys.exit("%s: %dx%d, %d distinct values: blank" % (path, w, h, distinct))


def main(argv):
    text = open(argv[0], encoding="utf-8").read()
    if not text.startswith("<!DOCTYPE html>"):
        sys.exit("no doctype")
    p = Page()
    p.feed(text)
    p.close()
    if p.errors:
        sys.exit("; ".join(p.errors[:5]))
    if p.stack:
        sys.exit("unclosed: %s" % p.stack)
    if not re.search(r'<meta charset="utf-8">', text) or "<title>" not in text:
        sys.exit("no charset or title")
    if re.search(r"url\(", text):
        sys.exit("a url() in the styles")
    missing = [s for s in SECTIONS if s not in p.ids]
    if missing:
        sys.exit("sections missing: %s" % missing)
    svgs = re.findall(r"<svg .*?</svg>", text, re.S)
    if len(svgs) < 5:
        sys.exit("only %d charts" % len(svgs))
    for s in svgs:
        doc = xml.dom.minidom.parseString(s)
        for r in doc.getElementsByTagName("rect"):
            if not r.getElementsByTagName("title"):
                sys.exit("a mark without a tooltip")
    for r in re.finditer(r"<rect ([^>]*)>", text):
        for k, v in re.findall(r'(x|y|width|height)="([^"]*)"', r.group(1)):
            try:
                f = float(v)
            except ValueError:
                sys.exit("rect %s=%r" % (k, v))
            if not (f >= 0 and f < 1e7):
                sys.exit("rect %s=%r" % (k, v))
    parts = re.split(r'<h2 id="', text)
    section = {p.split('"', 1)[0]: p for p in parts[1:]}
    if re.search(r"[1-9][0-9]* rank-steps?", text.split("</p>", 1)[0]):
        for s in ("steps", "breakdown", "skew", "idle", "critical-path"):
            if "<rect" not in section[s]:
                sys.exit("section %s has no marks" % s)
    if "--replay" in argv:
        rep = json.load(open(argv[argv.index("--replay") + 1]))
        want = []
        for r in rep["ranks"]:
            for s in r["steps"]:
                want += [s["measured_ns"] / 1e6, s["predicted_ns"] / 1e6]
        got = [float(v) for v in re.findall(r" ([0-9.]+) ms</title>", section["steps"])]
        if len(got) != len(want) or any(abs(g - w) > 0.0006 for g, w in zip(got, want)):
            sys.exit("step times %r, replay says %r" % (got[:6], want[:6]))
    if "--png" in argv:
        png_not_blank(argv[argv.index("--png") + 1])


if __name__ == "__main__":
    main(sys.argv[1:])
