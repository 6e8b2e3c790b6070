#!/bin/bash
# Byte-identity check for ExecuTorch changes: export every corpus program
# (program.pt2 and exported.pt2) and the given extra programs (.fxir, .pt2)
# through executorch-portable and executorch-xnnpack, plain, with
# --external-constants, and (XNNPACK) with --external-delegate-data and both,
# and write the sha256 of every .pte/.ptd (and of each failure's last line)
# to OUTDIR/sums.txt. Run it with the fxport built before and after a change
# and diff the two sums.txt.
#
#   go build -o /tmp/fxport-before ./cmd/fxport     # on main
#   tools/identity/identity.sh /tmp/fxport-before /tmp/before [EXTRA.fxir...]
#   go build -o /tmp/fxport-after ./cmd/fxport      # with the change
#   tools/identity/identity.sh /tmp/fxport-after /tmp/after [EXTRA.fxir...]
#   diff /tmp/before/sums.txt /tmp/after/sums.txt
set -u
fx=$1 out=$2
shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$out" && mkdir -p "$out"
for p in "$root"/tests/corpus/*/program.pt2 "$root"/tests/corpus/*/exported.pt2 "$@"; do
	case $p in
	*.fxir) stem=$(basename "$p" .fxir) ;;
	*) stem=$(basename "$(dirname "$p")")_$(basename "$p" .pt2) ;;
	esac
	for cfg in "executorch-portable:" "executorch-portable:--external-constants" \
		"executorch-xnnpack:" "executorch-xnnpack:--external-constants" \
		"executorch-xnnpack:--external-delegate-data" "executorch-xnnpack:--external-constants --external-delegate-data"; do
		t=${cfg%%:*} flags=${cfg#*:}
		tag=$(echo "$t$flags" | tr -d ' -')
		o=$out/$stem.$tag.pte
		# shellcheck disable=SC2086 # flags is a list
		if ! nice -n 10 "$fx" export "$p" --target "$t" $flags -o "$o" >"$out/$stem.$tag.log" 2>&1; then
			echo "FAIL $(tail -1 "$out/$stem.$tag.log")" >"$o.failed"
		fi
	done
done
(cd "$out" && sha256sum -- *.pte *.ptd *.failed 2>/dev/null) >"$out/sums.txt"
echo "$(wc -l <"$out/sums.txt") files, $(grep -c failed "$out/sums.txt") failed exports: $out/sums.txt"
