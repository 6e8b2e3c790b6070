package rewrite_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/rewrite"
)

var (
	opNeg       = ir.MustLookupOp("aten.neg.default")
	opMulScalar = ir.MustLookupOp("aten.mul.Scalar")
	opMulTensor = ir.MustLookupOp("aten.mul.Tensor")
	opSilu      = ir.MustLookupOp("aten.silu.default")
	opSigmoid   = ir.MustLookupOp("aten.sigmoid.default")
	opExp       = ir.MustLookupOp("aten.exp.default")
	opAddScalar = ir.MustLookupOp("aten.add.Scalar")
	opRecip     = ir.MustLookupOp("aten.reciprocal.default")
	opRelu      = ir.MustLookupOp("aten.relu.default")
	opClampMin  = ir.MustLookupOp("aten.clamp_min.default")
	opClamp     = ir.MustLookupOp("aten.clamp.default")
)

func parse(t *testing.T, src string) *ir.Program {
	t.Helper()
	p, err := ir.Parse([]byte(src), "t.fxir")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func run(t *testing.T, p *ir.Program, opt rewrite.Options, ps ...*rewrite.Pattern) (rewrite.Result, error) {
	t.Helper()
	s, err := rewrite.NewSet(ps...)
	if err != nil {
		t.Fatal(err)
	}
	if opt.Pass == "" {
		opt.Pass = "test"
	}
	return rewrite.Apply(p.Graphs(), s, opt)
}

func ops(p *ir.Program) []string {
	var out []string
	for _, g := range p.Graphs() {
		for _, n := range g.Nodes() {
			out = append(out, n.Op.Info().Base)
		}
	}
	return out
}

// neg(neg(x)) → x.
var negNeg = &rewrite.Pattern{Name: "neg-neg", Root: opNeg, Benefit: 1,
	Match: func(n *ir.Node) bool {
		d := n.Args[0].Value
		return d != nil && d.Def != nil && d.Def.Op == opNeg
	},
	Rewrite: func(b *ir.Builder, n *ir.Node) ([]*ir.Value, error) {
		return []*ir.Value{n.Args[0].Value.Def.Args[0].Value}, nil
	}}

// silu(x) → mul(x, sigmoid(x)): builds a node another pattern rewrites.
var siluPattern = &rewrite.Pattern{Name: "silu", Root: opSilu,
	Rewrite: func(b *ir.Builder, n *ir.Node) ([]*ir.Value, error) {
		s, err := b.Value(opSigmoid, n.Args[0])
		if err != nil {
			return nil, err
		}
		v, err := b.Value(opMulTensor, n.Args[0], ir.ValueArg(s))
		return []*ir.Value{v}, err
	}}

// sigmoid(x) → reciprocal(exp(neg(x)) + 1).
var sigmoidPattern = &rewrite.Pattern{Name: "sigmoid", Root: opSigmoid,
	Rewrite: func(b *ir.Builder, n *ir.Node) ([]*ir.Value, error) {
		ng, err := b.Value(opNeg, n.Args[0])
		if err != nil {
			return nil, err
		}
		e, err := b.Value(opExp, ir.ValueArg(ng))
		if err != nil {
			return nil, err
		}
		a, err := b.Value(opAddScalar, ir.ValueArg(e), ir.IntArg(1))
		if err != nil {
			return nil, err
		}
		v, err := b.Value(opRecip, ir.ValueArg(a))
		return []*ir.Value{v}, err
	}}

const chain = `graph forward(%x: f32[4]) {
  %a: f32[4] = aten.neg.default(%x)
  %b: f32[4] = aten.neg.default(%a)
  %c: f32[4] = aten.neg.default(%b)
  %d: f32[4] = aten.neg.default(%c)
  %e: f32[4] = aten.neg.default(%d)
  return %e
}`

// Rewrites run to a fixpoint: five negs become one; the values that lost
// their users stay for dead-code elimination, but no neg of a neg is used.
func TestFixpoint(t *testing.T) {
	p := parse(t, chain)
	res, err := run(t, p, rewrite.Options{}, negNeg)
	if err != nil {
		t.Fatal(err)
	}
	out := p.Graphs()[0].Outputs()[0].Value
	if out.Def == nil || out.Def.Op != opNeg || out.Def.Args[0].Value.Def != nil {
		t.Fatalf("output %s is not neg(%%x):\n%s", out, p)
	}
	if res.Rewrites != 2 || res.ByPattern["neg-neg"] != 2 {
		t.Fatalf("rewrites %+v, want 2 (b→x, then d→a→…)", res)
	}
}

// Nodes a rewrite builds enter the worklist: the sigmoid silu builds is
// decomposed too, and names survive on the final value.
func TestNewNodesAreRevisited(t *testing.T) {
	p := parse(t, `graph forward(%x: f32[4]) {
  %y: f32[4] = aten.silu.default(%x)
  return %y
}`)
	res, err := run(t, p, rewrite.Options{Pass: "decompose"}, siluPattern, sigmoidPattern)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(ops(p), " ")
	if got != "neg exp add reciprocal mul" {
		t.Fatalf("ops %q\n%s", got, p)
	}
	if res.Rewrites != 2 {
		t.Fatalf("rewrites %d, want 2", res.Rewrites)
	}
	g := p.Graphs()[0]
	if v := g.Outputs()[0].Value; v.Name != "y" {
		t.Fatalf("output renamed to %s", v.Name)
	}
	for _, n := range g.Nodes() {
		if pr := n.Provenance(); len(pr) == 0 || pr[len(pr)-1] != "decompose" {
			t.Fatalf("%s has provenance %v", n.Short(), pr)
		}
	}
}

// Overlapping patterns: the higher benefit wins, ties go by name.
func TestBenefitOrder(t *testing.T) {
	const src = `graph forward(%x: f32[4]) {
  %y: f32[4] = aten.relu.default(%x)
  return %y
}`
	mk := func(name string, benefit int, op ir.Op) *rewrite.Pattern {
		return &rewrite.Pattern{Name: name, Root: opRelu, Benefit: benefit,
			Rewrite: func(b *ir.Builder, n *ir.Node) ([]*ir.Value, error) {
				var v *ir.Value
				var err error
				if op == opClamp {
					v, err = b.Value(op, n.Args[0], ir.IntArg(0), ir.NoneArg())
				} else {
					v, err = b.Value(op, n.Args[0], ir.IntArg(0))
				}
				return []*ir.Value{v}, err
			}}
	}
	for _, c := range []struct {
		ps   []*rewrite.Pattern
		want string
	}{
		{[]*rewrite.Pattern{mk("a-clamp", 1, opClamp), mk("b-clamp-min", 2, opClampMin)}, "clamp_min"},
		{[]*rewrite.Pattern{mk("b-clamp-min", 1, opClampMin), mk("a-clamp", 2, opClamp)}, "clamp"},
		{[]*rewrite.Pattern{mk("b-clamp-min", 1, opClampMin), mk("a-clamp", 1, opClamp)}, "clamp"},
		{[]*rewrite.Pattern{mk("a-clamp", 1, opClamp), mk("b-clamp-min", 1, opClampMin)}, "clamp"},
	} {
		p := parse(t, src)
		if _, err := run(t, p, rewrite.Options{}, c.ps...); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(ops(p), " "); got != c.want {
			t.Errorf("%s/%s: got %s, want %s", c.ps[0].Name, c.ps[1].Name, got, c.want)
		}
	}
}

// Two patterns that undo each other stop at the bound with ErrNoFixpoint.
func TestNoFixpointIsAnError(t *testing.T) {
	p := parse(t, chain)
	toMul := &rewrite.Pattern{Name: "neg-to-mul", Root: opNeg,
		Rewrite: func(b *ir.Builder, n *ir.Node) ([]*ir.Value, error) {
			v, err := b.Value(opMulScalar, n.Args[0], ir.IntArg(-1))
			return []*ir.Value{v}, err
		}}
	toNeg := &rewrite.Pattern{Name: "mul-to-neg", Root: opMulScalar,
		Rewrite: func(b *ir.Builder, n *ir.Node) ([]*ir.Value, error) {
			v, err := b.Value(opNeg, n.Args[0])
			return []*ir.Value{v}, err
		}}
	_, err := run(t, p, rewrite.Options{MaxRewrites: 50}, toMul, toNeg)
	if !errors.Is(err, rewrite.ErrNoFixpoint) || !strings.Contains(err.Error(), "after 50 rewrites") {
		t.Fatalf("error %v, want no fixpoint after 50 rewrites", err)
	}
	// The default bound also ends it.
	p = parse(t, chain)
	if _, err := run(t, p, rewrite.Options{}, toMul, toNeg); !errors.Is(err, rewrite.ErrNoFixpoint) {
		t.Fatalf("error %v with the default bound", err)
	}
}

// The same input gives the same output, byte for byte.
func TestDeterministic(t *testing.T) {
	const src = `graph forward(%x: f32[4], %z: f32[4]) {
  %a: f32[4] = aten.silu.default(%x)
  %b: f32[4] = aten.sigmoid.default(%z)
  %c: f32[4] = aten.silu.default(%b)
  %d: f32[4] = aten.mul.Tensor(%a, %c)
  return %d
}`
	var first string
	for i := 0; i < 3; i++ {
		p := parse(t, src)
		if _, err := run(t, p, rewrite.Options{}, sigmoidPattern, siluPattern); err != nil {
			t.Fatal(err)
		}
		if err := ir.Verify(p); err != nil {
			t.Fatal(err)
		}
		if s := ir.Print(p); i == 0 {
			first = s
		} else if s != first {
			t.Fatalf("run %d differs:\n%s\nvs\n%s", i, s, first)
		}
	}
}

// A pattern that breaks the rules fails naming the pattern and the node,
// and leaves nothing it built behind.
func TestPatternErrors(t *testing.T) {
	const src = `graph forward(%x: f32[4]) {
  %y: f32[4] = aten.relu.default(%x)
  return %y
}`
	bad := &rewrite.Pattern{Name: "wrong-type", Root: opRelu,
		Rewrite: func(b *ir.Builder, n *ir.Node) ([]*ir.Value, error) {
			v, err := b.Value(ir.MustLookupOp("aten.isnan.default"), n.Args[0])
			return []*ir.Value{v}, err
		}}
	p := parse(t, src)
	before := ir.Print(p)
	_, err := run(t, p, rewrite.Options{Pass: "legalize"}, bad)
	if err == nil || !strings.Contains(err.Error(), "pattern wrong-type") || !strings.Contains(err.Error(), "%y") || !strings.Contains(err.Error(), "legalize") {
		t.Fatalf("error %v", err)
	}
	if ir.Print(p) != before {
		t.Fatalf("a failed rewrite changed the graph:\n%s", p)
	}
	if _, err := rewrite.NewSet(bad, bad); err == nil {
		t.Fatal("two patterns with one name accepted")
	}
	if _, err := rewrite.NewSet(&rewrite.Pattern{Name: "x"}); err == nil {
		t.Fatal("a pattern without Rewrite accepted")
	}
}

// Filter limits the nodes; declining (nil, nil) leaves the node.
func TestFilterAndDecline(t *testing.T) {
	p := parse(t, `graph forward(%x: f32[4]) {
  %a: f32[4] = aten.silu.default(%x)
  %b: f32[4] = aten.silu.default(%a)
  return %b
}`)
	res, err := run(t, p, rewrite.Options{Filter: func(n *ir.Node) bool { return n.Results[0].Name != "b" }}, siluPattern)
	if err != nil || res.Rewrites != 1 {
		t.Fatalf("rewrites %d, err %v", res.Rewrites, err)
	}
	decline := &rewrite.Pattern{Name: "decline", Root: opSilu,
		Rewrite: func(*ir.Builder, *ir.Node) ([]*ir.Value, error) { return nil, nil }}
	res, err = run(t, p, rewrite.Options{}, decline)
	if err != nil || res.Rewrites != 0 {
		t.Fatalf("declining pattern: rewrites %d, err %v", res.Rewrites, err)
	}
}
