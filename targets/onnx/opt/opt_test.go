package opt

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/fxport/fxport/targets/onnx/onnxpb"
)

// The shape arithmetic the emitter writes for a view of a static input folds
// down to one Constant feeding the Reshape.
func TestFoldShapeArithmetic(t *testing.T) {
	b := newGraph().input("x", tFloat, 2, 3, 4).
		node("Shape", []string{"x"}, []string{"shape"}).
		ints("i1", nil, 1).
		node("Gather", []string{"shape", "i1"}, []string{"d1"}, attrI("axis", 0)).
		ints("two", nil, 2).
		node("Mul", []string{"d1", "two"}, []string{"d1x2"}).
		ints("ax0", []int64{1}, 0).
		node("Unsqueeze", []string{"d1x2", "ax0"}, []string{"d1x2_1d"}).
		ints("minus1", []int64{1}, -1).
		node("Concat", []string{"minus1", "d1x2_1d"}, []string{"newshape"}, attrI("axis", 0)).
		node("Reshape", []string{"x", "newshape"}, []string{"y"}).
		output("y")
	m := b.model()
	st := optimize(t, m, Options{})
	if got := ops(m.Graph); !slices.Equal(got, []string{"Constant", "Reshape"}) {
		t.Fatalf("ops %v, want [Constant Reshape]", got)
	}
	dims, vs := constInts(t, m.Graph, m.Graph.Node[1].Input[1])
	if !slices.Equal(dims, []int64{2}) || !slices.Equal(vs, []int64{-1, 6}) {
		t.Errorf("shape constant %v %v, want [2] [-1 6]", dims, vs)
	}
	if st.Folded != 5 || st.NodesBefore != 10 || st.NodesAfter != 2 {
		t.Errorf("stats %s", st)
	}
}

// A symbolic dim is not folded: Shape of an input with a dim_param stays.
func TestNoFoldSymbolicShape(t *testing.T) {
	m := newGraph().input("x", tFloat, -1, 4).
		node("Shape", []string{"x"}, []string{"shape"}).
		node("Reshape", []string{"x", "shape"}, []string{"y"}).
		output("y").model()
	optimize(t, m, Options{})
	if got := ops(m.Graph); !slices.Equal(got, []string{"Shape", "Reshape"}) {
		t.Fatalf("ops %v", got)
	}
}

// ONNX-P24: Resize is never folded, even when every input is constant.
func TestResizeNeverFolded(t *testing.T) {
	x := &tensor{dt: tFloat, dims: []int64{1, 1, 2, 2}, raw: make([]byte, 16)}
	scales := &tensor{dt: tFloat, dims: []int64{4}, raw: make([]byte, 16)}
	m := newGraph().constant("x", x).constant("scales", scales).
		node("Resize", []string{"x", "", "scales"}, []string{"y"}).
		output("y").model()
	optimize(t, m, Options{FoldLimit: 1 << 20})
	if got := ops(m.Graph); !slices.Contains(got, "Resize") {
		t.Fatalf("Resize was folded: %v", got)
	}
	if _, ok := evaluators["Resize"]; ok {
		t.Error("Resize has an evaluator")
	}
	if _, ok := NeverFolded("Resize"); !ok {
		t.Error("Resize is not in the never-fold list")
	}
}

// ONNX-P24, second half: pattern constants match exactly.
func TestExactRewrites(t *testing.T) {
	cases := []struct {
		op     string
		c      *tensor
		cFirst bool
		gone   bool
	}{
		{"Add", f32Scalar(1e-10), false, false},          // x + 1e-10 is not x
		{"Add", f32Scalar(0), false, false},              // x + 0.0 turns -0.0 into +0.0
		{"Add", f32Scalar(float32NegZero()), true, true}, // -0.0 + x is x
		{"Sub", f32Scalar(0), false, true},
		{"Sub", f32Scalar(0), true, false}, // 0 - x is not x
		{"Mul", f32Scalar(1), true, true},
		{"Mul", f32Scalar(1.0000001), false, false},
		{"Div", f32Scalar(1), false, true},
		{"Div", f32Scalar(0.9999999), false, false},
		{"Add", int64Tensor(nil, []int64{0}), false, true},
		{"Mul", int64Tensor([]int64{1}, []int64{1}), false, false}, // rank 1 may broadcast a scalar x
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%d_%s", i, c.op), func(t *testing.T) {
			ins := []string{"x", "c"}
			if c.cFirst {
				ins = []string{"c", "x"}
			}
			m := newGraph().input("x", tFloat, 3).constant("c", c.c).
				node(c.op, ins, []string{"y"}).
				node("Relu", []string{"y"}, []string{"z"}).
				output("z").model()
			optimize(t, m, Options{})
			gone := !slices.Contains(ops(m.Graph), c.op)
			if gone != c.gone {
				t.Fatalf("%s removed=%v, want %v (ops %v)", c.op, gone, c.gone, ops(m.Graph))
			}
			if gone && m.Graph.Node[0].Input[0] != "x" {
				t.Errorf("Relu reads %q, want x", m.Graph.Node[0].Input[0])
			}
		})
	}
}

func float32NegZero() float32 {
	z := float32(0)
	return -z
}

// ONNX-S01: an output that is a graph input, or a value feeding two outputs,
// keeps its Identity; a lone internal Identity goes.
func TestIdentityRemovalKeepsDistinctOutputs(t *testing.T) {
	m := newGraph().input("x", tFloat, 3).
		node("Identity", []string{"x"}, []string{"out_passthrough"}).
		node("Relu", []string{"x"}, []string{"r"}).
		node("Identity", []string{"r"}, []string{"out_a"}).
		node("Identity", []string{"r"}, []string{"out_b"}).
		node("Neg", []string{"x"}, []string{"n"}).
		node("Identity", []string{"n"}, []string{"n2"}).
		node("Identity", []string{"n2"}, []string{"out_c"}).
		output("out_passthrough").output("out_a").output("out_b").output("out_c").model()
	optimize(t, m, Options{})
	got := strings.Join(ops(m.Graph), ",")
	if got != "Identity,Relu,Identity,Identity,Neg" {
		t.Fatalf("ops %s", got)
	}
	if p := producerOf(m.Graph, "out_c"); p == nil || p.GetOpType() != "Neg" {
		t.Errorf("out_c should be Neg's output after renaming, got %v", p)
	}
	// Each graph output has its own producer, none is an input.
	for _, o := range m.Graph.Output {
		if producerOf(m.Graph, o.GetName()) == nil {
			t.Errorf("output %s has no producer", o.GetName())
		}
	}
}

func TestCSEAndDCE(t *testing.T) {
	m := newGraph().input("x", tFloat, 3).
		node("Relu", []string{"x"}, []string{"a"}).
		node("Relu", []string{"x"}, []string{"b"}).
		node("Add", []string{"a", "b"}, []string{"y"}).
		node("Sigmoid", []string{"x"}, []string{"dead"}).
		node("Relu", []string{"x"}, []string{"out2"}). // a graph output: kept
		output("y").output("out2").model()
	init := int64Tensor([]int64{1}, []int64{7}).proto()
	init.Name = proto.String("unused.weight")
	m.Graph.Initializer = append(m.Graph.Initializer, init)
	st := optimize(t, m, Options{})
	if got := strings.Join(ops(m.Graph), ","); got != "Relu,Add,Relu" {
		t.Fatalf("ops %s", got)
	}
	if in := m.Graph.Node[1].Input; in[0] != "a" || in[1] != "a" {
		t.Errorf("Add reads %v, want [a a]", in)
	}
	if st.CSEMerged != 1 || st.DeadNodes != 1 || !slices.Equal(st.RemovedInitializers, []string{"unused.weight"}) || len(m.Graph.Initializer) != 0 {
		t.Errorf("stats %s, removed %v", st, st.RemovedInitializers)
	}
}

func TestFoldLimitAndInitializers(t *testing.T) {
	build := func() *pb.ModelProto {
		b := newGraph().input("x", tFloat, -1).
			ints("big", []int64{600}, make([]int64, 600)...).
			node("Concat", []string{"big", "big"}, []string{"cat"}, attrI("axis", 0)).
			node("Reshape", []string{"x", "cat"}, []string{"y"}).output("y")
		init := int64Tensor([]int64{1}, []int64{3}).proto()
		init.Name = proto.String("w.shape")
		b.g.Initializer = append(b.g.Initializer, init)
		b.node("Add", []string{"w.shape", "w.shape"}, []string{"s2"}).
			node("Reshape", []string{"x", "s2"}, []string{"y2"}).output("y2")
		return b.model()
	}
	m := build()
	optimize(t, m, Options{})
	if got := strings.Join(ops(m.Graph), ","); got != "Constant,Concat,Reshape,Add,Reshape" {
		t.Errorf("default: ops %s (1200 > 1024 elements, initializers not read)", got)
	}
	m = build()
	st := optimize(t, m, Options{FoldLimit: 2000, FoldInitializers: true})
	if got := strings.Join(ops(m.Graph), ","); got != "Constant,Reshape,Constant,Reshape" {
		t.Errorf("raised limit: ops %s", got)
	}
	if !slices.Equal(st.RemovedInitializers, []string{"w.shape"}) {
		t.Errorf("removed %v", st.RemovedInitializers)
	}
	m = build()
	optimize(t, m, Options{FoldLimit: -1})
	if slices.Contains(ops(m.Graph), "Constant") && len(m.Graph.Node) != 5 {
		t.Errorf("folding disabled: ops %v", ops(m.Graph))
	}
}

func TestFoldEvaluators(t *testing.T) {
	cases := []struct {
		name string
		b    func(b *gb) *gb
		dims []int64
		want []int64
	}{
		{"div-trunc", func(b *gb) *gb {
			return b.ints("a", []int64{2}, -7, 7).ints("c", nil, 2).node("Div", []string{"a", "c"}, []string{"y"})
		}, []int64{2}, []int64{-3, 3}},
		{"broadcast-sub", func(b *gb) *gb {
			return b.ints("a", []int64{2, 1}, 10, 20).ints("c", []int64{3}, 1, 2, 3).node("Sub", []string{"a", "c"}, []string{"y"})
		}, []int64{2, 3}, []int64{9, 8, 7, 19, 18, 17}},
		{"slice-neg-step", func(b *gb) *gb {
			return b.ints("a", []int64{5}, 0, 1, 2, 3, 4).ints("s", []int64{1}, -1).ints("e", []int64{1}, -6).ints("ax", []int64{1}, 0).ints("st", []int64{1}, -2).
				node("Slice", []string{"a", "s", "e", "ax", "st"}, []string{"y"})
		}, []int64{3}, []int64{4, 2, 0}},
		{"gather-2d", func(b *gb) *gb {
			return b.ints("a", []int64{2, 3}, 1, 2, 3, 4, 5, 6).ints("i", []int64{2}, -1, 0).node("Gather", []string{"a", "i"}, []string{"y"}, attrI("axis", 1))
		}, []int64{2, 2}, []int64{3, 1, 6, 4}},
		{"squeeze-reshape", func(b *gb) *gb {
			return b.ints("a", []int64{1, 4}, 1, 2, 3, 4).ints("ax", []int64{1}, 0).node("Squeeze", []string{"a", "ax"}, []string{"sq"}).
				ints("shape", []int64{2}, 2, -1).node("Reshape", []string{"sq", "shape"}, []string{"y"})
		}, []int64{2, 2}, []int64{1, 2, 3, 4}},
		{"shape-start-end", func(b *gb) *gb {
			return b.input("x", tFloat, 5, 6, 7).node("Shape", []string{"x"}, []string{"y"}, attrI("start", -2), attrI("end", 10))
		}, []int64{2}, []int64{6, 7}},
		{"cast-i32", func(b *gb) *gb {
			return b.ints("a", []int64{2}, 1<<33+5, -1).node("Cast", []string{"a"}, []string{"c"}, attrI("to", int64(tInt32))).
				node("Cast", []string{"c"}, []string{"y"}, attrI("to", int64(tInt64)))
		}, []int64{2}, []int64{5, -1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := c.b(newGraph()).output("y").model()
			optimize(t, m, Options{})
			dims, vs := constInts(t, m.Graph, "y")
			if !slices.Equal(dims, c.dims) || !slices.Equal(vs, c.want) {
				t.Errorf("got %v %v, want %v %v", dims, vs, c.dims, c.want)
			}
		})
	}
	// Declined: division by zero and an out-of-range gather stay.
	m := newGraph().ints("a", nil, 1).ints("z", nil, 0).node("Div", []string{"a", "z"}, []string{"y"}).
		ints("i", nil, 5).node("Gather", []string{"a2", "i"}, []string{"y2"}).output("y").output("y2").model()
	m.Graph.Node = slices.Insert(m.Graph.Node, 3, &pb.NodeProto{OpType: proto.String("Constant"), Output: []string{"a2"}, Attribute: []*pb.AttributeProto{{Name: proto.String("value"), Type: pb.AttributeProto_TENSOR.Enum(), T: int64Tensor([]int64{2}, []int64{1, 2}).proto()}}})
	optimize(t, m, Options{})
	if got := ops(m.Graph); !slices.Contains(got, "Div") || !slices.Contains(got, "Gather") {
		t.Errorf("declined folds happened: %v", got)
	}
}

func TestDeterministic(t *testing.T) {
	build := func() *pb.ModelProto {
		return newGraph().input("x", tFloat, 2, 3).
			node("Shape", []string{"x"}, []string{"s"}).node("Shape", []string{"x"}, []string{"s_dup"}).
			node("Reshape", []string{"x", "s"}, []string{"a"}).node("Reshape", []string{"x", "s_dup"}, []string{"b"}).
			node("Add", []string{"a", "b"}, []string{"y"}).output("y").model()
	}
	var first []byte
	for i := range 3 {
		m := build()
		optimize(t, m, Options{})
		data, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = data
		} else if string(first) != string(data) {
			t.Fatal("optimizer output differs across runs")
		}
	}
}

func TestMalformedGraphError(t *testing.T) {
	m := newGraph().input("x", tFloat, 2).node("Relu", []string{"nope"}, []string{"y"}).output("y").model()
	_, err := Optimize(m, Options{})
	if err == nil || !strings.Contains(err.Error(), `node "n.y" (Relu): input "nope"`) {
		t.Fatalf("err = %v", err)
	}
}
