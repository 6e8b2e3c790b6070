package passes

import (
	"fmt"
	"strings"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
	"github.com/fxport/fxport/pm"
)

// DropRuntimeAsserts erases runtime assertions and the symbolic arithmetic
// only they read, keeping their range facts in the Env (ET-PF03).
var DropRuntimeAsserts = pm.RegisterProgramFix(&pm.ProgramFix{
	ID:      "ET-PF03",
	Name:    etDropAssertsName,
	Backend: pm.BackendExecuTorch,
	Stage:   pm.StageFXProgramFixes,
	Doc: `erase runtime assertions and their dead SymInt feeders

ExecuTorch's edge dialect has no kernel for the runtime checks torch.export
defers (_assert_scalar, _assert_tensor_metadata, _assert_async), so they are
erased in every graph, regions included, and so are the nodes with only
symbolic or scalar results (sym_size, operator.ge, …) that fed nothing but
the erased checks, walking back from each check; there is no global DCE.
Before a check on a symbolic condition is erased, the facts it states about
single symbols (s0 >= 2, s0 <= 4096, s0 == 8, and conjunctions of these)
are intersected into the symbol's range in the program's Env, so later
passes (widen-symbol-ranges, memory planning) still know them; the firing
names the range kept. The checks themselves are lost, as in Python: the
exported program does not validate its inputs. _assert_async is handled too
(not in the Python row), and tensor-valued feeders of an _assert_async are
left to the node-fix driver's DCE.`,
	Fix: dropRuntimeAsserts,
})

const etDropAssertsName = "drop-runtime-asserts"

var etAssertOps = map[ir.Op]bool{
	ir.OpAten_AssertScalar:         true,
	ir.OpAten_AssertTensorMetadata: true,
	ir.OpAten_AssertAsync:          true,
	ir.OpAten_AssertAsyncMsg:       true,
}

var etOpAssertScalar = ir.OpAten_AssertScalar

func dropRuntimeAsserts(p *ir.Program, c *pm.Ctx) (bool, error) {
	var asserts []*ir.Node
	for _, g := range p.Graphs() {
		for n := g.First(); n != nil; n = n.Next() {
			if etAssertOps[n.Op] {
				asserts = append(asserts, n)
			}
		}
	}
	if len(asserts) == 0 {
		return false, nil
	}
	feedersRemoved := 0
	for _, n := range asserts {
		for _, r := range n.Results {
			if r.NumUses() > 0 {
				return false, fmt.Errorf("%s: result %s of a runtime assertion is used", n.Short(), r)
			}
		}
		detail := "runtime check dropped"
		if n.Op == etOpAssertScalar {
			kept, err := etKeepAssertedRanges(p, n)
			if err != nil {
				return false, err
			}
			if kept != "" {
				detail += "; kept " + kept
			}
		}
		feeders := n.Operands()
		c.Fired(n, detail)
		if err := n.Erase(); err != nil {
			return false, err
		}
		removed, err := etEraseDeadSymFeeders(feeders)
		if err != nil {
			return false, err
		}
		feedersRemoved += removed
		c.Stat("dropped-asserts", 1)
		c.Stat("dropped-feeders", int64(removed))
	}
	c.Fired(nil, fmt.Sprintf("dropped %d runtime checks and %d dead feeders", len(asserts), feedersRemoved))
	return true, nil
}

// etKeepAssertedRanges intersects the single-symbol facts of the condition
// an _assert_scalar checks into the Env and describes the resulting ranges.
func etKeepAssertedRanges(p *ir.Program, n *ir.Node) (string, error) {
	a := n.Arg("self")
	var cond sym.Expr
	switch {
	case a.Kind == ir.ArgValue:
		t, ok := a.Value.Type.(*ir.SymBoolType)
		if !ok || !t.Expr.IsValid() {
			return "", nil
		}
		cond = t.Expr
	default:
		return "", nil
	}
	facts := map[string]sym.Range{}
	var order []string
	etCollectFacts(cond, facts, &order)
	if len(order) == 0 {
		return "", nil
	}
	if p.Env == nil {
		p.Env = sym.NewEnv()
	}
	var kept []string
	for _, s := range order {
		p.Env.Refine(s, facts[s])
		got, _ := p.Env.Range(s)
		if got.IsEmpty() {
			return "", fmt.Errorf("%s: asserted %s leaves %s an empty range", n.Short(), cond, s)
		}
		kept = append(kept, s+" in "+got.String())
	}
	return strings.Join(kept, ", "), nil
}

// etCollectFacts reads c as a conjunction of comparisons between one symbol
// and a constant and accumulates the ranges they imply. Other conjuncts
// (two symbols, expressions, disjunctions, !=) are skipped.
func etCollectFacts(c sym.Expr, facts map[string]sym.Range, order *[]string) {
	add := func(s string, r sym.Range) {
		old, ok := facts[s]
		if !ok {
			old = sym.Unbounded()
			*order = append(*order, s)
		}
		facts[s] = old.Intersect(r)
	}
	args := c.Args()
	switch c.Op() {
	case sym.OpAnd:
		for _, x := range args {
			etCollectFacts(x, facts, order)
		}
	case sym.OpLe, sym.OpEq:
		l, r := args[0], args[1]
		ln, lSym := l.Name()
		rn, rSym := r.Name()
		lc, lConst := l.Const()
		rc, rConst := r.Const()
		switch {
		case lSym && rConst && c.Op() == sym.OpLe: // s <= c
			add(ln, sym.Range{Lo: sym.NegInf(), Hi: sym.Finite(rc)})
		case lConst && rSym && c.Op() == sym.OpLe: // c <= s
			add(rn, sym.Range{Lo: sym.Finite(lc), Hi: sym.PosInf()})
		case lSym && rConst: // s == c
			add(ln, sym.Point(rc))
		case lConst && rSym:
			add(rn, sym.Point(lc))
		}
	}
}

// etEraseDeadSymFeeders erases, walking back from vs, the nodes whose
// results are all unused and non-tensor and whose op has no side effects.
func etEraseDeadSymFeeders(vs []*ir.Value) (int, error) {
	removed := 0
	work := append([]*ir.Value(nil), vs...)
	for len(work) > 0 {
		v := work[len(work)-1]
		work = work[:len(work)-1]
		d := v.Def
		if d == nil || d.IsErased() || ir.HasSideEffects(d.Op) || len(d.Regions()) > 0 {
			continue
		}
		dead := true
		for _, r := range d.Results {
			if r.NumUses() > 0 || r.Tensor() != nil {
				dead = false
			}
		}
		if !dead {
			continue
		}
		ops := d.Operands()
		if err := d.Erase(); err != nil {
			return removed, err
		}
		removed++
		work = append(work, ops...)
	}
	return removed, nil
}
