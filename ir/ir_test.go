package ir_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

const mlpText = `meta "origin" = "hand-written"
symbol s0: [2, 1024] hint 8
input p_fc_weight: parameter "fc.weight"
input x: user_input
output user_output
weight "fc.weight": f32[8, 4] = inline("0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f")

graph forward(%p_fc_weight: f32[8, 4], %x: f32[s0, 4]) {
  %t: f32[4, 8] = aten.t.default(%p_fc_weight)
  %mm: f32[s0, 8] = aten.mm.default(%x, %t) {stack_trace = "model.py:12"}
  %relu: f32[s0, 8] = aten.relu.default(%mm)
  %add: f32[s0, 8] = aten.add.Tensor(%relu, %mm, alpha=2)
  return %add
}
`

func mustParse(t testing.TB, src string) *ir.Program {
	t.Helper()
	p, err := ir.Parse([]byte(src), "test.fxir")
	require.NoError(t, err)
	return p
}

func TestPrintParseRoundTrip(t *testing.T) {
	p := mustParse(t, mlpText)
	require.NoError(t, ir.Verify(p))
	require.Equal(t, mlpText, ir.Print(p))
	// And once more through the printer.
	q := mustParse(t, ir.Print(p))
	require.Equal(t, ir.Print(p), ir.Print(q))
}

func TestParseTrivialSignature(t *testing.T) {
	src := "graph forward(%x: f32[2]) {\n  %n: f32[2] = aten.neg.default(%x)\n  return %n\n}\n"
	p := mustParse(t, src)
	require.Len(t, p.Signature.Inputs, 1)
	require.Equal(t, ir.UserInput, p.Signature.Inputs[0].Kind)
	require.NoError(t, ir.Verify(p))
	require.Equal(t, src, ir.Print(p))
}

func TestParseDefaultsFilled(t *testing.T) {
	p := mustParse(t, "graph forward(%x: f32[2], %y: f32[2]) {\n  %a: f32[2] = aten.add.Tensor(%x, %y)\n  return %a\n}\n")
	n := p.Main.First()
	require.Equal(t, ir.ArgInt, n.Arg("alpha").Kind)
	require.Equal(t, int64(1), n.Arg("alpha").Int)
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"unknown op", "graph f(%x: f32[2]) {\n  %a: f32[2] = aten.nope.default(%x)\n  return %a\n}\n", `unknown op "aten.nope.default"`},
		{"undefined value", "graph f(%x: f32[2]) {\n  %a: f32[2] = aten.neg.default(%y)\n  return %a\n}\n", "undefined value %y"},
		{"duplicate value", "graph f(%x: f32[2]) {\n  %x: f32[2] = aten.neg.default(%x)\n  return %x\n}\n", "defined twice"},
		{"bad dtype", "graph f(%x: q9[2]) {\n  return %x\n}\n", `unknown dtype "q9"`},
		{"missing return", "graph f(%x: f32[2]) {\n", "missing return"},
		{"wrong args", "graph f(%x: f32[2]) {\n  %a: f32[2] = aten.neg.default(%x, %x)\n  return %a\n}\n", "takes 1 arguments"},
		{"bad kwarg", "graph f(%x: f32[2]) {\n  %a: f32[2] = aten.neg.default(%x, bogus=1)\n  return %a\n}\n", `no argument "bogus"`},
		{"no graph", "meta \"a\" = \"b\"\n", "no graph"},
		{"bad symbol", "symbol s0: [2]\ngraph f() {\n  return\n}\n", "two bounds"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ir.Parse([]byte(c.src), "bad.fxir")
			require.Error(t, err)
			require.Contains(t, err.Error(), c.want)
			require.True(t, strings.HasPrefix(err.Error(), "bad.fxir:"), err.Error())
		})
	}
}

func TestTypesRoundTrip(t *testing.T) {
	for _, s := range []string{
		"f32[s0, 4]", "bf16[]", "i64[2*s0 + 1]", "f16[2, 3, 4, 5]{0,2,3,1}", "f32[4]@cuda:0",
		"Sym(s0)", "SymInt", "SymFloat", "SymBool", "int", "float", "bool", "str", "none", "token",
		"list<f32[2]>", "optional<i64[]>", "tuple<f32[2], Sym(s1)>", "opaque<__torch__.torch.classes.m.Foo>",
		"c64[3]", "f8e4m3fn[8]", "u16[1]", "b8[s0]",
	} {
		ty, err := ir.ParseType(s)
		require.NoError(t, err, s)
		require.Equal(t, s, ty.String())
	}
}

func TestUseListsAndRAUW(t *testing.T) {
	p := mustParse(t, mlpText)
	mm := p.Main.Value("mm")
	relu := p.Main.Value("relu")
	require.Equal(t, 2, mm.NumUses())
	require.Equal(t, 1, relu.NumUses())
	// add(relu, mm) becomes add(mm, mm): mm is used by relu once and by add twice.
	relu.ReplaceAllUsesWith(mm)
	require.Equal(t, 0, relu.NumUses())
	require.Equal(t, 3, mm.NumUses())
	require.NoError(t, ir.Verify(p))
	// Outputs count as uses too.
	add := p.Main.Value("add")
	require.Equal(t, 1, add.NumUses())
	require.True(t, add.Uses()[0].IsReturn())
	add.ReplaceAllUsesWith(mm)
	require.Equal(t, 0, add.NumUses())
	require.Equal(t, 4, mm.NumUses())
	require.NoError(t, ir.Verify(p))
	require.Equal(t, 2, ir.DCE(p.Main)) // add, then relu
	require.NoError(t, ir.Verify(p))
}

func TestVerifierCatchesBrokenGraphs(t *testing.T) {
	t.Run("use before def", func(t *testing.T) {
		p := mustParse(t, mlpText)
		add := p.Main.Last()
		relu := add.Prev()
		relu.MoveBefore(p.Main.First()) // relu now uses %mm before it is defined
		err := ir.Verify(p)
		require.Error(t, err)
		var ve *ir.VerifyError
		require.True(t, errors.As(err, &ve))
		require.Contains(t, err.Error(), "%relu (aten.relu.default)")
		require.Contains(t, err.Error(), "not defined before its use")
	})
	t.Run("wrong arg kind", func(t *testing.T) {
		p := mustParse(t, mlpText)
		p.Main.First().SetArg(0, ir.StringArg("w"))
		err := ir.Verify(p)
		require.ErrorContains(t, err, `argument "self" (Tensor): expected a tensor`)
	})
	t.Run("signature mismatch", func(t *testing.T) {
		p := mustParse(t, mlpText)
		p.Signature.Outputs = nil
		require.ErrorContains(t, ir.Verify(p), "signature has 0 outputs, graph returns 1")
	})
	t.Run("missing weight", func(t *testing.T) {
		p := mustParse(t, mlpText)
		p.Signature.Inputs[0].Target = "fc.nope"
		require.ErrorContains(t, ir.Verify(p), `missing weight "fc.nope"`)
	})
	t.Run("wrong type", func(t *testing.T) {
		p := mustParse(t, mlpText)
		p.Main.Value("relu").SetType(ir.Tensor(ir.Float32, 3))
		require.NoError(t, ir.Verify(p)) // structural checks pass
		err := ir.VerifyWith(p, ir.VerifyOptions{Types: true})
		require.ErrorContains(t, err, "result %relu has type f32[3], op infers f32[s0, 8]")
	})
}

func TestDCE(t *testing.T) {
	p := mustParse(t, `graph forward(%x: f32[4]) {
  %a: f32[4] = aten.neg.default(%x)
  %b: f32[4] = aten.sin.default(%a)
  %c: f32[4] = aten.relu.default(%x)
  %d: f32[4] = aten.relu_.default(%c)
  return %c
}
`)
	// %b and then %a are dead; the in-place relu_ stays even though unused.
	require.Equal(t, 2, ir.DCE(p.Main))
	require.NoError(t, ir.Verify(p))
	require.Nil(t, p.Main.Value("a"))
	require.NotNil(t, p.Main.Value("d"))
}

func TestCloneIsIndependent(t *testing.T) {
	p := mustParse(t, mlpText)
	c := p.Clone()
	require.Equal(t, ir.Print(p), ir.Print(c))
	require.NoError(t, ir.Verify(c))
	// Editing the clone leaves the original alone.
	c.Main.Value("relu").ReplaceAllUsesWith(c.Main.Value("mm"))
	ir.DCE(c.Main)
	require.NotEqual(t, ir.Print(p), ir.Print(c))
	require.Equal(t, mlpText, ir.Print(p))
}

func TestBuilderInfersAndNames(t *testing.T) {
	p := ir.NewProgram()
	p.Env.Declare("s0", sym.Range{Lo: sym.Finite(1), Hi: sym.PosInf()}, nil, false)
	x, err := p.Main.AddInput("x", ir.TensorOf(ir.Float32, []sym.Expr{sym.Sym("s0"), sym.Const(4)}))
	require.NoError(t, err)
	b := ir.NewBuilder(p.Main)
	b.Pass = "test-pass"
	r1, err := b.Value(ir.MustLookupOp("aten.relu.default"), ir.ValueArg(x))
	require.NoError(t, err)
	r2, err := b.Value(ir.MustLookupOp("aten.relu.default"), ir.ValueArg(r1))
	require.NoError(t, err)
	require.Equal(t, "relu", r1.Name)
	require.Equal(t, "relu_1", r2.Name)
	require.Equal(t, "f32[s0, 4]", r2.Type.String())
	require.Equal(t, []string{"test-pass"}, r2.Def.Provenance())
	p.Main.SetOutputs(ir.ValueArg(r2))
	p.Signature = ir.DefaultSignature(p.Main)
	require.NoError(t, ir.VerifyWith(p, ir.VerifyOptions{Types: true}))
}

func TestRegionsRoundTrip(t *testing.T) {
	src := `graph forward(%pred: b8[], %x: f32[4]) {
  %cond: f32[4] = higher_order.cond(%pred, ^true_graph_0, ^false_graph_0, [%x])
  ^true_graph_0(%a: f32[4]) {
    %sin: f32[4] = aten.sin.default(%a)
    return %sin
  }
  ^false_graph_0(%a: f32[4]) {
    %neg: f32[4] = aten.neg.default(%a)
    return %neg
  }
  return %cond
}
`
	p := mustParse(t, src)
	require.NoError(t, ir.Verify(p))
	require.Equal(t, src, ir.Print(p))
	require.Len(t, p.Graphs(), 3)
	n := p.Main.First()
	require.Len(t, n.Regions(), 2)
	require.Equal(t, n, n.Regions()[0].Parent)
	c := p.Clone()
	require.Equal(t, src, ir.Print(c))
	require.NoError(t, ir.Verify(c))
}

func TestWrappedNumberInTensorSlot(t *testing.T) {
	// torch.export writes x * 0.5 as aten.mul.Tensor(%x, 0.5); the number
	// promotes as a Python scalar (i64 tensor * 0.5 is f32).
	p := mustParse(t, `graph forward(%x: i64[3]) {
  %mul: f32[3] = aten.mul.Tensor(%x, 0.5)
  return %mul
}
`)
	require.NoError(t, ir.VerifyWith(p, ir.VerifyOptions{Types: true}))
}
