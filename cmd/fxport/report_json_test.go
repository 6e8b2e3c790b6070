package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxport/fxport/provenance"
)

// TestReportJSON checks the --report-json document against the text report
// of the same export: the schema tag, every pass in order with its stats,
// every firing with its catalog ID and node, the files written; times only
// with --time; bytes identical across runs without measurements; and a
// failing target recorded with its error.
func TestReportJSON(t *testing.T) {
	dir := t.TempDir()
	outPath := filepath.Join(dir, "mlp.onnx")
	rj := filepath.Join(dir, "r.json")
	text, errOut, code := fxport(t, "export", example, "--target", "onnx", "-o", outPath, "--report", "--report-json", rj)
	require.Equal(t, 0, code, errOut)
	first, err := os.ReadFile(rj)
	require.NoError(t, err)
	var doc reportDoc
	require.NoError(t, json.Unmarshal(first, &doc))
	require.Equal(t, "fxport.report/v1", doc.Schema)
	require.Equal(t, provenance.Version(), doc.Version)
	require.Equal(t, example, doc.Input)
	require.Len(t, doc.Targets, 1)
	tr := doc.Targets[0]
	require.Equal(t, "onnx", tr.Name)
	require.Equal(t, []string{outPath}, tr.Outputs)
	require.Empty(t, tr.Error)
	require.Contains(t, text, "pipeline "+tr.Pipeline+"\n")
	require.NotEmpty(t, tr.Passes)
	for i, p := range tr.Passes {
		require.Equal(t, i+1, p.Index)
		require.Nil(t, p.TimeNS, "no --time, no time")
		require.Contains(t, text, p.Name+" ["+p.Kind+", "+p.Stage+"]")
	}
	var fired []string
	for _, line := range strings.Split(text, "\n") {
		if f, ok := strings.CutPrefix(line, "fired "); ok {
			fired = append(fired, f)
		}
	}
	require.Len(t, tr.Fired, len(fired))
	sawNode := false
	for i, f := range tr.Fired {
		require.True(t, strings.HasPrefix(fired[i], f.Pass+" "+f.Kind+` "`+f.Entry+`"`), "%+v vs %s", f, fired[i])
		if f.ID != "" {
			require.Contains(t, fired[i], "["+f.ID+"]")
		}
		if f.Node != "" {
			sawNode = true
			require.Contains(t, fired[i], "on "+f.Node+" in graph "+f.Graph)
		}
	}
	require.True(t, sawNode, "no per-node firing in %s", first)

	// Deterministic without measurements.
	_, errOut, code = fxport(t, "export", example, "--target", "onnx", "-o", outPath, "--report-json", rj)
	require.Equal(t, 0, code, errOut)
	again, err := os.ReadFile(rj)
	require.NoError(t, err)
	require.Equal(t, string(first), string(again))

	// --time alone prints the table and puts times in the JSON.
	text, errOut, code = fxport(t, "export", example, "--target", "onnx", "-o", outPath, "--time", "--report-json", rj)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, text, "time=")
	data, err := os.ReadFile(rj)
	require.NoError(t, err)
	doc = reportDoc{}
	require.NoError(t, json.Unmarshal(data, &doc))
	for _, p := range doc.Targets[0].Passes {
		require.NotNil(t, p.TimeNS, p.Name)
		require.Nil(t, p.AllocBytes, p.Name)
	}
	text, errOut, code = fxport(t, "export", example, "--target", "onnx", "-o", outPath, "--mem")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, text, "alloc=")

	// A failing export still writes the document, with the error.
	_, _, code = fxport(t, "export", example, "--target", "onnx", "-o", filepath.Join(dir, "mlp.txt"), "--report-json", rj)
	require.Equal(t, 1, code)
	data, err = os.ReadFile(rj)
	require.NoError(t, err)
	doc = reportDoc{}
	require.NoError(t, json.Unmarshal(data, &doc))
	require.Len(t, doc.Targets, 1)
	require.Contains(t, doc.Targets[0].Error, "want a .fxir or .onnx file")
	require.Empty(t, doc.Targets[0].Outputs)
}
