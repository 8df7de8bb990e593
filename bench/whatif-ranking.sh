#!/bin/bash
# How well `orrery whatif` ranks layouts against measured runs: bench/whatif-ranking.py
# (its --help) with the system's Python, which needs nothing beyond its standard library.
exec /usr/bin/python3 "$(dirname "$0")/whatif-ranking.py" "$@"
