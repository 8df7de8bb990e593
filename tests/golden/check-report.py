#!/usr/bin/env python3
"""Checks a page `orrery report` wrote (check-report.py PAGE.html [--png SHOT.png]):

- one HTML document (doctype, html, head with a UTF-8 charset and a title, body), its
  tags balanced;
- self-contained: no <script>, no <link>, <img>, <iframe> or <object>, no src= or href=
  attribute, no url(...) in styles;
- every section, each with its charts: inline <svg> that are well-formed XML with marks
  (rect) and a tooltip (title) on each rect;
- with --png, a screenshot of it (a browser's) that is not blank: its pixels are not
  all one color.
"""
import html.parser
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
    if "--png" in argv:
        png_not_blank(argv[argv.index("--png") + 1])


if __name__ == "__main__":
    main(sys.argv[1:])
