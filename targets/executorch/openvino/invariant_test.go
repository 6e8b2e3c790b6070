package openvino_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/openvino"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// TestInvariant_ET_B06: every OpenvinoBackend delegate carries exactly the
// compile spec device = CPU. The checker accepts the genuine file and
// fxport's output and rejects each violation; Write refuses (and writes
// nothing) when a call's recorded spec is altered.
func TestInvariant_ET_B06(t *testing.T) {
	dir := t.TempDir()
	_, f := writeTiny(t, dir, "ok.pte")
	if err := openvino.CheckCompileSpecs(f); err != nil {
		t.Fatal(err)
	}
	for name, alter := range map[string]func(d *etfb.BackendDelegateT){
		"device GPU": func(d *etfb.BackendDelegateT) { d.CompileSpecs[0].Value = []byte("GPU") },
		"no spec":    func(d *etfb.BackendDelegateT) { d.CompileSpecs = nil },
		"extra spec": func(d *etfb.BackendDelegateT) {
			d.CompileSpecs = append(d.CompileSpecs, &etfb.CompileSpecT{Key: "cache_dir", Value: []byte("/tmp")})
		},
		"other key":    func(d *etfb.BackendDelegateT) { d.CompileSpecs[0].Key = "Device" },
		"inline bytes": func(d *etfb.BackendDelegateT) { d.Processed.Location = etfb.DataLocationINLINE },
	} {
		_, g := writeTiny(t, dir, "m.pte")
		alter(method(t, g, "forward").Delegates[0])
		if err := openvino.CheckCompileSpecs(g); err == nil || !strings.Contains(err.Error(), "OpenvinoBackend") {
			t.Errorf("%s: checker error = %v", name, err)
		}
	}
	// The hook: the partitioner records the spec on the call; a call whose
	// spec was altered after partitioning is refused by Write.
	p := lowered(t, tiny)
	calls := openvino.FindCalls(p)
	if len(calls) != 1 {
		t.Fatalf("%d calls", len(calls))
	}
	calls[0].Meta.Set(openvino.MetaDevice, "GPU")
	out := filepath.Join(t.TempDir(), "bad.pte")
	err := openvino.Write(context.Background(), p, out, openvino.Options{Command: standin(t)})
	if err == nil || !strings.Contains(err.Error(), `want exactly device = "CPU"`) {
		t.Errorf("Write with device GPU: err = %v", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("Write with a bad compile spec wrote %s", out)
	}
	// The genuine file satisfies the invariant.
	if g, err := pte.Read(genuine); err == nil {
		if err := openvino.CheckCompileSpecs(g); err != nil {
			t.Errorf("genuine: %v", err)
		}
	}
}
