package pt2

import (
	"strconv"
	"strings"

	"github.com/fxport/fxport/ir/sym"
)

// srepr spells an expression the way torch.export writes expr_str: as sympy
// srepr text, e.g. Add(Mul(Integer(2), Symbol('s0', integer=True,
// positive=True)), Integer(-1)). Symbols whose range starts at 1 or more
// are declared positive, as torch declares backed size symbols.
func srepr(e sym.Expr, env *sym.Env) string {
	var b strings.Builder
	writeSrepr(&b, e, env)
	return b.String()
}

func writeSrepr(b *strings.Builder, e sym.Expr, env *sym.Env) {
	call := func(fn string, args []sym.Expr) {
		b.WriteString(fn)
		b.WriteByte('(')
		for i, a := range args {
			if i > 0 {
				b.WriteString(", ")
			}
			writeSrepr(b, a, env)
		}
		b.WriteByte(')')
	}
	switch e.Op() {
	case sym.OpConst:
		b.WriteString("Integer(")
		if v, ok := e.Const(); ok {
			b.WriteString(strconv.FormatInt(v, 10))
		} else {
			b.WriteString(e.String()) // a big constant prints as its decimal value
		}
		b.WriteByte(')')
	case sym.OpSym:
		name, _ := e.Name()
		b.WriteString("Symbol('")
		b.WriteString(name)
		b.WriteString("', integer=True")
		if r, ok := env.Range(name); ok && r.Lo.Cmp(sym.Finite(1)) >= 0 {
			b.WriteString(", positive=True")
		}
		b.WriteByte(')')
	case sym.OpTrue:
		b.WriteString("true")
	case sym.OpFalse:
		b.WriteString("false")
	case sym.OpAdd:
		call("Add", e.Args())
	case sym.OpMul:
		call("Mul", e.Args())
	case sym.OpPow:
		call("Pow", e.Args())
	case sym.OpFloorDiv:
		call("FloorDiv", e.Args())
	case sym.OpMod:
		call("PythonMod", e.Args())
	case sym.OpMin:
		call("Min", e.Args())
	case sym.OpMax:
		call("Max", e.Args())
	case sym.OpEq:
		call("Equality", e.Args())
	case sym.OpNe:
		call("Unequality", e.Args())
	case sym.OpLe:
		call("LessThan", e.Args())
	case sym.OpAnd:
		call("And", e.Args())
	case sym.OpOr:
		call("Or", e.Args())
	default:
		// The invalid Expr never reaches here: callers write only valid ones.
		b.WriteString(e.String())
	}
}
