package passes

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/rewrite"
)

// ATen decompositions as rewrite patterns (the role of torch's core ATen
// decomposition table): each rewrites one op into ops ExecuTorch's
// portable kernel library has. decompose-to-core applies the core set
// (etCorePatterns) to the whole program; legalize-kernels applies every
// pattern (etDecompositions) to the ops without a kernel.

var (
	etlOpZerosLike    = ir.OpAtenZerosLike
	etlOpOnesLike     = ir.OpAtenOnesLike
	etlOpFullLike     = ir.OpAtenFullLike
	etlOpSoftplus     = ir.OpAtenSoftplus
	etlOpGtScalar     = ir.OpAtenGtScalar
	etlOpExp          = ir.OpAtenExp
	etlOpLog1p        = ir.OpAtenLog1p
	etlOpWhereSelf    = ir.OpAtenWhereSelf
	etlOpIndexCopy    = ir.OpAtenIndexCopy
	etlOpIndexPut     = ir.OpAtenIndexPut
	etlOpTriu         = ir.OpAtenTriu
	etlOpTril         = ir.OpAtenTril
	etlOpUpNearest    = ir.OpAtenUpsampleNearest2d
	etlOpUpBilinear   = ir.OpAtenUpsampleBilinear2d
	etlOpUpNearestV   = ir.OpAtenUpsampleNearest2dVec
	etlOpUpBilinearV  = ir.OpAtenUpsampleBilinear2dVec
	etlOpMaxPool2d    = ir.OpAtenMaxPool2d
	etlOpMaxPool2dIdx = ir.OpAtenMaxPool2dWithIndices
)

// etDecomp is a decomposition: a rewrite pattern whose Rewrite returns the
// replacement of n's single result (nil, nil: not for these arguments).
func etDecomp(name string, root ir.Op, f func(b *ir.Builder, n *ir.Node) (*ir.Value, error)) *rewrite.Pattern {
	return &rewrite.Pattern{Name: name, Root: root, Benefit: 1,
		Rewrite: func(b *ir.Builder, n *ir.Node) ([]*ir.Value, error) {
			v, err := f(b, n)
			if err != nil || v == nil {
				return nil, err
			}
			return []*ir.Value{v}, nil
		}}
}

// etCorePatterns are decompose-to-core's decompositions.
var etCorePatterns = []*rewrite.Pattern{
	etDecomp("silu", etlOpSilu, func(b *ir.Builder, n *ir.Node) (*ir.Value, error) { return etlSilu(b, n.Args[0]) }),
	etDecomp("hardsigmoid", etlOpHardsigmoid, func(b *ir.Builder, n *ir.Node) (*ir.Value, error) { return etlHardsigmoid(b, n.Args[0]) }),
	etDecomp("hardswish", etlOpHardswish, func(b *ir.Builder, n *ir.Node) (*ir.Value, error) {
		hs, err := etlHardsigmoid(b, n.Args[0])
		if err != nil {
			return nil, err
		}
		return b.Value(etlOpMulTensor, n.Args[0], ir.ValueArg(hs))
	}),
	etDecomp("rsub-scalar", etlOpRsubScalar, etlRsub),
	etDecomp("linear", etlOpLinear, etlLinear),
	{Name: "native-batch-norm-inference", Root: etlOpNativeBatchNorm, Benefit: 1, Rewrite: etlCoreFactoryOrNormAll},
	{Name: "arange-start", Root: etlOpArangeStart, Benefit: 1, Rewrite: etlCoreFactoryOrNormAll},
	etDecomp("empty-permuted", ir.OpAtenEmptyPermuted, etlEmptyPermuted),
}

// etlCoreFactoryOrNormAll is etlCoreFactoryOrNorm returning every result of
// the new node (native_batch_norm's three).
func etlCoreFactoryOrNormAll(b *ir.Builder, n *ir.Node) ([]*ir.Value, error) {
	v, err := etlCoreFactoryOrNorm(b, n)
	if err != nil || v == nil {
		return nil, err
	}
	return v.Def.Results, nil
}

// etDecompositions are every decomposition legalize-kernels may use.
var etDecompositions = append(append([]*rewrite.Pattern(nil), etCorePatterns...),
	etDecomp("zeros-like", etlOpZerosLike, func(b *ir.Builder, n *ir.Node) (*ir.Value, error) { return etlFullLike(b, n, 0) }),
	etDecomp("ones-like", etlOpOnesLike, func(b *ir.Builder, n *ir.Node) (*ir.Value, error) { return etlFullLike(b, n, 1) }),
	etDecomp("softplus", etlOpSoftplus, etlSoftplus),
	etDecomp("index-copy", etlOpIndexCopy, etlIndexCopy),
	etDecomp("triu", etlOpTriu, etlTriu),
	etDecomp("upsample-nearest2d", etlOpUpNearest, etlUpsampleVec),
	etDecomp("upsample-bilinear2d", etlOpUpBilinear, etlUpsampleVec),
	etDecomp("empty-strided", ir.OpAtenEmptyStrided, etlEmptyStrided),
	etDecomp("remainder-int", ir.OpAtenRemainderTensor, etlRemainderInt),
	&rewrite.Pattern{Name: "unsafe-split", Root: ir.OpAtenUnsafeSplitTensor, Benefit: 1, Rewrite: etlSplitCopy(ir.OpAtenSplitCopyTensor)},
	&rewrite.Pattern{Name: "unsafe-split-with-sizes", Root: ir.OpAtenUnsafeSplitWithSizes, Benefit: 1, Rewrite: etlSplitCopy(ir.OpAtenSplitWithSizesCopy)},
	etDecomp("max-pool2d", etlOpMaxPool2d, func(b *ir.Builder, n *ir.Node) (*ir.Value, error) {
		nn, err := b.CallKw(etlOpMaxPool2dIdx, nil, etlNamedArgs(n))
		if err != nil {
			return nil, err
		}
		return nn.Results[0], nil
	}),
)

var (
	etCoreSet          = rewrite.MustSet(etCorePatterns...)
	etDecompositionSet = rewrite.MustSet(etDecompositions...)
)

// EtDecompositionNames lists the ops legalize-kernels can decompose, as
// "op: pattern", sorted by op (for documentation and tests).
func EtDecompositionNames() []string {
	var out []string
	for _, op := range etDecompositionSet.Roots() {
		for _, p := range etDecompositions {
			if p.Root == op {
				out = append(out, fmt.Sprintf("%s: %s", op, p.Name))
			}
		}
	}
	return out
}

// empty_strided(size, stride, dtype, layout, device, pin_memory) with the
// contiguous strides of size → empty.memory_format(size, same keywords),
// whose out variant the portable library has; other strides stay (nil).
func etlEmptyStrided(b *ir.Builder, n *ir.Node) (*ir.Value, error) {
	size, stride := n.Arg("size"), n.Arg("stride")
	if size.Kind != ir.ArgList || stride.Kind != ir.ArgList || len(size.List) != len(stride.List) {
		return nil, nil
	}
	want := int64(1)
	for i := len(size.List) - 1; i >= 0; i-- {
		d, s := size.List[i], stride.List[i]
		if d.Kind != ir.ArgInt || s.Kind != ir.ArgInt || (d.Int != 1 && s.Int != want) {
			return nil, nil
		}
		want *= d.Int
	}
	kw := etlNamedArgs(n)
	delete(kw, "stride")
	nn, err := b.CallKw(ir.OpAtenEmptyMemoryFormat, nil, kw)
	if err != nil {
		return nil, err
	}
	return nn.Result(), nil
}

// empty_permuted(size, physical_layout, dtype, layout, device, pin_memory)
// → empty.memory_format(size, same keywords). torch allocates the logical
// shape size with its dims laid out in physical_layout's order (what
// empty_like of a permuted tensor becomes under run_decompositions); the
// contents are uninitialized either way, and an ExecuTorch value's dim order
// is decided by the passes after this one (to-dim-order-ops,
// propagate-dim-orders), which give a new tensor the contiguous order.
func etlEmptyPermuted(b *ir.Builder, n *ir.Node) (*ir.Value, error) {
	kw := etlNamedArgs(n)
	delete(kw, "physical_layout")
	nn, err := b.CallKw(ir.OpAtenEmptyMemoryFormat, nil, kw)
	if err != nil {
		return nil, err
	}
	return nn.Result(), nil
}

// remainder(a, b) on integers → a - floor_divide(a, b) * b (torch's
// floored remainder; see etlKernelDisagrees). Float remainders stay (nil).
func etlRemainderInt(b *ir.Builder, n *ir.Node) (*ir.Value, error) {
	if !etlKernelDisagrees(n) {
		return nil, nil
	}
	q, err := b.Value(ir.OpAtenFloorDivide, n.Args[0], n.Args[1])
	if err != nil {
		return nil, err
	}
	m, err := b.Value(ir.OpAtenMulTensor, ir.ValueArg(q), n.Args[1])
	if err != nil {
		return nil, err
	}
	return b.Value(ir.OpAtenSubTensor, n.Args[0], ir.ValueArg(m))
}

// etlSplitCopy rewrites unsafe_split / unsafe_split_with_sizes (split
// without the aliasing promise, which older programs hold) as the copying
// split op with the same arguments, whose kernel the portable library has.
func etlSplitCopy(to ir.Op) func(b *ir.Builder, n *ir.Node) ([]*ir.Value, error) {
	return func(b *ir.Builder, n *ir.Node) ([]*ir.Value, error) {
		nn, err := b.CallKw(to, nil, etlNamedArgs(n))
		if err != nil {
			return nil, err
		}
		return nn.Results, nil
	}
}

// zeros_like / ones_like(x, dtype, layout, device, pin_memory,
// memory_format) → full_like(x, v, same keywords).
func etlFullLike(b *ir.Builder, n *ir.Node, v int64) (*ir.Value, error) {
	kw := etlNamedArgs(n)
	kw["fill_value"] = ir.IntArg(v)
	nn, err := b.CallKw(etlOpFullLike, nil, kw)
	if err != nil {
		return nil, err
	}
	return nn.Results[0], nil
}

// softplus(x, β, t) → where(x·β > t, x, log1p(exp(x·β)) / β).
func etlSoftplus(b *ir.Builder, n *ir.Node) (*ir.Value, error) {
	x, beta, th := n.Arg("self"), n.Arg("beta"), n.Arg("threshold")
	xb := x
	one := (beta.Kind == ir.ArgInt && beta.Int == 1) || (beta.Kind == ir.ArgFloat && beta.Float == 1)
	if !one {
		v, err := b.Value(etlOpMulScalar, x, beta)
		if err != nil {
			return nil, err
		}
		xb = ir.ValueArg(v)
	}
	// torch's order: the comparison first, then the formula.
	big, err := b.Value(etlOpGtScalar, xb, th)
	if err != nil {
		return nil, err
	}
	e, err := b.Value(etlOpExp, xb)
	if err != nil {
		return nil, err
	}
	l, err := b.Value(etlOpLog1p, ir.ValueArg(e))
	if err != nil {
		return nil, err
	}
	if !one {
		if l, err = b.Value(etlOpDivScalar, ir.ValueArg(l), beta); err != nil {
			return nil, err
		}
	}
	return b.Value(etlOpWhereSelf, ir.ValueArg(big), x, ir.ValueArg(l))
}

// index_copy(self, dim, index, source) → index_put(self, [None]*dim +
// [index], source) (dim made non-negative).
func etlIndexCopy(b *ir.Builder, n *ir.Node) (*ir.Value, error) {
	self := n.Arg("self")
	t, err := ir.ArgTensor(self, "self")
	if err != nil {
		return nil, err
	}
	dim := n.Arg("dim").Int
	r := int64(t.Rank())
	if dim < 0 {
		dim += r
	}
	if dim < 0 || (r > 0 && dim >= r) {
		return nil, fmt.Errorf("index_copy dim %d out of range for rank %d", n.Arg("dim").Int, r)
	}
	idx := make([]ir.Arg, dim+1)
	for i := range idx[:dim] {
		idx[i] = ir.NoneArg()
	}
	idx[dim] = n.Arg("index")
	return b.Value(etlOpIndexPut, self, ir.ListArg(idx...), n.Arg("source"), ir.BoolArg(false))
}

// triu(x, d) → where(tril(ones(bool), d − 1), 0, x): the elements below
// diagonal d are zero (no triu kernel in the portable library; tril has one).
func etlTriu(b *ir.Builder, n *ir.Node) (*ir.Value, error) {
	x, d := n.Arg("self"), n.Arg("diagonal")
	if d.Kind != ir.ArgInt {
		return nil, nil
	}
	ones, err := b.CallKw(etlOpFullLike, []ir.Arg{x, ir.BoolArg(true)}, map[string]ir.Arg{"dtype": ir.DTypeArg(ir.Bool)})
	if err != nil {
		return nil, err
	}
	below, err := b.Value(etlOpTril, ir.ValueArg(ones.Results[0]), ir.IntArg(d.Int-1))
	if err != nil {
		return nil, err
	}
	zero, err := b.Value(etlOpFullLike, x, ir.IntArg(0))
	if err != nil {
		return nil, err
	}
	return b.Value(etlOpWhereSelf, ir.ValueArg(below), ir.ValueArg(zero), x)
}

// upsample_*2d(x, output_size, [align_corners,] None, None) →
// upsample_*2d.vec(x, output_size, [align_corners,] None): the .vec
// overloads are the portable kernels. A node with explicit scales (which
// torch uses for the coordinate mapping) is left as it is.
func etlUpsampleVec(b *ir.Builder, n *ir.Node) (*ir.Value, error) {
	if !n.Arg("scales_h").IsNone() || !n.Arg("scales_w").IsNone() {
		return nil, nil
	}
	size := n.Arg("output_size")
	if n.Op == etlOpUpNearest {
		return b.Value(etlOpUpNearestV, n.Arg("self"), size, ir.NoneArg())
	}
	return b.Value(etlOpUpBilinearV, n.Arg("self"), size, n.Arg("align_corners"), ir.NoneArg())
}

var (
	etlOpDequantGroup = ir.OpQuantizedDecomposedDequantizePerChannelGroup
	etlOpSubTensor    = ir.OpAtenSubTensor
)

func init() {
	etDecompositions = append(etDecompositions, etDecomp("dequantize-per-channel-group", etlOpDequantGroup, etlDequantGroup))
	etDecompositionSet = rewrite.MustSet(etDecompositions...)
}

// dequantize_per_channel_group(w[N, K], scales, zero_points, …, g, dtype)
// → as torch's reference: w viewed as [N·K/g, g], minus the zero points
// viewed as [N·K/g, 1] (when given), times the scales viewed so, viewed
// back as [N, K] and converted to the output dtype. The quantized kernel
// library has no kernel for it.
func etlDequantGroup(b *ir.Builder, n *ir.Node) (*ir.Value, error) {
	w, err := ir.ArgTensor(n.Arg("input"), "input")
	if err != nil {
		return nil, err
	}
	g := n.Arg("group_size").Int
	numel, ok := int64(1), true
	var shape []int64
	for _, d := range w.Shape {
		c, isConst := d.Const()
		if !isConst {
			ok = false
			break
		}
		numel *= c
		shape = append(shape, c)
	}
	if !ok || g <= 0 || numel%g != 0 {
		return nil, nil
	}
	rows := numel / g
	view := func(a ir.Arg, dims ...int64) (*ir.Value, error) {
		return b.Value(etlOpViewCopy, a, ir.IntsArg(dims...))
	}
	x, err := view(n.Arg("input"), rows, g)
	if err != nil {
		return nil, err
	}
	if zp := n.Arg("zero_points"); !zp.IsNone() {
		z, err := view(zp, rows, 1)
		if err != nil {
			return nil, err
		}
		if x, err = b.Value(etlOpSubTensor, ir.ValueArg(x), ir.ValueArg(z)); err != nil {
			return nil, err
		}
	}
	s, err := view(n.Arg("scales"), rows, 1)
	if err != nil {
		return nil, err
	}
	y, err := b.Value(etlOpMulTensor, ir.ValueArg(x), ir.ValueArg(s))
	if err != nil {
		return nil, err
	}
	if y, err = view(ir.ValueArg(y), shape...); err != nil {
		return nil, err
	}
	want := n.Result().Tensor().DType
	if y.Tensor().DType == want {
		return y, nil
	}
	nn, err := b.CallKw(etlOpToCopy, []ir.Arg{ir.ValueArg(y)}, map[string]ir.Arg{"dtype": ir.DTypeArg(want)})
	if err != nil {
		return nil, err
	}
	return nn.Results[0], nil
}
