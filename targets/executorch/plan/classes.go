package plan

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

// class is one storage class: values sharing storage.
type class struct {
	id         int
	members    []*ir.Value
	size       int64  // bytes, upper bound, unaligned
	start, end int    // hull of segs
	segs       []Span // live positions, sorted and disjoint
	planned    bool
}

// unionFind over values.
type unionFind map[*ir.Value]*ir.Value

func (u unionFind) find(v *ir.Value) *ir.Value {
	for {
		p, ok := u[v]
		if !ok || p == v {
			return v
		}
		if gp, ok := u[p]; ok && gp != p {
			u[v] = gp
		}
		v = p
	}
}

func (u unionFind) union(a, b *ir.Value) {
	ra, rb := u.find(a), u.find(b)
	if ra != rb {
		u[rb] = ra
	}
}

// aliasOf returns, for result i of n, the operand whose storage the result
// shares, or nil: the matching out argument of an out variant, the mutated
// operand of an in-place op, the base of an et_view (exir's memory.view,
// which replace-view-copy-with-view makes) or of a remaining view.
func aliasOf(n *ir.Node, i int) *ir.Value {
	info := n.Op.Info()
	switch {
	case n.Op == opETView:
		if i == 0 && len(n.Args) > 0 && n.Args[0].Kind == ir.ArgValue {
			return n.Args[0].Value
		}
	case n.Op.Has(ir.PropOutVariant):
		k := 0
		for j, a := range info.Schema.Args {
			if !a.Mutates() || j >= len(n.Args) {
				continue
			}
			if k == i {
				if n.Args[j].Kind == ir.ArgValue {
					return n.Args[j].Value
				}
				return nil
			}
			k++
		}
	case n.Op.Has(ir.PropInplace), n.Op.Has(ir.PropView):
		if i == 0 {
			for _, a := range n.Args {
				if a.Kind == ir.ArgValue && a.Value.Tensor() != nil {
					return a.Value
				}
			}
		}
	}
	return nil
}

// sizeOf is the byte size of a tensor type at the upper bounds of its dims.
func sizeOf(env *sym.Env, v *ir.Value, t *ir.TensorType) (int64, error) {
	n := int64(t.DType.Size())
	if n == 0 {
		return 0, fmt.Errorf("value %s: dtype %s has no element size", v, t.DType)
	}
	for i, d := range t.Shape {
		ub := env.UpperBound(d)
		if !ub.IsFinite() {
			return 0, unboundedError(v, i, d)
		}
		if ub.V < 0 {
			return 0, fmt.Errorf("value %s: dim %d (%s) has a negative upper bound %d", v, i, d, ub.V)
		}
		hi, lo := bits.Mul64(uint64(n), uint64(ub.V))
		if hi != 0 || lo > 1<<62 {
			return 0, fmt.Errorf("value %s: size overflows at the upper bounds of its dims %v", v, t.Shape)
		}
		n = int64(lo)
	}
	return n, nil
}

func unboundedError(v *ir.Value, i int, d sym.Expr) error {
	syms := d.Symbols()
	return fmt.Errorf("value %s: dim %d (%s) has no finite upper bound (symbol %s unbounded); "+
		"run the widen-symbol-ranges pass (ET-PF01) or export with Dim(min, max) for %s",
		v, i, d, strings.Join(syms, ", "), strings.Join(syms, ", "))
}

// buildClasses groups the tensor values of the main graph and of its cond
// regions (layout) into storage classes and computes their sizes and live
// segments. A while_loop's or scan's results are its carried slots (and
// stacked outputs), live across the whole loop; values inside its regions
// live within one iteration (valueSegments).
func buildClasses(p *ir.Program, opt Options) ([]*class, *layout, error) {
	g := p.Main
	l := newLayout(g)
	l.wholeLoops = opt.wholeLoops
	uf := unionFind{}
	var order []*ir.Value // tensor values in program order
	defAt := map[*ir.Value]int{}
	for _, v := range g.Inputs {
		if v.Tensor() != nil {
			order = append(order, v)
			defAt[v] = -1
		}
	}
	for _, n := range l.nodes {
		for k, r := range n.Results {
			if r.Tensor() == nil {
				continue
			}
			order = append(order, r)
			defAt[r] = l.pos[n]
			if a := l.storage(aliasOf(n, k)); a != nil && a.Tensor() != nil {
				uf.union(a, r)
			}
			// getitem of a list result: the element exists from the list's producer on.
			if n.Op == ir.OpOperatorGetitem && len(n.Args) > 0 && n.Args[0].Kind == ir.ArgValue {
				if src := n.Args[0].Value; src.Def != nil {
					if at, ok := l.pos[src.Def]; ok {
						defAt[r] = at
					}
				}
			}
		}
	}
	for _, v := range l.slices {
		if v.Tensor() != nil {
			order = append(order, v)
			defAt[v] = l.sliceDef[v]
		}
	}
	unplanned := unplannedValues(p, opt)
	shareCondResults(l, uf, order, unplanned)
	// Build classes in program order of their first member.
	byRoot := map[*ir.Value]*class{}
	var classes []*class
	of := map[*ir.Value]*class{}
	for _, v := range order {
		root := uf.find(v)
		c := byRoot[root]
		if c == nil {
			c = &class{id: len(classes), planned: true}
			byRoot[root] = c
			classes = append(classes, c)
		}
		c.members = append(c.members, v)
		of[v] = c
		c.segs = append(c.segs, valueSegments(l, v, defAt[v])...)
		if _, ok := unplanned[v]; ok {
			c.planned = false
		}
	}
	for _, c := range classes {
		c.normalize()
	}
	extendMoveSources(l, of)
	for _, c := range classes {
		if !c.planned {
			continue
		}
		for _, v := range c.members {
			s, err := sizeOf(p.Env, v, v.Tensor())
			if err != nil {
				return nil, nil, err
			}
			if s > c.size {
				c.size = s
			}
		}
	}
	return classes, l, nil
}

// valueSegments are the positions at which v must keep its bytes: from its
// definition (def) to its last use. A cond's result is written by the move
// at the end of whichever branch ran, so it lives at the true region's move
// point and from the false region's move point on (the false region's
// positions are not reached when the true branch runs).
//
// A value inside a loop region (while_loop, scan, map_impl) gets the same
// per-iteration lifetime: every iteration runs the region's positions in
// order, and regions are isolated SSA graphs, so each read of the value
// follows its write in the same iteration (its def precedes its uses in
// position order) and nothing reads it after the backward jump before the
// next iteration rewrites it. Two body values with disjoint position
// ranges are therefore never live together, in any iteration. What crosses
// iterations is live across the loop's whole span: the carried slots and
// stacked outputs (the loop node's results, written by the copies at the
// move point and read by the next iteration and by the loop's control
// instructions), and every outer value a region reads (its use is the
// loop node, the exit). A body value read by those copies lives to the
// move point, which is where the copies read it; an outer value the loop
// reads only as a carried initial value lives to the loop's start, where
// the initial copies read it (layout.initOnly).
func valueSegments(l *layout, v *ir.Value, def int) []Span {
	last := def
	for _, u := range v.Uses() {
		at := l.usePos(u, v.Graph)
		if s, ok := l.initOnly(u, v); ok {
			at = s // read only by the loop's initial copies
		}
		if at > last {
			last = at
		}
	}
	if s, ok := l.enclosingLoop(v.Graph); ok && l.wholeLoops {
		return []Span{s}
	}
	if n := v.Def; n != nil {
		if s, ok := l.loop[n]; ok {
			// A while_loop or scan result is its carried slot (or a
			// stacked output): written by the initial copies (or row by
			// row), read and rewritten by every iteration.
			return []Span{{s.Start, max(last, s.End)}}
		}
		if t, f, ok := condRegions(n); ok {
			if _, planned := l.move[t]; planned {
				tm, fm := l.move[t], l.move[f]
				return []Span{{tm, tm}, {fm, max(last, fm)}}
			}
		}
	}
	return []Span{{def, last}}
}

// unplannedValues are the graph inputs and outputs that Options leave
// unplanned (and constants), with the reason.
func unplannedValues(p *ir.Program, opt Options) map[*ir.Value]string {
	g := p.Main
	unplanned := map[*ir.Value]string{}
	mutated := map[string]bool{}
	for _, o := range p.Signature.Outputs {
		if o.Kind == ir.BufferMutation {
			mutated[o.Target] = true
		}
	}
	for i, v := range g.Inputs {
		if v.Tensor() == nil {
			continue
		}
		kind := ir.UserInput
		target := ""
		if i < len(p.Signature.Inputs) {
			kind, target = p.Signature.Inputs[i].Kind, p.Signature.Inputs[i].Target
		}
		switch kind {
		case ir.UserInput:
			if !opt.AllocGraphInput {
				unplanned[v] = "graph input"
			}
		case ir.Buffer:
			if !mutated[target] {
				unplanned[v] = "constant buffer"
			} else if !opt.AllocMutableBuffers {
				unplanned[v] = "mutable buffer"
			}
		default:
			unplanned[v] = "constant"
		}
	}
	for i, a := range g.Outputs() {
		if a.Kind != ir.ArgValue {
			continue
		}
		kind := ir.UserOutput
		if i < len(p.Signature.Outputs) {
			kind = p.Signature.Outputs[i].Kind
		}
		if (kind == ir.UserOutput || kind == ir.LossOutput) && !opt.AllocGraphOutput {
			if _, ok := unplanned[a.Value]; !ok {
				unplanned[a.Value] = "graph output"
			}
		}
	}
	return unplanned
}
