package ir

import (
	"fmt"
	"math"
	"strings"

	"github.com/fxport/fxport/ir/sym"
)

// Neural-network rules: convolution, pooling, resampling, normalization,
// softmax, dropout and attention.

// convOutDim is the output size of a convolution or pooling window along one
// dim: floor((in + 2p - d(k-1) - 1) / s) + 1, or with ceil_mode the ceiling,
// minus one when the last window would start in the right padding.
func convOutDim(c *InferCtx, in, k, s, p, d sym.Expr, ceil bool) (sym.Expr, error) {
	if sv, ok := s.Const(); ok && sv <= 0 {
		return sym.Expr{}, fmt.Errorf("stride must be positive, got %d", sv)
	}
	iv, ok1 := in.Const()
	kv, ok2 := k.Const()
	sv, ok3 := s.Const()
	pv, ok4 := p.Const()
	dv, ok5 := d.Const()
	if ok1 && ok2 && ok3 && ok4 && ok5 {
		num := iv + 2*pv - dv*(kv-1) - 1
		var out int64
		if ceil {
			out = floorDiv64(num+sv-1, sv) + 1
			if (out-1)*sv >= iv+pv {
				out--
			}
		} else {
			out = floorDiv64(num, sv) + 1
		}
		if out < 0 {
			return sym.Expr{}, fmt.Errorf("computed output size would be negative (%d)", out)
		}
		return sym.Const(out), nil
	}
	num := sym.Sub(sym.Add(in, sym.Mul(sym.Const(2), p)), sym.Add(sym.Mul(d, sym.Sub(k, sym.Const(1))), sym.Const(1)))
	if !ceil {
		return sym.Add(sym.FloorDiv(num, s), sym.Const(1)), nil
	}
	out := sym.Add(sym.CeilDiv(num, s), sym.Const(1))
	if knownTrue(c, sym.Ge(sym.Mul(sym.Sub(out, sym.Const(1)), s), sym.Add(in, p))) {
		out = sym.Sub(out, sym.Const(1))
	}
	return out, nil
}

func floorDiv64(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// spatialArg reads an int list argument for n spatial dims (a single value
// repeats; an empty list gives def).
func spatialArg(c *InferCtx, name string, n int, def []sym.Expr) ([]sym.Expr, error) {
	a := namedOrNone(c, name)
	if a.Kind == ArgNone {
		if def != nil {
			return def, nil
		}
		return nil, fmt.Errorf("argument %q is required", name)
	}
	xs, err := symListOf(a, name)
	if err != nil {
		return nil, err
	}
	return expandList(xs, n, name, def)
}

func repeatExpr(v int64, n int) []sym.Expr {
	out := make([]sym.Expr, n)
	for i := range out {
		out[i] = sym.Const(v)
	}
	return out
}

// convCommon computes a (possibly transposed) convolution's output type from
// its input, weight, parameter lists and groups.
func convCommon(c *InferCtx, x, w *TensorType, stride, padding, dilation, outPad []sym.Expr, transposed bool, groups sym.Expr, samePad bool) (*TensorType, error) {
	if err := sameDTypes(x, w); err != nil {
		return nil, fmt.Errorf("input type (%s) and weight type (%s) should be the same", x.DType, w.DType)
	}
	if w.Rank() < 3 {
		return nil, fmt.Errorf("weight must have at least 3 dims, got %s", w)
	}
	n := w.Rank() - 2
	batched := true
	switch x.Rank() {
	case w.Rank():
	case w.Rank() - 1:
		batched = false
		x = &TensorType{DType: x.DType, Shape: append([]sym.Expr{sym.Const(1)}, x.Shape...), Device: x.Device}
	default:
		return nil, fmt.Errorf("expected a %d-D (batched) or %d-D (unbatched) input for a %d-D weight, got %s", w.Rank(), w.Rank()-1, w.Rank(), x)
	}
	var err error
	if stride, err = expandList(stride, n, "stride", nil); err != nil {
		return nil, err
	}
	if padding, err = expandList(padding, n, "padding", nil); err != nil {
		return nil, err
	}
	if dilation, err = expandList(dilation, n, "dilation", nil); err != nil {
		return nil, err
	}
	shape := []sym.Expr{x.Shape[0]}
	if transposed {
		if outPad, err = expandList(outPad, n, "output_padding", repeatExpr(0, n)); err != nil {
			return nil, err
		}
		if err := checkSameDim(c, x.Shape[1], w.Shape[0], "transposed convolution: input channels must match weight.size(0)"); err != nil {
			return nil, err
		}
		shape = append(shape, sym.Mul(w.Shape[1], groups))
		for i := 0; i < n; i++ {
			in, k := x.Shape[2+i], w.Shape[2+i]
			o := sym.Add(sym.Mul(sym.Sub(in, sym.Const(1)), stride[i]), sym.Neg(sym.Mul(sym.Const(2), padding[i])),
				sym.Mul(dilation[i], sym.Sub(k, sym.Const(1))), outPad[i], sym.Const(1))
			shape = append(shape, o)
		}
	} else {
		if err := checkSameDim(c, x.Shape[1], sym.Mul(w.Shape[1], groups), fmt.Sprintf("expected input %s to have %s*%s channels", x, w.Shape[1], groups)); err != nil {
			return nil, err
		}
		shape = append(shape, w.Shape[0])
		for i := 0; i < n; i++ {
			in := x.Shape[2+i]
			if samePad {
				shape = append(shape, in)
				continue
			}
			o, err := convOutDim(c, in, w.Shape[2+i], stride[i], padding[i], dilation[i], false)
			if err != nil {
				return nil, err
			}
			if v, ok := o.Const(); ok && v <= 0 {
				return nil, fmt.Errorf("calculated output size %d is too small for input %s and weight %s", v, x, w)
			}
			shape = append(shape, o)
		}
	}
	if !batched {
		shape = shape[1:]
	}
	return withShapeDType(x, shape, x.DType), nil
}

// inferConvolution: aten.convolution(input, weight, bias, stride, padding,
// dilation, transposed, output_padding, groups).
func inferConvolution(c *InferCtx) ([]Type, error) {
	x, err := c.Tensor("input")
	if err != nil {
		return nil, err
	}
	w, err := c.Tensor("weight")
	if err != nil {
		return nil, err
	}
	tr, err := c.Bool("transposed")
	if err != nil {
		return nil, err
	}
	groups, err := c.SymInt("groups")
	if err != nil {
		return nil, err
	}
	var lists [4][]sym.Expr
	for i, name := range []string{"stride", "padding", "dilation", "output_padding"} {
		if lists[i], err = c.SymInts(name); err != nil {
			return nil, err
		}
	}
	r, err := convCommon(c, x, w, lists[0], lists[1], lists[2], lists[3], tr, groups, false)
	if err != nil {
		return nil, err
	}
	return one(r), nil
}

// inferConv: conv1d/2d/3d, with padding as ints or as "valid"/"same".
func inferConv(c *InferCtx) ([]Type, error) {
	x, err := c.Tensor("input")
	if err != nil {
		return nil, err
	}
	w, err := c.Tensor("weight")
	if err != nil {
		return nil, err
	}
	n := w.Rank() - 2
	if n < 1 {
		return nil, fmt.Errorf("weight must have at least 3 dims, got %s", w)
	}
	groups, err := c.SymInt("groups")
	if err != nil {
		return nil, err
	}
	stride, err := spatialArg(c, "stride", n, nil)
	if err != nil {
		return nil, err
	}
	dilation, err := spatialArg(c, "dilation", n, nil)
	if err != nil {
		return nil, err
	}
	same := false
	var padding []sym.Expr
	if pa, _ := c.Arg("padding"); pa.Kind == ArgString {
		switch pa.Str {
		case "valid":
			padding = repeatExpr(0, n)
		case "same":
			same = true
			padding = repeatExpr(0, n)
			for _, s := range stride {
				if v, ok := s.Const(); !ok || v != 1 {
					return nil, fmt.Errorf("padding='same' is not supported for strided convolutions")
				}
			}
		default:
			return nil, fmt.Errorf("invalid padding string %q", pa.Str)
		}
	} else if padding, err = spatialArg(c, "padding", n, nil); err != nil {
		return nil, err
	}
	r, err := convCommon(c, x, w, stride, padding, dilation, nil, false, groups, same)
	if err != nil {
		return nil, err
	}
	return one(r), nil
}

// inferConvTranspose: conv_transpose1d/2d/3d(input, weight, bias, stride,
// padding, output_padding, groups, dilation).
func inferConvTranspose(c *InferCtx) ([]Type, error) {
	x, err := c.Tensor("input")
	if err != nil {
		return nil, err
	}
	w, err := c.Tensor("weight")
	if err != nil {
		return nil, err
	}
	n := w.Rank() - 2
	if n < 1 {
		return nil, fmt.Errorf("weight must have at least 3 dims, got %s", w)
	}
	groups, err := c.SymInt("groups")
	if err != nil {
		return nil, err
	}
	var lists [4][]sym.Expr
	for i, name := range []string{"stride", "padding", "dilation", "output_padding"} {
		if lists[i], err = spatialArg(c, name, n, nil); err != nil {
			return nil, err
		}
	}
	r, err := convCommon(c, x, w, lists[0], lists[1], lists[2], lists[3], true, groups, false)
	if err != nil {
		return nil, err
	}
	return one(r), nil
}

// outputMask reads a bool[3] output_mask.
func outputMask(c *InferCtx) ([3]bool, error) {
	var m [3]bool
	a, err := c.Arg("output_mask")
	if err != nil {
		return m, err
	}
	if a.Kind != ArgList || len(a.List) != 3 {
		return m, fmt.Errorf("output_mask must be a list of 3 bools, got %s", a)
	}
	for i, e := range a.List {
		m[i] = e.Int != 0
	}
	return m, nil
}

// masked returns t, or None when the mask drops the result (torch returns an
// undefined tensor there).
func masked(keep bool, t Type) Type {
	if !keep {
		return None
	}
	return t
}

// inferConvolutionBackward: (grad_input like input, grad_weight like weight,
// grad_bias [out channels]).
func inferConvolutionBackward(c *InferCtx) ([]Type, error) {
	x, err := c.Tensor("input")
	if err != nil {
		return nil, err
	}
	w, err := c.Tensor("weight")
	if err != nil {
		return nil, err
	}
	m, err := outputMask(c)
	if err != nil {
		return nil, err
	}
	tr, err := c.Bool("transposed")
	if err != nil {
		return nil, err
	}
	bias := []sym.Expr{w.Shape[0]}
	if tr {
		groups, err := c.SymInt("groups")
		if err != nil {
			return nil, err
		}
		bias = []sym.Expr{sym.Mul(w.Shape[1], groups)}
	}
	if bs, ok, err := c.OptSymInts("bias_sizes"); err != nil {
		return nil, err
	} else if ok && len(bs) > 0 {
		bias = bs
	}
	return []Type{
		masked(m[0], cloneTensor(x)),
		masked(m[1], cloneTensor(w)),
		masked(m[2], withShapeDType(w, bias, w.DType)),
	}, nil
}

// poolShape computes the output shape of avg/max pooling over the last
// len(kernel_size) dims of self (which may lack the batch dim).
func poolShape(c *InferCtx) (*TensorType, []sym.Expr, error) {
	t, err := c.Tensor("self")
	if err != nil {
		return nil, nil, err
	}
	ka, err := c.Arg("kernel_size")
	if err != nil {
		return nil, nil, err
	}
	kernel, err := symListOf(ka, "kernel_size")
	if err != nil {
		return nil, nil, err
	}
	n := c.Op().Info().Schema.Args[c.Op().ArgIndex("kernel_size")].Type.ListLen
	if n == 0 {
		n = len(kernel)
	}
	if kernel, err = expandList(kernel, n, "kernel_size", nil); err != nil {
		return nil, nil, err
	}
	if t.Rank() != n+1 && t.Rank() != n+2 {
		return nil, nil, fmt.Errorf("expected a %d-D or %d-D input for %d-D pooling, got %s", n+1, n+2, n, t)
	}
	stride, err := spatialArg(c, "stride", n, kernel)
	if err != nil {
		return nil, nil, err
	}
	padding, err := spatialArg(c, "padding", n, repeatExpr(0, n))
	if err != nil {
		return nil, nil, err
	}
	dilation := repeatExpr(1, n)
	if hasArg(c, "dilation") {
		if dilation, err = spatialArg(c, "dilation", n, repeatExpr(1, n)); err != nil {
			return nil, nil, err
		}
	}
	ceil := false
	if hasArg(c, "ceil_mode") {
		if ceil, err = c.Bool("ceil_mode"); err != nil {
			return nil, nil, err
		}
	}
	shape := append([]sym.Expr(nil), t.Shape...)
	off := t.Rank() - n
	for i := 0; i < n; i++ {
		if pv, ok := padding[i].Const(); ok {
			kv, ok1 := kernel[i].Const()
			dv, ok2 := dilation[i].Const()
			if ok1 && ok2 && pv > ((kv-1)*dv+1)/2 {
				return nil, nil, fmt.Errorf("pad should be at most half of the effective kernel size, but got pad=%d, kernel_size=%d and dilation=%d", pv, kv, dv)
			}
		}
		o, err := convOutDim(c, t.Shape[off+i], kernel[i], stride[i], padding[i], dilation[i], ceil)
		if err != nil {
			return nil, nil, err
		}
		if v, ok := o.Const(); ok && v <= 0 {
			return nil, nil, fmt.Errorf("output size is too small (%d) for input %s", v, t)
		}
		shape[off+i] = o
	}
	return t, shape, nil
}

// inferPool: avg_pool1d/2d/3d and max_pool1d/2d/3d.
func inferPool(c *InferCtx) ([]Type, error) {
	t, shape, err := poolShape(c)
	if err != nil {
		return nil, err
	}
	return one(withShapeDType(t, shape, t.DType)), nil
}

// inferPoolWithIndices: max_pool2d/3d_with_indices: (values, int64 indices).
func inferPoolWithIndices(c *InferCtx) ([]Type, error) {
	t, shape, err := poolShape(c)
	if err != nil {
		return nil, err
	}
	return []Type{withShapeDType(t, shape, t.DType), withShapeDType(t, append([]sym.Expr(nil), shape...), Int64)}, nil
}

// adaptiveShape replaces the last len(output_size) dims by output_size.
func adaptiveShape(c *InferCtx) (*TensorType, []sym.Expr, error) {
	t, err := c.Tensor("self")
	if err != nil {
		return nil, nil, err
	}
	out, err := c.SymInts("output_size")
	if err != nil {
		return nil, nil, err
	}
	n := len(out)
	if t.Rank() != n+1 && t.Rank() != n+2 {
		return nil, nil, fmt.Errorf("expected a %d-D or %d-D input for %d-D adaptive pooling, got %s", n+1, n+2, n, t)
	}
	shape := append([]sym.Expr(nil), t.Shape[:t.Rank()-n]...)
	shape = append(shape, out...)
	return t, shape, nil
}

// inferAdaptivePool: adaptive_avg_pool*: the trailing dims become output_size.
func inferAdaptivePool(c *InferCtx) ([]Type, error) {
	t, shape, err := adaptiveShape(c)
	if err != nil {
		return nil, err
	}
	return one(withShapeDType(t, shape, t.DType)), nil
}

// inferAdaptiveMaxPool: adaptive_max_pool2d: (values, int64 indices).
func inferAdaptiveMaxPool(c *InferCtx) ([]Type, error) {
	t, shape, err := adaptiveShape(c)
	if err != nil {
		return nil, err
	}
	return []Type{withShapeDType(t, shape, t.DType), withShapeDType(t, append([]sym.Expr(nil), shape...), Int64)}, nil
}

// inferGradLikeSelf: pooling backward ops: the gradient has self's type
// (with grad_output's dtype).
func inferGradLikeSelf(c *InferCtx) ([]Type, error) {
	t, err := c.Tensor("self")
	if err != nil {
		return nil, err
	}
	g, err := c.Tensor("grad_output")
	if err != nil {
		return nil, err
	}
	return one(withShapeDType(t, append([]sym.Expr(nil), t.Shape...), g.DType)), nil
}

// inferUpsample: upsample_*(.vec): the spatial dims (all after N, C) become
// output_size, or floor(size * scale) from scale_factors.
func inferUpsample(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	n := t.Rank() - 2
	if n < 1 {
		return nil, fmt.Errorf("upsampling expects an input with batch and channel dims, got %s", t)
	}
	out, hasOut, err := c.OptSymInts("output_size")
	if err != nil {
		return nil, err
	}
	shape := append([]sym.Expr(nil), t.Shape[:2]...)
	if hasOut {
		if len(out) != n {
			return nil, fmt.Errorf("output_size must have %d elements, got %d", n, len(out))
		}
		return one(withShapeDType(t, append(shape, out...), t.DType)), nil
	}
	sa := namedOrNone(c, "scale_factors")
	if sa.Kind != ArgList {
		return nil, fmt.Errorf("either output_size or scale_factors must be given")
	}
	if len(sa.List) != n {
		return nil, fmt.Errorf("scale_factors must have %d elements, got %d", n, len(sa.List))
	}
	for i, s := range sa.List {
		var f float64
		switch s.Kind {
		case ArgFloat:
			f = s.Float
		case ArgInt:
			f = float64(s.Int)
		default:
			return nil, fmt.Errorf("scale_factors[%d]: expected a float, got %s", i, s)
		}
		in := t.Shape[2+i]
		if v, ok := in.Const(); ok {
			shape = append(shape, sym.Const(int64(math.Floor(float64(v)*f))))
		} else if f == math.Trunc(f) && f >= 0 {
			shape = append(shape, sym.Mul(in, sym.Const(int64(f))))
		} else {
			return nil, fmt.Errorf("cannot scale symbolic size %s by the non-integer factor %v", in, f)
		}
	}
	return one(withShapeDType(t, shape, t.DType)), nil
}

// inferGridSampler: grid_sampler_2d(input [N, C, H, W], grid [N, Ho, Wo, 2]) → [N, C, Ho, Wo].
func inferGridSampler(c *InferCtx) ([]Type, error) {
	x, err := c.Tensor("input")
	if err != nil {
		return nil, err
	}
	g, err := c.Tensor("grid")
	if err != nil {
		return nil, err
	}
	if x.Rank() != 4 || g.Rank() != 4 {
		return nil, fmt.Errorf("grid_sampler_2d expects 4-D input and grid, got %s and %s", x, g)
	}
	if err := checkSameDim(c, x.Shape[0], g.Shape[0], "grid and input batch sizes"); err != nil {
		return nil, err
	}
	return one(withShapeDType(x, []sym.Expr{x.Shape[0], x.Shape[1], g.Shape[1], g.Shape[2]}, x.DType)), nil
}

func windowArgs(c *InferCtx) (k, d, p, s []sym.Expr, err error) {
	lists := make([][]sym.Expr, 4)
	for i, name := range []string{"kernel_size", "dilation", "padding", "stride"} {
		if lists[i], err = spatialArg(c, name, 2, nil); err != nil {
			return
		}
	}
	return lists[0], lists[1], lists[2], lists[3], nil
}

// inferIm2col: im2col(self [N, C, H, W]) → [N, C*kh*kw, L].
func inferIm2col(c *InferCtx) ([]Type, error) {
	t, err := c.Tensor("self")
	if err != nil {
		return nil, err
	}
	k, d, p, s, err := windowArgs(c)
	if err != nil {
		return nil, err
	}
	if t.Rank() != 3 && t.Rank() != 4 {
		return nil, fmt.Errorf("im2col expects a 3-D or 4-D input, got %s", t)
	}
	off := t.Rank() - 3
	L := sym.Const(1)
	for i := 0; i < 2; i++ {
		o, err := convOutDim(c, t.Shape[off+1+i], k[i], s[i], p[i], d[i], false)
		if err != nil {
			return nil, err
		}
		L = sym.Mul(L, o)
	}
	shape := append([]sym.Expr(nil), t.Shape[:off]...)
	shape = append(shape, sym.Mul(t.Shape[off], k[0], k[1]), L)
	return one(withShapeDType(t, shape, t.DType)), nil
}

// inferCol2im: col2im(self [N, C*kh*kw, L], output_size, …) → [N, C, oh, ow].
func inferCol2im(c *InferCtx) ([]Type, error) {
	t, err := c.Tensor("self")
	if err != nil {
		return nil, err
	}
	out, err := c.SymInts("output_size")
	if err != nil {
		return nil, err
	}
	k, _, _, _, err := windowArgs(c)
	if err != nil {
		return nil, err
	}
	if len(out) != 2 {
		return nil, fmt.Errorf("output_size must have 2 elements")
	}
	if t.Rank() != 2 && t.Rank() != 3 {
		return nil, fmt.Errorf("col2im expects a 2-D or 3-D input, got %s", t)
	}
	off := t.Rank() - 2
	shape := append([]sym.Expr(nil), t.Shape[:off]...)
	shape = append(shape, sym.FloorDiv(t.Shape[off], sym.Mul(k[0], k[1])), out[0], out[1])
	return one(withShapeDType(t, shape, t.DType)), nil
}

// statsDType is the dtype of normalization statistics: the input's on CPU,
// float32 for reduced-precision inputs on accelerators (torch's opmath type).
func statsDType(t *TensorType) DType {
	if t.Device != "" && (t.DType == Float16 || t.DType == BFloat16) {
		return Float32
	}
	return t.DType
}

// channels is dim 1 of a batch-norm input.
func channels(t *TensorType) (sym.Expr, error) {
	if t.Rank() < 2 {
		return sym.Expr{}, fmt.Errorf("batch norm expects an input with a channel dim, got %s", t)
	}
	return t.Shape[1], nil
}

// inferNativeBatchNorm: (out, save_mean, save_invstd): the statistics are
// [C] when training and empty ([0]) otherwise.
func inferNativeBatchNorm(c *InferCtx) ([]Type, error) {
	x, err := c.Tensor("input")
	if err != nil {
		return nil, err
	}
	C, err := channels(x)
	if err != nil {
		return nil, err
	}
	training := false
	if hasArg(c, "training") {
		if training, err = c.Bool("training"); err != nil {
			return nil, err
		}
	}
	stat := []sym.Expr{C}
	// Eager kernels return empty statistics in eval mode, and so do the
	// _legit ops' meta functions; some tracers' meta function for
	// aten.native_batch_norm returns [C] instead (torch 1.13's make_fx does
	// on static shapes). Either is torch's; a node that records [C] keeps it.
	if !training && !(c.Op() == OpAtenNativeBatchNorm && recordsStats(c.Node, C)) {
		stat = constsOf(0)
	}
	sd := statsDType(x)
	return []Type{cloneTensor(x), withShapeDType(x, stat, sd), withShapeDType(x, append([]sym.Expr(nil), stat...), sd)}, nil
}

// inferBatchNormFunctional: _native_batch_norm_legit_functional: the three
// results plus the updated running_mean and running_var.
func inferBatchNormFunctional(c *InferCtx) ([]Type, error) {
	base, err := inferNativeBatchNorm(c)
	if err != nil {
		return nil, err
	}
	rm, err := c.Tensor("running_mean")
	if err != nil {
		return nil, err
	}
	rv, err := c.Tensor("running_var")
	if err != nil {
		return nil, err
	}
	return append(base, cloneTensor(rm), cloneTensor(rv)), nil
}

// inferBatchNormUpdate: _batch_norm_with_update/_batch_norm_no_update:
// (out, save_mean, save_rstd, reserve): statistics are [C] when the running
// stats are updated, empty otherwise; reserve is an empty uint8 tensor.
func inferBatchNormUpdate(c *InferCtx) ([]Type, error) {
	x, err := c.Tensor("input")
	if err != nil {
		return nil, err
	}
	C, err := channels(x)
	if err != nil {
		return nil, err
	}
	stat := []sym.Expr{C}
	if strings.HasSuffix(c.Op().Info().Base, "no_update") {
		stat = constsOf(0)
	}
	sd := statsDType(x)
	return []Type{cloneTensor(x), withShapeDType(x, stat, sd), withShapeDType(x, append([]sym.Expr(nil), stat...), sd),
		withShapeDType(x, constsOf(0), Uint8)}, nil
}

// normalizedAxis checks normalized_shape against input's trailing dims and
// returns where they start.
func normalizedAxis(c *InferCtx, x *TensorType, norm []sym.Expr) (int, error) {
	axis := x.Rank() - len(norm)
	if len(norm) == 0 || axis < 0 {
		return 0, fmt.Errorf("normalized_shape %s does not fit input %s", exprList(norm), x)
	}
	for i, d := range norm {
		if err := checkSameDim(c, x.Shape[axis+i], d, fmt.Sprintf("normalized_shape %s does not match input %s", exprList(norm), x)); err != nil {
			return 0, err
		}
	}
	return axis, nil
}

// statShape is input.shape[:axis] followed by ones.
func statShape(x *TensorType, axis int) []sym.Expr {
	shape := append([]sym.Expr(nil), x.Shape[:axis]...)
	for i := axis; i < x.Rank(); i++ {
		shape = append(shape, sym.Const(1))
	}
	return shape
}

// inferNativeLayerNorm: (out, mean, rstd) with mean/rstd of shape
// input.shape[:axis] + [1]*len(normalized_shape).
func inferNativeLayerNorm(c *InferCtx) ([]Type, error) {
	x, err := c.Tensor("input")
	if err != nil {
		return nil, err
	}
	norm, err := c.SymInts("normalized_shape")
	if err != nil {
		return nil, err
	}
	axis, err := normalizedAxis(c, x, norm)
	if err != nil {
		return nil, err
	}
	sd := statsDType(x)
	return []Type{cloneTensor(x), withShapeDType(x, statShape(x, axis), sd), withShapeDType(x, statShape(x, axis), sd)}, nil
}

// inferNativeLayerNormBackward: (grad_input, grad_weight, grad_bias) per output_mask.
func inferNativeLayerNormBackward(c *InferCtx) ([]Type, error) {
	x, err := c.Tensor("input")
	if err != nil {
		return nil, err
	}
	norm, err := c.SymInts("normalized_shape")
	if err != nil {
		return nil, err
	}
	m, err := outputMask(c)
	if err != nil {
		return nil, err
	}
	wt := withShapeDType(x, norm, x.DType)
	if w, err := c.OptTensor("weight"); err != nil {
		return nil, err
	} else if w != nil {
		wt = cloneTensor(w)
	}
	bt := withShapeDType(x, append([]sym.Expr(nil), norm...), x.DType)
	if b, err := c.OptTensor("bias"); err != nil {
		return nil, err
	} else if b != nil {
		bt = cloneTensor(b)
	}
	return []Type{masked(m[0], cloneTensor(x)), masked(m[1], wt), masked(m[2], bt)}, nil
}

// inferNativeGroupNorm: (out, mean [N, group], rstd [N, group]).
func inferNativeGroupNorm(c *InferCtx) ([]Type, error) {
	x, err := c.Tensor("input")
	if err != nil {
		return nil, err
	}
	N, err := c.SymInt("N")
	if err != nil {
		return nil, err
	}
	g, err := c.Int("group")
	if err != nil {
		return nil, err
	}
	if C, err := c.SymInt("C"); err == nil {
		if cv, ok := C.Const(); ok && g > 0 && cv%g != 0 {
			return nil, fmt.Errorf("expected the number of channels (%d) to be divisible by the number of groups (%d)", cv, g)
		}
	}
	sd := statsDType(x)
	stat := []sym.Expr{N, sym.Const(g)}
	return []Type{cloneTensor(x), withShapeDType(x, stat, sd), withShapeDType(x, append([]sym.Expr(nil), stat...), sd)}, nil
}

// inferNativeGroupNormBackward: (grad_input, grad_weight [C], grad_bias [C]) per output_mask.
func inferNativeGroupNormBackward(c *InferCtx) ([]Type, error) {
	x, err := c.Tensor("input")
	if err != nil {
		return nil, err
	}
	C, err := c.SymInt("C")
	if err != nil {
		return nil, err
	}
	m, err := outputMask(c)
	if err != nil {
		return nil, err
	}
	return []Type{masked(m[0], cloneTensor(x)), masked(m[1], withShapeDType(x, []sym.Expr{C}, x.DType)), masked(m[2], withShapeDType(x, []sym.Expr{C}, x.DType))}, nil
}

// inferFusedRmsNorm: _fused_rms_norm: (out, rstd of shape input.shape[:axis] + ones).
func inferFusedRmsNorm(c *InferCtx) ([]Type, error) {
	x, err := c.Tensor("input")
	if err != nil {
		return nil, err
	}
	norm, err := c.SymInts("normalized_shape")
	if err != nil {
		return nil, err
	}
	axis, err := normalizedAxis(c, x, norm)
	if err != nil {
		return nil, err
	}
	return []Type{cloneTensor(x), withShapeDType(x, statShape(x, axis), statsDType(x))}, nil
}

// inferNativeDropout: (out, bool mask).
func inferNativeDropout(c *InferCtx) ([]Type, error) {
	x, err := c.Tensor("input")
	if err != nil {
		return nil, err
	}
	return []Type{cloneTensor(x), withShapeDType(x, append([]sym.Expr(nil), x.Shape...), Bool)}, nil
}

// inferSoftmax: _softmax/_log_softmax(self, dim, half_to_float) and
// softmax.int/log_softmax.int/_safe_softmax(self, dim, dtype).
func inferSoftmax(c *InferCtx) ([]Type, error) {
	t, err := c.Tensor("self")
	if err != nil {
		return nil, err
	}
	if _, err := checkedDim(c, "dim", t); err != nil {
		return nil, err
	}
	dt := t.DType
	if hasArg(c, "half_to_float") {
		h, err := c.Bool("half_to_float")
		if err != nil {
			return nil, err
		}
		if h {
			if dt != Float16 && dt != BFloat16 {
				return nil, fmt.Errorf("conversion from %s to float is not supported by half_to_float", dt)
			}
			dt = Float32
		}
	}
	if d, ok, err := dtypeArg(c, "dtype"); err != nil {
		return nil, err
	} else if ok {
		dt = d
	}
	if isIntegral(dt) {
		return nil, fmt.Errorf("softmax is not implemented for %s", dt)
	}
	r := cloneTensor(t)
	r.DType = dt
	return one(r), nil
}

// attentionOut checks q/k/v and returns q's batch dims + [L, Ev].
func attentionOut(c *InferCtx, q, k, v *TensorType) ([]sym.Expr, error) {
	if q.Rank() < 2 || k.Rank() < 2 || v.Rank() < 2 {
		return nil, fmt.Errorf("attention expects query, key and value of rank >= 2, got %s, %s, %s", q, k, v)
	}
	if err := sameDTypes(q, k, v); err != nil {
		return nil, err
	}
	if err := checkSameDim(c, q.Shape[q.Rank()-1], k.Shape[k.Rank()-1], "query and key embedding dims"); err != nil {
		return nil, err
	}
	if err := checkSameDim(c, k.Shape[k.Rank()-2], v.Shape[v.Rank()-2], "key and value sequence lengths"); err != nil {
		return nil, err
	}
	shape := append([]sym.Expr(nil), q.Shape[:q.Rank()-1]...)
	return append(shape, v.Shape[v.Rank()-1]), nil
}

// inferSdpa: scaled_dot_product_attention → query's dims with value's last dim (B..., L, Ev).
func inferSdpa(c *InferCtx) ([]Type, error) {
	q, err := c.Tensor("query")
	if err != nil {
		return nil, err
	}
	k, err := c.Tensor("key")
	if err != nil {
		return nil, err
	}
	v, err := c.Tensor("value")
	if err != nil {
		return nil, err
	}
	shape, err := attentionOut(c, q, k, v)
	if err != nil {
		return nil, err
	}
	return one(withShapeDType(q, shape, q.DType)), nil
}

// inferSdpaFlashCpu: _scaled_dot_product_flash_attention_for_cpu: (output
// [B, H, L, Ev], logsumexp [B, H, L] float32).
func inferSdpaFlashCpu(c *InferCtx) ([]Type, error) {
	q, err := c.Tensor("query")
	if err != nil {
		return nil, err
	}
	k, err := c.Tensor("key")
	if err != nil {
		return nil, err
	}
	v, err := c.Tensor("value")
	if err != nil {
		return nil, err
	}
	if q.Rank() != 4 {
		return nil, fmt.Errorf("flash attention expects 4-D query, got %s", q)
	}
	shape, err := attentionOut(c, q, k, v)
	if err != nil {
		return nil, err
	}
	return []Type{withShapeDType(q, shape, q.DType), withShapeDType(q, append([]sym.Expr(nil), q.Shape[:3]...), Float32)}, nil
}

// inferVarlenAttn: torch_attn::_varlen_attn(query [T, H, E], key, value
// [Tk, Hkv, Ev], …) → (out [T, H, Ev], logsumexp [H, T] float32, rng_state
// [2] uint64).
func inferVarlenAttn(c *InferCtx) ([]Type, error) {
	q, err := c.Tensor("query")
	if err != nil {
		return nil, err
	}
	v, err := c.Tensor("value")
	if err != nil {
		return nil, err
	}
	if q.Rank() != 3 || v.Rank() != 3 {
		return nil, fmt.Errorf("varlen attention expects packed 3-D query and value, got %s and %s", q, v)
	}
	return []Type{
		withShapeDType(q, []sym.Expr{q.Shape[0], q.Shape[1], v.Shape[2]}, q.DType),
		withShapeDType(q, []sym.Expr{q.Shape[1], q.Shape[0]}, Float32),
		withShapeDType(q, constsOf(2), Uint64),
	}, nil
}

// recordsStats reports whether n already records [C]-shaped statistics
// (results 1 and 2), as some tracers write for eval-mode batch norm.
func recordsStats(n *Node, C sym.Expr) bool {
	if n == nil || len(n.Results) != 3 {
		return false
	}
	for _, r := range n.Results[1:] {
		t := AsTensor(r.Type)
		if t == nil || t.Rank() != 1 || !t.Shape[0].Equal(C) {
			return false
		}
	}
	return true
}
