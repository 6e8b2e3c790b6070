#!/bin/sh
# Regenerates the Go FlatBuffers code for the ExecuTorch schemas with flatc
# (Debian's flatbuffers-compiler 2.0.8). Usage: sh gen.sh [OUTDIR]
# (default: this directory). The freshness test runs it into a temp dir.
#
# flatc 2.0.8 writes a cross-namespace reference (flat_tensor.fbs and
# bundled_program.fbs use executorch_flatbuffer.ScalarType) as a bare import path; it is rewritten
# to this module's package path. The output is gofmt-ed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
schema="$here/../schema"
out="${1:-$here}"
flatc --go --gen-object-api -I "$schema" -o "$out" \
	"$schema/scalar_type.fbs" "$schema/program.fbs" "$schema/xnnpack.fbs" "$schema/flat_tensor.fbs" "$schema/bundled_program.fbs"
sed -i 's#executorch_flatbuffer "executorch_flatbuffer"#executorch_flatbuffer "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"#' \
	"$out"/flat_tensor_flatbuffer/*.go "$out"/bundled_program_flatbuffer/*.go
GOFMT="${GOFMT:-gofmt}"
command -v "$GOFMT" >/dev/null 2>&1 || GOFMT="$(go env GOROOT)/bin/gofmt"
"$GOFMT" -w "$out/executorch_flatbuffer" "$out/fb_xnnpack" "$out/flat_tensor_flatbuffer" "$out/bundled_program_flatbuffer"
