#!/bin/bash
# A relocatable orrery: one tarball that runs on a machine without orrery's Debian
# packages (a GPU node with only the NVIDIA driver, CUDA and PyTorch).  `make bundle`
# builds, then runs this; the tarball's path is the last line printed.
#
#   scripts/bundle.sh BUILD_DIR [OUT_DIR]      (OUT_DIR defaults to BUILD_DIR)
#
# BUNDLE_GZIP_LEVEL (1-9, default 6) trades the tarball's size for time (36 MB in 18 s at
# 6 against 40 MB in 5 s at 1 on a busy 2-core VM; the tests use 1).
#
# The tarball holds one folder, orrery-VERSION-ARCH/:
#   bin/orrery                          DT_RPATH $ORIGIN/../lib (cli/meson.build)
#   lib/*.so.*                          every library orrery needs but glibc's, with
#                                       their own needs: libarchive, simdjson, zstd,
#                                       protobuf-c, sqlite, libstdc++, ..., and liblapacke
#                                       with its BLAS and LAPACK (fit.c loads it by dlopen),
#                                       and libigraph (graph.c loads it to explain a cycle)
#   lib/orrery/liborrery-tracer.so      RUNPATH $ORIGIN/.. (tracer/meson.build), when the
#                                       build has the tracer
#   share/orrery/python/orrery_record.py
#   share/orrery/python/orrery/         the Python package over liborrery (python/orrery),
#                                       which loads ../../../lib/liborrery.so.0 (RPATH
#                                       $ORIGIN, lib/meson.build)
# `orrery record` finds the tracer and orrery_record relative to its own executable
# (cli/record-env.c), and puts share/orrery/python on the command's PYTHONPATH.
# Left out: glibc (the target needs glibc >= this machine's), libcupti and the CUDA
# libraries (those of the target's CUDA must be used), and whatif's MPI module
# (orrery-mpi.so, linked with this machine's OpenMPI, which a cluster's mpirun does not
# speak to): a bundled orrery runs whatif without a launcher only.
set -euo pipefail

die() {
	echo "bundle.sh: error: $*" >&2
	exit 1
}

(($# >= 1 && $# <= 2)) || die "usage: scripts/bundle.sh BUILD_DIR [OUT_DIR]"
build=$1
out=${2:-$1}
level=${BUNDLE_GZIP_LEVEL:-6}
[[ $level =~ ^[1-9]$ ]] || die "BUNDLE_GZIP_LEVEL must be 1 to 9, not '$level'"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
exe=$build/cli/orrery
tracer=$build/tracer/liborrery-tracer.so
python_module=$root/tracer/python/orrery_record.py
python_package=$root/python/orrery

[[ -x $exe ]] || die "no $exe: build orrery first (make build)"
if ! command -v ldd >/dev/null || ! command -v readelf >/dev/null; then
	die "ldd and readelf are needed (Debian: libc-bin, binutils)"
fi
dynamic=$(readelf -d "$exe")
[[ $dynamic =~ \(RPATH\)[^$'\n']*'$ORIGIN/../lib' ]] ||
	die "$exe has no RPATH \$ORIGIN/../lib (built before cli/meson.build set it): rebuild it"

version=$("$exe" --version | awk '{ print $NF; exit }')
[[ -n $version ]] || die "$exe --version printed nothing"
name=orrery-$version-$(uname -m)
mkdir -p "$out"
out=$(cd "$out" && pwd)
stage=$(mktemp -d "$out/.bundle-XXXXXX")
trap 'rm -rf "$stage"' EXIT
dir=$stage/$name
mkdir -p "$dir/bin" "$dir/lib" "$dir/share/orrery/python/orrery"

# glibc's own libraries, and CUDA's, which the target machine provides.
skip_lib() {
	case $1 in
	linux-vdso.so.* | ld-linux*.so.* | libc.so.* | libm.so.* | libmvec.so.* | libpthread.so.* | \
		libdl.so.* | librt.so.* | libutil.so.* | libresolv.so.* | libanl.so.* | libnss_*.so.* | \
		libBrokenLocale.so.* | libthread_db.so.* | libc_malloc_debug.so.*)
		return 0
		;;
	libcupti.so* | libcuda.so* | libcudart.so* | libnvidia-*.so* | libnvperf_*.so*)
		return 0
		;;
	esac
	return 1
}

# Copies into lib/ every library FILE needs, as this machine resolves it (by its soname).
copy_needs() {
	local soname arrow path
	while read -r soname arrow path _; do
		[[ $arrow == "=>" ]] || continue
		skip_lib "$soname" && continue
		[[ -f $path ]] || die "$1 needs $soname, which is not found here"
		[[ -e $dir/lib/$soname ]] || cp -L "$path" "$dir/lib/$soname"
	done < <(ldd "$1")
}

# The library the dynamic loader would open for SONAME (as dlopen("SONAME") does).
find_lib() {
	local cache
	cache=$(ldconfig -p)
	awk -v n="$1" '$1 == n && /x86-64|AArch64|aarch64/ { print $NF; exit }' <<<"$cache"
}

cp "$exe" "$dir/bin/orrery"
copy_needs "$exe"
lapacke=$(find_lib liblapacke.so.3)
[[ -n $lapacke ]] || die "liblapacke.so.3 is not installed (Debian: liblapacke)"
cp -L "$lapacke" "$dir/lib/liblapacke.so.3"
copy_needs "$lapacke"
# graph/graph.c loads libigraph (dlopen) to name the tasks of a replay's cycle.
igraph=$(find_lib libigraph.so.3)
[[ -n $igraph ]] || die "libigraph.so.3 is not installed (Debian: libigraph3)"
cp -L "$igraph" "$dir/lib/libigraph.so.3"
copy_needs "$igraph"
if [[ -f $tracer ]]; then
	mkdir -p "$dir/lib/orrery"
	cp "$tracer" "$dir/lib/orrery/"
	copy_needs "$tracer"
	has_tracer=yes
else
	has_tracer="no (this build has no CUPTI: orrery record will refuse)"
fi
# What the copied libraries need in turn (ldd above already followed them: this only
# checks that nothing outside glibc is missing from lib/).
for f in "$dir"/lib/*.so* "$dir"/lib/orrery/*.so; do
	[[ -f $f ]] || continue
	while read -r soname; do
		skip_lib "$soname" || [[ -e $dir/lib/$soname ]] ||
			die "$(basename "$f") needs $soname, which the bundle lacks"
	done < <(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
done
cp "$python_module" "$dir/share/orrery/python/"
# The package's sources only: not _where.py, which setup.py writes for an installed copy.
cp "$python_package"/__init__.py "$python_package"/_lib.py "$dir/share/orrery/python/orrery/"
dynamic=$(readelf -d "$dir/lib/liborrery.so.0")
[[ $dynamic =~ \(RPATH\)[^$'\n']*\[\$ORIGIN\] ]] ||
	die "$build/lib/liborrery.so.0 has no RPATH \$ORIGIN (built before lib/meson.build set it): rebuild it"
# The newest glibc symbol version any bundled file needs: the target's glibc must have it.
glibc=none
if command -v objdump >/dev/null; then
	versions=$(find "$dir" -type f \( -name '*.so*' -o -path '*/bin/*' \) -print0 |
		xargs -0 objdump -T 2>/dev/null | grep -o 'GLIBC_[0-9][0-9.]*' | sort -uV || true)
	glibc=${versions##*GLIBC_}
fi

tarball=$out/$name.tar.gz
tar -C "$stage" -cf - "$name" | gzip "-$level" >"$tarball.tmp"
mv "$tarball.tmp" "$tarball"
echo "bundle.sh: $(find "$dir/lib" -name '*.so*' | wc -l) libraries, tracer: $has_tracer," \
	"needs glibc >= $glibc; whatif's MPI module left out (whatif runs without a launcher)" >&2
echo "$tarball"
