#!/bin/bash
# Installs the Debian 12 packages orrery needs to build and test, if any are missing.
#   scripts/install-deps.sh           install what is missing (as root), or say how
#   scripts/install-deps.sh --check   only report what is missing
#   ... --with-torch                   also Debian's PyTorch (python3-torch, 1.13, CPU),
#                                      which the composed benchmarks' CPU tests run
#                                      (golden-compose-cpu-run, -cpu-shared, -autocast)
# Prints nothing and exits 0 when everything is installed.
set -euo pipefail

packages=(
	meson ninja-build pkg-config gcc g++ clang llvm clang-format
	libsimdjson-dev libarchive-dev libcmocka-dev libzstd-dev zlib1g-dev libigraph-dev
	libprotobuf-c-dev protobuf-c-compiler liblapacke-dev libopenblas-dev libsqlite3-dev
	python3 python3-pip python3-setuptools python3-wheel time libopenmpi-dev openmpi-bin
)

check=0
for arg in "$@"; do
	case $arg in
	--check) check=1 ;;
	--with-torch) packages+=(python3-torch) ;;
	*)
		echo "usage: $0 [--check] [--with-torch]" >&2
		exit 2
		;;
	esac
done

missing=()
for p in "${packages[@]}"; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[[ $status == "install ok installed" ]] || missing+=("$p")
done

((${#missing[@]} == 0)) && exit 0

if ((check)); then
	echo "missing Debian packages: ${missing[*]}" >&2
	exit 1
fi

if ((EUID != 0)); then
	echo "orrery needs these Debian packages; install them with:" >&2
	echo "sudo apt-get install -y ${missing[*]}" >&2
	exit 1
fi

echo "installing: ${missing[*]}" >&2
apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
