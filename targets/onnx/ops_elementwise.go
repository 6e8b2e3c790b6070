package onnx

import (
	"fmt"
	"math"

	"github.com/fxport/fxport/ir"
	pb "github.com/fxport/fxport/targets/onnx/onnxpb"
)

// unary lowers a dtype-preserving unary op to one ONNX op.
func unary(opType string, attrs ...*pb.AttributeProto) Lowering {
	return func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		x := r.In("self", r.out(0).DType)
		if r.err != nil {
			return r.err
		}
		b.Emit(n.Results[0], opType, []string{x}, attrs...)
		return nil
	}
}

// unaryFloat lowers a unary op whose result is float (ints promoted).
func unaryChain(build func(b *Builder, x string, dt ir.DType) (string, error)) Lowering {
	return func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		dt := r.out(0).DType
		x := r.In("self", dt)
		if r.err != nil {
			return r.err
		}
		y, err := build(b, x, dt)
		if err != nil {
			return err
		}
		b.Bind(n.Results[0], y)
		return nil
	}
}

// binaryOp lowers a two-operand arithmetic op computed in the result dtype.
func binaryOp(opType string) Lowering {
	return func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		dt := r.out(0).DType
		x := r.In("self", dt)
		second := "other"
		if n.Op.ArgIndex("exponent") >= 0 {
			second = "exponent"
		}
		y := r.In(second, dt)
		if r.Has("alpha") {
			if al := r.Float("alpha"); al != 1 {
				a, err := b.Scalar(dt, al)
				if err != nil {
					return err
				}
				y = b.Tmp("Mul", []string{y, a})
			}
		}
		if r.err != nil {
			return r.err
		}
		b.Emit(n.Results[0], opType, []string{x, y})
		return nil
	}
}

// compare lowers a comparison computed in the operands' promoted dtype.
func compare(opType string, negate bool) Lowering {
	return func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		dt, err := ir.ResultType(r.Arg("self"), r.Arg("other"))
		if err != nil {
			return err
		}
		x := r.In("self", dt)
		y := r.In("other", dt)
		if r.err != nil {
			return r.err
		}
		if negate {
			b.Emit(n.Results[0], "Not", []string{b.Tmp(opType, []string{x, y})})
			return nil
		}
		b.Emit(n.Results[0], opType, []string{x, y})
		return nil
	}
}

// logical lowers logical_* (any dtype, computed on bools).
func logical(opType string) Lowering {
	return func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		x := r.In("self", ir.Bool)
		y := r.In("other", ir.Bool)
		if r.err != nil {
			return r.err
		}
		out, err := b.CastTo(b.Tmp(opType, []string{x, y}), ir.Bool, r.out(0).DType)
		if err != nil {
			return err
		}
		b.Bind(n.Results[0], out)
		return nil
	}
}

func init() {
	for op, onnx := range map[ir.Op]string{
		ir.OpAtenAbs: "Abs", ir.OpAtenNeg: "Neg", ir.OpAtenRelu: "Relu",
		ir.OpAtenCeil: "Ceil", ir.OpAtenFloor: "Floor", ir.OpAtenRound: "Round",
		ir.OpAtenSign: "Sign", ir.OpAtenExp: "Exp", ir.OpAtenLog: "Log",
		ir.OpAtenSqrt: "Sqrt", ir.OpAtenSin: "Sin", ir.OpAtenCos: "Cos",
		ir.OpAtenTan: "Tan", ir.OpAtenTanh: "Tanh", ir.OpAtenSigmoid: "Sigmoid",
		ir.OpAtenErf: "Erf", ir.OpAtenReciprocal: "Reciprocal", ir.OpAtenAsin: "Asin",
		ir.OpAtenAcos: "Acos", ir.OpAtenAtan: "Atan", ir.OpAtenSinh: "Sinh",
		ir.OpAtenCosh: "Cosh", ir.OpAtenAsinh: "Asinh", ir.OpAtenAcosh: "Acosh",
		ir.OpAtenAtanh: "Atanh", ir.OpAtenHardswish: "HardSwish", ir.OpAtenMish: "Mish",
	} {
		lower(17, unary(onnx), op)
	}
	lower(17, unary("HardSigmoid", AttrFloat("alpha", 1.0/6), AttrFloat("beta", 0.5)), ir.OpAtenHardsigmoid)
	lower(17, unaryChain(func(b *Builder, x string, dt ir.DType) (string, error) {
		return b.Tmp("Reciprocal", []string{b.Tmp("Sqrt", []string{x})}), nil
	}), ir.OpAtenRsqrt)
	lower(17, unaryChain(func(b *Builder, x string, dt ir.DType) (string, error) {
		return b.Tmp("Mul", []string{x, b.Tmp("Sigmoid", []string{x})}), nil
	}), ir.OpAtenSilu)
	lower(17, unaryChain(func(b *Builder, x string, dt ir.DType) (string, error) {
		one, err := b.Scalar(dt, 1)
		return b.Tmp("Sub", []string{b.Tmp("Exp", []string{x}), one}), err
	}), ir.OpAtenExpm1)
	lower(17, unaryChain(func(b *Builder, x string, dt ir.DType) (string, error) {
		one, err := b.Scalar(dt, 1)
		return b.Tmp("Log", []string{b.Tmp("Add", []string{x, one})}), err
	}), ir.OpAtenLog1p)
	lower(17, unaryChain(func(b *Builder, x string, dt ir.DType) (string, error) {
		c, err := b.Scalar(dt, 1/math.Ln2)
		return b.Tmp("Mul", []string{b.Tmp("Log", []string{x}), c}), err
	}), ir.OpAtenLog2)
	lower(17, unaryChain(func(b *Builder, x string, dt ir.DType) (string, error) {
		// trunc(x) = sign(x) * floor(|x|)
		return b.Tmp("Mul", []string{b.Tmp("Sign", []string{x}), b.Tmp("Floor", []string{b.Tmp("Abs", []string{x})})}), nil
	}), ir.OpAtenTrunc)
	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		x := r.In("self", ir.Bool)
		if r.err != nil {
			return r.err
		}
		out, err := b.CastTo(b.Tmp("Not", []string{x}), ir.Bool, r.out(0).DType)
		if err != nil {
			return err
		}
		b.Bind(n.Results[0], out)
		return nil
	}, ir.OpAtenLogicalNot)
	lower(18, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		dt := r.out(0).DType
		x := r.In("self", dt)
		if r.err != nil {
			return r.err
		}
		if dt == ir.Bool {
			b.Emit(n.Results[0], "Not", []string{x})
		} else {
			b.Emit(n.Results[0], "BitwiseNot", []string{x})
		}
		return nil
	}, ir.OpAtenBitwiseNot)
	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		x := r.In("self", r.DT("self"))
		if r.err != nil {
			return r.err
		}
		b.Emit(n.Results[0], "IsNaN", []string{x})
		return nil
	}, ir.OpAtenIsnan)

	// GELU: exact erf form, or the tanh approximation; Gelu from opset 20.
	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		dt := r.out(0).DType
		x := r.In("self", dt)
		approx := r.Str("approximate")
		if r.err != nil {
			return r.err
		}
		c := func(v float64) string { s, _ := b.Scalar(dt, v); return s }
		var inner string
		if approx == "tanh" {
			x3 := b.Tmp("Mul", []string{b.Tmp("Mul", []string{x, x}), x})
			t := b.Tmp("Add", []string{x, b.Tmp("Mul", []string{x3, c(0.044715)})})
			inner = b.Tmp("Tanh", []string{b.Tmp("Mul", []string{t, c(math.Sqrt(2 / math.Pi))})})
		} else {
			inner = b.Tmp("Erf", []string{b.Tmp("Mul", []string{x, c(1 / math.Sqrt2)})})
		}
		half := b.Tmp("Mul", []string{x, c(0.5)})
		b.Emit(n.Results[0], "Mul", []string{half, b.Tmp("Add", []string{inner, c(1)})})
		return nil
	}, ir.OpAtenGelu)
	lower(20, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		x := r.In("self", r.out(0).DType)
		approx := r.Str("approximate")
		if r.err != nil {
			return r.err
		}
		b.Emit(n.Results[0], "Gelu", []string{x}, AttrString("approximate", approx))
		return nil
	}, ir.OpAtenGelu)

	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		x := r.In("self", r.out(0).DType)
		alpha := r.Float("negative_slope")
		if r.err != nil {
			return r.err
		}
		b.Emit(n.Results[0], "LeakyRelu", []string{x}, AttrFloat("alpha", alpha))
		return nil
	}, ir.OpAtenLeakyRelu)
	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		x := r.In("self", r.out(0).DType)
		alpha, scale, inScale := r.Float("alpha"), r.Float("scale"), r.Float("input_scale")
		if r.err != nil {
			return r.err
		}
		if scale != 1 || inScale != 1 {
			return fmt.Errorf("elu with scale %g / input_scale %g is not lowered", scale, inScale)
		}
		b.Emit(n.Results[0], "Elu", []string{x}, AttrFloat("alpha", alpha))
		return nil
	}, ir.OpAtenElu)
	lower(17, func(b *Builder, n *ir.Node) error {
		// softplus(x) = log(1 + exp(beta x)) / beta, linear above threshold.
		r := reader(b, n)
		dt := r.out(0).DType
		x := r.In("self", dt)
		beta, thr := r.Float("beta"), r.Float("threshold")
		if r.err != nil {
			return r.err
		}
		c := func(v float64) string { s, _ := b.Scalar(dt, v); return s }
		bx := b.Tmp("Mul", []string{x, c(beta)})
		sp := b.Tmp("Div", []string{b.Tmp("Softplus", []string{bx}), c(beta)})
		b.Emit(n.Results[0], "Where", []string{b.Tmp("Greater", []string{bx, c(thr)}), x, sp})
		return nil
	}, ir.OpAtenSoftplus)
	clip := func(minName, maxName string) Lowering {
		return func(b *Builder, n *ir.Node) error {
			r := reader(b, n)
			dt := r.out(0).DType
			ins := []string{r.In("self", dt), "", ""}
			if r.Has(minName) {
				ins[1] = r.In(minName, dt)
			}
			if r.Has(maxName) {
				ins[2] = r.In(maxName, dt)
			}
			if r.err != nil {
				return r.err
			}
			for len(ins) > 1 && ins[len(ins)-1] == "" {
				ins = ins[:len(ins)-1]
			}
			b.Emit(n.Results[0], "Clip", ins)
			return nil
		}
	}
	lower(17, clip("min", "max"), ir.OpAtenClamp)
	lower(17, func(b *Builder, n *ir.Node) error {
		// Clip takes scalar bounds only; tensor bounds are Max then Min.
		r := reader(b, n)
		dt := r.out(0).DType
		y := r.In("self", dt)
		if r.Has("min") {
			y = b.Tmp("Max", []string{y, r.In("min", dt)})
		}
		if r.Has("max") {
			y = b.Tmp("Min", []string{y, r.In("max", dt)})
		}
		if r.err != nil {
			return r.err
		}
		b.Bind(n.Results[0], y)
		return nil
	}, ir.OpAtenClampTensor)
	lower(17, clip("min_val", "max_val"), ir.OpAtenHardtanh)

	for op, onnx := range map[ir.Op]string{
		ir.OpAtenAddTensor: "Add", ir.OpAtenAddScalar: "Add", ir.OpAtenSubTensor: "Sub", ir.OpAtenSubScalar: "Sub",
		ir.OpAtenMulTensor: "Mul", ir.OpAtenDivTensor: "Div", ir.OpAtenDivScalar: "Div",
		ir.OpAtenMaximum: "Max", ir.OpAtenMinimum: "Min", ir.OpAtenAtan2: "",
		ir.OpAtenPowTensorTensor: "Pow", ir.OpAtenPowTensorScalar: "Pow",
	} {
		if onnx != "" {
			lower(17, binaryOp(onnx), op)
		}
	}
	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		dt := r.out(0).DType
		x := r.In("self", dt)
		y := r.In("exponent", dt)
		if r.err != nil {
			return r.err
		}
		b.Emit(n.Results[0], "Pow", []string{x, y})
		return nil
	}, ir.OpAtenPowScalar)
	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		dt := r.out(0).DType
		x := r.In("self", dt)
		y := r.In("other", dt)
		mode := ""
		if r.Has("rounding_mode") {
			mode = r.Str("rounding_mode")
		}
		if r.err != nil {
			return r.err
		}
		q := b.Tmp("Div", []string{x, y})
		switch {
		case mode == "":
			b.Bind(n.Results[0], q)
		case mode == "floor" && dt.IsFloat():
			b.Emit(n.Results[0], "Floor", []string{q})
		case mode == "floor":
			b.Bind(n.Results[0], b.FloorDivInt(x, y))
		case mode == "trunc" && dt.IsFloat():
			b.Emit(n.Results[0], "Mul", []string{b.Tmp("Sign", []string{q}), b.Tmp("Floor", []string{b.Tmp("Abs", []string{q})})})
		default: // integer trunc division is ONNX Div
			b.Bind(n.Results[0], q)
		}
		return nil
	}, ir.OpAtenDivTensorMode, ir.OpAtenDivScalarMode)
	rem := func(fmod bool) Lowering {
		return func(b *Builder, n *ir.Node) error {
			r := reader(b, n)
			dt := r.out(0).DType
			x := r.In("self", dt)
			y := r.In("other", dt)
			if r.err != nil {
				return r.err
			}
			f := int64(0)
			if dt.IsFloat() || fmod {
				f = 1
			}
			m := b.Tmp("Mod", []string{x, y}, AttrInt("fmod", f))
			if fmod || !dt.IsFloat() {
				// integer Mod with fmod=0 is Python's sign-of-divisor remainder
				b.Bind(n.Results[0], m)
				return nil
			}
			// Python remainder for floats: r + y where r and y have different signs and r != 0.
			zero, _ := b.Scalar(dt, 0)
			fix := b.Tmp("And", []string{b.Tmp("Not", []string{b.Tmp("Equal", []string{m, zero})}),
				b.Tmp("Xor", []string{b.Tmp("Less", []string{m, zero}), b.Tmp("Less", []string{y, zero})})})
			b.Emit(n.Results[0], "Where", []string{fix, b.Tmp("Add", []string{m, y}), m})
			return nil
		}
	}
	lower(17, rem(false), ir.OpAtenRemainderTensor, ir.OpAtenRemainderScalar)
	lower(17, rem(true), ir.OpAtenFmodTensor, ir.OpAtenFmodScalar)

	for op, onnx := range map[ir.Op]string{
		ir.OpAtenEqTensor: "Equal", ir.OpAtenEqScalar: "Equal", ir.OpAtenLtTensor: "Less", ir.OpAtenLtScalar: "Less",
		ir.OpAtenLeTensor: "LessOrEqual", ir.OpAtenLeScalar: "LessOrEqual", ir.OpAtenGtTensor: "Greater",
		ir.OpAtenGtScalar: "Greater", ir.OpAtenGeTensor: "GreaterOrEqual", ir.OpAtenGeScalar: "GreaterOrEqual",
	} {
		lower(17, compare(onnx, false), op)
	}
	lower(17, compare("Equal", true), ir.OpAtenNeTensor, ir.OpAtenNeScalar)
	lower(17, logical("And"), ir.OpAtenLogicalAnd)
	lower(17, logical("Or"), ir.OpAtenLogicalOr)
	lower(17, logical("Xor"), ir.OpAtenLogicalXor)
	bitwise := func(boolOp, intOp string) Lowering {
		return func(b *Builder, n *ir.Node) error {
			r := reader(b, n)
			dt := r.out(0).DType
			x, y := r.In("self", dt), r.In("other", dt)
			if r.err != nil {
				return r.err
			}
			if dt == ir.Bool {
				b.Emit(n.Results[0], boolOp, []string{x, y})
			} else {
				b.Emit(n.Results[0], intOp, []string{x, y})
			}
			return nil
		}
	}
	lower(18, bitwise("And", "BitwiseAnd"), ir.OpAtenBitwiseAndTensor)
	lower(18, bitwise("Or", "BitwiseOr"), ir.OpAtenBitwiseOrTensor)

	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		dt := r.out(0).DType
		c := r.In("condition", ir.Bool)
		x, y := r.In("self", dt), r.In("other", dt)
		if r.err != nil {
			return r.err
		}
		if dt == ir.Bool {
			// ONNX-TR09: ORT's CPU EP has no bool Where: (c ∧ x) ∨ (¬c ∧ y).
			b.Emit(n.Results[0], "Or", []string{b.Tmp("And", []string{c, x}), b.Tmp("And", []string{b.Tmp("Not", []string{c}), y})})
			return nil
		}
		b.Emit(n.Results[0], "Where", []string{c, x, y})
		return nil
	}, ir.OpAtenWhereSelf)
}
