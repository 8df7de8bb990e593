#!/usr/bin/env python3
"""Runs orrery's notebooks as CI does (notebooks/README.md):

    python3 notebooks/run.py [NOTEBOOK.ipynb...]      (default: every notebook here)

from the repository root, with ORRERY and ORR_TRACE as the notebooks read them.  Each
notebook must be committed without outputs; each runs in a fresh kernel with nbclient,
and a cell that fails fails it.  Exit status 77 (skipped) when nbclient, pandas or
matplotlib is not installed.
"""
import glob
import os
import sys

try:
    import matplotlib  # noqa: F401
    import nbclient
    import nbformat
    import pandas  # noqa: F401
except ImportError as e:
    print("skipped: %s" % e, file=sys.stderr)
    sys.exit(77)


def run(path):
    nb = nbformat.read(path, as_version=4)
    for c in nb.cells:
        if c.cell_type == "code" and (c.get("outputs") or c.get("execution_count")):
            return "committed with outputs (clear them before committing)"
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": os.getcwd()}})
    try:
        client.execute()
    except Exception as e:  # noqa: BLE001 - a failing cell, or a kernel that died
        return str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
    return None


def main(argv):
    os.environ.setdefault("MPLBACKEND", "Agg")
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    paths = argv or sorted(glob.glob(os.path.join(os.path.dirname(__file__), "*.ipynb")))
    failed = 0
    for p in paths:
        why = run(p)
        print("%s: %s" % (p, "ok" if why is None else "FAILED: " + why), file=sys.stderr)
        failed += why is not None
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
