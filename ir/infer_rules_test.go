package ir_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
)

// inferCase builds one node with the Builder (which binds, fills defaults and
// runs the op's rule) and checks the result types or the error.
type inferCase struct {
	name string
	op   string
	// in are the graph inputs' types (IR type syntax), referred to as "%0", "%1", …
	in []string
	// args are positional arguments, kw keyword arguments: "%N" is input N,
	// other strings are str literals; int, float64, bool, nil (None),
	// ir.DType, ir.MemoryFormat, ir.Arg and []any (a list) are literals.
	args []any
	kw   map[string]any
	// want are the result types ("u#" stands for the node's unbacked symbol u<ID>).
	want []string
	err  string
}

func toArg(t *testing.T, v any, in []*ir.Value) ir.Arg {
	switch x := v.(type) {
	case nil:
		return ir.NoneArg()
	case ir.Arg:
		return x
	case string:
		if strings.HasPrefix(x, "%") {
			i, err := strconv.Atoi(x[1:])
			if err != nil || i >= len(in) {
				t.Fatalf("bad input reference %q", x)
			}
			return ir.ValueArg(in[i])
		}
		return ir.StringArg(x)
	case int:
		return ir.IntArg(int64(x))
	case float64:
		return ir.FloatArg(x)
	case bool:
		return ir.BoolArg(x)
	case ir.DType:
		return ir.DTypeArg(x)
	case ir.MemoryFormat:
		return ir.MemoryFormatArg(x)
	case []any:
		l := make([]ir.Arg, len(x))
		for i, e := range x {
			l[i] = toArg(t, e, in)
		}
		return ir.ListArg(l...)
	}
	t.Fatalf("cannot turn %T into an argument", v)
	return ir.Arg{}
}

func runInferCases(t *testing.T, cases []inferCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := ir.NewProgram()
			var in []*ir.Value
			for i, s := range c.in {
				ty, err := ir.ParseType(s)
				if err != nil {
					t.Fatalf("input type %q: %v", s, err)
				}
				v, err := p.Main.AddInput("x"+strconv.Itoa(i), ty)
				if err != nil {
					t.Fatal(err)
				}
				in = append(in, v)
			}
			op, ok := ir.LookupOp(c.op)
			if !ok {
				t.Fatalf("unknown op %s", c.op)
			}
			var pos []ir.Arg
			for _, a := range c.args {
				pos = append(pos, toArg(t, a, in))
			}
			var kw map[string]ir.Arg
			if c.kw != nil {
				kw = map[string]ir.Arg{}
				for k, v := range c.kw {
					kw[k] = toArg(t, v, in)
				}
			}
			n, err := ir.NewBuilder(p.Main).CallKw(op, pos, kw)
			if c.err != "" {
				if err == nil {
					var got []string
					for _, r := range n.Results {
						got = append(got, r.Type.String())
					}
					t.Fatalf("want error containing %q, got results %v", c.err, got)
				}
				if !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %q does not contain %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(n.Results) != len(c.want) {
				var got []string
				for _, r := range n.Results {
					got = append(got, r.Type.String())
				}
				t.Fatalf("got %d results %v, want %d %v", len(n.Results), got, len(c.want), c.want)
			}
			for i, w := range c.want {
				w = strings.ReplaceAll(w, "u#", "u"+strconv.Itoa(n.ID))
				wt, err := ir.ParseType(w)
				if err != nil {
					t.Fatalf("want type %q: %v", w, err)
				}
				if got := n.Results[i].Type; !ir.TypeEqual(got, wt) {
					t.Errorf("result %d: got %s, want %s", i, got, wt)
				}
			}
		})
	}
}

func TestInferElementwise(t *testing.T) {
	runInferCases(t, []inferCase{
		{name: "add broadcast symbolic", op: "aten.add.Tensor", in: []string{"f32[s0, 4]", "f32[4]"}, args: []any{"%0", "%1"}, want: []string{"f32[s0, 4]"}},
		{name: "add broadcast both", op: "aten.add.Tensor", in: []string{"f32[2, 1]", "f32[1, 3]"}, args: []any{"%0", "%1"}, want: []string{"f32[2, 3]"}},
		{name: "add mismatch", op: "aten.add.Tensor", in: []string{"f32[2]", "f32[3]"}, args: []any{"%0", "%1"}, err: "broadcast"},
		{name: "i64 tensor * 1.5 is f32", op: "aten.mul.Scalar", in: []string{"i64[3]"}, args: []any{"%0", 1.5}, want: []string{"f32[3]"}},
		{name: "i64 tensor + 1 stays i64", op: "aten.add.Scalar", in: []string{"i64[3]"}, args: []any{"%0", 1}, want: []string{"i64[3]"}},
		{name: "i32 + i64 0-dim is i32", op: "aten.add.Tensor", in: []string{"i32[3]", "i64[]"}, args: []any{"%0", "%1"}, want: []string{"i32[3]"}},
		{name: "u8 + i8 is i16", op: "aten.add.Tensor", in: []string{"u8[3]", "i8[3]"}, args: []any{"%0", "%1"}, want: []string{"i16[3]"}},
		{name: "bool + bool is bool", op: "aten.add.Tensor", in: []string{"b8[3]", "b8[3]"}, args: []any{"%0", "%1"}, want: []string{"b8[3]"}},
		{name: "f16 + f32 0-dim is f16", op: "aten.add.Tensor", in: []string{"f16[3]", "f32[]"}, args: []any{"%0", "%1"}, want: []string{"f16[3]"}},
		{name: "int / int is f32", op: "aten.div.Tensor", in: []string{"i64[3]", "i32[3]"}, args: []any{"%0", "%1"}, want: []string{"f32[3]"}},
		{name: "div floor keeps int", op: "aten.div.Tensor_mode", in: []string{"i64[3]", "i64[3]"}, args: []any{"%0", "%1"}, kw: map[string]any{"rounding_mode": "floor"}, want: []string{"i64[3]"}},
		{name: "float alpha on ints", op: "aten.add.Tensor", in: []string{"i64[3]", "i64[3]"}, args: []any{"%0", "%1"}, kw: map[string]any{"alpha": 0.5}, err: "alpha"},
		{name: "pow scalar base", op: "aten.pow.Scalar", in: []string{"f16[s0]"}, args: []any{2, "%0"}, want: []string{"f16[s0]"}},
		{name: "bitwise on floats", op: "aten.bitwise_and.Tensor", in: []string{"f32[3]", "f32[3]"}, args: []any{"%0", "%1"}, err: "bitwise"},
		{name: "sin of int is f32", op: "aten.sin.default", in: []string{"i32[2, s0]"}, args: []any{"%0"}, want: []string{"f32[2, s0]"}},
		{name: "neg keeps int", op: "aten.neg.default", in: []string{"i32[2]"}, args: []any{"%0"}, want: []string{"i32[2]"}},
		{name: "abs of complex is real", op: "aten.abs.default", in: []string{"c64[2]"}, args: []any{"%0"}, want: []string{"f32[2]"}},
		{name: "isnan", op: "aten.isnan.default", in: []string{"f32[s0]"}, args: []any{"%0"}, want: []string{"b8[s0]"}},
		{name: "compare scalar", op: "aten.eq.Scalar", in: []string{"f32[s0, 3]"}, args: []any{"%0", 0}, want: []string{"b8[s0, 3]"}},
		{name: "logical_and", op: "aten.logical_and.default", in: []string{"b8[4, 1]", "i32[3]"}, args: []any{"%0", "%1"}, want: []string{"b8[4, 3]"}},
		{name: "where", op: "aten.where.self", in: []string{"b8[s0, 1]", "f32[1, 4]", "f64[]"}, args: []any{"%0", "%1", "%2"}, want: []string{"f32[s0, 4]"}},
		{name: "where needs bool", op: "aten.where.self", in: []string{"f32[2]", "f32[2]", "f32[2]"}, args: []any{"%0", "%1", "%2"}, err: "bool condition"},
		{name: "clamp promotes", op: "aten.clamp.default", in: []string{"i64[3]"}, args: []any{"%0", 0.5}, want: []string{"f32[3]"}},
		{name: "clamp none", op: "aten.clamp.default", in: []string{"f32[3]"}, args: []any{"%0"}, err: "at least one"},
		{name: "clamp tensor bounds", op: "aten.clamp.Tensor", in: []string{"f32[2, 3]", "f32[3]"}, args: []any{"%0", "%1"}, want: []string{"f32[2, 3]"}},
		{name: "masked_fill", op: "aten.masked_fill.Scalar", in: []string{"f32[s0, 4]", "b8[1, 4]"}, args: []any{"%0", "%1", -1.0}, want: []string{"f32[s0, 4]"}},
		{name: "complex", op: "aten.complex.default", in: []string{"f32[3]", "f32[2, 1]"}, args: []any{"%0", "%1"}, want: []string{"c64[2, 3]"}},
		{name: "gelu", op: "aten.gelu.default", in: []string{"bf16[2, 8]"}, args: []any{"%0"}, kw: map[string]any{"approximate": "tanh"}, want: []string{"bf16[2, 8]"}},
	})
}

func TestInferInplaceOutAndLayout(t *testing.T) {
	runInferCases(t, []inferCase{
		{name: "add_ in place", op: "aten.add_.Tensor", in: []string{"f32[2, 3]", "f32[3]"}, args: []any{"%0", "%1"}, want: []string{"f32[2, 3]"}},
		{name: "add_ float into int", op: "aten.add_.Tensor", in: []string{"i64[3]", "f32[3]"}, args: []any{"%0", "%1"}, err: "can't be cast"},
		{name: "add_ would broadcast self", op: "aten.add_.Tensor", in: []string{"f32[3]", "f32[2, 3]"}, args: []any{"%0", "%1"}, err: "doesn't match the broadcast shape"},
		{name: "relu_", op: "aten.relu_.default", in: []string{"f32[s0]"}, args: []any{"%0"}, want: []string{"f32[s0]"}},
		{name: "add.out", op: "aten.add.out", in: []string{"f32[3]", "f32[3]", "f32[3]"}, args: []any{"%0", "%1"}, kw: map[string]any{"out": "%2"}, want: []string{"f32[3]"}},
		{name: "max.dim_max", op: "aten.max.dim_max", in: []string{"f32[2, 3]", "f32[2]", "i64[2]"}, args: []any{"%0", 1}, kw: map[string]any{"max": "%1", "max_values": "%2"}, want: []string{"f32[2]", "i64[2]"}},
		{name: "split_with_sizes_copy.out returns nothing", op: "aten.split_with_sizes_copy.out", in: []string{"f32[4]", "f32[2]", "f32[2]"}, args: []any{"%0", []any{2, 2}}, kw: map[string]any{"out": []any{"%1", "%2"}}, want: nil},
		{name: "clone channels_last", op: "aten.clone.default", in: []string{"f32[2, 3, 4, 5]"}, args: []any{"%0"}, kw: map[string]any{"memory_format": ir.ChannelsLast}, want: []string{"f32[2, 3, 4, 5]{0,2,3,1}"}},
		{name: "clone preserve", op: "aten.clone.default", in: []string{"f32[2, 3, 4, 5]{0,2,3,1}"}, args: []any{"%0"}, want: []string{"f32[2, 3, 4, 5]{0,2,3,1}"}},
		{name: "contiguous", op: "aten.contiguous.default", in: []string{"f32[2, 3, 4, 5]{0,2,3,1}"}, args: []any{"%0"}, want: []string{"f32[2, 3, 4, 5]"}},
		{name: "channels_last needs rank 4", op: "aten.clone.default", in: []string{"f32[2, 3]"}, args: []any{"%0"}, kw: map[string]any{"memory_format": ir.ChannelsLast}, err: "rank-4"},
		{name: "_to_copy dtype", op: "aten._to_copy.default", in: []string{"f32[2, s0]"}, args: []any{"%0"}, kw: map[string]any{"dtype": ir.Float16}, want: []string{"f16[2, s0]"}},
		{name: "_to_copy device", op: "aten._to_copy.default", in: []string{"f32[2]"}, args: []any{"%0"}, kw: map[string]any{"device": ir.DeviceArg("cuda:0")}, want: []string{"f32[2]@cuda:0"}},
		{name: "to_dim_order_copy", op: "dim_order_ops._to_dim_order_copy.default", in: []string{"f32[1, 3, 8, 8]"}, args: []any{"%0"}, kw: map[string]any{"dtype": ir.Float16, "dim_order": []any{0, 2, 3, 1}}, want: []string{"f16[1, 3, 8, 8]{0,2,3,1}"}},
		{name: "bad dim order", op: "dim_order_ops._clone_dim_order.default", in: []string{"f32[1, 3]"}, args: []any{"%0"}, kw: map[string]any{"dim_order": []any{0, 0}}, err: "not a permutation"},
		{name: "empty_dim_order", op: "dim_order_ops._empty_dim_order.default", in: nil, args: []any{[]any{1, 3, 4, 4}}, kw: map[string]any{"dim_order": []any{0, 2, 3, 1}}, want: []string{"f32[1, 3, 4, 4]{0,2,3,1}"}},
		{name: "convert_element_type", op: "prims.convert_element_type.default", in: []string{"f32[2]"}, args: []any{"%0", ir.Int32}, want: []string{"i32[2]"}},
		{name: "assert has no results", op: "aten._assert_async.msg", in: []string{"b8[]"}, args: []any{"%0", "boom"}, want: nil},
		{name: "resize_", op: "aten.resize_.default", in: []string{"f32[2]"}, args: []any{"%0", []any{3, 4}}, want: []string{"f32[3, 4]"}},
	})
}

func TestInferReductions(t *testing.T) {
	runInferCases(t, []inferCase{
		{name: "sum of ints is i64", op: "aten.sum.dim_IntList", in: []string{"i32[s0, 4]"}, args: []any{"%0", []any{1}}, want: []string{"i64[s0]"}},
		{name: "sum keepdim", op: "aten.sum.dim_IntList", in: []string{"f32[s0, 4]"}, args: []any{"%0", []any{-1}, true}, want: []string{"f32[s0, 1]"}},
		{name: "sum dtype", op: "aten.sum.dim_IntList", in: []string{"f16[2, 4]"}, args: []any{"%0", nil}, kw: map[string]any{"dtype": ir.Float32}, want: []string{"f32[]"}},
		{name: "sum all bool", op: "aten.sum.default", in: []string{"b8[3]"}, args: []any{"%0"}, want: []string{"i64[]"}},
		{name: "sum repeated dim", op: "aten.sum.dim_IntList", in: []string{"f32[2, 3]"}, args: []any{"%0", []any{1, -1}}, err: "multiple times"},
		{name: "mean dim keepdim", op: "aten.mean.dim", in: []string{"f32[2, 3, 4]"}, args: []any{"%0", []any{-1}, true}, want: []string{"f32[2, 3, 1]"}},
		{name: "mean of ints", op: "aten.mean.default", in: []string{"i64[3]"}, args: []any{"%0"}, err: "floating point"},
		{name: "amax all", op: "aten.amax.default", in: []string{"f32[2, 3]"}, args: []any{"%0"}, want: []string{"f32[]"}},
		{name: "any dim", op: "aten.any.dim", in: []string{"f32[2, 3]"}, args: []any{"%0", 0}, want: []string{"b8[3]"}},
		{name: "argmax all", op: "aten.argmax.default", in: []string{"f32[2, 3]"}, args: []any{"%0"}, want: []string{"i64[]"}},
		{name: "argmax dim keepdim", op: "aten.argmax.default", in: []string{"f32[2, 3]"}, args: []any{"%0", 1, true}, want: []string{"i64[2, 1]"}},
		{name: "max.dim", op: "aten.max.dim", in: []string{"f32[s0, 5]"}, args: []any{"%0", 1}, want: []string{"f32[s0]", "i64[s0]"}},
		{name: "var correction", op: "aten.var.correction", in: []string{"f32[4, 5]"}, args: []any{"%0", []any{1}}, want: []string{"f32[4]"}},
		{name: "var of complex is real", op: "aten.var.dim", in: []string{"c64[4, 5]"}, args: []any{"%0", []any{0}}, want: []string{"f32[5]"}},
		{name: "var of ints", op: "aten.var.correction", in: []string{"i32[4]"}, args: []any{"%0"}, err: "floating point"},
		{name: "topk", op: "aten.topk.default", in: []string{"f32[s0, 10]"}, args: []any{"%0", 3}, want: []string{"f32[s0, 3]", "i64[s0, 3]"}},
		{name: "sort", op: "aten.sort.default", in: []string{"f32[s0, 10]"}, args: []any{"%0"}, want: []string{"f32[s0, 10]", "i64[s0, 10]"}},
		{name: "cumsum of ints", op: "aten.cumsum.default", in: []string{"i32[5]"}, args: []any{"%0", 0}, want: []string{"i64[5]"}},
		{name: "dim out of range", op: "aten.cumsum.default", in: []string{"f32[5]"}, args: []any{"%0", 1}, err: "out of range"},
		{name: "logsumexp of ints", op: "aten.logsumexp.default", in: []string{"i64[2, 3]"}, args: []any{"%0", []any{1}}, want: []string{"f32[2]"}},
		{name: "prims sum", op: "prims.sum.default", in: []string{"f32[2, 3, 4]"}, args: []any{"%0", []any{0, 2}}, want: []string{"f32[3]"}},
	})
}

func TestInferViews(t *testing.T) {
	runInferCases(t, []inferCase{
		{name: "view -1 symbolic", op: "aten.view.default", in: []string{"f32[s0, 4]"}, args: []any{"%0", []any{-1}}, want: []string{"f32[4*s0]"}},
		{name: "view -1 with dims", op: "aten.view.default", in: []string{"f32[s0, 4]"}, args: []any{"%0", []any{-1, 2}}, want: []string{"f32[2*s0, 2]"}},
		{name: "view sym list", op: "aten.view.default", in: []string{"f32[s0, 4]", "Sym(s0)"}, args: []any{"%0", []any{"%1", 2, 2}}, want: []string{"f32[s0, 2, 2]"}},
		{name: "view bad numel", op: "aten.view.default", in: []string{"f32[6]"}, args: []any{"%0", []any{4, -1}}, err: "invalid for input of size 6"},
		{name: "view two -1", op: "aten.view.default", in: []string{"f32[6]"}, args: []any{"%0", []any{-1, -1}}, err: "only one dimension"},
		{name: "reshape static", op: "aten.reshape.default", in: []string{"f32[2, 3, 4]"}, args: []any{"%0", []any{6, 4}}, want: []string{"f32[6, 4]"}},
		{name: "view.dtype", op: "aten.view.dtype", in: []string{"f32[2, 4]"}, args: []any{"%0", ir.Float16}, want: []string{"f16[2, 8]"}},
		{name: "slice start 1", op: "aten.slice.Tensor", in: []string{"f32[s0, 8]"}, args: []any{"%0", 0, 1}, want: []string{"f32[s0 - 1, 8]"}},
		{name: "slice negative start", op: "aten.slice.Tensor", in: []string{"f32[10]"}, args: []any{"%0", 0, -3}, want: []string{"f32[3]"}},
		{name: "slice negative end step", op: "aten.slice.Tensor", in: []string{"f32[10]"}, args: []any{"%0", 0, 2, -1, 2}, want: []string{"f32[4]"}},
		{name: "slice maxsize end", op: "aten.slice.Tensor", in: []string{"f32[5, 10]"}, args: []any{"%0", 1, 0, 9223372036854775807}, want: []string{"f32[5, 10]"}},
		{name: "slice past end", op: "aten.slice.Tensor", in: []string{"f32[10]"}, args: []any{"%0", 0, 20, 30}, want: []string{"f32[0]"}},
		{name: "slice end before start", op: "aten.slice.Tensor", in: []string{"f32[10]"}, args: []any{"%0", 0, 6, 2}, want: []string{"f32[0]"}},
		{name: "slice symbolic -1 end", op: "aten.slice.Tensor", in: []string{"f32[s0]"}, args: []any{"%0", 0, nil, -1}, want: []string{"f32[s0 - 1]"}},
		{name: "slice symbolic last", op: "aten.slice.Tensor", in: []string{"f32[s0]"}, args: []any{"%0", 0, -1}, want: []string{"f32[1]"}},
		{name: "slice symbolic bound", op: "aten.slice.Tensor", in: []string{"f32[s0, 4]", "Sym(s1)"}, args: []any{"%0", 0, 0, "%1"}, want: []string{"f32[s1, 4]"}},
		{name: "permute", op: "aten.permute.default", in: []string{"f32[2, 3, s0]"}, args: []any{"%0", []any{2, 0, 1}}, want: []string{"f32[s0, 2, 3]{1,2,0}"}}, // a view keeps the input strides
		{name: "permute repeated", op: "aten.permute.default", in: []string{"f32[2, 3]"}, args: []any{"%0", []any{0, 0}}, err: "repeated"},
		{name: "transpose", op: "aten.transpose.int", in: []string{"f32[2, 3, 4]"}, args: []any{"%0", 0, -1}, want: []string{"f32[4, 3, 2]{2,1,0}"}},
		{name: "t", op: "aten.t.default", in: []string{"f32[2, s0]"}, args: []any{"%0"}, want: []string{"f32[s0, 2]{1,0}"}},
		{name: "expand", op: "aten.expand.default", in: []string{"f32[1, 4]", "Sym(s0)"}, args: []any{"%0", []any{"%1", -1}}, want: []string{"f32[s0, 4]"}},
		{name: "expand new dims", op: "aten.expand.default", in: []string{"f32[3, 1]"}, args: []any{"%0", []any{2, 3, 5}}, want: []string{"f32[2, 3, 5]"}},
		{name: "expand mismatch", op: "aten.expand.default", in: []string{"f32[3]"}, args: []any{"%0", []any{4}}, err: "must match"},
		{name: "squeeze dim", op: "aten.squeeze.dim", in: []string{"f32[1, 3]"}, args: []any{"%0", 0}, want: []string{"f32[3]"}},
		{name: "squeeze non-1 dim is a no-op", op: "aten.squeeze.dim", in: []string{"f32[2, 3]"}, args: []any{"%0", 0}, want: []string{"f32[2, 3]"}},
		{name: "squeeze dims", op: "aten.squeeze.dims", in: []string{"f32[1, s0, 1]"}, args: []any{"%0", []any{0, 2}}, want: []string{"f32[s0]"}},
		{name: "squeeze all", op: "aten.squeeze.default", in: []string{"f32[1, s0, 1]"}, args: []any{"%0"}, want: []string{"f32[s0]"}},
		{name: "unsqueeze", op: "aten.unsqueeze.default", in: []string{"f32[3]"}, args: []any{"%0", -1}, want: []string{"f32[3, 1]"}},
		{name: "flatten", op: "aten.flatten.using_ints", in: []string{"f32[s0, 3, 4]"}, args: []any{"%0", 1}, want: []string{"f32[s0, 12]"}},
		{name: "unflatten", op: "aten.unflatten.int", in: []string{"f32[2, 12]"}, args: []any{"%0", 1, []any{3, -1}}, want: []string{"f32[2, 3, 4]"}},
		{name: "select", op: "aten.select.int", in: []string{"f32[s0, 4]"}, args: []any{"%0", 1, 2}, want: []string{"f32[s0]"}},
		{name: "select out of range", op: "aten.select.int", in: []string{"f32[3, 4]"}, args: []any{"%0", 1, 4}, err: "out of range"},
		{name: "narrow", op: "aten.narrow.default", in: []string{"f32[10, s0]"}, args: []any{"%0", 0, 2, 5}, want: []string{"f32[5, s0]"}},
		{name: "diagonal", op: "aten.diagonal.default", in: []string{"f32[3, 5, 2]"}, args: []any{"%0", 1}, want: []string{"f32[2, 3]"}},
		{name: "movedim", op: "aten.movedim.int", in: []string{"f32[2, 3, 4]"}, args: []any{"%0", 0, 2}, want: []string{"f32[3, 4, 2]{2,0,1}"}},
		{name: "unfold", op: "aten.unfold.default", in: []string{"f32[2, 10]"}, args: []any{"%0", 1, 4, 2}, want: []string{"f32[2, 4, 4]"}},
		{name: "broadcast_in_dim", op: "prims.broadcast_in_dim.default", in: []string{"f32[3]"}, args: []any{"%0", []any{2, 3}, []any{1}}, want: []string{"f32[2, 3]"}},
		{name: "view_as_real", op: "aten.view_as_real.default", in: []string{"c64[4]"}, args: []any{"%0"}, want: []string{"f32[4, 2]"}},
		{name: "view_as_complex", op: "aten.view_as_complex.default", in: []string{"f64[4, 2]"}, args: []any{"%0"}, want: []string{"c128[4]"}},
	})
}

func TestInferShapeOps(t *testing.T) {
	runInferCases(t, []inferCase{
		{name: "cat symbolic", op: "aten.cat.default", in: []string{"f32[s0, 4]", "f32[s1, 4]"}, args: []any{[]any{"%0", "%1"}}, want: []string{"f32[s0 + s1, 4]"}},
		{name: "cat dim 1 promotes", op: "aten.cat.default", in: []string{"f16[2, 3]", "f32[2, s0]"}, args: []any{[]any{"%0", "%1"}, 1}, want: []string{"f32[2, s0 + 3]"}},
		{name: "cat skips empty 1-d", op: "aten.cat.default", in: []string{"f32[0]", "f32[2, 3]"}, args: []any{[]any{"%0", "%1"}}, want: []string{"f32[2, 3]"}},
		{name: "cat mismatch", op: "aten.cat.default", in: []string{"f32[2, 3]", "f32[2, 4]"}, args: []any{[]any{"%0", "%1"}}, err: "must match"},
		{name: "stack", op: "aten.stack.default", in: []string{"f32[2, 3]", "f32[2, 3]"}, args: []any{[]any{"%0", "%1"}, 1}, want: []string{"f32[2, 2, 3]"}},
		{name: "split", op: "aten.split.Tensor", in: []string{"f32[10, 3]"}, args: []any{"%0", 4}, want: []string{"f32[4, 3]", "f32[4, 3]", "f32[2, 3]"}},
		{name: "split symbolic", op: "aten.split.Tensor", in: []string{"f32[s0, 3]"}, args: []any{"%0", 4}, err: "number of pieces must be static"},
		{name: "split multiple of symbolic", op: "aten.split.Tensor", in: []string{"f32[4*s0]", "Sym(s0)"}, args: []any{"%0", "%1"}, want: []string{"f32[s0]", "f32[s0]", "f32[s0]", "f32[s0]"}},
		{name: "split_with_sizes", op: "aten.split_with_sizes.default", in: []string{"f32[s0, 6]"}, args: []any{"%0", []any{2, 4}, 1}, want: []string{"f32[s0, 2]", "f32[s0, 4]"}},
		{name: "split_with_sizes bad sum", op: "aten.split_with_sizes.default", in: []string{"f32[6]"}, args: []any{"%0", []any{2, 3}}, err: "sum"},
		{name: "chunk", op: "aten.chunk.default", in: []string{"f32[7]"}, args: []any{"%0", 3}, want: []string{"f32[3]", "f32[3]", "f32[1]"}},
		{name: "unbind", op: "aten.unbind.int", in: []string{"f32[3, s0]"}, args: []any{"%0"}, want: []string{"f32[s0]", "f32[s0]", "f32[s0]"}},
		{name: "unbind symbolic", op: "aten.unbind.int", in: []string{"f32[s0, 3]"}, args: []any{"%0"}, err: "must be static"},
		{name: "constant_pad_nd", op: "aten.constant_pad_nd.default", in: []string{"f32[s0, 4]"}, args: []any{"%0", []any{1, 2}}, want: []string{"f32[s0, 7]"}},
		{name: "pad two dims", op: "aten.pad.default", in: []string{"f32[s0, 4]"}, args: []any{"%0", []any{1, 1, 2, 2}}, want: []string{"f32[s0 + 4, 6]"}},
		{name: "negative pad", op: "aten.constant_pad_nd.default", in: []string{"f32[4]"}, args: []any{"%0", []any{-1, -1}}, want: []string{"f32[2]"}},
		{name: "reflection_pad2d", op: "aten.reflection_pad2d.default", in: []string{"f32[1, 3, 8, 8]"}, args: []any{"%0", []any{1, 1, 2, 2}}, want: []string{"f32[1, 3, 12, 10]"}},
		{name: "repeat", op: "aten.repeat.default", in: []string{"f32[2, 3]"}, args: []any{"%0", []any{2, 1, 2}}, want: []string{"f32[2, 2, 6]"}},
		{name: "pixel_shuffle", op: "aten.pixel_shuffle.default", in: []string{"f32[1, 8, 3, 3]"}, args: []any{"%0", 2}, want: []string{"f32[1, 2, 6, 6]"}},
		{name: "one_hot static", op: "aten.one_hot.default", in: []string{"i64[s0]"}, args: []any{"%0", 10}, want: []string{"i64[s0, 10]"}},
		{name: "one_hot dynamic", op: "aten.one_hot.default", in: []string{"i64[3]"}, args: []any{"%0"}, want: []string{"i64[3, u#]"}},
	})
}

func TestInferIndexing(t *testing.T) {
	runInferCases(t, []inferCase{
		{name: "index adjacent", op: "aten.index.Tensor", in: []string{"f32[5, 6, 7]", "i64[3]", "i64[3]"}, args: []any{"%0", []any{nil, "%1", "%2"}}, want: []string{"f32[5, 3]"}},
		{name: "index non-adjacent", op: "aten.index.Tensor", in: []string{"f32[5, 6, 7]", "i64[3]", "i64[3]"}, args: []any{"%0", []any{"%1", nil, "%2"}}, want: []string{"f32[3, 6]"}},
		{name: "index broadcast", op: "aten.index.Tensor", in: []string{"f32[5, 6, 7]", "i64[2, 1]", "i64[4]"}, args: []any{"%0", []any{"%1", "%2"}}, want: []string{"f32[2, 4, 7]"}},
		{name: "index single", op: "aten.index.Tensor", in: []string{"f32[s0, 6]", "i64[s1]"}, args: []any{"%0", []any{"%1"}}, want: []string{"f32[s1, 6]"}},
		{name: "index bool mask", op: "aten.index.Tensor", in: []string{"f32[5, 6, 7]", "b8[5, 6]"}, args: []any{"%0", []any{"%1"}}, want: []string{"f32[u#, 7]"}},
		{name: "index too many", op: "aten.index.Tensor", in: []string{"f32[5]", "i64[2]", "i64[2]"}, args: []any{"%0", []any{"%1", "%2"}}, err: "too many indices"},
		{name: "index float", op: "aten.index.Tensor", in: []string{"f32[5]", "f32[2]"}, args: []any{"%0", []any{"%1"}}, err: "must be long"},
		{name: "index_put", op: "aten.index_put.default", in: []string{"f32[5, 6]", "i64[2]", "f32[2, 6]"}, args: []any{"%0", []any{"%1"}, "%2"}, want: []string{"f32[5, 6]"}},
		{name: "gather", op: "aten.gather.default", in: []string{"f32[3, 4]", "i64[3, 2]"}, args: []any{"%0", 1, "%1"}, want: []string{"f32[3, 2]"}},
		{name: "scatter", op: "aten.scatter.src", in: []string{"f32[3, 4]", "i64[3, 2]", "f32[3, 2]"}, args: []any{"%0", 1, "%1", "%2"}, want: []string{"f32[3, 4]"}},
		{name: "index_select", op: "aten.index_select.default", in: []string{"f32[5, 4]", "i64[s1]"}, args: []any{"%0", 0, "%1"}, want: []string{"f32[s1, 4]"}},
		{name: "embedding", op: "aten.embedding.default", in: []string{"f32[100, 16]", "i64[s0, 7]"}, args: []any{"%0", "%1"}, want: []string{"f32[s0, 7, 16]"}},
		{name: "embedding_bag", op: "aten._embedding_bag.default", in: []string{"f32[100, 16]", "i64[20]", "i64[4]"}, args: []any{"%0", "%1", "%2"}, want: []string{"f32[4, 16]", "i64[20]", "i64[4]", "i64[4]"}},
		{name: "nonzero", op: "aten.nonzero.default", in: []string{"f32[3, 4]"}, args: []any{"%0"}, want: []string{"i64[u#, 2]"}},
		{name: "unique_consecutive", op: "aten.unique_consecutive.default", in: []string{"i64[8]"}, args: []any{"%0", true, true}, want: []string{"i64[u#]", "i64[8]", "i64[u#]"}},
		{name: "repeat_interleave int", op: "aten.repeat_interleave.self_int", in: []string{"f32[s0, 3]"}, args: []any{"%0", 2, 0}, want: []string{"f32[2*s0, 3]"}},
		{name: "repeat_interleave flat", op: "aten.repeat_interleave.self_int", in: []string{"f32[2, 3]"}, args: []any{"%0", 2}, want: []string{"f32[12]"}},
		{name: "repeat_interleave tensor", op: "aten.repeat_interleave.Tensor", in: []string{"i64[4]"}, args: []any{"%0"}, want: []string{"i64[u#]"}},
		{name: "bucketize", op: "aten.bucketize.Tensor", in: []string{"f32[s0]", "f32[10]"}, args: []any{"%0", "%1"}, kw: map[string]any{"out_int32": true}, want: []string{"i32[s0]"}},
	})
}

func TestInferLinalgAndConv(t *testing.T) {
	runInferCases(t, []inferCase{
		{name: "mm", op: "aten.mm.default", in: []string{"f32[s0, 3]", "f32[3, 4]"}, args: []any{"%0", "%1"}, want: []string{"f32[s0, 4]"}},
		{name: "mm mismatch", op: "aten.mm.default", in: []string{"f32[2, 3]", "f32[4, 5]"}, args: []any{"%0", "%1"}, err: "cannot be multiplied"},
		{name: "mm dtypes", op: "aten.mm.default", in: []string{"f32[2, 3]", "f16[3, 5]"}, args: []any{"%0", "%1"}, err: "same dtype"},
		{name: "bmm", op: "aten.bmm.default", in: []string{"f32[8, 2, 3]", "f32[8, 3, 5]"}, args: []any{"%0", "%1"}, want: []string{"f32[8, 2, 5]"}},
		{name: "addmm", op: "aten.addmm.default", in: []string{"f32[4]", "f32[2, 3]", "f32[3, 4]"}, args: []any{"%0", "%1", "%2"}, want: []string{"f32[2, 4]"}},
		{name: "matmul broadcast", op: "aten.matmul.default", in: []string{"f32[5, 1, 2, 3]", "f32[4, 3, 6]"}, args: []any{"%0", "%1"}, want: []string{"f32[5, 4, 2, 6]"}},
		{name: "matmul vec vec", op: "aten.matmul.default", in: []string{"f32[3]", "f32[3]"}, args: []any{"%0", "%1"}, want: []string{"f32[]"}},
		{name: "matmul mat vec", op: "aten.matmul.default", in: []string{"f32[s0, 2, 3]", "f32[3]"}, args: []any{"%0", "%1"}, want: []string{"f32[s0, 2]"}},
		{name: "matmul vec mat", op: "aten.matmul.default", in: []string{"f32[3]", "f32[s0, 3, 4]"}, args: []any{"%0", "%1"}, want: []string{"f32[s0, 4]"}},
		{name: "linear", op: "aten.linear.default", in: []string{"f32[s0, 10, 8]", "f32[16, 8]", "f32[16]"}, args: []any{"%0", "%1", "%2"}, want: []string{"f32[s0, 10, 16]"}},
		{name: "einsum", op: "aten.einsum.default", in: []string{"f32[2, 3, 4]", "f32[2, 4, 5]"}, args: []any{"bij,bjk->bik", []any{"%0", "%1"}}, want: []string{"f32[2, 3, 5]"}},
		{name: "einsum implicit", op: "aten.einsum.default", in: []string{"f32[3, 4]", "f32[4, 5]"}, args: []any{"ij,jk", []any{"%0", "%1"}}, want: []string{"f32[3, 5]"}},
		{name: "einsum ellipsis", op: "aten.einsum.default", in: []string{"f32[s0, 7, 3, 4]"}, args: []any{"...ij->...ji", []any{"%0"}}, want: []string{"f32[s0, 7, 4, 3]"}},
		{name: "grouped_mm 2d x 3d", op: "aten._grouped_mm.default", in: []string{"bf16[s0, 64]", "bf16[8, 64, 32]", "i32[8]"}, args: []any{"%0", "%1", "%2"}, want: []string{"bf16[s0, 32]"}},
		{name: "grouped_mm_fallback", op: "transformers.grouped_mm_fallback.default", in: []string{"f32[s0, 64]", "f32[8, 64, 32]", "i64[8]"}, args: []any{"%0", "%1", "%2"}, want: []string{"f32[s0, 32]"}},
		{name: "convolution 7x7 stride 2", op: "aten.convolution.default", in: []string{"f32[1, 3, 224, 224]", "f32[64, 3, 7, 7]"},
			args: []any{"%0", "%1", nil, []any{2, 2}, []any{3, 3}, []any{1, 1}, false, []any{0, 0}, 1}, want: []string{"f32[1, 64, 112, 112]"}},
		{name: "conv2d symbolic", op: "aten.conv2d.default", in: []string{"f32[s0, 3, s1, s2]", "f32[8, 3, 3, 3]"}, args: []any{"%0", "%1"}, kw: map[string]any{"padding": []any{1}},
			want: []string{"f32[s0, 8, s1, s2]"}},
		{name: "conv2d stride symbolic", op: "aten.conv2d.default", in: []string{"f32[1, 3, s1, 9]", "f32[8, 3, 3, 3]"}, args: []any{"%0", "%1", nil, []any{2}},
			want: []string{"f32[1, 8, (s1 - 3)//2 + 1, 4]"}},
		{name: "conv2d groups", op: "aten.conv2d.default", in: []string{"f32[1, 8, 5, 5]", "f32[8, 1, 3, 3]"}, args: []any{"%0", "%1"}, kw: map[string]any{"groups": 8}, want: []string{"f32[1, 8, 3, 3]"}},
		{name: "conv2d channels", op: "aten.conv2d.default", in: []string{"f32[1, 4, 5, 5]", "f32[8, 3, 3, 3]"}, args: []any{"%0", "%1"}, err: "channels"},
		{name: "conv2d same", op: "aten.conv2d.padding", in: []string{"f32[1, 3, s1, 9]", "f32[8, 3, 3, 3]"}, args: []any{"%0", "%1"}, kw: map[string]any{"padding": "same"}, want: []string{"f32[1, 8, s1, 9]"}},
		{name: "conv1d unbatched", op: "aten.conv1d.default", in: []string{"f32[3, 10]", "f32[8, 3, 3]"}, args: []any{"%0", "%1"}, want: []string{"f32[8, 8]"}},
		{name: "conv_transpose2d", op: "aten.conv_transpose2d.input", in: []string{"f32[1, 16, 8, 8]", "f32[16, 8, 4, 4]"}, args: []any{"%0", "%1", nil, []any{2}, []any{1}}, want: []string{"f32[1, 8, 16, 16]"}},
		{name: "convolution transposed groups", op: "aten.convolution.default", in: []string{"f32[1, 4, 5]", "f32[4, 3, 3]"},
			args: []any{"%0", "%1", nil, []any{1}, []any{0}, []any{1}, true, []any{0}, 2}, want: []string{"f32[1, 6, 7]"}},
		{name: "convolution_backward", op: "aten.convolution_backward.default", in: []string{"f32[1, 8, 3, 3]", "f32[1, 3, 5, 5]", "f32[8, 3, 3, 3]"},
			args: []any{"%0", "%1", "%2", []any{8}, []any{1, 1}, []any{0, 0}, []any{1, 1}, false, []any{0, 0}, 1, []any{true, true, false}},
			want: []string{"f32[1, 3, 5, 5]", "f32[8, 3, 3, 3]", "none"}},
		{name: "cdist", op: "aten._cdist_forward.default", in: []string{"f32[2, 5, 3]", "f32[7, 3]"}, args: []any{"%0", "%1", 2.0, nil}, want: []string{"f32[2, 5, 7]"}},
	})
}

func TestInferPoolingAndResampling(t *testing.T) {
	runInferCases(t, []inferCase{
		{name: "max_pool ceil", op: "aten.max_pool2d_with_indices.default", in: []string{"f32[1, 3, 8, 8]"}, args: []any{"%0", []any{3, 3}, []any{2, 2}, []any{0, 0}, []any{1, 1}, true},
			want: []string{"f32[1, 3, 4, 4]", "i64[1, 3, 4, 4]"}},
		{name: "max_pool floor", op: "aten.max_pool2d_with_indices.default", in: []string{"f32[1, 3, 8, 8]"}, args: []any{"%0", []any{3, 3}, []any{2, 2}},
			want: []string{"f32[1, 3, 3, 3]", "i64[1, 3, 3, 3]"}},
		{name: "max_pool ceil last window in padding", op: "aten.max_pool2d.default", in: []string{"f32[1, 1, 5, 5]"}, args: []any{"%0", []any{2, 2}, []any{2, 2}, []any{1, 1}, []any{1, 1}, true},
			want: []string{"f32[1, 1, 3, 3]"}},
		{name: "avg_pool symbolic", op: "aten.avg_pool2d.default", in: []string{"f32[1, 3, s0, 8]"}, args: []any{"%0", []any{2, 2}},
			want: []string{"f32[1, 3, (s0 - 2)//2 + 1, 4]"}},
		{name: "avg_pool1d unbatched", op: "aten.avg_pool1d.default", in: []string{"f32[3, 10]"}, args: []any{"%0", []any{3}, []any{1}, []any{1}}, want: []string{"f32[3, 10]"}},
		{name: "pool pad too big", op: "aten.avg_pool2d.default", in: []string{"f32[1, 3, 8, 8]"}, args: []any{"%0", []any{2, 2}, []any{2, 2}, []any{2, 2}}, err: "half of the effective kernel"},
		{name: "adaptive", op: "aten._adaptive_avg_pool2d.default", in: []string{"f32[2, 3, s0, s1]"}, args: []any{"%0", []any{1, 1}}, want: []string{"f32[2, 3, 1, 1]"}},
		{name: "pool backward", op: "aten.avg_pool2d_backward.default", in: []string{"f32[1, 3, 4, 4]", "f32[1, 3, 8, 8]"},
			args: []any{"%0", "%1", []any{2, 2}, []any{2, 2}, []any{0, 0}, false, true, nil}, want: []string{"f32[1, 3, 8, 8]"}},
		{name: "upsample scale", op: "aten.upsample_nearest2d.vec", in: []string{"f32[1, 3, s0, 8]"}, args: []any{"%0", nil, []any{2.0, 1.5}}, want: []string{"f32[1, 3, 2*s0, 12]"}},
		{name: "upsample size", op: "aten.upsample_bilinear2d.vec", in: []string{"f32[1, 3, s0, 8]"}, args: []any{"%0", []any{32, 32}, false, nil}, want: []string{"f32[1, 3, 32, 32]"}},
		{name: "upsample symbolic non-integer", op: "aten.upsample_nearest2d.vec", in: []string{"f32[1, 3, s0, 8]"}, args: []any{"%0", nil, []any{1.5, 1.5}}, err: "non-integer"},
		{name: "grid_sampler", op: "aten.grid_sampler_2d.default", in: []string{"f32[2, 3, 8, 8]", "f32[2, 5, 6, 2]"}, args: []any{"%0", "%1", 0, 0, false}, want: []string{"f32[2, 3, 5, 6]"}},
		{name: "im2col", op: "aten.im2col.default", in: []string{"f32[1, 3, 8, 8]"}, args: []any{"%0", []any{2, 2}, []any{1, 1}, []any{0, 0}, []any{2, 2}}, want: []string{"f32[1, 12, 16]"}},
		{name: "col2im", op: "aten.col2im.default", in: []string{"f32[1, 12, 16]"}, args: []any{"%0", []any{8, 8}, []any{2, 2}, []any{1, 1}, []any{0, 0}, []any{2, 2}}, want: []string{"f32[1, 3, 8, 8]"}},
	})
}

func TestInferNormalizationAndAttention(t *testing.T) {
	runInferCases(t, []inferCase{
		{name: "native_layer_norm", op: "aten.native_layer_norm.default", in: []string{"f32[s0, 10, 32]", "f32[32]", "f32[32]"}, args: []any{"%0", []any{32}, "%1", "%2", 1e-5},
			want: []string{"f32[s0, 10, 32]", "f32[s0, 10, 1]", "f32[s0, 10, 1]"}},
		{name: "native_layer_norm two dims", op: "aten.native_layer_norm.default", in: []string{"f32[4, 10, 32]"}, args: []any{"%0", []any{10, 32}, nil, nil, 1e-5},
			want: []string{"f32[4, 10, 32]", "f32[4, 1, 1]", "f32[4, 1, 1]"}},
		{name: "native_layer_norm bad shape", op: "aten.native_layer_norm.default", in: []string{"f32[4, 32]"}, args: []any{"%0", []any{16}, nil, nil, 1e-5}, err: "normalized_shape"},
		{name: "layer_norm half on cuda keeps f32 stats", op: "aten.native_layer_norm.default", in: []string{"f16[4, 32]@cuda:0"}, args: []any{"%0", []any{32}, nil, nil, 1e-5},
			want: []string{"f16[4, 32]@cuda:0", "f32[4, 1]@cuda:0", "f32[4, 1]@cuda:0"}},
		{name: "batch norm eval", op: "aten._native_batch_norm_legit_no_training.default", in: []string{"f32[2, 3, 4, 4]", "f32[3]", "f32[3]", "f32[3]", "f32[3]"},
			args: []any{"%0", "%1", "%2", "%3", "%4", 0.1, 1e-5}, want: []string{"f32[2, 3, 4, 4]", "f32[0]", "f32[0]"}},
		{name: "batch norm train", op: "aten._native_batch_norm_legit.no_stats", in: []string{"f32[s0, 3, 4]"}, args: []any{"%0", nil, nil, true, 0.1, 1e-5},
			want: []string{"f32[s0, 3, 4]", "f32[3]", "f32[3]"}},
		{name: "batch norm functional", op: "aten._native_batch_norm_legit_functional.default", in: []string{"f32[2, 3]", "f32[3]", "f32[3]"},
			args: []any{"%0", nil, nil, "%1", "%2", true, 0.1, 1e-5}, want: []string{"f32[2, 3]", "f32[3]", "f32[3]", "f32[3]", "f32[3]"}},
		{name: "group norm", op: "aten.native_group_norm.default", in: []string{"f32[2, 6, 4, 4]"}, args: []any{"%0", nil, nil, 2, 6, 16, 3, 1e-5},
			want: []string{"f32[2, 6, 4, 4]", "f32[2, 3]", "f32[2, 3]"}},
		{name: "layer norm backward mask", op: "aten.native_layer_norm_backward.default", in: []string{"f32[4, 8]", "f32[4, 8]", "f32[4, 1]", "f32[4, 1]", "f32[8]"},
			args: []any{"%0", "%1", []any{8}, "%2", "%3", "%4", nil, []any{true, true, false}}, want: []string{"f32[4, 8]", "f32[8]", "none"}},
		{name: "fused rms norm", op: "aten._fused_rms_norm.default", in: []string{"f32[2, 5, 8]", "f32[8]"}, args: []any{"%0", []any{8}, "%1", 1e-6},
			want: []string{"f32[2, 5, 8]", "f32[2, 5, 1]"}},
		{name: "layer_norm composite", op: "aten.layer_norm.default", in: []string{"f32[s0, 8]"}, args: []any{"%0", []any{8}}, want: []string{"f32[s0, 8]"}},
		{name: "_softmax half_to_float", op: "aten._softmax.default", in: []string{"f16[2, 3]"}, args: []any{"%0", 1, true}, want: []string{"f32[2, 3]"}},
		{name: "softmax dtype", op: "aten.softmax.int", in: []string{"f16[2, 3]"}, args: []any{"%0", -1, ir.Float32}, want: []string{"f32[2, 3]"}},
		{name: "softmax of ints", op: "aten.softmax.int", in: []string{"i64[2, 3]"}, args: []any{"%0", -1}, err: "not implemented"},
		{name: "native_dropout", op: "aten.native_dropout.default", in: []string{"f32[s0, 8]"}, args: []any{"%0", 0.5, true}, want: []string{"f32[s0, 8]", "b8[s0, 8]"}},
		{name: "sdpa", op: "aten.scaled_dot_product_attention.default", in: []string{"f32[2, 8, s0, 64]", "f32[2, 8, s1, 64]", "f32[2, 8, s1, 32]"},
			args: []any{"%0", "%1", "%2"}, want: []string{"f32[2, 8, s0, 32]"}},
		{name: "sdpa mismatch", op: "aten.scaled_dot_product_attention.default", in: []string{"f32[2, 8, 4, 64]", "f32[2, 8, 5, 64]", "f32[2, 8, 6, 64]"},
			args: []any{"%0", "%1", "%2"}, err: "sequence lengths"},
		{name: "sdpa flash cpu", op: "aten._scaled_dot_product_flash_attention_for_cpu.default", in: []string{"bf16[2, 8, 16, 64]", "bf16[2, 8, 16, 64]", "bf16[2, 8, 16, 64]"},
			args: []any{"%0", "%1", "%2"}, want: []string{"bf16[2, 8, 16, 64]", "f32[2, 8, 16]"}},
		{name: "varlen attention", op: "torch_attn._varlen_attn.default", in: []string{"f16[s0, 8, 64]", "f16[s1, 8, 64]", "f16[s1, 8, 64]", "i32[5]", "i32[5]"},
			args: []any{"%0", "%1", "%2", "%3", "%4", 128, 128}, want: []string{"f16[s0, 8, 64]", "f32[8, s0]", "u64[2]"}},
	})
}

func TestInferFactories(t *testing.T) {
	runInferCases(t, []inferCase{
		{name: "full float", op: "aten.full.default", in: []string{"Sym(s0)"}, args: []any{[]any{2, "%0"}, 1.5}, want: []string{"f32[2, s0]"}},
		{name: "full int", op: "aten.full.default", args: []any{[]any{2}, 1}, want: []string{"i64[2]"}},
		{name: "full bool", op: "aten.full.default", args: []any{[]any{2}, true}, want: []string{"b8[2]"}},
		{name: "full dtype", op: "aten.full.default", args: []any{[]any{2}, 1}, kw: map[string]any{"dtype": ir.Float16}, want: []string{"f16[2]"}},
		{name: "zeros", op: "aten.zeros.default", args: []any{[]any{3, 4}}, want: []string{"f32[3, 4]"}},
		{name: "empty channels_last", op: "aten.empty.memory_format", args: []any{[]any{1, 3, 4, 4}}, kw: map[string]any{"memory_format": ir.ChannelsLast}, want: []string{"f32[1, 3, 4, 4]{0,2,3,1}"}},
		{name: "negative size", op: "aten.zeros.default", args: []any{[]any{-1}}, err: "negative"},
		{name: "zeros_like", op: "aten.zeros_like.default", in: []string{"i32[2, s0]@cuda:0"}, args: []any{"%0"}, want: []string{"i32[2, s0]@cuda:0"}},
		{name: "ones_like dtype", op: "aten.ones_like.default", in: []string{"i32[2]"}, args: []any{"%0"}, kw: map[string]any{"dtype": ir.Bool}, want: []string{"b8[2]"}},
		{name: "new_zeros", op: "aten.new_zeros.default", in: []string{"f16[2]"}, args: []any{"%0", []any{5}}, want: []string{"f16[5]"}},
		{name: "scalar_tensor", op: "aten.scalar_tensor.default", args: []any{3}, want: []string{"f32[]"}},
		{name: "arange symbolic", op: "aten.arange.default", in: []string{"Sym(s0)"}, args: []any{"%0"}, want: []string{"i64[s0]"}},
		{name: "arange step", op: "aten.arange.start_step", args: []any{0, 10, 3}, want: []string{"i64[4]"}},
		{name: "arange float", op: "aten.arange.default", args: []any{5.0}, want: []string{"f32[5]"}},
		{name: "arange float step", op: "aten.arange.start_step", args: []any{0, 1, 0.25}, want: []string{"f32[4]"}},
		{name: "arange negative step", op: "aten.arange.start_step", args: []any{10, 0, -3}, want: []string{"i64[4]"}},
		{name: "arange symbolic step", op: "aten.arange.start_step", in: []string{"Sym(s0)"}, args: []any{1, "%0", 2}, want: []string{"i64[(s0 - 1 + 1)//2]"}},
		{name: "arange empty", op: "aten.arange.start", args: []any{5, 2}, want: []string{"i64[0]"}},
		{name: "randperm", op: "aten.randperm.default", in: []string{"Sym(s0)"}, args: []any{"%0"}, want: []string{"i64[s0]"}},
		{name: "randint", op: "aten.randint.low", args: []any{0, 10, []any{3}}, want: []string{"i64[3]"}},
		{name: "rand", op: "aten.rand.default", args: []any{[]any{2}}, kw: map[string]any{"device": ir.DeviceArg("cuda")}, want: []string{"f32[2]@cuda"}},
		{name: "linspace", op: "aten.linspace.default", args: []any{0, 1, 5}, want: []string{"f32[5]"}},
		{name: "eye", op: "aten.eye.default", args: []any{3}, want: []string{"f32[3, 3]"}},
		{name: "iota", op: "prims.iota.default", args: []any{5}, kw: map[string]any{"start": 0, "step": 1, "dtype": ir.Int32, "device": ir.DeviceArg("cpu"), "requires_grad": false}, want: []string{"i32[5]"}},
		{name: "fft r2c", op: "aten._fft_r2c.default", in: []string{"f32[4, 16]"}, args: []any{"%0", []any{1}, 0, true}, want: []string{"c64[4, 9]"}},
		{name: "fft c2r", op: "aten._fft_c2r.default", in: []string{"c64[4, 9]"}, args: []any{"%0", []any{1}, 0, 16}, want: []string{"f32[4, 16]"}},
		{name: "fft c2c", op: "aten._fft_c2c.default", in: []string{"c64[4, 9]"}, args: []any{"%0", []any{1}, 0, true}, want: []string{"c64[4, 9]"}},
		{name: "fft_irfft", op: "aten.fft_irfft.default", in: []string{"c64[4, s0]"}, args: []any{"%0"}, want: []string{"f32[4, 2*s0 - 2]"}},
	})
}

func TestInferSymbolic(t *testing.T) {
	runInferCases(t, []inferCase{
		{name: "sym_size", op: "aten.sym_size.int", in: []string{"f32[s0, 4]"}, args: []any{"%0", 0}, want: []string{"Sym(s0)"}},
		{name: "sym_size static", op: "aten.sym_size.int", in: []string{"f32[s0, 4]"}, args: []any{"%0", -1}, want: []string{"Sym(4)"}},
		{name: "sym_numel", op: "aten.sym_numel.default", in: []string{"f32[s0, 4]"}, args: []any{"%0"}, want: []string{"Sym(4*s0)"}},
		{name: "sym_stride", op: "aten.sym_stride.int", in: []string{"f32[s0, 4, s1]"}, args: []any{"%0", 0}, want: []string{"Sym(4*Max(1, s1))"}},
		{name: "sym_stride channels_last", op: "aten.sym_stride.int", in: []string{"f32[2, 3, 4, 5]{0,2,3,1}"}, args: []any{"%0", 1}, want: []string{"Sym(1)"}},
		{name: "sym_size all", op: "aten.sym_size.default", in: []string{"f32[s0, 4]"}, args: []any{"%0"}, want: []string{"Sym(s0)", "Sym(4)"}},
		{name: "add", op: "operator.add", in: []string{"Sym(s0)"}, args: []any{"%0", 1}, want: []string{"Sym(s0 + 1)"}},
		{name: "mul", op: "operator.mul", in: []string{"Sym(s0)", "Sym(s1)"}, args: []any{"%0", "%1"}, want: []string{"Sym(s0*s1)"}},
		{name: "floordiv", op: "operator.floordiv", in: []string{"Sym(s0)"}, args: []any{"%0", 2}, want: []string{"Sym(s0//2)"}},
		{name: "floordiv by zero", op: "operator.floordiv", in: []string{"Sym(s0)"}, args: []any{"%0", 0}, err: "by zero"},
		{name: "mod", op: "operator.mod", in: []string{"Sym(s0)"}, args: []any{"%0", 4}, want: []string{"Sym(Mod(s0, 4))"}},
		{name: "pow", op: "operator.pow", in: []string{"Sym(s0)"}, args: []any{"%0", 2}, want: []string{"Sym(s0**2)"}},
		{name: "truediv", op: "operator.truediv", in: []string{"Sym(s0)"}, args: []any{"%0", 2}, want: []string{"SymFloat"}},
		{name: "plain ints", op: "operator.add", in: []string{"int"}, args: []any{"%0", 1}, want: []string{"int"}},
		{name: "float operand", op: "operator.mul", in: []string{"Sym(s0)"}, args: []any{"%0", 0.5}, want: []string{"SymFloat"}},
		{name: "eq", op: "operator.eq", in: []string{"Sym(s0)"}, args: []any{"%0", 4}, want: []string{"SymBool(Eq(s0, 4))"}},
		{name: "lt", op: "operator.lt", in: []string{"Sym(s0)", "Sym(s1)"}, args: []any{"%0", "%1"}, want: []string{"SymBool(s0 < s1)"}},
		{name: "not", op: "operator.not_", in: []string{"SymBool(Eq(s0, 4))"}, args: []any{"%0"}, want: []string{"SymBool(Ne(s0, 4))"}},
		{name: "and", op: "operator.and_", in: []string{"SymBool(Eq(s0, 4))", "SymBool(s1 < 3)"}, args: []any{"%0", "%1"}, want: []string{"SymBool(Eq(s0, 4) & (s1 < 3))"}},
		{name: "neg", op: "operator.neg", in: []string{"Sym(s0)"}, args: []any{"%0"}, want: []string{"Sym(-s0)"}},
		{name: "sym_max", op: "torch.sym_max", in: []string{"Sym(s0)"}, args: []any{"%0", 4}, want: []string{"Sym(Max(4, s0))"}},
		{name: "sym_min", op: "torch.sym_min", in: []string{"Sym(s0)", "Sym(s1)"}, args: []any{"%0", "%1"}, want: []string{"Sym(Min(s0, s1))"}},
		{name: "sym_float", op: "torch.sym_float", in: []string{"Sym(s0)"}, args: []any{"%0"}, want: []string{"SymFloat"}},
		{name: "ceil of float", op: "math.ceil", in: []string{"SymFloat"}, args: []any{"%0"}, want: []string{"SymInt"}},
		{name: "floor of int", op: "math.floor", in: []string{"Sym(s0)"}, args: []any{"%0"}, want: []string{"Sym(s0)"}},
		{name: "round ndigits", op: "builtins.round", in: []string{"SymFloat"}, args: []any{"%0", 2}, want: []string{"SymFloat"}},
		{name: "sym_sum", op: "torch.sym_sum", in: []string{"Sym(s0)", "Sym(s1)"}, args: []any{[]any{"%0", "%1", 3}}, want: []string{"Sym(s0 + s1 + 3)"}},
		{name: "sym_ite", op: "torch.sym_ite", in: []string{"SymBool(Eq(s0, 4))", "Sym(s1)"}, args: []any{"%0", "%1", "%1"}, want: []string{"Sym(s1)"}},
		{name: "executorch add", op: "executorch_prim.add.Scalar", in: []string{"Sym(s0)"}, args: []any{"%0", 3}, want: []string{"Sym(s0 + 3)"}},
		{name: "executorch gt", op: "executorch_prim.gt.Scalar", in: []string{"Sym(s0)"}, args: []any{"%0", 3}, want: []string{"SymBool(s0 > 3)"}},
		{name: "item of int", op: "aten._local_scalar_dense.default", in: []string{"i64[]"}, args: []any{"%0"}, want: []string{"Sym(u#)"}},
		{name: "item of float", op: "aten.item.default", in: []string{"f32[1]"}, args: []any{"%0"}, want: []string{"SymFloat"}},
		{name: "item of many", op: "aten.item.default", in: []string{"f32[3]"}, args: []any{"%0"}, err: "cannot be converted"},
		{name: "et_view", op: "executorch_prim.et_view.default", in: []string{"f32[2, 6]"}, args: []any{"%0", []any{3, 4}}, want: []string{"f32[3, 4]"}},
	})
}

func TestUnbackedSymbolDeclared(t *testing.T) {
	p := ir.NewProgram()
	x, err := p.Main.AddInput("x", ir.Tensor(ir.Float32, 3, 4))
	if err != nil {
		t.Fatal(err)
	}
	n, err := ir.NewBuilder(p.Main).Call(ir.OpAtenNonzero, ir.ValueArg(x))
	if err != nil {
		t.Fatal(err)
	}
	name := "u" + strconv.Itoa(n.ID)
	r, ok := p.Env.Range(name)
	if !ok || !p.Env.IsUnbacked(name) || r.Lo.V != 0 || !r.Lo.IsFinite() {
		t.Fatalf("unbacked %s not declared: %v %v", name, r, ok)
	}
}

// The verifier reads a producer's own numbering of data-dependent sizes
// (torch's u0, u1, …) as naming the fresh symbols inference makes, and
// still refuses a recorded size that contradicts an operand.
func TestVerifyUnbackedNumbering(t *testing.T) {
	src := `symbol u0: [0, inf] unbacked
symbol u1: [0, inf] unbacked

graph forward(%x: f32[6, 2], %n: i64[]) {
  %item: Sym(u0) = aten.item.default(%n)
  %slice: f32[u1, 2] = aten.slice.Tensor(%x, 0, 0, %item)
  return %slice
}
`
	p, err := ir.Parse([]byte(src), "t.fxir")
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.VerifyWith(p, ir.VerifyOptions{Types: true}); err != nil {
		t.Fatalf("torch's numbering refused: %v", err)
	}
	bad := strings.Replace(src, "%slice: f32[u1, 2]", "%slice: f32[u1, 3]", 1)
	if p, err = ir.Parse([]byte(bad), "t.fxir"); err != nil {
		t.Fatal(err)
	}
	if err := ir.VerifyWith(p, ir.VerifyOptions{Types: true}); err == nil || !strings.Contains(err.Error(), "op infers") {
		t.Fatalf("a wrong static dim passed: %v", err)
	}
}
