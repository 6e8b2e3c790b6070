package emit_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fxport/fxport/ir"
	_ "github.com/fxport/fxport/passes" // the executorch lowering passes
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/targets/executorch/emit"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// lower parses an IR file and runs the default executorch.portable pipeline.
func lower(t *testing.T, path string) *ir.Program {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ir.Parse(src, path)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := pm.Build(pm.TargetExecuTorch, "executorch.portable")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pm.Run(p, pl, nil, pm.Config{}); err != nil {
		t.Fatal(err)
	}
	return p
}

// emitFile lowers, emits, encodes and decodes path.
func emitFile(t *testing.T, path string, opts emit.Options) (*pte.File, []byte) {
	t.Helper()
	f, err := emit.Program(lower(t, path), opts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := pte.Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	g, err := pte.Decode(filepath.Base(path), b)
	if err != nil {
		t.Fatal(err)
	}
	return g, b
}

// genuineDir finds shared/testdata/pte next to or inside the checkout.
func genuineDir(t *testing.T) string {
	t.Helper()
	for _, rel := range []string{"../../../../shared/testdata/pte", "../../../../../shared/testdata/pte", "../../../shared/testdata/pte"} {
		if _, err := os.Stat(filepath.Join(rel, "PROVENANCE.md")); err == nil {
			return rel
		}
	}
	t.Skip("genuine ExecuTorch files (shared/testdata/pte) not found")
	return ""
}

// shape is the structure of one method that exir's conventions fix:
// value kinds and tensor types in order, where each tensor's storage comes
// from, inputs, outputs, operators and kernel-call arguments. Planned
// offsets are the memory planner's choice and are compared separately.
type shape struct {
	Values    []string
	Inputs    []int32
	Outputs   []int32
	Operators []string
	Calls     []string
	Arena     []int64
}

func methodShape(p *etfb.ExecutionPlanT) shape {
	var s shape
	for _, v := range p.Values {
		d := etfb.EnumNamesKernelTypes[v.Val.Type]
		switch x := v.Val.Value.(type) {
		case *etfb.TensorT:
			where := "unplanned"
			if x.DataBufferIdx > 0 {
				where = "constant"
			} else if x.AllocationInfo != nil {
				where = "planned"
			}
			d += " " + etfb.EnumNamesScalarType[x.ScalarType] + fmtInts(x.Sizes) + " dim_order" + fmtBytes(x.DimOrder) + " " + where + " " + etfb.EnumNamesTensorShapeDynamism[x.ShapeDynamism]
		case *etfb.IntT:
			d += " " + fmtInt(x.IntVal)
		case *etfb.BoolT:
			if x.BoolVal {
				d += " true"
			}
		case *etfb.IntListT:
			d += " " + fmtInt64s(x.Items)
		}
		s.Values = append(s.Values, d)
	}
	s.Inputs, s.Outputs, s.Arena = p.Inputs, p.Outputs, p.NonConstBufferSizes
	for _, o := range p.Operators {
		s.Operators = append(s.Operators, o.Name+"."+o.Overload)
	}
	for _, c := range p.Chains {
		for _, in := range c.Instructions {
			if k, ok := in.InstrArgs.Value.(*etfb.KernelCallT); ok {
				s.Calls = append(s.Calls, s.Operators[k.OpIndex]+fmtInts(k.Args))
			}
		}
	}
	return s
}

// planned lists where each planned tensor value lives: "%i mem m+offset".
func planned(p *etfb.ExecutionPlanT) []string {
	var out []string
	for i, v := range p.Values {
		if x, ok := v.Val.Value.(*etfb.TensorT); ok && x.AllocationInfo != nil {
			a := x.AllocationInfo
			off := int64(a.MemoryOffsetHigh)<<32 | int64(a.MemoryOffsetLow)
			out = append(out, "%"+strconv.Itoa(i)+" mem "+strconv.Itoa(int(a.MemoryId))+"+"+strconv.FormatInt(off, 10))
		}
	}
	return out
}

// Emitted add, add-with-constant and cast-then-mul programs have the
// structure of exir's files for the same models, and, where the file comes
// matches the greedy order fxport follows (offsets: true), its planned
// offsets too. The add_f32x1 files place their equal-size tensors in
// collection order, not reversed (apparently another exir version), so
// only their arena size is compared there.
func TestEmitMatchesGenuinePortableFiles(t *testing.T) {
	dir := genuineDir(t)
	for _, c := range []struct {
		fxir, genuine string
		offsets       bool
	}{
		{"add", "et_portable_add_f32x1.pte", false},
		{"add", "rs_portable_add_f32x1.pte", false},
		{"add_scalar_constant", "et_portable_add_scalar_constant.pte", true},
		{"to_dim_order_copy_mul", "djl_portable_to_dim_order_copy_mul.pte", true},
	} {
		t.Run(c.genuine, func(t *testing.T) {
			want, err := pte.Read(filepath.Join(dir, c.genuine))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := emitFile(t, filepath.Join("testdata", c.fxir+".fxir"), emit.Options{})
			if d := cmp.Diff(methodShape(want.Program.ExecutionPlan[0]), methodShape(got.Program.ExecutionPlan[0])); d != "" {
				t.Errorf("forward differs (-exir +fxport):\n%s", d)
			}
			if c.offsets {
				if d := cmp.Diff(planned(want.Program.ExecutionPlan[0]), planned(got.Program.ExecutionPlan[0])); d != "" {
					t.Errorf("planned offsets differ (-exir +fxport):\n%s", d)
				}
			}
			// Segment layout, constant table and bytes.
			if (want.Header == nil) != (got.Header == nil) {
				t.Errorf("eh00: exir %+v, fxport %+v", want.Header, got.Header)
			}
			if d := cmp.Diff(want.Program.Segments, got.Program.Segments); d != "" {
				t.Errorf("segments differ (-exir +fxport):\n%s", d)
			}
			if d := cmp.Diff(want.Program.ConstantSegment, got.Program.ConstantSegment); d != "" {
				t.Errorf("constant_segment differs (-exir +fxport):\n%s", d)
			}
			for i := range want.Segments {
				if i < len(got.Segments) && !bytes.Equal(want.Segments[i].Data, got.Segments[i].Data) {
					t.Errorf("segment %d bytes: exir %x, fxport %x", i, want.Segments[i].Data, got.Segments[i].Data)
				}
			}
			if n := len(got.Program.ExecutionPlan); n != 2 || got.Program.ExecutionPlan[1].Name != emit.MetadataMethod {
				t.Errorf("%d methods, want forward and %s", n, emit.MetadataMethod)
			}
		})
	}
}

// The emitted bytes are deterministic and flatc decodes them with our schema.
func TestEmitDeterministicAndFlatcDecodes(t *testing.T) {
	var paths []string
	for _, n := range []string{"add", "add_scalar_constant", "to_dim_order_copy_mul", "../../../../examples/mlp/program"} {
		paths = append(paths, filepath.Join("testdata", n+".fxir"))
	}
	flatc, flatcErr := exec.LookPath("flatc")
	out := t.TempDir()
	for _, path := range paths {
		_, b1 := emitFile(t, path, emit.Options{})
		_, b2 := emitFile(t, path, emit.Options{})
		if !bytes.Equal(b1, b2) {
			t.Errorf("%s: two emissions differ", path)
		}
		if flatcErr != nil {
			continue
		}
		file := filepath.Join(out, strings.ReplaceAll(filepath.Base(path), ".fxir", ".pte"))
		if err := os.WriteFile(file, b1, 0o644); err != nil {
			t.Fatal(err)
		}
		schema, _ := filepath.Abs("../schema/program.fbs")
		cmd := exec.Command(flatc, "--json", "--strict-json", "-o", out, schema, "--", file)
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: flatc: %v: %s", path, err, msg)
		}
	}
	if flatcErr != nil {
		t.Skip("flatc not installed; only determinism checked")
	}
}

// The MLP example: constants deduplicated and 16-aligned, the export
// metadata method carries the I/O names.
func TestEmitMLP(t *testing.T) {
	got, _ := emitFile(t, "../../../examples/mlp/program.fxir", emit.Options{})
	cs := got.Program.ConstantSegment
	if len(cs.Offsets) < 2 || cs.Offsets[0] != 0 {
		t.Fatalf("constant offsets %v", cs.Offsets)
	}
	for _, o := range cs.Offsets {
		if o%16 != 0 {
			t.Errorf("constant offset %d not 16-aligned", o)
		}
	}
	md := got.Program.ExecutionPlan[1]
	s, ok := md.Values[0].Val.Value.(*etfb.StringT)
	if md.Name != emit.MetadataMethod || !ok || !strings.Contains(s.StringVal, `"input_names":["x","mask"]`) {
		t.Errorf("metadata method %s: %+v", md.Name, md.Values[0].Val.Value)
	}
	// The weight transposes of linear's decomposition are folded into
	// constants (fold-constant-views): no permute_copy is left to run.
	calls := methodShape(got.Program.ExecutionPlan[0]).Calls
	if len(calls) == 0 {
		t.Errorf("no calls")
	}
	for _, c := range calls {
		if strings.HasPrefix(c, "aten::permute_copy") {
			t.Errorf("calls %v: a weight transpose is computed at run time", calls)
		}
	}
}

func TestEmitErrors(t *testing.T) {
	src, err := os.ReadFile("testdata/add.fxir")
	if err != nil {
		t.Fatal(err)
	}
	p, err := ir.Parse(src, "add.fxir")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := emit.Program(p, emit.Options{}); err == nil || !strings.Contains(err.Error(), "memory plan") {
		t.Errorf("unlowered program: want a missing-plan error, got %v", err)
	}
}

func fmtInt(v int64) string { return strings.TrimSpace(strings.Trim(fmtInt64s([]int64{v}), "[]")) }

func fmtInt64s(xs []int64) string {
	var b strings.Builder
	b.WriteString("[")
	for i, x := range xs {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(itoa(x))
	}
	return b.String() + "]"
}

func fmtInts(xs []int32) string {
	ys := make([]int64, len(xs))
	for i, x := range xs {
		ys[i] = int64(x)
	}
	return fmtInt64s(ys)
}

func fmtBytes(xs []byte) string {
	ys := make([]int64, len(xs))
	for i, x := range xs {
		ys[i] = int64(x)
	}
	return fmtInt64s(ys)
}

func itoa(x int64) string { return strconv.FormatInt(x, 10) }
