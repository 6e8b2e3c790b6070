package run

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxport/fxport/frontends/pt2"
	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/interp/npy"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/emit"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/internal/ettest"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// exportPair lowers the IR file for backend and emits it with opts: the
// decoded .pte and .ptd, and the IR before lowering (the reference).
func exportPair(t *testing.T, path, backend string, opts emit.Options) (*pte.File, *pte.DataFile, *ir.Program) {
	t.Helper()
	p := ettest.ParseFile(t, path)
	ref := p.Clone()
	ettest.Lower(t, p, backend, "")
	f, d, _ := ettest.EmitWithData(t, p, filepath.Base(path), opts)
	if d == nil {
		t.Fatal("no external data")
	}
	return f, d, ref
}

// checkAgainstInterp runs f with its data file and p in the interpreter.
func checkAgainstInterp(t *testing.T, f *pte.File, d *pte.DataFile, p *ir.Program, ins []interp.Value, tol float64) {
	t.Helper()
	want, err := interp.Run(p, ins, interp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	outs, err := Run(f, ins, Options{Data: []*pte.DataFile{d}})
	if err != nil {
		t.Fatal(err)
	}
	w := want.Outputs[len(want.Outputs)-1].(*interp.Tensor)
	if e := maxAbsErr(t, outs[len(outs)-1], w); e > tol {
		t.Errorf("max error %g against the interpreter", e)
	}
}

// The .pte/.ptd pair fxport exports for a*x + b computes what the IR does,
// loading a and b from the .ptd; without the .ptd, or with a .ptd that
// lacks a key or disagrees on a layout, Load fails and says why.
func TestExportedExternalConstants(t *testing.T) {
	f, d, ref := exportPair(t, "../emit/testdata/external_mul_add.fxir", "executorch.portable", emit.Options{ExternalConstants: true})
	x := f32([]int64{2, 2}, 1, -2, 3.5, 0.25)
	checkAgainstInterp(t, f, d, ref, []interp.Value{x}, 0)
	outs, err := Run(f, []interp.Value{x}, Options{Data: []*pte.DataFile{d}})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "3x+2", outs[0], []int64{2, 2}, []float64{5, -4, 12.5, 2.75}, 0)

	if _, err := Load(f, Options{}); err == nil || !strings.Contains(err.Error(), `external data "a"`) || !strings.Contains(err.Error(), "none was given") {
		t.Errorf("no .ptd: %v", err)
	}
	partial := &pte.DataFile{Name: "partial.ptd", Tensors: d.Tensors[:1]}
	if _, err := Load(f, Options{Data: []*pte.DataFile{partial}}); err == nil || !strings.Contains(err.Error(), `external data "b": not in data file partial.ptd (keys: "a")`) {
		t.Errorf("missing key: %v", err)
	}
	wrong := &pte.DataFile{Name: "wrong.ptd", Tensors: append([]pte.NamedTensor{}, d.Tensors...)}
	wrong.Tensors[0].Sizes = []int32{4}
	if _, err := Load(f, Options{Data: []*pte.DataFile{wrong}}); err == nil || !strings.Contains(err.Error(), `external constant "a": wrong.ptd holds FLOAT[4]`) {
		t.Errorf("layout mismatch: %v", err)
	}
}

// XNNPACK with the delegate's weights in the .ptd: the delegate finds them
// through the data map; without it, the missing key is named.
func TestExportedExternalDelegateData(t *testing.T) {
	f, d, ref := exportPair(t, "../xnnpack/testdata/conv_relu.fxir", "executorch.xnnpack", emit.Options{ExternalConstants: true, ExternalDelegateData: true})
	if len(f.Program.NamedData) != 0 {
		t.Fatalf("named data left in the .pte")
	}
	x := f32([]int64{1, 3, 16, 16}, ramp(3*16*16, 0.01)...)
	checkAgainstInterp(t, f, d, ref, []interp.Value{x}, 1e-4)
	if _, err := Run(f, []interp.Value{x}, Options{}); err == nil || !strings.Contains(err.Error(), "none was given") {
		t.Errorf("no .ptd: %v", err)
	}
}

// llama_block with external constants: its parameters move to the .ptd,
// its mutated KV-cache buffers keep their initial state in the
// mutable-data segment, and the pair computes torch's outputs.
func TestExternalConstantsWithMutableBuffers(t *testing.T) {
	dir := "../../../tests/corpus/llama_block"
	p, err := pt2.Read(filepath.Join(dir, "program.pt2"))
	if err != nil {
		t.Skipf("corpus: %v", err)
	}
	ettest.Lower(t, p, "executorch.portable", "")
	f, d, _ := ettest.EmitWithData(t, p, "llama_block.pte", emit.Options{ExternalConstants: true})
	if d == nil {
		t.Fatal("no external data")
	}
	external, mutable := 0, 0
	for _, v := range f.Program.ExecutionPlan[0].Values {
		x, ok := v.Val.Value.(*etfb.TensorT)
		if !ok || x.ExtraTensorInfo == nil {
			continue
		}
		switch {
		case x.ExtraTensorInfo.Location == etfb.TensorDataLocationEXTERNAL:
			external++
		case x.AllocationInfo != nil && x.DataBufferIdx > 0:
			mutable++
		}
	}
	if external == 0 || external != len(d.Tensors) || mutable != 2 {
		t.Errorf("%d external tensors (%d in the .ptd), %d mutable buffers (want 2)", external, len(d.Tensors), mutable)
	}
	ins := ettest.CorpusInputs(t, dir)
	outs, err := Run(f, ins, Options{Data: []*pte.DataFile{d}})
	if err != nil {
		t.Fatal(err)
	}
	want, err := npy.ReadFile(filepath.Join(dir, "io", "output_0.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if e := maxAbsErr(t, outs[len(outs)-1], want); e > 1e-4 {
		t.Errorf("max error %g against torch", e)
	}
}
