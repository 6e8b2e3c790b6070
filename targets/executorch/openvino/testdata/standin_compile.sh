#!/bin/sh
# Test-only stand-in for tools/openvino_compile.py: NOT an OpenVINO build.
# Checks that IN is a zip archive (.pt2) and writes a deterministic fake
# exported model OUT (a fixed text plus IN's size).
set -e
in="$1"; out="$2"
[ "$(head -c 2 "$in")" = "PK" ] || { echo "standin: $in is not a .pt2 (zip)" >&2; exit 3; }
printf 'standin-openvino-blob for %s bytes\n' "$(wc -c < "$in" | tr -d ' ')" > "$out"
# Keep a copy of IN for the test to inspect when asked.
[ -z "$FXPORT_STANDIN_KEEP" ] || cp "$in" "$FXPORT_STANDIN_KEEP"
