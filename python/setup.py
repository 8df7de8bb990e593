"""Installs the orrery package (pure Python over liborrery, no compiler needed).

It records where liborrery.so.0 is, for the package to load it: $ORRERY_LIB when set, else
the library `make build` made beside this folder (../build/lib), else none (the package
then looks beside itself, then in the system's library path: after `meson install`).
"""
import os

from setuptools import setup

here = os.path.dirname(os.path.abspath(__file__))
lib = os.environ.get("ORRERY_LIB") or os.path.join(here, "..", "build", "lib", "liborrery.so.0")
lib = os.path.abspath(lib) if os.path.exists(lib) else ""
with open(os.path.join(here, "orrery", "_where.py"), "w") as f:
    f.write('"""Written by setup.py: the liborrery this package was installed against."""\n')
    f.write("LIB = %r\n" % lib)

setup()
