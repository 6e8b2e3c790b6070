package passes

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// LegalizeKernels decomposes every op that ExecuTorch's kernel libraries
// cannot run, and refuses, all at once, those it cannot decompose (ET-L01).
var LegalizeKernels = etlLowering(&pm.Pass{
	Name: etlLegalizeName,
	ID:   "ET-L01",
	Doc: `decompose every op without an ExecuTorch kernel; refuse, listing them all, those that cannot be

The legal ops of the portable target are the kernel list
gen/etkernels.spec (generated from executorch's functions.yaml,
et_copy_ops.yaml, custom_ops.yaml and quantized.yaml, and from the out
variants the runtime's optimized library registers besides: OpInfo.Kernel):
an op is legal when it is a registered kernel or its out variant is one
(then to-out-variants converts it); an op whose only kernel is an
optimized one (linear) is still decomposed where a decomposition exists,
and view_as_complex, which no kernel runs, is refused. Nodes inside a delegate are what the delegate
claimed and are legal; so are prim, symbolic, view, in-place, higher-order
and planning ops, which later lowering passes handle. Every other node is
rewritten, by the rewrite engine (package rewrite, to a fixpoint), with the
ATen decompositions of etDecompositions (what torch's core ATen
decomposition table does; "fxport passes" lists them with
EtDecompositionNames): silu, hardsigmoid, hardswish, linear, rsub.Scalar,
inference native_batch_norm, arange.start, zeros_like and ones_like
(full_like), softplus (its formula with the threshold), index_copy
(index_put), triu (tril of a mask, where), upsample_nearest2d and
upsample_bilinear2d (their .vec overloads), unsafe_split and
unsafe_split_with_sizes (split_copy, split_with_sizes_copy), empty_strided
with contiguous strides (empty.memory_format), integer remainder.Tensor
(a - floor_divide(a, b) * b: the portable kernel truncates where torch
floors); avg_pool3d, _adaptive_avg_pool3d and max_pool3d_with_indices as
two 2-d pools (H and W, then D; the indices from both stages' indices),
col2im (scatter_add into the zero-padded image with an arange-built index,
then a crop) and scatter_reduce.two (scatter_add for sum and mean; for
amax, amin and prod a one-hot mask of the index against the output
positions, numel(index)·self.size(dim) elements, refused above 2^24) and
a convolution with 5-D operands, which the portable convolution.out refuses
(one 2-d convolution over the depth-shifted frames stacked into the
channels), all for static shapes; and sort, argsort and randperm, which have no portable
kernel: sort(x, dim, descending) is topk(x, k = size(dim), dim, largest =
descending, sorted = True) (values and indices), argsort its indices, and
randperm(n) the indices of the ascending topk of rand([n]) cast to its
dtype. sort.default makes no promise about the order of equal elements,
and the portable topk keeps none (measured: ties come back in neither
input nor reverse order); a stable request (sort.stable or argsort.stable
with stable=True) is not rewritten and is refused; _embedding_bag with
static shapes (embedding, then scatter_add into the bags by offset2bag,
torch's cumsum of marks at the offsets; mean divides by the non-padding
counts, max is scatter_reduce amax with max_indices from a scatter_reduce
amin of the first positions reaching it), its offset2bag, bag_size and
max_indices as torch's CPU kernel fills them. The nodes the decompositions
build are legalized in turn. A node left without a kernel fails the export:
the error lists every such node with its op, graph and source line.`,
	Run: runLegalizeKernels,
})

const etlLegalizeName = "legalize-kernels"

// etlLegalNamespaces hold ops that are not kernel calls of the portable
// library, or that later passes lower: prim ops, planning, Python scalar
// arithmetic, control flow, delegate-only ops.
var etlLegalNamespaces = map[string]bool{
	"executorch_prim": true, "memory": true, "operator": true, "math": true, "builtins": true,
	"torch": true, "higher_order": true, "xnnpack": true,
}

// etlPrimKernels are non-out ATen ops the runtime registers as prim ops.
var etlPrimKernels = map[ir.Op]bool{
	ir.OpAtenSymSizeInt: true, ir.OpAtenSymNumel: true, ir.OpAten_LocalScalarDense: true,
}

// EtHasKernel reports whether an ExecuTorch kernel library runs op, directly
// or through its out variant.
func EtHasKernel(op ir.Op) bool {
	info := op.Info()
	if info.Kernel != "" {
		return true
	}
	if out := op.OutTwin(); out.Valid() && out.Info().Kernel != "" {
		return true
	}
	return false
}

// etlOptimizedOnly reports whether op runs only on a kernel of the
// runtime's optimized library (lib=optimized in gen/etkernels.spec: linear,
// the real FFTs), none of the portable library's. Where fxport decomposes
// such an op into portable kernels (linear), the decomposition is kept, so
// the optimized kernel serves only what has no portable form.
func etlOptimizedOnly(op ir.Op) bool {
	if op.Info().Kernel != "" {
		return op.Info().Kernel == etlOptimizedLib
	}
	out := op.OutTwin()
	return out.Valid() && out.Info().Kernel == etlOptimizedLib
}

const etlOptimizedLib = "optimized"

// etlKernelDisagrees reports whether the portable kernel of n's op
// computes something else than torch for n's arguments (judged on the
// genuine runtime by the op sweep, docs/ops.md): remainder.Tensor on
// integers gives C's truncated remainder (-3 rem 9 = -3) where torch's is
// floored (6).
func etlKernelDisagrees(n *ir.Node) bool {
	if n.Op != ir.OpAtenRemainderTensor || len(n.Results) != 1 || n.Result().Tensor() == nil {
		return false
	}
	return n.Result().Tensor().DType.IsInteger()
}

// etlAlwaysLegal reports whether every node of op is legal: etlLegal looks
// past the op only for the ops etlKernelDisagrees and etlKernelRefuses
// judge by their arguments.
func etlAlwaysLegal(op ir.Op) bool {
	if op == ir.OpAtenRemainderTensor || op == ir.OpAtenConvolution {
		return false
	}
	return etlLegal(&ir.Node{Op: op})
}

// etlLegal reports whether n may stay for the ExecuTorch kernels.
func etlLegal(n *ir.Node) bool {
	info := n.Op.Info()
	switch {
	case n.Op == ir.OpOpaqueCall:
		return false // an op the frontend did not know has no kernel
	case etlKernelDisagrees(n), etlKernelRefuses(n):
		return false
	case etlOptimizedOnly(n.Op) && etDecompositionSet.Has(n.Op):
		return false // decomposed into portable kernels, as before the optimized list
	case EtHasKernel(n.Op), etlLegalNamespaces[info.Namespace], etlPrimKernels[n.Op]:
		return true
	case n.Op == ir.OpAtenViewAsComplex:
		return false // no kernel reinterprets real pairs as complex (et_view keeps the dtype)
	case n.Op.Has(ir.PropSymbolic), n.Op.Has(ir.PropView), n.Op.Has(ir.PropInplace), n.Op.Has(ir.PropHigherOrder), n.Op.Has(ir.PropSideEffects):
		return true
	}
	return false
}

func runLegalizeKernels(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
	n, err := etlApply(p, c, etDecompositionSet, etlLegalizeName, func(n *ir.Node) bool { return !etlLegal(n) })
	if err != nil {
		return pm.Result{}, err
	}
	c.Stat("decomposed", int64(n))
	var bad []string
	err = etlEachNodeOf(p, func(op ir.Op) bool { return !etlAlwaysLegal(op) }, func(n *ir.Node) error {
		if etlLegal(n) {
			return nil
		}
		why := "no decomposition"
		if etDecompositionSet.Has(n.Op) {
			why = "no decomposition for these arguments"
		}
		if r := etlNoKernelWhy(n); r != "" {
			why = r
		}
		line := fmt.Sprintf("  %s in graph %s: %s", n.Short(), n.Graph.Name, why)
		if n.Op == ir.OpOpaqueCall {
			line = fmt.Sprintf("  %%%s (%s) in graph %s: %s", firstName(n), n.OpLabel(), n.Graph.Name, why)
		}
		if loc := etlSourceLine(n); loc != "" {
			line += ", from " + loc
		}
		bad = append(bad, line)
		return nil
	})
	if err != nil {
		return pm.Result{}, err
	}
	if len(bad) > 0 {
		s := "s have"
		if len(bad) == 1 {
			s = " has"
		}
		return pm.Result{}, fmt.Errorf("%s: %d operation%s no kernel in ExecuTorch's portable kernel library (gen/etkernels.spec) and could not be decomposed into ops that have one:\n%s",
			etlLegalizeName, len(bad), s, strings.Join(bad, "\n"))
	}
	return pm.Result{Changed: n > 0}, nil
}

// etlNoKernelWhy is the reason, in user words, why n stays without a
// portable kernel where a plain "no decomposition" would not say it, or "".
func etlNoKernelWhy(n *ir.Node) string {
	switch n.Op {
	case ir.OpAten_FftC2c:
		return "no ExecuTorch kernel library has a complex-to-complex FFT kernel (the runtime's optimized library has _fft_r2c and _fft_c2r only), and fxport has no decomposition of an FFT into real portable ops"
	case ir.OpAtenViewAsComplex:
		return "no ExecuTorch kernel library has a view_as_complex kernel (the portable library has view_as_real_copy only), and et_view cannot change a tensor's dtype"
	case ir.OpAtenSortStable, ir.OpAtenArgsortStable:
		if etlStable(n) {
			return "a stable sort (stable=True): the portable library has no sort kernel, and its topk, which an unstable sort becomes, does not keep equal elements in input order"
		}
	}
	return ""
}

var etlTraceLine = regexp.MustCompile(`File "([^"]+)", line (\d+)`)

// etlSourceLine is the user's source line of n from its stack trace
// ("model.py:12"), or "".
func etlSourceLine(n *ir.Node) string {
	st, ok := n.Meta.Get(ir.MetaStackTrace)
	if !ok {
		return ""
	}
	m := etlTraceLine.FindAllStringSubmatch(st, -1)
	if len(m) == 0 {
		return ""
	}
	last := m[len(m)-1]
	return last[1] + ":" + last[2]
}

// firstName is the name of n's first result, or its ID.
func firstName(n *ir.Node) string {
	if len(n.Results) > 0 {
		return n.Results[0].Name
	}
	return fmt.Sprintf("#%d", n.ID)
}
