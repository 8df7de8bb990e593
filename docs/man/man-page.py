#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes a man page from what `orrery [COMMAND] --help` prints.

    man-page.py ORRERY [COMMAND] OUT.1

The help text is orrery's own layout: "usage:" lines (continued by indented lines),
then blocks separated by blank lines; a block of unindented lines is a paragraph, a
block of indented lines a two-column list (a term, two or more spaces, its
description; deeper-indented lines continue the description, a term alone on its line
is continued by the next line at the same indent).  The top page (no COMMAND) lists
the commands; each command's page points back to it and to docs/orrery-COMMAND.md.
"""
import re
import subprocess
import sys


def roff(text):
    """Escapes text for a roff line: backslashes, hyphens, a leading dot or quote."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    if text.startswith((".", "'")):
        text = "\\&" + text
    return text


def indent(line):
    return len(line) - len(line.lstrip(" "))


def blocks(lines):
    block = []
    for line in lines:
        if line.strip():
            block.append(line.rstrip())
        elif block:
            yield block
            block = []
    if block:
        yield block


def split_term(line, base, column):
    """A list line's term and description: split at two or more spaces, or at the
    block's description column where a long term leaves only one."""
    body = line.strip()
    m = re.match(r"(\S(?:.*?\S)?)(?: {2,}(.*))?$", body)
    if m.group(2) is None and column and len(line) > column and \
            line[column - 1] == " " and line[column] != " ":
        return line[base:column].strip(), line[column:].strip()
    return m.group(1), m.group(2) or ""


def entries(block):
    """The (term, description) pairs of an indented block."""
    base = indent(block[0])
    columns = [m.start(2) for m in (re.match(r"( *\S(?:.*?\S)? {2,})(\S)", line)
                                    for line in block if indent(line) <= base) if m]
    column = max(set(columns), key=columns.count) if columns else 0
    out = []
    for line in block:
        if indent(line) <= base:
            term, desc = split_term(line, base, column)
            if out and not out[-1][1]:
                out[-1][0] += " " + term
                out[-1][1] = desc
            else:
                out.append([term, desc])
        else:
            out[-1][1] = (out[-1][1] + " " + line.strip()).strip()
    return out


def commands(orrery):
    """Each command's one-line description, from the list `orrery --help` prints."""
    text = run([orrery, "--help"])
    listed = text.split("commands:\n", 1)[1].split("\n\n", 1)[0]
    return {t: d for t, d in entries(listed.splitlines())}


def run(argv):
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout


def page(orrery, command):
    argv = [orrery] + ([command] if command else []) + ["--help"]
    lines = run(argv).splitlines()
    version = run([orrery, "--version"]).strip()

    synopsis = []
    while lines and lines[0].strip():
        line = lines.pop(0)
        if line.startswith("usage: ") or line.strip().startswith("orrery"):
            synopsis.append(line.strip().removeprefix("usage: "))
        else:
            synopsis[-1] += " " + line.strip()
    body = list(blocks(lines))
    summary = " ".join(body[0]) if body and indent(body[0][0]) == 0 else ""
    name = "orrery" + ("-" + command if command else "")
    what = commands(orrery)[command] if command else summary.rstrip(".")

    out = ['.\\" Generated from "%s --help" by docs/man/man-page.py; do not edit.'
           % " ".join(argv[:-1]).replace(orrery, "orrery"),
           '.TH %s 1 "" "%s" "orrery manual"' % (name.upper(), version),
           ".SH NAME", "%s \\- %s" % (roff(name), roff(what[:1].lower() + what[1:])),
           ".SH SYNOPSIS"]
    for form in synopsis:
        words = form.split(" ", 2 if command else 1)
        head = " ".join(words[:2 if command else 1])
        out += [".PP", "\\fB%s\\fR %s" % (roff(head), roff(" ".join(words[len(head.split()):])))]
    out += [".SH DESCRIPTION"]
    for block in body:
        if indent(block[0]) == 0 and block[0].endswith(":") and len(block) > 1 and \
                indent(block[1]) > 0:
            out += [".SH " + roff(block[0][:-1].upper())]
            block = block[1:]
        elif indent(block[0]) == 0:
            out += [".PP", roff(" ".join(b.strip() for b in block))]
            continue
        for term, desc in entries(block):
            out += [".TP", "\\fB%s\\fR" % roff(term), roff(desc)]
    out += [".SH SEE ALSO"]
    if command:
        out += ["\\fBorrery\\fR(1); docs/orrery\\-%s.md in orrery's source tree, which"
                " describes every field of the command's output." % roff(command)]
    else:
        out += ["\\fBorrery\\-COMMAND\\fR(1) for each command; README.md and docs/ in"
                " orrery's source tree."]
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: man-page.py ORRERY [COMMAND] OUT.1")
    orrery, out = sys.argv[1], sys.argv[-1]
    command = sys.argv[2] if len(sys.argv) == 4 else None
    with open(out, "w", encoding="utf-8") as f:
        f.write(page(orrery, command))


if __name__ == "__main__":
    main()
