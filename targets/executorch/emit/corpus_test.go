package emit_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxport/fxport/frontends/pt2"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/targets/executorch/callconv"
	"github.com/fxport/fxport/targets/executorch/emit"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// corpusSkips names corpus programs that are known not to export to a
// portable .pte, each with the reason. It is empty: every program must
// export, and a new failure fails the test.
var corpusSkips = map[string]string{}

// TestCorpusExportsToPTE lowers every program of tests/corpus through the
// default executorch.portable pipeline, emits, encodes and decodes it with
// our reader and (when installed) flatc, and checks that every kernel call
// names a kernel the portable runtime registers (out variants, prim ops,
// copy_).
func TestCorpusExportsToPTE(t *testing.T) {
	files, err := filepath.Glob("../../../tests/corpus/*/program.pt2")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Skip("no corpus programs")
	}
	flatc, flatcErr := exec.LookPath("flatc")
	schema, _ := filepath.Abs("../schema/program.fbs")
	out := t.TempDir()
	for _, f := range files {
		name := filepath.Base(filepath.Dir(f))
		t.Run(name, func(t *testing.T) {
			if why, ok := corpusSkips[name]; ok {
				t.Skip(why)
			}
			p, err := pt2.Read(f)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			pl, err := pm.Build(pm.TargetExecuTorch, "executorch.portable")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := pm.Run(p, pl, nil, pm.Config{}); err != nil {
				t.Fatalf("pipeline: %v", err)
			}
			ef, err := emit.Program(p, emit.Options{})
			if err != nil {
				t.Fatalf("emit: %v", err)
			}
			b, err := pte.Encode(ef)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			got, err := pte.Decode(name+".pte", b)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			for _, op := range got.Program.ExecutionPlan[0].Operators {
				if !portableKernel(op) {
					t.Errorf("operator %s.%s is not a portable kernel", op.Name, op.Overload)
				}
			}
			// exir's calling convention: every call's argument count and
			// return slot (one TensorList for several outs).
			if err := callconv.Check(got.Program.ExecutionPlan[0], callconv.Lookup); err != nil {
				t.Error(err)
			}
			if flatcErr == nil {
				file := filepath.Join(out, name+".pte")
				if err := os.WriteFile(file, b, 0o644); err != nil {
					t.Fatal(err)
				}
				cmd := exec.Command(flatc, "--json", "--strict-json", "-o", out, schema, "--", file)
				if msg, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("flatc: %v: %s", err, msg)
				}
			}
			if name == "llama_block" {
				checkKVCache(t, weightData(t, p, "attention.k_cache", "attention.v_cache"), got)
			}
		})
	}
	if flatcErr != nil {
		t.Log("flatc not installed; decoded with our reader only")
	}
}

// portableKernel reports whether an operator is one the portable runtime
// resolves: an out variant (by overload name), an executorch_prim op,
// sym_size, or copy_.
func portableKernel(op *etfb.OperatorT) bool {
	switch {
	case op.Name == "aten::sym_size" && op.Overload == "int", op.Name == "aten::copy_":
		return true
	case strings.HasPrefix(op.Name, "executorch_prim::"):
		return true
	case op.Overload == "out" || strings.HasSuffix(op.Overload, "_out") || op.Overload == "dim_max" || op.Overload == "values":
		return true
	}
	return false
}

// checkKVCache checks llama_block's mutable KV cache: two planned buffer
// tensors initialised from the mutable-data segment, written back with
// copy_, listed first among the outputs.
func checkKVCache(t *testing.T, initial []byte, f *pte.File) {
	t.Helper()
	prog := f.Program
	if len(prog.MutableDataSegments) != 1 || len(prog.Segments) != 2 {
		t.Fatalf("mutable_data_segments %d, segments %d; want 1 and 2", len(prog.MutableDataSegments), len(prog.Segments))
	}
	ms := prog.MutableDataSegments[0]
	if ms.SegmentIndex != 1 || len(ms.Offsets) != 3 || ms.Offsets[0] != 0 || ms.Offsets[1] != 0 || ms.Offsets[2] != 2048 {
		t.Errorf("mutable_data_segments[0] = {%d, %v}, want {1, [0 0 2048]}", ms.SegmentIndex, ms.Offsets)
	}
	if f.Segments[1].Size != 4096 {
		t.Errorf("mutable segment %d bytes, want 4096", f.Segments[1].Size)
	}
	plan := prog.ExecutionPlan[0]
	copies := 0
	for _, in := range plan.Chains[0].Instructions {
		kc, ok := in.InstrArgs.Value.(*etfb.KernelCallT)
		if ok && plan.Operators[kc.OpIndex].Name == "aten::copy_" {
			copies++
			dst := kc.Args[0]
			if kc.Args[len(kc.Args)-1] != dst {
				t.Errorf("copy_ returns %d, writes %d", kc.Args[len(kc.Args)-1], dst)
			}
		}
	}
	if copies != 2 {
		t.Errorf("%d copy_ write-backs, want 2", copies)
	}
	for i, o := range plan.Outputs[:2] {
		tv, ok := plan.Values[o].Val.Value.(*etfb.TensorT)
		if !ok || tv.AllocationInfo == nil || tv.DataBufferIdx != uint32(i+1) || tv.ExtraTensorInfo == nil || !strings.HasSuffix(tv.ExtraTensorInfo.FullyQualifiedName, "_cache") {
			t.Errorf("output %d (value %d) is not a planned mutable buffer with initial state: %+v", i, o, plan.Values[o].Val.Value)
		}
	}
	if !bytes.Equal(f.Segments[1].Data, initial) {
		t.Errorf("mutable segment does not hold the buffers' exported bytes")
	}
}

// weightData concatenates the bytes of the named weights.
func weightData(t *testing.T, p *ir.Program, names ...string) []byte {
	t.Helper()
	var out []byte
	for _, n := range names {
		w := p.Weight(n)
		if w == nil || w.Source == nil {
			t.Fatalf("no weight %q", n)
		}
		r, err := w.Source.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b...)
	}
	return out
}
