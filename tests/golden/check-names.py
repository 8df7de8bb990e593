#!/usr/bin/env python3
# Checks what orrery prints when names in a trace (or paths) hold control characters or
# bytes that are not UTF-8 (docs/limits.md, "Names and text output"):
#   check-names.py text FILE   valid UTF-8; no control character but newline and tab
#                              (C0, DEL, C1), no bidirectional override or line separator
#   check-names.py json FILE   valid UTF-8 and JSON, with no raw control character (they
#                              are all written \uNNNN)
#   check-names.py csv FILE    valid UTF-8 and CSV, every row as many fields as the header
#   check-names.py epipe ORRERY ARGS...  with SIGPIPE ignored and a closed pipe on
#                              standard output, orrery exits 1 and prints nothing
# Exit 0 when it holds, 1 with the reasons on stderr.  Standard library only.
import csv
import io
import json
import os
import signal
import subprocess
import sys

FORMAT = {0x2028, 0x2029} | set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A))


def bad_char(c, allowed):
    o = ord(c)
    return (o < 0x20 and c not in allowed) or 0x7F <= o <= 0x9F or o in FORMAT


def decode(path):
    data = open(path, "rb").read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        sys.exit(f"{path}: not UTF-8: {e}")


def check_text(text, allowed, where):
    for i, c in enumerate(text):
        if bad_char(c, allowed):
            sys.exit(f"{where}: control character U+{ord(c):04X} at {i}: "
                     f"{text[max(0, i - 20):i + 20]!r}")


def main():
    mode = sys.argv[1]
    if mode == "epipe":
        r, w = os.pipe()
        os.close(r)
        p = subprocess.run(sys.argv[2:], stdout=w, stderr=subprocess.PIPE,
                           preexec_fn=lambda: signal.signal(signal.SIGPIPE, signal.SIG_IGN),
                           restore_signals=False)
        os.close(w)
        if p.returncode != 1 or p.stderr:
            sys.exit(f"closed pipe: exit {p.returncode}, stderr {p.stderr!r}; "
                     "expected exit 1 and nothing")
        return
    path = sys.argv[2]
    text = decode(path)
    if mode == "text":
        check_text(text, "\n\t", path)
    elif mode == "json":
        check_text(text, "\n", path)
        try:
            doc = json.loads(text)
        except ValueError as e:
            sys.exit(f"{path}: invalid JSON: {e}")
        if not isinstance(doc, dict):
            sys.exit(f"{path}: not a JSON object")
    elif mode == "csv":
        rows = list(csv.reader(io.StringIO(text, newline=""), strict=True))
        if not rows:
            sys.exit(f"{path}: empty")
        for i, row in enumerate(rows):
            if len(row) != len(rows[0]):
                sys.exit(f"{path}: row {i}: {len(row)} fields, the header {len(rows[0])}")
    else:
        sys.exit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main()
