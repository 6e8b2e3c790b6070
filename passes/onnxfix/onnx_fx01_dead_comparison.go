package onnxfix

import (
	"math"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/passes/edit"
	"github.com/fxport/fxport/pm"
)

// FixDeadComparison erases unused Python comparisons and folds constant ones (ONNX-FX01).
var FixDeadComparison = pm.RegisterNodeFix(&pm.NodeFix{
	ID:      "ONNX-FX01",
	Name:    fixDeadComparisonName,
	Backend: pm.BackendONNX,
	Targets: []ir.Op{ir.OpOperatorLe, ir.OpOperatorLt, ir.OpOperatorGe, ir.OpOperatorGt, ir.OpOperatorEq, ir.OpOperatorNe},
	Doc: `erase unused symbolic comparisons and fold comparisons with constant operands

Guards leave operator.le/lt/ge/gt/eq/ne nodes on SymInts that the ONNX
translation cannot handle. A comparison without users is erased. One whose
operands are both literals, or that compares an int or SymInt with ±inf
(torch's int_oo, read as a float infinity), is evaluated and its users get
the bool literal instead (their result types are re-inferred). Any other
comparison is left, as in Python. Where Python evaluated the expression
with sympy, fxport evaluates it exactly: ints compare as ints, and a
finite int is below +inf and above -inf.`,
	Fix: fixDeadComparison,
})

const fixDeadComparisonName = "fix-dead-comparison"

func fixDeadComparison(n *ir.Node, c *pm.Ctx) (bool, error) {
	if len(n.Results) != 1 || len(n.Args) != 2 {
		return false, nil
	}
	r := n.Result()
	if r.NumUses() == 0 {
		return true, n.Erase()
	}
	val, ok := fxEvalComparison(n.Op.Info().Base, n.Args[0], n.Args[1])
	if !ok {
		return false, nil
	}
	c.Fired(n, "evaluated to "+ir.BoolArg(val).String())
	if err := edit.ReplaceWithLiteral(r, ir.BoolArg(val)); err != nil {
		return false, err
	}
	return true, n.Erase()
}

// fxCmpOperand is one side of a comparison: an exact int, a float, or an
// int-valued unknown (a SymInt or int value) that is finite.
type fxCmpOperand struct {
	isInt, isFloat, finiteUnknown bool
	i                             int64
	f                             float64
}

func fxCmpOperandOf(a ir.Arg) (fxCmpOperand, bool) {
	switch a.Kind {
	case ir.ArgInt, ir.ArgBool:
		return fxCmpOperand{isInt: true, i: a.Int}, true
	case ir.ArgFloat:
		return fxCmpOperand{isFloat: true, f: a.Float}, true
	case ir.ArgValue:
		switch t := a.Value.Type.(type) {
		case *ir.SymIntType, *ir.SymBoolType:
			return fxCmpOperand{finiteUnknown: true}, true
		case *ir.ScalarType:
			if t.Kind == ir.IntKind || t.Kind == ir.BoolKind {
				return fxCmpOperand{finiteUnknown: true}, true
			}
		}
	}
	return fxCmpOperand{}, false
}

// fxEvalComparison evaluates a op b when it is decidable: both sides
// literal, or a finite unknown int against ±inf.
func fxEvalComparison(op string, a, b ir.Arg) (bool, bool) {
	x, ok1 := fxCmpOperandOf(a)
	y, ok2 := fxCmpOperandOf(b)
	if !ok1 || !ok2 {
		return false, false
	}
	// sign: -1 when a < b, 0 when equal, 1 when a > b; unordered for NaN.
	var sign int
	switch {
	case x.isInt && y.isInt:
		sign = fxCmpInt(x.i, y.i)
	case x.finiteUnknown || y.finiteUnknown:
		if x.finiteUnknown && y.finiteUnknown {
			return false, false
		}
		other := y
		flip := 1
		if y.finiteUnknown {
			other, flip = x, -1
		}
		if !other.isFloat || !math.IsInf(other.f, 0) {
			return false, false
		}
		// unknown (finite) vs +inf: unknown < inf; vs -inf: unknown > -inf.
		if other.f > 0 {
			sign = -1 * flip
		} else {
			sign = 1 * flip
		}
	default:
		xf, yf := x.f, y.f
		if x.isInt {
			xf = float64(x.i)
		}
		if y.isInt {
			yf = float64(y.i)
		}
		if math.IsNaN(xf) || math.IsNaN(yf) {
			return op == "ne", true
		}
		switch {
		case xf < yf:
			sign = -1
		case xf > yf:
			sign = 1
		}
	}
	switch op {
	case "lt":
		return sign < 0, true
	case "le":
		return sign <= 0, true
	case "gt":
		return sign > 0, true
	case "ge":
		return sign >= 0, true
	case "eq":
		return sign == 0, true
	case "ne":
		return sign != 0, true
	}
	return false, false
}

func fxCmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
