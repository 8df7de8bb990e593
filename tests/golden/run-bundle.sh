#!/bin/bash
# `make bundle` (scripts/bundle.sh) from a moved folder with an empty environment, run
# from the source root with $ORRERY set:
#
#   run-bundle.sh TRACER_BUILT
#
# Bundles this build into the test's own folder, extracts it under another name, and
# checks: --version, info (the same output as the build's orrery), that every library
# orrery, the tracer and liblapacke need but glibc's (and libcupti) is loaded from the
# bundle (ldd, and the loader's own log of a fit, which dlopens liblapacke), that the
# bundle's libraries need nothing it lacks, that whatif under a launcher says in one line
# that the bundle has no MPI module, that `orrery record` hands the command the
# bundle's tracer and Python module, found from its own executable, and that python3
# imports the bundle's orrery package (python/orrery) and reads a trace with it.
set -uo pipefail

built=${1:?usage: $0 yes|no}
# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

build=${ORR_BUILD_ROOT:-$(cd "$(dirname "$orrery")/.." && pwd)}
sample=$PWD/traces/samples/tiny-2rank
command -v ldd >/dev/null && command -v readelf >/dev/null ||
	{ echo "skipped: ldd or readelf missing" >&2; exit 77; }

BUNDLE_GZIP_LEVEL=1 bash scripts/bundle.sh "$build" "$work/out" >"$work/bundle.out" 2>"$work/bundle.err" ||
	{ cat "$work/bundle.err" >&2; fail "scripts/bundle.sh failed"; }
tarball=$(tail -n 1 "$work/bundle.out")
[[ $tarball == "$work"/out/orrery-*.tar.gz && -f $tarball ]] ||
	fail "the last line printed is not the tarball: '$tarball'"
mkdir "$work/x"
tar -C "$work/x" -xzf "$tarball" || fail "cannot extract $tarball"
top=("$work"/x/*)
((${#top[@]} == 1)) || fail "the tarball holds ${#top[@]} entries at its top, not one folder"
d=$work/moved/elsewhere
mkdir -p "$work/moved"
mv "${top[0]}" "$d"

# Runs the bundled orrery with an empty environment, from $work (nothing of the build's).
brun() {
	echo "+ (bundle) orrery $*" >&2
	(cd "$work" && env -i PATH=/usr/bin:/bin "$d/bin/orrery" "$@") >"$work/out.txt" 2>"$work/err.txt"
	rc=$?
}

brun --version
[[ $rc == 0 && $(cat "$work/out.txt") == "$("$orrery" --version)" ]] ||
	fail "--version from the bundle: rc $rc, '$(cat "$work/out.txt")'"
brun info "$sample"
"$orrery" info "$sample" >"$work/info-build.txt" 2>&1
[[ $rc == 0 ]] && cmp -s "$work/out.txt" "$work/info-build.txt" ||
	{ diff "$work/info-build.txt" "$work/out.txt" | head >&2; fail "info from the bundle differs"; }

glibc='^(linux-vdso|ld-linux|libc|libm|libmvec|libpthread|libdl|librt|libutil|libresolv)[.-]'
# Every library FILE loads (by ldd) lies in the bundle, but glibc's and libcupti; with
# "direct", only those FILE names itself (libcupti's own needs are the target's).
ldd_inside() {
	local soname arrow path needed
	needed=$(readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
	ldd "$1" >"$work/ldd.txt" || fail "ldd $1 failed"
	while read -r soname arrow path _; do
		[[ $arrow == "=>" ]] || continue
		[[ $soname =~ $glibc || $soname == libcupti.so* ]] && continue
		[[ ${2-} == direct ]] && ! grep -qxF "$soname" <<<"$needed" && continue
		[[ $path == "$d"/* ]] || { cat "$work/ldd.txt" >&2; fail "$(basename "$1"): $soname is $path"; }
	done <"$work/ldd.txt"
}
ldd_inside "$d/bin/orrery"
for f in "$d"/lib/*.so*; do
	while read -r n; do
		[[ $n =~ $glibc || -e $d/lib/$n ]] || fail "$(basename "$f") needs $n, not in the bundle"
	done < <(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
done
[[ -f $d/lib/liblapacke.so.3 ]] || fail "no liblapacke.so.3 in the bundle"
[[ -f $d/lib/libigraph.so.3 ]] || fail "no libigraph.so.3 in the bundle"
[[ -f $d/share/orrery/python/orrery_record.py ]] || fail "no orrery_record module in the bundle"

# A fit loads liblapacke (dlopen) and its BLAS: the loader says from where.
(cd "$work" && env -i PATH=/usr/bin:/bin LD_DEBUG=libs "$d/bin/orrery" fit "$sample") \
	>/dev/null 2>"$work/ld.txt" || fail "fit from the bundle failed"
grep -q "calling init: $d/.*/liblapacke.so.3" "$work/ld.txt" ||
	fail "fit did not load the bundle's liblapacke"
sed -n 's/.*calling init: //p' "$work/ld.txt" | sort -u | while read -r lib; do
	[[ $lib == "$d"/* || $(basename "$lib") =~ $glibc ]] || fail "fit loaded $lib"
done || exit 1

# whatif under a launcher: the bundle has no MPI module, and says so in one line.
(cd "$work" && env -i PATH=/usr/bin:/bin OMPI_COMM_WORLD_SIZE=2 "$d/bin/orrery" whatif \
	--gpu a100-80gb-sxm --layers 8 --hidden 1024 --heads 16 --seq 1024 --global-batch 32 \
	--gpus 4-8 --jobs 1) >/dev/null 2>"$work/err.txt"
rc=$?
why="this orrery has none"
[[ -e ${orrery%/*}/orrery-mpi.so ]] || why="built without MPI"
[[ $rc == 1 && $(wc -l <"$work/err.txt") == 1 ]] && grep -q "$why" "$work/err.txt" ||
	{ cat "$work/err.txt" >&2; fail "whatif under a launcher from the bundle: rc $rc"; }

if [[ $built == yes ]]; then
	t=$d/lib/orrery/liborrery-tracer.so
	[[ -f $t ]] || fail "no tracer in the bundle"
	ldd_inside "$t" direct
	brun record -o "$work/run" -- env
	[[ $rc == 1 ]] || fail "record -- env: rc $rc (nothing used CUDA: 1)"
	grep -qx "CUDA_INJECTION64_PATH=$t" "$work/out.txt" ||
		{ cat "$work/out.txt" "$work/err.txt" >&2; fail "record did not inject the bundle's tracer"; }
	grep -qx "PYTHONPATH=$d/share/orrery/python" "$work/out.txt" ||
		{ cat "$work/out.txt" >&2; fail "record did not put the bundle's module on PYTHONPATH"; }
	if [[ -x /usr/bin/python3 ]]; then
		brun record -o "$work/run2" -- python3 -c \
			'import orrery_record; print(orrery_record.__file__)'
		grep -qx "$d/share/orrery/python/orrery_record.py" "$work/out.txt" ||
			{ cat "$work/out.txt" "$work/err.txt" >&2; fail "python3 did not import the bundle's module"; }
	fi
else
	[[ ! -e $d/lib/orrery ]] || fail "a tracer in the bundle of a build without one"
	brun record -o "$work/run" -- true
	[[ $rc == 1 ]] && grep -q "built without CUPTI" "$work/err.txt" ||
		fail "record from a bundle without the tracer: rc $rc"
fi

# The Python package from the bundle, with an empty environment: it loads the bundle's
# liborrery and, through its RPATH, the libraries liborrery needs from lib/.  A fit
# loads the bundle's liblapacke (by dlopen), whose own BLAS and LAPACK the loader looks
# for as usual (no RPATH of the caller applies to a dlopen's needs: docs/limits.md).
[[ -f $d/share/orrery/python/orrery/__init__.py ]] || fail "no orrery package in the bundle"
# A sanitizer build's liborrery needs its runtime loaded first, which python3 does not do
# (make asan runs this test too; no one ships such a bundle).
sanitized=$(compgen -G "$d/lib/lib[atu]san.so*" | head -n 1)
[[ -n $sanitized ]] &&
	echo "the Python part left out: $(basename "$sanitized") in the bundle (a sanitizer build)" >&2
if [[ -x /usr/bin/python3 && -z $sanitized ]]; then
	read_it='
import sys
sys.path.insert(0, sys.argv[1])
import orrery
t = orrery.load(sys.argv[2])
s = t.summary()
rows = s if isinstance(s, list) else s.to_dict("records")
print(orrery._lib.lib._name)
print([(int(r["rank"]), int(r["step"]), int(r["step_ns"])) for r in rows])
if len(sys.argv) > 3:
    print(t.fit(0))'
	(cd "$work" && env -i PATH=/usr/bin:/bin LD_DEBUG=libs python3 -c "$read_it" \
		"$d/share/orrery/python" "$sample") >"$work/py.txt" 2>"$work/py-ld.txt" ||
		{ tail "$work/py-ld.txt" >&2; fail "python3 -c 'import orrery; ...' from the bundle failed"; }
	[[ $(head -n 1 "$work/py.txt") == "$d/lib/liborrery.so.0" ]] ||
		fail "the bundle's orrery package loaded $(head -n 1 "$work/py.txt")"
	# What python3 loads by itself (the standard modules the package imports: ctypes.util
	# imports shutil, which loads libbz2 and liblzma for its archives; and pandas, which
	# summary() returns tables of) may come from anywhere; every library the bundle holds
	# that the package made it load must be the bundle's.
	(cd "$work" && env -i PATH=/usr/bin:/bin LD_DEBUG=libs python3 -c '
import ctypes, ctypes.util, errno, math, os
try:
    import pandas
except ImportError:
    pass') 2>"$work/py-base.txt" >/dev/null
	sed -n 's/.*calling init: //p' "$work/py-ld.txt" | sort -u | while read -r lib; do
		n=$(basename "$lib")
		[[ -e $d/lib/$n ]] || continue
		grep -q "calling init: .*/$n\$" "$work/py-base.txt" && continue
		[[ $lib == "$d"/* ]] || fail "the bundle's orrery package loaded $lib"
	done || exit 1
	# The same summary and fit as the source tree's package over the build's liborrery.
	(cd "$work" && env -i PATH=/usr/bin:/bin LD_DEBUG=libs python3 -c "$read_it" \
		"$d/share/orrery/python" "$sample" fit) >"$work/py.txt" 2>"$work/py-ld.txt" ||
		{ tail "$work/py-ld.txt" >&2; fail "Trace.fit() from the bundle failed"; }
	grep -q "calling init: $d/lib/liblapacke.so.3" "$work/py-ld.txt" ||
		fail "Trace.fit() did not load the bundle's liblapacke"
	env ORRERY_LIB="$build/lib/liborrery.so.0" /usr/bin/python3 -c "$read_it" "$PWD/python" "$sample" \
		fit >"$work/py-build.txt" 2>&1 || { cat "$work/py-build.txt" >&2; fail "the build's package failed"; }
	[[ $(sed 1d "$work/py.txt") == "$(sed 1d "$work/py-build.txt")" &&
		$(sed -n 2p "$work/py.txt") == *'(0, 10, '* ]] ||
		{ diff "$work/py-build.txt" "$work/py.txt" >&2; fail "the bundle's package gives another summary or fit"; }
fi
echo "ok: $(basename "$tarball") runs from a moved folder with an empty environment"
