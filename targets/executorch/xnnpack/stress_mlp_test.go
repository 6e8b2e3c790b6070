package xnnpack_test

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/emit"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/pte"
	"github.com/fxport/fxport/targets/executorch/run"
)

// stressProgram parses testdata/stress_mlp.fxir and gives every weight
// distinct deterministic data (small values, one stream per weight name).
func stressProgram(t *testing.T) *ir.Program {
	t.Helper()
	p := parse(t, filepath.Join("testdata", "stress_mlp.fxir"))
	for _, w := range p.Weights {
		shape, ok := w.Type.StaticShape()
		if !ok {
			t.Fatalf("weight %s: static shapes only", w.Name)
		}
		n := int64(1)
		for _, d := range shape {
			n *= d
		}
		h := fnv.New64a()
		h.Write([]byte(w.Name))
		state := h.Sum64()
		data := make([]byte, 4*n)
		for i := int64(0); i < n; i++ {
			state = state*6364136223846793005 + 1442695040888963407
			v := float32(int64(state>>40)%2001-1000) / 20000 // [-0.05, 0.05]
			binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
		}
		w.Source = &ir.InlineSource{Data: data}
	}
	return p
}

func exportProgram(t *testing.T, p *ir.Program) *pte.File {
	t.Helper()
	lower(t, p, "")
	f, err := emit.Program(p, emit.Options{NoMetadataMethod: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := pte.Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	g, err := pte.Decode("stress_mlp.pte", b)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// mixedStructure is what the stress file's structure fixes: operators (as
// a set), the tensor values and all values (as multisets), the
// instructions in order (each with its arguments described), the
// delegate graphs without debug handles, segment and named-data sizes and
// the arena.
type mixedStructure struct {
	Operators    []string
	Tensors      []string
	Values       []string
	Instructions []string
	Delegates    []string
	Segments     []uint64
	Arena        []int64
}

func describeMixed(f *pte.File) mixedStructure {
	var s mixedStructure
	m := f.Methods[0].Plan
	for _, op := range m.Operators {
		s.Operators = append(s.Operators, op.Name+"."+op.Overload)
	}
	sort.Strings(s.Operators)
	val := func(i int32) string {
		v := m.Values[i].Val
		switch x := v.Value.(type) {
		case *etfb.TensorT:
			kind := "runtime"
			if x.DataBufferIdx > 0 {
				kind = "constant"
			} else if x.AllocationInfo != nil {
				kind = "planned"
			}
			return fmt.Sprintf("%s%v %s", etfb.EnumNamesScalarType[x.ScalarType], x.Sizes, kind)
		case *etfb.IntT:
			return fmt.Sprintf("Int %d", x.IntVal)
		case *etfb.BoolT:
			return fmt.Sprintf("Bool %v", x.BoolVal)
		case *etfb.IntListT:
			return fmt.Sprintf("IntList(%d)", len(x.Items))
		}
		return etfb.EnumNamesKernelTypes[v.Type]
	}
	for i, v := range m.Values {
		if v.Val.Type == etfb.KernelTypesTensor {
			s.Tensors = append(s.Tensors, val(int32(i)))
		}
		s.Values = append(s.Values, val(int32(i)))
	}
	sort.Strings(s.Tensors)
	sort.Strings(s.Values)
	for _, in := range m.Chains[0].Instructions {
		var args []string
		var head string
		switch x := in.InstrArgs.Value.(type) {
		case *etfb.DelegateCallT:
			head = fmt.Sprintf("delegate %d", x.DelegateIndex)
			for _, a := range x.Args {
				args = append(args, val(a))
			}
		case *etfb.KernelCallT:
			op := m.Operators[x.OpIndex]
			head = op.Name + "." + op.Overload
			for _, a := range x.Args {
				args = append(args, val(a))
			}
		}
		s.Instructions = append(s.Instructions, head+"("+strings.Join(args, ", ")+")")
	}
	for _, d := range f.Methods[0].Delegates {
		g := d.XNNPACK.Graph
		desc := fmt.Sprintf("num_externs=%d in=%v out=%v", g.NumExterns, g.InputIds, g.OutputIds)
		for _, v := range g.Xvalues {
			desc += fmt.Sprintf("\n  value %+v", *pte.XNNTensor(v))
		}
		for _, n := range g.Xnodes {
			desc += fmt.Sprintf("\n  node %s %+v", n.XnodeUnion.Type, n.XnodeUnion.Value)
			if n.OutputMinMax != nil {
				desc += fmt.Sprintf(" minmax=%+v", *n.OutputMinMax)
			}
		}
		for _, c := range g.ConstantData {
			desc += fmt.Sprintf("\n  constant size=%d named=%v", c.Size, c.NamedKey != "")
		}
		s.Delegates = append(s.Delegates, desc)
	}
	payload := map[uint32]bool{}
	for _, d := range f.Methods[0].Delegates {
		payload[d.Index] = true
	}
	for i, seg := range f.Segments {
		if !payload[uint32(i)] {
			s.Segments = append(s.Segments, seg.Size)
		}
	}
	s.Arena = m.NonConstBufferSizes
	return s
}

// TestGenuineMixedStressMLP exports the stress model's IR and compares it
// with exir's file: the same two delegates (both branches' x[0, 0] * 64 in
// one, merged across unrelated producers; both Linear stacks with their
// inputs' adds and the final add in the other), the 64 reaching the first
// as an int64 lifted constant cast by a portable _to_dim_order_copy, the
// same portable operators and instructions with the same arguments, the
// same delegate graphs (values in first-use order, external ids in operand
// order, fused ReLUs), segment and named-data sizes and arena size.
// The instructions match in order: exir fuses the partition holding the
// final add first and re-sorts the whole graph after each fusion
// (legalize_graph), interleaving the two branches' portable ops, and the
// partition step does the same (partition.Legalize).
// Known differences, not compared: debug handles (exir
// numbers the edge graph's nodes; we number each delegate's from 1), and
// nothing else: every value of the table (as a multiset) matches too, since
// the static views are elided as exir elides them.
func TestGenuineMixedStressMLP(t *testing.T) {
	dir := genuineDir(t)
	want, err := pte.Read(filepath.Join(dir, "djl_mixed_xnnpack_portable_stress_mlp.pte"))
	if err != nil {
		t.Fatal(err)
	}
	ours := exportProgram(t, stressProgram(t))
	if diff := cmp.Diff(describeMixed(want), describeMixed(ours)); diff != "" {
		t.Errorf("structure differs (-genuine +ours):\n%s", diff)
	}
}

// TestNumericMixedStressMLP runs the exported stress model through run and
// compares with the interpreter on the unlowered IR, for inputs steering
// the two bucket lookups to the first, an interior and the last bucket.
func TestNumericMixedStressMLP(t *testing.T) {
	ref := stressProgram(t)
	f := exportProgram(t, stressProgram(t))
	for _, v := range [][2]float64{{0, 0.9999}, {15.999 / 64, 0.5}, {0.9999, 32.001 / 64}} {
		var ins []interp.Value
		for k := 0; k < 2; k++ {
			xs := make([]float64, 32*256)
			for i := range xs {
				xs[i] = float64(float32(i)*float32(1e-5) + float32(v[k]))
			}
			ins = append(ins, interp.FromFloat64(ir.Float32, []int64{32, 256}, xs))
		}
		want, err := interp.Run(ref, ins, interp.Options{})
		if err != nil {
			t.Fatalf("interpreter: %v", err)
		}
		outs, err := run.Run(f, ins, run.Options{})
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		g, w := outs[0].(*interp.Tensor).Float64s(), want.Outputs[0].(*interp.Tensor).Float64s()
		for i := range w {
			if d := math.Abs(g[i] - w[i]); !(d <= 1e-5*(1+math.Abs(w[i]))) {
				t.Fatalf("inputs %v: out[%d] = %g, want %g", v, i, g[i], w[i])
			}
		}
	}
}
