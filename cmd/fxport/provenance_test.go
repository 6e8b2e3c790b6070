package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	fxapi "github.com/fxport/fxport"
	"github.com/fxport/fxport/internal/testenv"
	"github.com/fxport/fxport/provenance"
	"github.com/fxport/fxport/targets/executorch/emit"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/pte"
	"github.com/fxport/fxport/targets/onnx"
	pb "github.com/fxport/fxport/targets/onnx/onnxpb"
)

func TestVersionCommand(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, errOut, code := fxport(t, args...)
		require.Equal(t, 0, code, errOut)
		first, _, _ := strings.Cut(out, "\n")
		require.Equal(t, "fxport "+provenance.Version(), first)
		require.Contains(t, out, "module:   "+provenance.Module)
		require.Contains(t, out, "revision: ")
	}
}

// TestProvenanceInArtifacts exports the MLP example to ONNX and to a
// portable .pte and checks that both record the fxport version, the
// pipeline text and the workarounds that fired (the same list the report
// prints); then onnx.checker, onnx's reader and the genuine ExecuTorch
// runtime read the files.
func TestProvenanceInArtifacts(t *testing.T) {
	dir := t.TempDir()
	onnxPath, ptePath := filepath.Join(dir, "mlp.onnx"), filepath.Join(dir, "mlp.pte")
	version := provenance.Version()

	out, errOut, code := fxport(t, "export", example, "--target", "onnx", "-o", onnxPath, "--report")
	require.Equal(t, 0, code, errOut)
	data, err := os.ReadFile(onnxPath)
	require.NoError(t, err)
	var m pb.ModelProto
	require.NoError(t, proto.Unmarshal(data, &m))
	require.Equal(t, "fxport", m.GetProducerName())
	require.Equal(t, version, m.GetProducerVersion())
	props := map[string]string{}
	for _, kv := range m.GetMetadataProps() {
		props[kv.GetKey()] = kv.GetValue()
	}
	require.Equal(t, version, props[onnx.MetaVersion])
	wantPipeline, err := fxapi.ONNX.Pipeline()
	require.NoError(t, err)
	require.Equal(t, wantPipeline, props[onnx.MetaPipeline])
	var ws []provenance.Workaround
	require.NoError(t, json.Unmarshal([]byte(props[onnx.MetaWorkarounds]), &ws))
	requireWorkaroundsMatchReport(t, ws, out)
	require.Contains(t, ws, provenance.Workaround{ID: "ONNX-P01", Name: "where-promote", Kind: "patch", Count: 1})
	var md struct{ Provenance provenance.Record }
	require.NoError(t, json.Unmarshal([]byte(props[onnx.MetadataKey]), &md))
	require.Equal(t, provenance.Record{Version: version, Pipeline: wantPipeline, Workarounds: ws}, md.Provenance)

	out, errOut, code = fxport(t, "export", example, "--target", "executorch-portable", "-o", ptePath, "--report")
	require.Equal(t, 0, code, errOut)
	f, err := pte.Read(ptePath)
	require.NoError(t, err)
	var doc string
	for _, plan := range f.Program.ExecutionPlan {
		if plan.Name == emit.MetadataMethod {
			require.Len(t, plan.Values, 1)
			require.Equal(t, etfb.KernelTypesString, plan.Values[0].Val.Type)
			doc = plan.Values[0].Val.Value.(*etfb.StringT).StringVal
		}
	}
	require.NotEmpty(t, doc, "no %s method", emit.MetadataMethod)
	md.Provenance = provenance.Record{}
	require.NoError(t, json.Unmarshal([]byte(doc), &md))
	wantPipeline, err = fxapi.ExecuTorchPortable.Pipeline()
	require.NoError(t, err)
	require.Equal(t, version, md.Provenance.Version)
	require.Equal(t, wantPipeline, md.Provenance.Pipeline)
	requireWorkaroundsMatchReport(t, md.Provenance.Workarounds, out)

	// The genuine tools read both files and see the same record.
	py := testenv.Python(t)
	script := fmt.Sprintf(`
import json, onnx, sys
from executorch.runtime import Runtime, Verification
m = onnx.load(%q)
onnx.checker.check_model(m, full_check=True)
props = {p.key: p.value for p in m.metadata_props}
assert m.producer_version == %q, m.producer_version
assert props[%q] == %q, props
prog = Runtime.get().load_program(%q, verification=Verification.InternalConsistency)
names = sorted(prog.method_names)
assert %q in names, names
prog.load_method("forward")
print("ok", json.dumps(names))
`, onnxPath, version, onnx.MetaVersion, version, ptePath, emit.MetadataMethod)
	cmd := exec.Command(py, "-c", script)
	res, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", res)
	require.Contains(t, string(res), "ok ")
}

// requireWorkaroundsMatchReport checks ws against the "fired" lines of a
// --report: every distinct entry in first-firing order, with its count.
func requireWorkaroundsMatchReport(t *testing.T, ws []provenance.Workaround, report string) {
	t.Helper()
	var want []string
	count := map[string]int{}
	for _, line := range strings.Split(report, "\n") {
		rest, ok := strings.CutPrefix(line, "fired ")
		if !ok {
			continue
		}
		// "PASS KIND "ENTRY" [ID] …": the entry and its ID identify it.
		_, rest, _ = strings.Cut(rest, " ")
		kind, rest, _ := strings.Cut(rest, " ")
		var entry string
		_, err := fmt.Sscanf(rest, "%q", &entry)
		require.NoError(t, err, line)
		key := kind + " " + entry
		if i := strings.Index(rest, "["); i >= 0 && i == len(fmt.Sprintf("%q", entry))+1 {
			key += " " + rest[i+1:i+strings.Index(rest[i:], "]")]
		}
		if count[key] == 0 {
			want = append(want, key)
		}
		count[key]++
	}
	require.NotEmpty(t, want, "the report fired nothing:\n%s", report)
	var got []string
	for _, w := range ws {
		key := w.Kind + " " + w.Name
		if w.ID != "" {
			key += " " + w.ID
		}
		got = append(got, key)
		require.Equal(t, count[key], w.Count, key)
	}
	require.Equal(t, want, got)
}
