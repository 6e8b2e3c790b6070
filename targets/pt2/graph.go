package pt2

import (
	"fmt"

	"github.com/fxport/fxport/internal/pt2schema"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

// graph writes a Graph object: the main graph (main) or a region.
func (w *writer) graph(e *pt2schema.Encoder, g *ir.Graph, main bool) error {
	e.BeginObject()
	e.Key("inputs")
	e.BeginArray()
	for i, in := range g.Inputs {
		var a pt2schema.Argument
		var err error
		if main && w.p.Signature.Inputs[i].Kind == ir.ConstantInput {
			a, _, err = literal(w.p.Signature.Inputs[i].Value)
		} else {
			a, err = valueRef(in)
		}
		if err == nil {
			err = pt2schema.EncodeArgument(e, a)
		}
		if err != nil {
			return fmt.Errorf("graph %s: input %d: %v", g.Name, i, err)
		}
	}
	e.EndArray()
	e.Key("outputs")
	e.BeginArray()
	for j, o := range g.Outputs() {
		a, err := w.argument(o, nil)
		if err == nil {
			err = pt2schema.EncodeArgument(e, a)
		}
		if err != nil {
			return fmt.Errorf("graph %s: output %d: %v", g.Name, j, err)
		}
	}
	e.EndArray()
	e.Key("nodes")
	e.BeginArray()
	taken := newNames()
	_ = values(g, func(v *ir.Value) error { taken.add(v.Name); return nil })
	for n := g.First(); n != nil; n = n.Next() {
		if err := w.node(e, n, taken); err != nil {
			return err
		}
	}
	e.EndArray()
	if err := w.tables(e, g, main); err != nil {
		return err
	}
	e.EndObject()
	return nil
}

// values calls f for each value the graph defines, in definition order.
func values(g *ir.Graph, f func(v *ir.Value) error) error {
	for _, in := range g.Inputs {
		if err := f(in); err != nil {
			return err
		}
	}
	for n := g.First(); n != nil; n = n.Next() {
		for _, r := range n.Results {
			if err := f(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// tables writes tensor_values, the symbolic value tables,
// is_single_tensor_return and custom_obj_values. The main graph's
// sym_int_values also carry an entry per hinted symbol no value is named
// after, so that the symbols' hints survive a round trip.
func (w *writer) tables(e *pt2schema.Encoder, g *ir.Graph, main bool) error {
	env := w.p.Env
	params := map[*ir.Value]bool{}
	stored := map[*ir.Value]*ir.Weight{} // placeholders of parameters, buffers, constants
	if main {
		for i, in := range w.p.Signature.Inputs {
			if in.Kind == ir.Parameter {
				params[g.Inputs[i]] = true
			}
			switch in.Kind {
			case ir.Parameter, ir.Buffer, ir.ConstantTensor:
				if wt := w.p.Weight(in.Target); wt != nil {
					stored[g.Inputs[i]] = wt
				}
			}
		}
	}
	e.Key("tensor_values")
	e.BeginObject()
	err := values(g, func(v *ir.Value) error {
		var m pt2schema.TensorMeta
		switch t := v.Type.(type) {
		case *ir.TensorType:
			var err error
			if m, err = tensorMeta(t, env); err != nil {
				return fmt.Errorf("graph %s: value %s: %v", g.Name, v, err)
			}
			m.RequiresGrad = params[v]
			if wt := stored[v]; wt != nil {
				viewOf(&m, wt)
			}
		case *ir.TokenType:
			m = tokenMeta()
		default:
			return nil
		}
		e.Key(v.Name)
		pt2schema.EncodeTensorMeta(e, &m)
		return nil
	})
	if err != nil {
		return err
	}
	e.EndObject()
	e.Key("sym_int_values")
	e.BeginObject()
	_ = values(g, func(v *ir.Value) error {
		if t, ok := v.Type.(*ir.SymIntType); ok {
			e.Key(v.Name)
			if t.Expr.IsValid() {
				pt2schema.EncodeSymInt(e, symInt(t.Expr, env))
			} else {
				pt2schema.EncodeSymInt(e, pt2schema.SymInt{IsExpr: true, Expr: pt2schema.SymExpr{ExprStr: unknownExpr}})
			}
		}
		return nil
	})
	if main {
		for _, s := range env.Symbols() {
			if _, ok := env.Hint(s); ok && g.Value(s) == nil {
				e.Key(s)
				pt2schema.EncodeSymInt(e, symInt(sym.Sym(s), env))
			}
		}
	}
	e.EndObject()
	e.Key("sym_bool_values")
	e.BeginObject()
	_ = values(g, func(v *ir.Value) error {
		if t, ok := v.Type.(*ir.SymBoolType); ok {
			e.Key(v.Name)
			var s pt2schema.SymBool
			switch t.Expr.Op() {
			case sym.OpInvalid:
				s.IsExpr = true
				s.Expr = pt2schema.SymExpr{ExprStr: unknownExpr}
			case sym.OpTrue:
				s.Bool = true
			case sym.OpFalse:
			default:
				s.IsExpr = true
				s.Expr = pt2schema.SymExpr{ExprStr: srepr(t.Expr, env)}
			}
			pt2schema.EncodeSymBool(e, s)
		}
		return nil
	})
	e.EndObject()
	e.Key("is_single_tensor_return")
	e.Bool(false)
	e.Key("custom_obj_values")
	e.BeginObject()
	_ = values(g, func(v *ir.Value) error {
		if t, ok := v.Type.(*ir.OpaqueType); ok {
			e.Key(v.Name)
			pt2schema.EncodeCustomObj(e, v.Name, t.Class)
		}
		return nil
	})
	e.EndObject()
	e.Key("sym_float_values")
	e.BeginObject()
	_ = values(g, func(v *ir.Value) error {
		if _, ok := v.Type.(*ir.SymFloatType); ok {
			e.Key(v.Name)
			pt2schema.EncodeSymFloat(e, pt2schema.SymFloat{IsExpr: true, Expr: pt2schema.SymExpr{ExprStr: v.Name}})
		}
		return nil
	})
	e.EndObject()
	return nil
}

// unknownExpr is the expr_str written for a SymInt or SymBool whose
// expression the IR does not know (one the reader could not parse): a call
// of an undefined function, which sympy accepts and the reader again reads
// as unknown.
const unknownExpr = "Unknown()"

// symInt writes an integer expression: a constant, or its srepr with the
// value it takes at the symbols' hints when they are known.
func symInt(x sym.Expr, env *sym.Env) pt2schema.SymInt {
	if c, ok := x.Const(); ok {
		return pt2schema.SymInt{Int: c}
	}
	s := pt2schema.SymInt{IsExpr: true, Expr: pt2schema.SymExpr{ExprStr: srepr(x, env)}}
	if h, err := env.EvalHint(x); err == nil {
		s.Expr.HintKind, s.Expr.HintInt = pt2schema.HintInt, h
	}
	return s
}

// tensorMeta describes a tensor type: strides follow its dim order.
func tensorMeta(t *ir.TensorType, env *sym.Env) (pt2schema.TensorMeta, error) {
	code := t.DType.PT2Code()
	if code < 0 {
		return pt2schema.TensorMeta{}, fmt.Errorf("dtype %s has no torch.export code", t.DType)
	}
	dev, err := deviceOf(t.Device)
	if err != nil {
		return pt2schema.TensorMeta{}, err
	}
	m := pt2schema.TensorMeta{DType: int64(code), Device: dev, Layout: 7}
	for _, d := range t.Shape {
		m.Sizes = append(m.Sizes, symInt(d, env))
	}
	order := t.DimOrder
	if order == nil || len(order) != len(t.Shape) {
		order = make([]int, len(t.Shape))
		for i := range order {
			order[i] = i
		}
	}
	strides := make([]sym.Expr, len(t.Shape))
	acc := sym.Const(1)
	for k := len(order) - 1; k >= 0; k-- {
		d := order[k]
		if d < 0 || d >= len(t.Shape) {
			return pt2schema.TensorMeta{}, fmt.Errorf("bad dim order %v", t.DimOrder)
		}
		strides[d] = acc
		size := t.Shape[d]
		if c, ok := size.Const(); ok && c == 0 {
			size = sym.Const(1)
		}
		acc = sym.Mul(acc, size)
	}
	for _, s := range strides {
		m.Strides = append(m.Strides, symInt(s, env))
	}
	m.StorageOffset = pt2schema.SymInt{Int: 0}
	return m, nil
}

// viewOf gives a placeholder's meta the strides and storage offset of the
// weight it stands for (the layout of the data it will be bound to), as
// torch records them, when their shapes agree.
func viewOf(m *pt2schema.TensorMeta, w *ir.Weight) {
	if w.Type == nil || len(w.Type.Shape) != len(m.Sizes) {
		return
	}
	for i, d := range w.Type.Shape {
		c, ok := d.Const()
		if !ok || m.Sizes[i].IsExpr || m.Sizes[i].Int != c {
			return
		}
	}
	strides := w.Strides
	if strides == nil {
		strides = make([]int64, len(m.Sizes))
		acc := int64(1)
		for i := len(strides) - 1; i >= 0; i-- {
			strides[i] = acc
			acc *= max(m.Sizes[i].Int, 1)
		}
	}
	if len(strides) == len(m.Strides) {
		for i, st := range strides {
			m.Strides[i] = pt2schema.SymInt{Int: st}
		}
	}
	m.StorageOffset = pt2schema.SymInt{Int: w.StorageOffset}
}

// tokenMeta is how torch records an effect token: an empty float tensor.
func tokenMeta() pt2schema.TensorMeta {
	return pt2schema.TensorMeta{
		DType: 7, Sizes: []pt2schema.SymInt{{Int: 0}}, Device: pt2schema.Device{Type: "cpu"},
		Strides: []pt2schema.SymInt{{Int: 1}}, Layout: 7,
	}
}
