package interp

import (
	"errors"
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

// bindInputs binds the symbols in the declared types of the main graph's
// inputs from the values given, then checks every input against its type.
func (m *machine) bindInputs(ins []*ir.Value, args []Value) error {
	// Plain symbols first, so that compound dims can be checked whatever
	// the order of the inputs.
	for i, in := range ins {
		m.bindPlain(in.Type, args[i])
	}
	for i, in := range ins {
		if err := m.checkType(in.Type, args[i]); err != nil {
			return fmt.Errorf("interp: input %s: %w", in, err)
		}
	}
	return nil
}

// bindPlain binds the plain (single-symbol) dims of t that are not bound yet.
func (m *machine) bindPlain(t ir.Type, v Value) {
	switch t := t.(type) {
	case *ir.TensorType:
		x, ok := v.(*Tensor)
		if !ok || x.Rank() != t.Rank() {
			return
		}
		for i, d := range t.Shape {
			m.bindExpr(d, x.Shape[i])
		}
	case *ir.SymIntType:
		if x, ok := v.(int64); ok && t.Expr.IsValid() {
			m.bindExpr(t.Expr, x)
		}
	}
}

func (m *machine) bindExpr(e sym.Expr, v int64) {
	if name, ok := e.Name(); ok {
		if _, bound := m.bind[name]; !bound {
			m.bind[name] = v
		}
	}
}

// checkType checks a value against a declared type, binding the symbols it
// can. Dims that mention symbols nothing has bound are not checked.
func (m *machine) checkType(t ir.Type, v Value) error {
	switch t := t.(type) {
	case *ir.TensorType:
		x, ok := v.(*Tensor)
		if !ok {
			return fmt.Errorf("declared %s, got %s", t, kindOf(v))
		}
		if x.DType != t.DType {
			return fmt.Errorf("declared %s, computed dtype %s", t, x.DType)
		}
		if x.Rank() != t.Rank() {
			return fmt.Errorf("declared %s, computed shape %v", t, x.Shape)
		}
		m.bindPlain(t, v)
		for i, d := range t.Shape {
			want, err := d.Eval(m.bind)
			if err != nil {
				var ue *sym.UnboundError
				if errors.As(err, &ue) {
					continue
				}
				return fmt.Errorf("declared %s: dim %d: %w", t, i, err)
			}
			if want != x.Shape[i] {
				return domainErrorf("declared %s (%s), computed shape %v", t, bindingNote(d, m.bind), x.Shape)
			}
		}
	case *ir.SymIntType:
		x, err := toInt(v)
		if err != nil {
			return fmt.Errorf("declared %s: %w", t, err)
		}
		if !t.Expr.IsValid() {
			return nil
		}
		m.bindExpr(t.Expr, x)
		want, err := t.Expr.Eval(m.bind)
		if err == nil && want != x {
			return fmt.Errorf("declared %s = %d, computed %d", t, want, x)
		}
	case *ir.SymBoolType:
		if _, err := toBool(v); err != nil {
			return fmt.Errorf("declared %s: %w", t, err)
		}
	case *ir.SymFloatType:
		if _, err := toFloat(v); err != nil {
			return fmt.Errorf("declared %s: %w", t, err)
		}
	case *ir.ScalarType:
		switch t.Kind {
		case ir.IntKind:
			if _, ok := v.(int64); !ok {
				if _, ok := v.(bool); !ok {
					return fmt.Errorf("declared int, got %s", kindOf(v))
				}
			}
		case ir.FloatKind:
			if _, err := toFloat(v); err != nil {
				return fmt.Errorf("declared float: %w", err)
			}
		case ir.BoolKind:
			if _, ok := v.(bool); !ok {
				return fmt.Errorf("declared bool, got %s", kindOf(v))
			}
		}
	case *ir.ListType:
		l, ok := v.([]Value)
		if !ok {
			return fmt.Errorf("declared %s, got %s", t, kindOf(v))
		}
		for i, e := range l {
			if err := m.checkType(t.Elem, e); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
		}
	case *ir.TupleType:
		l, ok := v.([]Value)
		if !ok || len(l) != len(t.Elems) {
			return fmt.Errorf("declared %s, got %s", t, Describe(v))
		}
		for i, e := range l {
			if err := m.checkType(t.Elems[i], e); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
		}
	case *ir.OptionalType:
		if v == nil {
			return nil
		}
		return m.checkType(t.Elem, v)
	case *ir.NoneType:
		if v != nil {
			return fmt.Errorf("declared none, got %s", kindOf(v))
		}
	case *ir.TokenType:
		if _, ok := v.(Token); !ok {
			return fmt.Errorf("declared token, got %s", kindOf(v))
		}
	}
	return nil
}

// bindingNote spells a dim with its value under the bindings ("s0 + 1 = 5").
func bindingNote(d sym.Expr, bind map[string]int64) string {
	v, err := d.Eval(bind)
	if err != nil || d.IsConst() {
		return d.String()
	}
	return fmt.Sprintf("%s = %d", d, v)
}
