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
	size       int64 // bytes, upper bound, unaligned
	start, end int
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
// operand of an in-place op, the base of a remaining view.
func aliasOf(n *ir.Node, i int) *ir.Value {
	info := n.Op.Info()
	switch {
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

// buildClasses groups the main graph's tensor values into storage classes
// and computes their sizes and lifetimes. pos numbers the nodes.
func buildClasses(p *ir.Program, opt Options) ([]*class, map[*ir.Value]*class, map[*ir.Node]int, error) {
	g := p.Main
	nodes := g.Nodes()
	pos := make(map[*ir.Node]int, len(nodes))
	for i, n := range nodes {
		pos[n] = i
	}
	end := len(nodes)
	uf := unionFind{}
	var order []*ir.Value // tensor values in program order
	defAt := map[*ir.Value]int{}
	for _, v := range g.Inputs {
		if v.Tensor() != nil {
			order = append(order, v)
			defAt[v] = -1
		}
	}
	for i, n := range nodes {
		for k, r := range n.Results {
			if r.Tensor() == nil {
				continue
			}
			order = append(order, r)
			defAt[r] = i
			if a := aliasOf(n, k); a != nil && a.Tensor() != nil {
				uf.union(a, r)
			}
			// getitem of a list result: the element exists from the list's producer on.
			if n.Op.Info().Name == "operator.getitem" && len(n.Args) > 0 && n.Args[0].Kind == ir.ArgValue {
				if src := n.Args[0].Value; src.Def != nil {
					defAt[r] = pos[src.Def]
				}
			}
		}
	}
	// Roles of graph inputs and outputs.
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
	returned := map[*ir.Value]bool{}
	for i, a := range g.Outputs() {
		if a.Kind != ir.ArgValue {
			continue
		}
		returned[a.Value] = true
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
	// Build classes in program order of their first member.
	byRoot := map[*ir.Value]*class{}
	var classes []*class
	of := map[*ir.Value]*class{}
	for _, v := range order {
		root := uf.find(v)
		c := byRoot[root]
		if c == nil {
			c = &class{id: len(classes), start: defAt[v], end: defAt[v], planned: true}
			byRoot[root] = c
			classes = append(classes, c)
		}
		c.members = append(c.members, v)
		of[v] = c
		if defAt[v] < c.start {
			c.start = defAt[v]
		}
		last := defAt[v]
		for _, u := range v.Uses() {
			at := end
			if !u.IsReturn() {
				if u.Graph != g {
					at = end // used inside a region: conservatively to the end
				} else {
					at = pos[u]
				}
			}
			if at > last {
				last = at
			}
		}
		if returned[v] {
			last = end
		}
		if last > c.end {
			c.end = last
		}
		if _, ok := unplanned[v]; ok {
			c.planned = false
		}
	}
	for _, c := range classes {
		if !c.planned {
			continue
		}
		for _, v := range c.members {
			s, err := sizeOf(p.Env, v, v.Tensor())
			if err != nil {
				return nil, nil, nil, err
			}
			if s > c.size {
				c.size = s
			}
		}
	}
	return classes, of, pos, nil
}
