package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// The ONNX optimizer follows the disable-optimization table by model class,
// and --optimize / --no-optimize override it.
func TestExportOptimizeFlags(t *testing.T) {
	out := filepath.Join(t.TempDir(), "m.onnx")
	cases := []struct {
		args []string
		want string
	}{
		{nil, "onnx optimizer: on (default)"},
		{[]string{"--model-class", "YolosModel"}, "onnx optimizer: off (disable-optimization table: model class YolosModel (scope all)"},
		{[]string{"--model-class", "YolosModel", "--optimize"}, "onnx optimizer: on (enabled by the caller)"},
		{[]string{"--no-optimize"}, "onnx optimizer: off (disabled by the caller)"},
		// The example has a symbolic batch dim, so "dynamic" entries apply.
		{[]string{"--model-class", "ProphetNetModel"}, "onnx optimizer: off (disable-optimization table: model class ProphetNetModel (scope dynamic)"},
		{[]string{"--model-class", "BertModel"}, "onnx optimizer: on (default)"},
	}
	for _, c := range cases {
		args := append([]string{"export", example, "--target", "onnx", "-o", out, "--report"}, c.args...)
		stdout, stderr, code := fxport(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, stderr)
		}
		if !strings.Contains(stdout, c.want) {
			t.Errorf("%v: report lacks %q:\n%s", c.args, c.want, stdout)
		}
	}
	if _, stderr, code := fxport(t, "export", example, "--target", "onnx", "-o", out, "--optimize", "--no-optimize"); code == 0 || !strings.Contains(stderr, "exclude each other") {
		t.Errorf("conflicting flags: exit %d, %s", code, stderr)
	}
}
