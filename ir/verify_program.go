package ir

import (
	"math"
	"math/bits"
	"strconv"
	"sync"
)

// Checks of what the exporters rely on, beyond the graph structure:
// well-formed symbol ranges with hints inside them, non-negative dims,
// weights whose data holds what their type declares, and cond nodes whose
// operands and branches agree. Each is linear in the size of the program.

// symbols checks the declared symbol ranges and hints, and that a symbol
// used as a dim of a main-graph input cannot be negative.
func (v *verifier) symbols(p *Program) {
	env := p.Env
	for _, s := range env.Symbols() {
		r, _ := env.Range(s)
		if r.Lo.Cmp(r.Hi) > 0 {
			v.add(nil, nil, "symbol %s: range %s is empty (min > max)", s, r)
			continue
		}
		if h, ok := env.Hint(s); ok && !r.Contains(h) {
			v.add(nil, nil, "symbol %s: hint %d is outside its range %s", s, h, r)
		}
	}
	if p.Main == nil {
		return
	}
	for _, in := range p.Main.Inputs {
		t, ok := in.Type.(*TensorType)
		if !ok {
			continue
		}
		for i, d := range t.Shape {
			name, ok := d.Name()
			if !ok {
				continue
			}
			if r, declared := env.Range(name); declared && r.Lo.Inf == 0 && r.Lo.V < 0 {
				v.add(p.Main, nil, "input %%%s: dim %d is symbol %s, whose range %s allows negative sizes", in.Name, i, name, r)
			}
		}
	}
}

// dims checks that no tensor type of g (inputs and results) has a
// negative static dim.
func (v *verifier) dims(g *Graph) {
	check := func(n *Node, x *Value) {
		t, ok := x.Type.(*TensorType)
		if !ok {
			return
		}
		for i, d := range t.Shape {
			if c, ok := d.Const(); ok && c < 0 {
				v.add(g, n, "value %%%s: dim %d is %d (negative)", x.Name, i, c)
			}
		}
	}
	for _, in := range g.Inputs {
		check(nil, in)
	}
	for n := g.first; n != nil; n = n.next {
		for _, r := range n.Results {
			check(n, r)
		}
	}
}

// weights checks each weight's declared type against its data: static
// non-negative dims, a byte size that does not overflow, data at least as
// long as the elements the type (strides and offset included) addresses,
// and inline data exactly that long.
func (v *verifier) weights(p *Program) {
	for _, w := range p.Weights {
		if w == nil || w.Type == nil {
			continue
		}
		need, ok, msg := weightBytes(w)
		if msg != "" {
			v.add(nil, nil, "weight %q (%s): %s", w.Name, w.Type, msg)
			continue
		}
		if !ok || w.Source == nil {
			continue
		}
		have := w.Source.Size()
		if uint64(have) < need {
			v.add(nil, nil, "weight %q (%s): needs %d bytes, its data %s holds %d", w.Name, w.Type, need, w.Source, have)
		}
		if _, inline := w.Source.(*InlineSource); inline && uint64(have) > need {
			v.add(nil, nil, "weight %q (%s): inline data of %d bytes is longer than the %d the type declares", w.Name, w.Type, have, need)
		}
	}
}

// weightBytes is the number of bytes w's type, strides and storage offset
// address; ok is false when a dim is symbolic or the dtype has no fixed
// size; msg says what is malformed.
func weightBytes(w *Weight) (need uint64, ok bool, msg string) {
	t := w.Type
	dims := make([]int64, len(t.Shape))
	for i, d := range t.Shape {
		c, isConst := d.Const()
		if !isConst {
			return 0, false, ""
		}
		if c < 0 {
			return 0, false, "negative dim " + strconv.FormatInt(c, 10)
		}
		dims[i] = c
	}
	if w.Strides != nil && len(w.Strides) != len(dims) {
		return 0, false, "strides of another rank than the shape"
	}
	if w.StorageOffset < 0 {
		return 0, false, "negative storage offset"
	}
	elem := uint64(t.DType.Size())
	if elem == 0 {
		return 0, false, ""
	}
	// The last element addressed: offset + Σ (d−1)·stride (contiguous
	// strides when none are given); nothing when a dim is 0.
	last := uint64(w.StorageOffset)
	stride := uint64(1)
	for i := len(dims) - 1; i >= 0; i-- {
		d := uint64(dims[i])
		if d == 0 {
			return 0, true, ""
		}
		s := stride
		if w.Strides != nil {
			if w.Strides[i] < 0 {
				return 0, false, "negative stride"
			}
			s = uint64(w.Strides[i])
		}
		hi, lo := bits.Mul64(d-1, s)
		if hi != 0 || lo > math.MaxInt64 || last+lo < last {
			return 0, false, "its byte size overflows 64 bits"
		}
		last += lo
		if hi, stride = bits.Mul64(stride, d); hi != 0 {
			return 0, false, "its byte size overflows 64 bits"
		}
	}
	hi, n := bits.Mul64(last+1, elem)
	if hi != 0 || n > math.MaxInt64 {
		return 0, false, "its byte size overflows 64 bits"
	}
	return n, true, ""
}

// opCond is higher_order.cond, looked up on first use (the op table is
// filled by an init function, after package variables).
var opCond = sync.OnceValue(func() Op { return OpHigherOrderCond })

// cond checks a cond node: two branch graphs taking as many inputs as
// there are operands (tensors of the operands' dtype and rank), returning
// as many values as the node has results, with tensor results of the same
// dtype and rank in both branches and the node.
func (v *verifier) cond(g *Graph, n *Node) {
	if n.Op != opCond() {
		return
	}
	var branches [2]*Graph
	for i, name := range []string{"true_fn", "false_fn"} {
		a := n.Arg(name)
		if a.Kind != ArgGraph || a.Graph == nil {
			v.add(g, n, "cond: %s is not a graph", name)
			return
		}
		branches[i] = a.Graph
	}
	ops := n.Arg("operands")
	if ops.Kind != ArgList && ops.Kind != ArgNone {
		v.add(g, n, "cond: operands is not a list")
		return
	}
	for _, b := range branches {
		if len(b.Inputs) != len(ops.List) {
			v.add(g, n, "cond: branch ^%s takes %d inputs, the node passes %d operands", b.Name, len(b.Inputs), len(ops.List))
			continue
		}
		for i, in := range b.Inputs {
			if msg := sameKind(typeOfArg(ops.List[i]), in.Type); msg != "" {
				v.add(g, n, "cond: operand %d is %s, branch ^%s's input %%%s is %s", i, typeOfArg(ops.List[i]), b.Name, in.Name, in.Type)
			}
		}
		outs := b.Outputs()
		if len(outs) != len(n.Results) {
			v.add(g, n, "cond: branch ^%s returns %d values for %d results", b.Name, len(outs), len(n.Results))
			continue
		}
		for i, o := range outs {
			if msg := sameKind(typeOfArg(o), n.Results[i].Type); msg != "" {
				v.add(g, n, "cond: branch ^%s returns %s as output %d, the result is %s", b.Name, typeOfArg(o), i, n.Results[i].Type)
			}
		}
	}
}

// sameKind is "" when a and b are both tensors of one dtype and rank, or
// not both tensors; else why not.
func sameKind(a, b Type) string {
	ta, okA := a.(*TensorType)
	tb, okB := b.(*TensorType)
	switch {
	case okA != okB:
		return "a tensor and a non-tensor"
	case !okA:
		return ""
	case ta.DType != tb.DType:
		return "dtypes differ"
	case len(ta.Shape) != len(tb.Shape):
		return "ranks differ"
	}
	return ""
}
