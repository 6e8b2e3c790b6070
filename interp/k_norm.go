package interp

import (
	"fmt"
	"math"

	"github.com/fxport/fxport/ir"
)

// Normalization: layer, batch (eval and training, with running-stat
// updates), group, instance and RMS norm. Statistics are computed in float64.

func init() {
	register(kNativeLayerNorm, ir.OpAtenNativeLayerNorm)
	register(kLayerNorm, ir.OpAtenLayerNorm)
	register(kRmsNorm(false), ir.OpAtenRmsNorm)
	register(kRmsNorm(true), ir.OpAten_FusedRmsNorm)
	register(kNativeGroupNorm, ir.OpAtenNativeGroupNorm)
	register(kGroupNorm, ir.OpAtenGroupNorm)
	register(kBatchNorm, ir.OpAten_NativeBatchNormLegit, ir.OpAten_NativeBatchNormLegitNoStats,
		ir.OpAten_NativeBatchNormLegitNoTraining, ir.OpAtenNativeBatchNorm,
		ir.OpAten_NativeBatchNormLegitFunctional, ir.OpAten_BatchNormWithUpdate,
		ir.OpAten_BatchNormNoUpdate, ir.OpAtenBatchNorm)
	register(kInstanceNorm, ir.OpAtenInstanceNorm)
}

// declaredStatLen is the static length result i declares when it is a
// 1-d tensor, else -1.
func declaredStatLen(c *call, i int) int64 {
	if c.node == nil || i >= len(c.node.Results) {
		return -1
	}
	t := c.node.Results[i].Tensor()
	if t == nil || t.Rank() != 1 {
		return -1
	}
	if v, ok := t.Shape[0].Const(); ok {
		return v
	}
	return -1
}

// statDType is the dtype the node declares for statistics result i, or
// the input's dtype.
func statDType(c *call, i int, in ir.DType) ir.DType {
	if d, ok := c.declaredDType(i); ok && isFloatDT(d) {
		return d
	}
	return in
}

// layerNorm normalizes x over its trailing dims starting at axis; it
// returns the output and per-row mean and rstd (float64).
func layerNorm(x, w, b *Tensor, axis int, eps float64, rms bool) (*Tensor, []float64, []float64, error) {
	if !isFloatDT(x.DType) {
		return nil, nil, nil, fmt.Errorf("normalization is not supported for %s", x.DType)
	}
	inner := numel(x.Shape[axis:])
	outer := numel(x.Shape[:axis])
	xv := x.Contiguous().floats()
	var wv, bv []float64
	if w != nil {
		if numel(w.Shape) != inner {
			return nil, nil, nil, fmt.Errorf("weight of shape %v does not match normalized shape %v", w.Shape, x.Shape[axis:])
		}
		wv = w.To(ir.Float64).Contiguous().floats()
	}
	if b != nil {
		if numel(b.Shape) != inner {
			return nil, nil, nil, fmt.Errorf("bias of shape %v does not match normalized shape %v", b.Shape, x.Shape[axis:])
		}
		bv = b.To(ir.Float64).Contiguous().floats()
	}
	res := make([]float64, len(xv))
	means, rstds := make([]float64, outer), make([]float64, outer)
	for r := int64(0); r < outer; r++ {
		row := xv[r*inner : (r+1)*inner]
		mean, v := 0.0, 0.0
		if rms {
			for _, e := range row {
				v += e * e
			}
			v /= float64(inner)
		} else {
			mean = sumF(row) / float64(inner)
			for _, e := range row {
				d := e - mean
				v += d * d
			}
			v /= float64(inner)
		}
		rstd := 1 / math.Sqrt(v+eps)
		means[r], rstds[r] = mean, rstd
		for j, e := range row {
			o := (e - mean) * rstd
			if wv != nil {
				o *= wv[j]
			}
			if bv != nil {
				o += bv[j]
			}
			res[r*inner+int64(j)] = o
		}
	}
	return FromFloat64(x.DType, x.Shape, res), means, rstds, nil
}

func normAxis(x *Tensor, norm []int64) (int, error) {
	axis := x.Rank() - len(norm)
	if len(norm) == 0 || axis < 0 {
		return 0, fmt.Errorf("normalized_shape %v does not fit input of shape %v", norm, x.Shape)
	}
	for i, d := range norm {
		if x.Shape[axis+i] != d {
			return 0, fmt.Errorf("given normalized_shape=%v, expected input with shape [*, %v], but got input of size %v", norm, norm, x.Shape)
		}
	}
	return axis, nil
}

func statShape(x *Tensor, axis int) []int64 {
	shape := append([]int64{}, x.Shape[:axis]...)
	for i := axis; i < x.Rank(); i++ {
		shape = append(shape, 1)
	}
	return shape
}

func layerNormArgs(c *call) (x, w, b *Tensor, axis int, eps float64, err error) {
	if x, err = c.tensor("input"); err != nil {
		return
	}
	norm, err := c.ints("normalized_shape")
	if err != nil {
		return
	}
	if axis, err = normAxis(x, norm); err != nil {
		return
	}
	if w, err = c.optTensor("weight"); err != nil {
		return
	}
	if c.has("bias") {
		if b, err = c.optTensor("bias"); err != nil {
			return
		}
	}
	if c.has("eps") {
		var ok bool
		eps, ok, err = c.optFloat("eps")
		if err == nil && !ok {
			eps = finfoEps(x.DType)
		}
	}
	return
}

// finfoEps is torch.finfo(dt).eps.
func finfoEps(dt ir.DType) float64 {
	switch dt {
	case ir.Float16:
		return 0.0009765625
	case ir.BFloat16:
		return 0.0078125
	case ir.Float64:
		return 2.220446049250313e-16
	}
	return 1.1920928955078125e-07
}

func kNativeLayerNorm(c *call) ([]Value, error) {
	x, w, b, axis, eps, err := layerNormArgs(c)
	if err != nil {
		return nil, err
	}
	out, means, rstds, err := layerNorm(x, w, b, axis, eps, false)
	if err != nil {
		return nil, err
	}
	shape := statShape(x, axis)
	return []Value{out, FromFloat64(statDType(c, 1, x.DType), shape, means), FromFloat64(statDType(c, 2, x.DType), shape, rstds)}, nil
}

func kLayerNorm(c *call) ([]Value, error) {
	x, w, b, axis, eps, err := layerNormArgs(c)
	if err != nil {
		return nil, err
	}
	out, _, _, err := layerNorm(x, w, b, axis, eps, false)
	return one0(out, err)
}

func kRmsNorm(fused bool) kernel {
	return func(c *call) ([]Value, error) {
		x, w, _, axis, eps, err := layerNormArgs(c)
		if err != nil {
			return nil, err
		}
		out, _, rstds, err := layerNorm(x, w, nil, axis, eps, true)
		if err != nil {
			return nil, err
		}
		if !fused {
			return one(out), nil
		}
		return []Value{out, FromFloat64(statDType(c, 1, x.DType), statShape(x, axis), rstds)}, nil
	}
}

// groupNorm normalizes x [N, C, *] over groups of channels; weight and bias
// are per channel. It returns the output and per-(N, group) mean and rstd.
func groupNorm(x, w, b *Tensor, groups int64, eps float64) (*Tensor, []float64, []float64, error) {
	if x.Rank() < 2 {
		return nil, nil, nil, fmt.Errorf("group_norm expects an input with at least 2 dims, got %v", x.Shape)
	}
	n, ch := x.Shape[0], x.Shape[1]
	if groups <= 0 || ch%groups != 0 {
		return nil, nil, nil, fmt.Errorf("expected number of channels in input to be divisible by num_groups, but got input of shape %v and num_groups=%d", x.Shape, groups)
	}
	if !isFloatDT(x.DType) {
		return nil, nil, nil, fmt.Errorf("group_norm is not supported for %s", x.DType)
	}
	hw := numel(x.Shape[2:])
	cg := ch / groups
	xv := x.Contiguous().floats()
	var wv, bv []float64
	if w != nil {
		wv = w.To(ir.Float64).floats()
	}
	if b != nil {
		bv = b.To(ir.Float64).floats()
	}
	res := make([]float64, len(xv))
	means, rstds := make([]float64, n*groups), make([]float64, n*groups)
	size := cg * hw
	for i := int64(0); i < n*groups; i++ {
		row := xv[i*size : (i+1)*size]
		v, mean := varRow(row, 0)
		rstd := 1 / math.Sqrt(v+eps)
		means[i], rstds[i] = mean, rstd
		g := i % groups
		for j, e := range row {
			chn := g*cg + int64(j)/hw
			o := (e - mean) * rstd
			if wv != nil {
				o *= wv[chn]
			}
			if bv != nil {
				o += bv[chn]
			}
			res[i*size+int64(j)] = o
		}
	}
	return FromFloat64(x.DType, x.Shape, res), means, rstds, nil
}

func kNativeGroupNorm(c *call) ([]Value, error) {
	x, err := c.tensor("input")
	if err != nil {
		return nil, err
	}
	w, err := c.optTensor("weight")
	if err != nil {
		return nil, err
	}
	b, err := c.optTensor("bias")
	if err != nil {
		return nil, err
	}
	g, err := c.int("group")
	if err != nil {
		return nil, err
	}
	eps, err := c.float("eps")
	if err != nil {
		return nil, err
	}
	out, means, rstds, err := groupNorm(x, w, b, g, eps)
	if err != nil {
		return nil, err
	}
	shape := []int64{x.Shape[0], g}
	return []Value{out, FromFloat64(statDType(c, 1, x.DType), shape, means), FromFloat64(statDType(c, 2, x.DType), shape, rstds)}, nil
}

func kGroupNorm(c *call) ([]Value, error) {
	x, err := c.tensor("input")
	if err != nil {
		return nil, err
	}
	g, err := c.int("num_groups")
	if err != nil {
		return nil, err
	}
	w, err := c.optTensor("weight")
	if err != nil {
		return nil, err
	}
	b, err := c.optTensor("bias")
	if err != nil {
		return nil, err
	}
	eps, err := c.float("eps")
	if err != nil {
		return nil, err
	}
	out, _, _, err := groupNorm(x, w, b, g, eps)
	return one0(out, err)
}

// channelRows lays x [N, C, *] out as C rows of N*prod(*) values.
func channelRows(x *Tensor) ([]float64, int64, int64) {
	perm := []int64{1, 0}
	for i := 2; i < x.Rank(); i++ {
		perm = append(perm, int64(i))
	}
	p, _ := permuteView(x.To(ir.Float64), perm)
	ch := x.Shape[1]
	return p.Contiguous().floats(), ch, x.Numel() / max(ch, 1)
}

// batchNorm normalizes per channel with the given per-channel mean and
// variance, then applies weight and bias.
func batchNormApply(x *Tensor, mean, variance []float64, w, b *Tensor, eps float64) *Tensor {
	ch := x.Shape[1]
	hw := numel(x.Shape[2:])
	xv := x.Contiguous().floats()
	var wv, bv []float64
	if w != nil {
		wv = w.To(ir.Float64).floats()
	}
	if b != nil {
		bv = b.To(ir.Float64).floats()
	}
	res := make([]float64, len(xv))
	for i := range xv {
		chn := (int64(i) / hw) % ch
		o := (xv[i] - mean[chn]) / math.Sqrt(variance[chn]+eps)
		if wv != nil {
			o *= wv[chn]
		}
		if bv != nil {
			o += bv[chn]
		}
		res[i] = o
	}
	return FromFloat64(x.DType, x.Shape, res)
}

// kBatchNorm covers every batch-norm overload: eval mode uses the running
// statistics; training mode uses the batch's and updates the running ones
// (in place for the mutating overloads, as new results for the functional one).
func kBatchNorm(c *call) ([]Value, error) {
	x, err := c.tensor("input")
	if err != nil {
		return nil, err
	}
	if x.Rank() < 2 {
		return nil, fmt.Errorf("batch_norm expects an input with a channel dim, got %v", x.Shape)
	}
	if !isFloatDT(x.DType) {
		return nil, fmt.Errorf("batch_norm is not supported for %s", x.DType)
	}
	w, err := c.optTensor("weight")
	if err != nil {
		return nil, err
	}
	b, err := c.optTensor("bias")
	if err != nil {
		return nil, err
	}
	var rm, rv *Tensor
	if c.has("running_mean") {
		if rm, err = c.optTensor("running_mean"); err != nil {
			return nil, err
		}
		if rv, err = c.optTensor("running_var"); err != nil {
			return nil, err
		}
	}
	name := c.op
	training := false
	switch {
	case c.has("training"):
		if training, err = c.bool("training"); err != nil {
			return nil, err
		}
	case name == ir.OpAten_BatchNormWithUpdate:
		training = true
	case name == ir.OpAten_BatchNormNoUpdate:
		training = rm == nil
	}
	momentum, err := c.float("momentum")
	if err != nil {
		return nil, err
	}
	eps, err := c.float("eps")
	if err != nil {
		return nil, err
	}
	ch := x.Shape[1]
	var mean, variance []float64
	var saveMean, saveRstd []float64
	if training {
		rows, _, n := channelRows(x)
		mean, variance = make([]float64, ch), make([]float64, ch)
		saveMean, saveRstd = make([]float64, ch), make([]float64, ch)
		for i := int64(0); i < ch; i++ {
			v, m := varRow(rows[i*n:(i+1)*n], 0)
			mean[i], variance[i] = m, v
			saveMean[i], saveRstd[i] = m, 1/math.Sqrt(v+eps)
		}
	} else {
		if rm == nil || rv == nil {
			return nil, fmt.Errorf("running_mean and running_var must be defined in evaluation mode")
		}
		mean, variance = rm.To(ir.Float64).floats(), rv.To(ir.Float64).floats()
	}
	if int64(len(mean)) != ch {
		return nil, fmt.Errorf("running statistics of %d entries for %d channels", len(mean), ch)
	}
	out := batchNormApply(x, mean, variance, w, b, eps)
	if name == ir.OpAtenBatchNorm {
		if training && rm != nil {
			updateRunning(rm, rv, mean, variance, momentum, x.Numel()/ch)
		}
		return one(out), nil
	}
	// Running-stat updates.
	var newRm, newRv *Tensor
	if training && rm != nil && rv != nil {
		if name == ir.OpAten_NativeBatchNormLegitFunctional {
			newRm, newRv = rm.Clone(), rv.Clone()
			updateRunning(newRm, newRv, mean, variance, momentum, x.Numel()/ch)
		} else {
			updateRunning(rm, rv, mean, variance, momentum, x.Numel()/ch)
		}
	}
	sd1, sd2 := statDType(c, 1, x.DType), statDType(c, 2, x.DType)
	statShape := []int64{0}
	if saveMean == nil {
		// Eval mode: torch's kernels return empty statistics, but some
		// traces declare [C]; then report the running statistics used.
		if declaredStatLen(c, 1) == ch {
			saveMean, saveRstd = make([]float64, ch), make([]float64, ch)
			for i := range saveMean {
				saveMean[i], saveRstd[i] = mean[i], 1/math.Sqrt(variance[i]+eps)
			}
			statShape = []int64{ch}
		}
	} else {
		statShape = []int64{ch}
	}
	// No-update overloads and eval mode report empty statistics.
	if name == ir.OpAten_BatchNormNoUpdate {
		statShape, saveMean, saveRstd = []int64{0}, nil, nil
	}
	res := []Value{out, FromFloat64(sd1, statShape, saveMean), FromFloat64(sd2, statShape, saveRstd)}
	switch name {
	case ir.OpAten_NativeBatchNormLegitFunctional:
		if newRm == nil {
			newRm, newRv = rm.Clone(), rv.Clone()
		}
		res = append(res, newRm, newRv)
	case ir.OpAten_BatchNormWithUpdate, ir.OpAten_BatchNormNoUpdate:
		res = append(res, NewTensor(ir.Uint8, 0))
	}
	return res, nil
}

// updateRunning applies torch's momentum update; the running variance uses
// the unbiased batch variance.
func updateRunning(rm, rv *Tensor, mean, variance []float64, momentum float64, n int64) {
	m := rm.To(ir.Float64).Contiguous().floats()
	v := rv.To(ir.Float64).Contiguous().floats()
	nm, nv := make([]float64, len(m)), make([]float64, len(v))
	unbias := float64(n) / math.Max(float64(n-1), 1)
	for i := range m {
		nm[i] = (1-momentum)*m[i] + momentum*mean[i]
		nv[i] = (1-momentum)*v[i] + momentum*variance[i]*unbias
	}
	copyInto(rm, FromFloat64(ir.Float64, rm.Shape, nm))
	copyInto(rv, FromFloat64(ir.Float64, rv.Shape, nv))
}

func kInstanceNorm(c *call) ([]Value, error) {
	x, err := c.tensor("input")
	if err != nil {
		return nil, err
	}
	w, err := c.optTensor("weight")
	if err != nil {
		return nil, err
	}
	b, err := c.optTensor("bias")
	if err != nil {
		return nil, err
	}
	useInput, err := c.bool("use_input_stats")
	if err != nil {
		return nil, err
	}
	eps, err := c.float("eps")
	if err != nil {
		return nil, err
	}
	if !useInput {
		rm, err := c.optTensor("running_mean")
		if err != nil {
			return nil, err
		}
		rv, err := c.optTensor("running_var")
		if err != nil {
			return nil, err
		}
		if rm == nil || rv == nil {
			return nil, fmt.Errorf("expected running_mean and running_var to be defined when use_input_stats is false")
		}
		return one(batchNormApply(x, rm.To(ir.Float64).floats(), rv.To(ir.Float64).floats(), w, b, eps)), nil
	}
	if x.Rank() < 2 {
		return nil, fmt.Errorf("instance_norm expects an input with a channel dim, got %v", x.Shape)
	}
	// Instance norm is group norm with one group per channel.
	out, _, _, err := groupNorm(x, w, b, x.Shape[1], eps)
	return one0(out, err)
}
