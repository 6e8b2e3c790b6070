package onnx

import (
	"fmt"

	"github.com/fxport/fxport/ir"
)

// Random ops: ONNX's RandomUniformLike / RandomNormalLike / Bernoulli draw
// from their own generator, so outputs match torch in distribution, shape
// and dtype, not value by value (TestOpCasesGenuine judges them so).

// randomLike draws opType ("RandomUniformLike" / "RandomNormalLike") with
// result n.Results[0]'s shape and dtype.
func randomLike(opType string, fromSize bool) Lowering {
	return func(b *Builder, n *ir.Node) error {
		if err := randomOpset(b); err != nil {
			return err
		}
		r := reader(b, n)
		out := r.out(0)
		if r.err != nil {
			return r.err
		}
		et, err := elemType(out.DType)
		if err != nil {
			return err
		}
		if !out.DType.IsFloat() {
			return fmt.Errorf("%s of dtype %s", n.Op, out.DType)
		}
		var like string
		if fromSize {
			shape, err := b.ShapeTensor(out.Shape)
			if err != nil {
				return err
			}
			like = b.Tmp("Expand", []string{b.zeroOf(out.DType), shape})
		} else {
			like = r.T("self")
		}
		b.Emit(n.Results[0], opType, []string{like}, AttrInt("dtype", int64(et)))
		return r.err
	}
}

// randomOpset refuses opsets whose random ops ONNX Runtime 1.31 cannot run
// (it has no CPU kernel for RandomUniform*/RandomNormal*/Bernoulli-22).
func randomOpset(b *Builder) error {
	if b.opset >= 22 {
		return fmt.Errorf("ONNX Runtime 1.31 has no kernel for the random ops of opset 22 and newer (RandomUniformLike, RandomNormalLike, Bernoulli): export with --opset 21")
	}
	return nil
}

func init() {
	lower(17, randomLike("RandomUniformLike", true), ir.OpAtenRand)
	lower(17, randomLike("RandomNormalLike", true), ir.OpAtenRandn)
	lower(17, randomLike("RandomUniformLike", false), ir.OpAtenRandLike)
	lower(17, randomLike("RandomNormalLike", false), ir.OpAtenRandnLike)
	lower(17, func(b *Builder, n *ir.Node) error {
		// bernoulli(self): Bernoulli of the probabilities; .p: of a constant p.
		if err := randomOpset(b); err != nil {
			return err
		}
		r := reader(b, n)
		dt := r.out(0).DType
		x := r.In("self", dt)
		if r.err != nil {
			return r.err
		}
		et, err := elemType(dt)
		if err != nil {
			return err
		}
		probs := x
		if n.Op.ArgIndex("p") >= 0 {
			p := r.In("p", dt)
			probs = b.Tmp("Expand", []string{p, b.Tmp("Shape", []string{x})})
		}
		b.Emit(n.Results[0], "Bernoulli", []string{probs}, AttrInt("dtype", int64(et)))
		return r.err
	}, ir.OpAtenBernoulli, ir.OpAtenBernoulliP)
	lower(17, func(b *Builder, n *ir.Node) error {
		// native_dropout: identity with an all-true mask in eval mode; in
		// training mode keep = U[0,1) ≥ p, out = x·keep / (1 − p).
		r := reader(b, n)
		dt := r.out(0).DType
		x := r.In("input", dt)
		p := r.Float("p")
		train := r.Has("train") && r.Bool("train")
		if r.err != nil {
			return r.err
		}
		if !train || p == 0 {
			b.Bind(n.Results[0], x)
			t, _ := b.Scalar(ir.Bool, 1)
			b.Emit(n.Results[1], "Expand", []string{t, b.Tmp("Shape", []string{x})})
			return nil
		}
		if err := randomOpset(b); err != nil {
			return err
		}
		et, _ := elemType(dt)
		pv, _ := b.Scalar(dt, p)
		keep := b.Tmp("GreaterOrEqual", []string{b.Tmp("RandomUniformLike", []string{x}, AttrInt("dtype", int64(et))), pv})
		kf, err := b.CastTo(keep, ir.Bool, dt)
		if err != nil {
			return err
		}
		scale, _ := b.Scalar(dt, 1/(1-p))
		b.Emit(n.Results[0], "Mul", []string{b.Tmp("Mul", []string{x, kf}), scale})
		b.Bind(n.Results[1], keep)
		return nil
	}, ir.OpAtenNativeDropout)
}
