package onnx

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	pb "github.com/fxport/fxport/targets/onnx/onnxpb"
)

func init() {
	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		dt := r.out(0).DType
		var x, y string
		if r.n.Op.ArgIndex("mat2") >= 0 {
			x, y = r.In("self", dt), r.In("mat2", dt)
		} else {
			x, y = r.In("self", dt), r.In("other", dt)
		}
		if r.err != nil {
			return r.err
		}
		b.Emit(n.Results[0], "MatMul", []string{x, y})
		return nil
	}, ir.OpAtenMm, ir.OpAtenBmm, ir.OpAtenMatmul)
	lower(17, lowerBetaAlphaMatMul("mat1", "mat2"), ir.OpAtenAddmm)
	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		dt := r.out(0).DType
		x, w := r.In("input", dt), r.In("weight", dt)
		if r.err != nil {
			return r.err
		}
		wt := w
		if len(r.Shape("weight")) == 2 {
			wt = b.Tmp("Transpose", []string{w}, AttrInts("perm", 1, 0))
		}
		if !r.Has("bias") {
			b.Emit(n.Results[0], "MatMul", []string{x, wt})
			return nil
		}
		bias := r.In("bias", dt)
		b.Emit(n.Results[0], "Add", []string{b.Tmp("MatMul", []string{x, wt}), bias})
		return r.err
	}, ir.OpAtenLinear)

	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		dt := r.out(0).DType
		x, w := r.In("input", dt), r.In("weight", dt)
		stride, pad, dil := r.Ints("stride"), r.Ints("padding"), r.Ints("dilation")
		transposed, outPad, groups := r.Bool("transposed"), r.Ints("output_padding"), r.Int("groups")
		ins := []string{x, w}
		if r.Has("bias") {
			ins = append(ins, r.In("bias", dt))
		}
		if r.err != nil {
			return r.err
		}
		k := len(r.Shape("weight")) - 2
		if k < 1 {
			return fmt.Errorf("convolution weight of rank %d", k+2)
		}
		exp := func(v []int64, def int64) []int64 {
			if len(v) == 1 && k > 1 {
				out := make([]int64, k)
				for i := range out {
					out[i] = v[0]
				}
				return out
			}
			if len(v) == 0 {
				out := make([]int64, k)
				for i := range out {
					out[i] = def
				}
				return out
			}
			return v
		}
		stride, pad, dil, outPad = exp(stride, 1), exp(pad, 0), exp(dil, 1), exp(outPad, 0)
		attrs := []*pb.AttributeProto{AttrInts("strides", stride...), AttrInts("pads", append(append([]int64{}, pad...), pad...)...),
			AttrInts("dilations", dil...), AttrInt("group", groups)}
		op := "Conv"
		if transposed {
			attrs = append(attrs, AttrInts("output_padding", outPad...))
			op = "ConvTranspose"
		}
		if dt == ir.BFloat16 && b.Opset() < 22 {
			// Conv and ConvTranspose take bfloat16 only from opset 22:
			// below it, convolve in float32 (what torch's CPU kernel
			// accumulates in) and round the result once.
			for i, in := range ins {
				f, err := b.CastTo(in, dt, ir.Float32)
				if err != nil {
					return err
				}
				ins[i] = f
			}
			et, err := elemType(dt)
			if err != nil {
				return err
			}
			b.Emit(n.Results[0], "Cast", []string{b.Tmp(op, ins, attrs...)}, AttrInt("to", int64(et)))
			return nil
		}
		b.Emit(n.Results[0], op, ins, attrs...)
		return nil
	}, ir.OpAtenConvolution)

	batchNorm := func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		dt := r.out(0).DType
		x := r.In("input", dt)
		c, ok := r.Shape("input")[1].Const()
		if !ok {
			return fmt.Errorf("batch norm over a symbolic channel count")
		}
		param := func(name string, fill float64) string {
			if r.Has(name) {
				return r.In(name, dt)
			}
			return b.fill(dt, []int64{c}, fill)
		}
		scale, bias := param("weight", 1), param("bias", 0)
		mean, vr := param("running_mean", 0), param("running_var", 1)
		eps := r.Float("eps")
		training := false
		if n.Op.ArgIndex("training") >= 0 {
			training = r.Bool("training")
		}
		if r.err != nil {
			return r.err
		}
		if training {
			return fmt.Errorf("batch norm in training mode is not lowered (export in eval mode)")
		}
		b.Emit(n.Results[0], "BatchNormalization", []string{x, scale, bias, mean, vr}, AttrFloat("epsilon", eps))
		for _, res := range n.Results[1:] {
			if res.NumUses() == 0 {
				continue
			}
			// Inference batch norm saves no statistics: torch returns them
			// as empty tensors, which a constant gives.
			t := res.Tensor()
			if d, ok := t.Shape[0].Const(); t.Rank() != 1 || !ok || d != 0 {
				return fmt.Errorf("batch norm's saved mean/invstd outputs are used; not lowered")
			}
			b.Emit(res, "Identity", []string{b.fill(t.DType, []int64{0}, 0)})
		}
		return nil
	}
	lower(17, batchNorm, ir.OpAtenNativeBatchNorm, ir.OpAten_NativeBatchNormLegitNoTraining)

	layerNorm := func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		dt := r.out(0).DType
		x := r.In("input", dt)
		ns := r.Ints("normalized_shape")
		eps := r.Float("eps")
		if r.err != nil {
			return r.err
		}
		scale := b.fill(dt, ns, 1)
		if r.Has("weight") {
			scale = r.In("weight", dt)
		}
		ins := []string{x, scale}
		if r.Has("bias") {
			ins = append(ins, r.In("bias", dt))
		}
		axis := -int64(len(ns))
		results := make([]*ir.Value, len(n.Results))
		for i, res := range n.Results {
			if i == 0 || res.NumUses() > 0 {
				results[i] = res
			}
		}
		// torch's rstd output is ONNX's InvStdDev. ONNX computes Mean and
		// InvStdDev in float (stash_type 1) where torch keeps the input's
		// dtype (fp16, bf16): those come out through a Cast.
		if dt != ir.Float32 && len(results) == 3 && (results[1] != nil || results[2] != nil) {
			outs := b.TmpN("LayerNormalization", ins, 3, AttrInt("axis", axis), AttrFloat("epsilon", eps))
			b.Emit(results[0], "Identity", []string{outs[0]})
			for i := 1; i < 3; i++ {
				if results[i] == nil {
					continue
				}
				c, err := b.CastTo(outs[i], ir.Float32, results[i].Tensor().DType)
				if err != nil {
					return err
				}
				b.Emit(results[i], "Identity", []string{c})
			}
			return r.err
		}
		b.EmitN(results, "LayerNormalization", ins, AttrInt("axis", axis), AttrFloat("epsilon", eps))
		return r.err
	}
	lower(17, layerNorm, ir.OpAtenNativeLayerNorm, ir.OpAtenLayerNorm)

	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		w, idx := r.T("weight"), r.T("indices")
		if r.err != nil {
			return r.err
		}
		b.Emit(n.Results[0], "Gather", []string{w, idx}, AttrInt("axis", 0))
		return nil
	}, ir.OpAtenEmbedding)
}

// fill is a constant of shape filled with v in dtype dt.
func (b *Builder) fill(dt ir.DType, shape []int64, v float64) string {
	one, err := encodeScalar(dt, v)
	if err != nil {
		return ""
	}
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	data := make([]byte, 0, int64(len(one))*n)
	for i := int64(0); i < n; i++ {
		data = append(data, one...)
	}
	s, _ := b.Const(dt, shape, data)
	return s
}

// lowerBetaAlphaMatMul lowers beta·self + alpha·(a @ b), the shape of addmm
// (a, b = mat1, mat2) and baddbmm (batch1, batch2); beta 0 ignores self, as
// torch does (so NaN or Inf in self do not leak through).
func lowerBetaAlphaMatMul(a, bName string) func(*Builder, *ir.Node) error {
	return func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		dt := r.out(0).DType
		c, m1, m2 := r.In("self", dt), r.In(a, dt), r.In(bName, dt)
		beta, alpha := r.Float("beta"), r.Float("alpha")
		if r.err != nil {
			return r.err
		}
		mm := b.Tmp("MatMul", []string{m1, m2})
		if alpha != 1 {
			s, _ := b.Scalar(dt, alpha)
			mm = b.Tmp("Mul", []string{mm, s})
		}
		if beta == 0 {
			b.Bind(n.Results[0], mm)
			return nil
		}
		if beta != 1 {
			s, _ := b.Scalar(dt, beta)
			c = b.Tmp("Mul", []string{c, s})
		}
		b.Emit(n.Results[0], "Add", []string{mm, c})
		return nil
	}
}
