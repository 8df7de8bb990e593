#!/bin/bash
# Reads Chakra files with Chakra's own reader: its schema (schema/protobuf/et_def.proto)
# compiled by protoc, and its decoder (src/third_party/utils/protolib.py), from a checkout
# of mlcommons/chakra that you give (it is not part of orrery).
#
#   bench/chakra-reader.sh CHAKRA_CHECKOUT FILE.et...
#
# Needs Debian's protobuf-compiler and python3-protobuf (not orrery's dependencies).
# Prints per file the metadata's attributes and the node, collective and data-dep
# counts, and checks the attributes ASTRA-sim's feeder reads on every COMM_COLL_NODE
# orrery wrote: comm_type as int64_val, comm_size > 0 and pg_name non-empty where given.
# docs/chakra.md records a run.
set -euo pipefail

if (($# < 2)); then
	echo "usage: $0 CHAKRA_CHECKOUT FILE.et..." >&2
	exit 2
fi
chakra=$(cd "$1" && pwd)
shift
command -v protoc >/dev/null || { echo "$0: no protoc (apt install protobuf-compiler)" >&2; exit 1; }
py=/usr/bin/python3
"$py" -c 'import google.protobuf' 2>/dev/null ||
	{ echo "$0: no python3-protobuf (apt install python3-protobuf)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
protoc --proto_path="$chakra/schema/protobuf" --python_out="$work" "$chakra/schema/protobuf/et_def.proto"
cp "$chakra/src/third_party/utils/protolib.py" "$work/"
PYTHONPATH=$work "$py" - "$@" <<'PY'
import sys
from protolib import openFileRd, decodeMessage
from et_def_pb2 import GlobalMetadata, Node, COMM_COLL_NODE

for path in sys.argv[1:]:
    f = openFileRd(path)
    meta = GlobalMetadata()
    decodeMessage(f, meta)
    ours = any(a.name == "producer" for a in meta.attr)
    node, nodes, colls, deps, sized = Node(), 0, 0, 0, 0
    while decodeMessage(f, node):
        nodes += 1
        deps += len(node.data_deps)
        if node.type == COMM_COLL_NODE:
            colls += 1
            attrs = {a.name: a for a in node.attr}
            if ours:
                assert attrs["comm_type"].WhichOneof("value") == "int64_val", node
                assert "comm_size" not in attrs or attrs["comm_size"].int64_val > 0, node
                assert "pg_name" not in attrs or attrs["pg_name"].string_val, node
                sized += "comm_size" in attrs
        node = Node()
    meta_attrs = {a.name: getattr(a, a.WhichOneof("value")) for a in meta.attr}
    print(f"{path}: {meta_attrs}: {nodes} nodes, {colls} collectives ({sized} sized), "
          f"{deps} data deps")
PY
