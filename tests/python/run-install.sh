#!/bin/bash
# `pip install ./python` on a checkout after `make build`, then `import orrery` from another
# folder with neither ORRERY_LIB nor LD_LIBRARY_PATH set: the package loads the library
# that setup.py recorded (docs/python.md, "Install").  The checkout's python/ is copied
# first, with the build beside it as make build leaves it (ORRERY_LIB unset: setup.py
# finds ../build/lib), so that pip's in-tree build writes nothing into the source tree.
# Skips (77) where no python3 has pip, setuptools and wheel.
#   run-install.sh PYTHON SOURCE_ROOT      (ORR_BUILD_ROOT: the build directory)
set -u

py=$1 src=$2
build=${ORR_BUILD_ROOT:?ORR_BUILD_ROOT is not set (run through meson test)}

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# the build's python3, else Debian's (a python3 of pyenv or a venv may lack wheel, without
# which setuptools before 70.1 cannot build offline)
for cand in "$py" /usr/bin/python3 ""; do
	[[ -z $cand ]] && {
		echo "skipped: neither $py nor /usr/bin/python3 has pip, setuptools and wheel (Debian: python3-pip python3-setuptools python3-wheel)" >&2
		exit 77
	}
	"$cand" -c 'import setuptools, wheel, pip' 2>/dev/null && break
done
py=$cand

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$src/python" "$work/python"
rm -rf "$work/python/orrery/_where.py" "$work/python/build" "$work/python/"*.egg-info
ln -s "$build" "$work/build"

echo "+ $py -m pip install --no-build-isolation --target SITE ./python" >&2
env -u ORRERY_LIB "$py" -m pip install --no-build-isolation --no-deps --no-index --disable-pip-version-check \
	--target "$work/site" "$work/python" >"$work/pip.log" 2>&1 ||
	{
		cat "$work/pip.log" >&2
		fail "pip install ./python"
	}
[[ -f $work/site/orrery/_where.py ]] || fail "the installed package has no _where.py"

# from another folder, with the library found only through what setup.py recorded
cd "$work" || fail "cd $work"
env -u ORRERY_LIB -u LD_LIBRARY_PATH PYTHONPATH="$work/site" "$py" - \
	"$src/traces/samples/tiny-2rank" "$work/site" "$build" <<'EOF' || fail "import orrery"
import os, sys
import orrery
from orrery import _where

trace, site, build = sys.argv[1:]
where = os.path.realpath(orrery.__file__)
assert where.startswith(os.path.realpath(site)), "orrery imported from %s" % where
lib = os.path.realpath(_where.LIB)
assert lib.startswith(os.path.realpath(build)), "setup.py recorded %r" % _where.LIB
s = orrery.load(trace).summary()
rows = s.to_dict("records") if hasattr(s, "to_dict") else s
assert len(rows) == 6, "%d rank-steps, expected 6" % len(rows)
assert sorted({r["rank"] for r in rows}) == [0, 1], rows
assert all(r["step_ns"] > 0 for r in rows), rows
print(s)
EOF
echo "ok: pip install ./python, then orrery.load(...).summary() with the recorded library"
