#!/bin/sh
# Test-only stand-in for tools/aoti_compile.py: NOT an AOTInductor build.
# Checks that IN is a zip archive (.pt2) and writes a deterministic fake
# library OUT (a fixed text, IN's size and checksum) and a fake weights blob
# naming the same checksum, so that different partitions get different
# bytes. FXPORT_STANDIN_NO_WEIGHTS=1 writes no weights blob.
set -e
in="$1"; out="$2"
[ "$(head -c 2 "$in")" = "PK" ] || { echo "standin: $in is not a .pt2 (zip)" >&2; exit 3; }
sum="$(cksum < "$in" | cut -d ' ' -f 1)"
printf 'standin-so for %s bytes, cksum %s\n' "$(wc -c < "$in" | tr -d ' ')" "$sum" > "$out"
[ -n "$FXPORT_STANDIN_NO_WEIGHTS" ] || printf 'standin-weights for cksum %s' "$sum" > "$out.weights"
# Keep a copy of IN for the test to inspect when asked: FXPORT_STANDIN_KEEP
# names a file, FXPORT_STANDIN_KEEP_DIR a directory that collects every
# partition's IN as part0.pt2, part1.pt2, … in compile order.
[ -z "$FXPORT_STANDIN_KEEP" ] || cp "$in" "$FXPORT_STANDIN_KEEP"
# With FXPORT_STANDIN_FAIL_AT=n as well, compiling partition n fails.
if [ -n "$FXPORT_STANDIN_KEEP_DIR" ]; then
	n="$(ls "$FXPORT_STANDIN_KEEP_DIR" | wc -l | tr -d ' ')"
	cp "$in" "$FXPORT_STANDIN_KEEP_DIR/part$n.pt2"
	[ "$n" != "$FXPORT_STANDIN_FAIL_AT" ] || { echo "standin: told to fail at partition $n" >&2; exit 4; }
fi
