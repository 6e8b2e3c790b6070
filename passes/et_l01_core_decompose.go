package passes

import (
	"sort"

	"github.com/fxport/fxport/rewrite"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
	"github.com/fxport/fxport/pm"
)

// DecomposeToCore decomposes the non-core ops ExecuTorch runs without a
// delegate into core ATen (to_edge's decomposition; ET-L01 invariant).
var DecomposeToCore = etlLowering(&pm.Pass{
	Name: etlDecomposeName,
	ID:   "ET-L01",
	Doc: `decompose non-core ATen ops into core ATen, except the ET-L01 exception list

to_edge decomposes everything outside torch's core ATen opset. fxport
decomposes the non-core ops its corpus programs contain:

  linear(x, w, b)  → permute_copy(w, [1, 0]), then addmm(b, x, wᵀ) (mm
                     without bias); an input of rank > 2 is flattened to
                     2-D with view_copy and restored afterwards
  silu(x)          → mul(x, sigmoid(x))
  hardsigmoid(x)   → div(clamp(add(x, 3), 0, 6), 6)
  hardswish(x)     → mul(x, hardsigmoid(x)) (decomposed as above)
  rsub.Scalar(x, s, alpha) → add.Scalar(mul.Scalar(x, −alpha), s)
  native_batch_norm(x, w, b, mean, var, training=False, m, eps)
                   → _native_batch_norm_legit_no_training(x, w, b, mean,
                     var, m, eps) (inference form with running statistics;
                     its .out is the portable kernel)
  arange.start(a, b, …) → arange.start_step(a, b, 1, …)
  convolution with 5-D operands (static shapes; no portable kernel)
                   → one 2-d convolution over the depth-shifted frames
                     stacked into the channels (see legalize-kernels), so
                     a delegate's partitioner sees 2-d convolutions
  empty_permuted(size, layout, …) → empty.memory_format(size, …) (the
                     contents are uninitialized; the dim order is the
                     contiguous one)

Views (t, transpose, reshape, _unsafe_view) are spelled as core copies by
to-edge-views. The ops of EtCoreExceptions stay as they are: they run on
portable kernels and are never delegated (the Python system's
_core_aten_ops_exception_list). Any other non-core op that remains is
counted in the statistic "non-core-kept" and reported with a firing, so a
missing decomposition shows in the export report instead of failing later
in a verifier.

In a delegate's pipeline the nodes its backend declares to keep whole
(RegisterEtKeepWhole; exir's Partitioner.ops_to_not_decompose, asked by
to_edge_transform_and_lower) stay as they are and are counted in
"kept-whole": for executorch.xnnpack, a hardswish the XNNPACK support
rules accept (xnnpack.OpsToNotDecompose), which becomes one XNNHardswish
node instead of add.Scalar, clamp, div.Scalar and mul. decompose-unclaimed
decomposes those the partitioner then leaves outside every delegate.`,
	Run: runDecomposeToCore,
})

const etlDecomposeName = "decompose-to-core"

// EtCoreExceptions are the non-core ops allowed to stay in an ExecuTorch
// program (ET-L01), each with the reason it is allowed.
var EtCoreExceptions = map[ir.Op]string{
	ir.OpAten_FftC2c:                  "fnet's FFT; portable kernel, no core decomposition",
	ir.OpAten_IsAllTrue:               "T5/Bart attention-mask checks; portable kernel",
	ir.OpAtenBincount:                 "data-dependent output size; portable kernel",
	ir.OpAtenBucketizeTensor:          "portable kernel; decomposition would need a data-dependent search",
	ir.OpAtenCummax:                   "portable kernel (values and indices)",
	ir.OpAtenCummin:                   "portable kernel (values and indices)",
	ir.OpAtenPolar:                    "seamless_m4t; complex construction with a portable kernel",
	ir.OpAtenRandLike:                 "random; decomposing would change the random stream",
	ir.OpAtenRandintLow:               "random; decomposing would change the random stream",
	ir.OpAtenRandnLike:                "random; decomposing would change the random stream",
	ir.OpAtenSearchsortedTensor:       "portable kernel; decomposition would need a data-dependent search",
	ir.OpAtenUniqueConsecutive:        "data-dependent output size; portable kernel",
	ir.OpAten_EmbeddingBagForwardOnly: "embedding bags (revisions C/D); portable kernel",
}

// EtCoreExceptionNames lists EtCoreExceptions' op names, sorted.
func EtCoreExceptionNames() []string {
	out := make([]string, 0, len(EtCoreExceptions))
	for op := range EtCoreExceptions {
		out = append(out, op.String())
	}
	sort.Strings(out)
	return out
}

var (
	etlOpLinear      = ir.OpAtenLinear
	etlOpSilu        = ir.OpAtenSilu
	etlOpHardsigmoid = ir.OpAtenHardsigmoid
	etlOpHardswish   = ir.OpAtenHardswish
	etlOpRsubScalar  = ir.OpAtenRsubScalar
	etlOpSigmoid     = ir.OpAtenSigmoid
	etlOpMulTensor   = ir.OpAtenMulTensor
	etlOpMulScalar   = ir.OpAtenMulScalar
	etlOpAddScalar   = ir.OpAtenAddScalar
	etlOpDivScalar   = ir.OpAtenDivScalar
	etlOpClamp       = ir.OpAtenClamp
	etlOpAddmm       = ir.OpAtenAddmm
	etlOpMm          = ir.OpAtenMm
)

func runDecomposeToCore(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
	keep := etKeepWholeFor(c)
	filter := func(n *ir.Node) bool {
		if keep.Keep != nil && etCoreSet.Has(n.Op) && keep.Keep(n) {
			c.Stat("kept-whole", 1)
			c.Debugf(n, "kept whole for the %s partitioner", c.Export().Backend())
			return false
		}
		return true
	}
	n, err := etlApply(p, c, etCoreSet, etlDecomposeName, filter)
	if err != nil {
		return pm.Result{}, err
	}
	changed := n > 0
	// What stays outside core ATen is counted, so a missing decomposition
	// shows in the report (legalize-kernels later decomposes or refuses
	// what has no kernel).
	err = etlEachNode(p, func(n *ir.Node) error {
		info := n.Op.Info()
		if info.Namespace != "aten" || n.Op.Has(ir.PropCore) || n.Op.Has(ir.PropView) || n.Op.Has(ir.PropOutVariant) || n.Op.Has(ir.PropSymbolic) {
			return nil
		}
		if _, ok := EtCoreExceptions[n.Op]; ok {
			c.Stat("exception-kept", 1)
		} else if _, view := etlEdgeViewOfOp(n.Op); !view && !(keep.Keep != nil && etCoreSet.Has(n.Op) && keep.Keep(n)) {
			c.Stat("non-core-kept", 1)
			c.Debugf(n, "non-core op without a core decomposition")
		}
		return nil
	})
	return pm.Result{Changed: changed}, err
}

// etlApply runs a decomposition set over the program's graphs outside
// delegates (the nodes filter accepts), firing "decomposed OP" on each
// replacement.
func etlApply(p *ir.Program, c *pm.Ctx, set *rewrite.Set, pass string, filter func(n *ir.Node) bool) (int, error) {
	var graphs []*ir.Graph
	inDelegate := etlDelegateGraphs(p)
	for _, g := range p.Graphs() {
		if !inDelegate[g] {
			graphs = append(graphs, g)
		}
	}
	res, err := rewrite.Apply(graphs, set, rewrite.Options{
		Pass:   pass,
		Filter: filter,
		Retype: fxRetype,
		OnRewrite: func(pat *rewrite.Pattern, from ir.Op, to []*ir.Value) {
			if len(to) > 0 && to[0] != nil && to[0].Def != nil {
				c.Fired(to[0].Def, "decomposed "+from.String())
			}
		},
	})
	return res.Rewrites, err
}

// etlEdgeViewOfOp reports whether to-edge-views rewrites op.
func etlEdgeViewOfOp(op ir.Op) (ir.Op, bool) {
	switch op {
	case etlOpReshape, etlOpUnsafeView, etlOpT, etlOpTranspose:
		return op, true
	}
	t, ok := etlViewCopyTwins[op]
	return t, ok
}

func etlSilu(b *ir.Builder, x ir.Arg) (*ir.Value, error) {
	s, err := b.Value(etlOpSigmoid, x)
	if err != nil {
		return nil, err
	}
	return b.Value(etlOpMulTensor, x, ir.ValueArg(s))
}

func etlHardsigmoid(b *ir.Builder, x ir.Arg) (*ir.Value, error) {
	a, err := b.Value(etlOpAddScalar, x, ir.IntArg(3))
	if err != nil {
		return nil, err
	}
	cl, err := b.Value(etlOpClamp, ir.ValueArg(a), ir.IntArg(0), ir.IntArg(6))
	if err != nil {
		return nil, err
	}
	return b.Value(etlOpDivScalar, ir.ValueArg(cl), ir.IntArg(6))
}

func etlRsub(b *ir.Builder, n *ir.Node) (*ir.Value, error) {
	alpha := n.Arg("alpha")
	var neg ir.Arg
	switch alpha.Kind {
	case ir.ArgInt:
		neg = ir.IntArg(-alpha.Int)
	case ir.ArgFloat:
		neg = ir.FloatArg(-alpha.Float)
	default:
		return nil, n.Errorf("rsub with a non-literal alpha")
	}
	m, err := b.Value(etlOpMulScalar, n.Arg("self"), neg)
	if err != nil {
		return nil, err
	}
	return b.Value(etlOpAddScalar, ir.ValueArg(m), n.Arg("other"))
}

func etlLinear(b *ir.Builder, n *ir.Node) (*ir.Value, error) {
	x, w, bias := n.Arg("input"), n.Arg("weight"), n.Arg("bias")
	xt, err := ir.ArgTensor(x, "input")
	if err != nil {
		return nil, err
	}
	if xt.Rank() < 1 {
		return nil, n.Errorf("linear of a 0-d input")
	}
	wT, err := b.Value(etlOpPermuteCopy, w, ir.IntsArg(1, 0))
	if err != nil {
		return nil, err
	}
	in := x
	r := xt.Rank()
	if r != 2 {
		lead := sym.Const(1)
		for _, d := range xt.Shape[:r-1] {
			lead = sym.Mul(lead, d)
		}
		s, err := etShapeArg(b, n, []sym.Expr{lead, xt.Shape[r-1]})
		if err != nil {
			return nil, err
		}
		flat, err := b.Value(etlOpViewCopy, x, s)
		if err != nil {
			return nil, err
		}
		in = ir.ValueArg(flat)
	}
	var y *ir.Value
	if bias.IsNone() {
		y, err = b.Value(etlOpMm, in, ir.ValueArg(wT))
	} else {
		y, err = b.Value(etlOpAddmm, bias, in, ir.ValueArg(wT))
	}
	if err != nil || r == 2 {
		return y, err
	}
	out := n.Result().Tensor()
	s, err := etShapeArg(b, n, out.Shape)
	if err != nil {
		return nil, err
	}
	return b.Value(etlOpViewCopy, ir.ValueArg(y), s)
}
