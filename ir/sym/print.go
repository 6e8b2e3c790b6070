package sym

import (
	"strconv"
	"strings"
)

// precedence levels of the printed form (higher binds tighter)
const (
	precRel = iota + 1
	precAdd
	precMul // *, //
	precUnary
	precPow
	precAtom
)

func prec(e Expr) int {
	switch e.n.op {
	case OpConst:
		if cSign(e) < 0 {
			return precUnary
		}
		return precAtom
	case OpPow:
		return precPow
	case OpMul, OpFloorDiv:
		return precMul
	case OpAdd:
		return precAdd
	case OpEq, OpNe, OpLe:
		return precRel
	}
	return precAtom
}

// String returns the canonical plain form of e (see the package doc for the
// grammar). Parse(e.String()) is Equal to e. The invalid Expr prints as
// "<invalid>".
func (e Expr) String() string {
	if e.n == nil {
		return "<invalid>"
	}
	if e.n == smallConst {
		return strconv.FormatInt(e.c, 10)
	}
	if e.n.op == OpSym {
		return e.n.name
	}
	var b strings.Builder
	writeRaw(&b, e)
	return b.String()
}

func writeExpr(b *strings.Builder, e Expr, minPrec int) {
	if prec(e) < minPrec {
		b.WriteByte('(')
		writeRaw(b, e)
		b.WriteByte(')')
		return
	}
	writeRaw(b, e)
}

func writeConst(b *strings.Builder, e Expr) {
	if e.n == smallConst {
		var buf [24]byte
		b.Write(strconv.AppendInt(buf[:0], e.c, 10))
		return
	}
	b.WriteString(e.n.big.String())
}

func writeRaw(b *strings.Builder, e Expr) {
	n := e.n
	switch n.op {
	case OpConst:
		writeConst(b, e)
	case OpSym:
		b.WriteString(n.name)
	case OpTrue:
		b.WriteString("True")
	case OpFalse:
		b.WriteString("False")
	case OpAdd:
		for i, t := range n.args {
			co := coefOf(t)
			neg := cSign(co) < 0
			switch {
			case i == 0 && neg:
				b.WriteByte('-')
			case i > 0 && neg:
				b.WriteString(" - ")
			case i > 0:
				b.WriteString(" + ")
			}
			if t.n.op == OpMul {
				writeProduct(b, cAbs(co), t.n.args)
			} else {
				writeExpr(b, t, precMul)
			}
		}
		if !cIsZero(n.k) {
			if cSign(n.k) < 0 {
				b.WriteString(" - ")
				writeConst(b, cNeg(n.k))
			} else {
				b.WriteString(" + ")
				writeConst(b, n.k)
			}
		}
	case OpMul:
		writeProduct(b, n.k, n.args)
	case OpPow:
		writeExpr(b, n.args[0], precAtom)
		b.WriteString("**")
		b.WriteString(strconv.FormatInt(n.exp, 10))
	case OpFloorDiv:
		writeExpr(b, n.args[0], precMul)
		b.WriteString("//")
		writeExpr(b, n.args[1], precPow)
	case OpMod, OpMin, OpMax, OpAnd, OpOr:
		b.WriteString(n.op.String())
		b.WriteByte('(')
		for i, a := range n.args {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRaw(b, a)
		}
		b.WriteByte(')')
	case OpEq, OpNe, OpLe:
		l, r := relSides(n.args[0])
		writeExpr(b, l, precAdd)
		switch n.op {
		case OpEq:
			b.WriteString(" == ")
		case OpNe:
			b.WriteString(" != ")
		default:
			b.WriteString(" <= ")
		}
		writeExpr(b, r, precAdd)
	}
}

// writeProduct prints coef*f1*f2*... ("-" for a coefficient of -1).
func writeProduct(b *strings.Builder, coef Expr, fs []Expr) {
	switch {
	case cIsOne(coef):
	case coef.n == smallConst && coef.c == -1:
		b.WriteByte('-')
	default:
		writeConst(b, coef)
		b.WriteByte('*')
	}
	for i, f := range fs {
		if i > 0 {
			b.WriteByte('*')
		}
		writeExpr(b, f, precPow)
	}
}
