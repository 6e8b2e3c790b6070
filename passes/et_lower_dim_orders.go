package passes

import (
	"slices"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// PropagateDimOrders recomputes the dim orders of the edge program's
// tensors after to-edge-views, as exir's re-tracing with fake tensors does
// (ET-L04).
var PropagateDimOrders = etlLowering(&pm.Pass{
	Name: etlDimOrdersName,
	Doc: `recompute dim orders in topological order once views are copies

The dim orders of the traced program are torch's: derived from strides
that views such as permute, transpose and expand gave. to-edge-views
replaces those views by copies whose results are contiguous, so a tensor
computed from one no longer has the layout torch recorded for it. exir
re-runs every op on fake tensors after its view-copy pass; this pass does
the same for the layout, one node at a time in topological order:

* pointwise ops (torch's pointwise tag, ir.PropPointwise, from
  gen/torchtags.spec) lay their result out as TensorIterator does: the
  dims sorted by the strides of the operands, the first operand that
  orders two dims deciding, broadcast dims (absent or of size one in an
  operand) ignored; ties keep the contiguous order;
* the view copies (view_copy, permute_copy, expand_copy, slice_copy, …:
  the copy twins to-edge-views writes) are contiguous;
* nonzero is contiguous: torch lays its [n, ndim] result out column-major
  (strides 1, n), but the portable nonzero.out writes the indices row by
  row into its out whatever that out's dim order (judged on the genuine
  runtime by the op sweep, docs/ops.md);
* an op that laid its result out like its first tensor operand (torch's
  empty_like / preserve_format: softmax, native_dropout, …), seen as a
  non-contiguous result with the same shape and dim order as that operand
  had, keeps following it;
* a convolution lays its result out like its input when the input is in
  the default or the channels-last order (torch's conv keeps the input's
  memory format; the portable convolution kernel requires input and out in
  the same dim order): a channels-last input that became a contiguous copy
  (segformer's permute → reshape → conv) gives a contiguous result;
* everything else keeps its dim order: graph inputs, constants, ops with
  an explicit memory_format or dim_order argument, the remaining views,
  convolutions of inputs in another order (fix-conv-input-dim-order copies
  those).

Size-one dims are canonicalized as everywhere (ET-P40). The portable
kernels of the pointwise ops require their operands and out to share a
dim order (all contiguous or all channels-last), so a pointwise result
left with a layout torch gave it through a view that is now a copy would
be refused at run time (tensors_have_same_dim_order). Statistic
"dim-orders-changed".`,
	Run: runPropagateDimOrders,
})

const etlDimOrdersName = "propagate-dim-orders"

// etlViewCopyOps are the copy twins to-edge-views writes.
var etlViewCopyOps = func() map[ir.Op]bool {
	m := map[ir.Op]bool{etlOpViewCopy: true, etlOpPermuteCopy: true}
	for _, c := range etlViewCopyTwins {
		m[c] = true
	}
	return m
}()

func runPropagateDimOrders(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
	old := map[*ir.Value][]int{} // the dim order a changed value had
	before := func(v *ir.Value) []int {
		if o, ok := old[v]; ok {
			return o
		}
		return EtCanonicalDimOrder(v.Tensor())
	}
	changed := false
	err := etlEachNode(p, func(n *ir.Node) error {
		for i, r := range n.Results {
			t := r.Tensor()
			if t == nil {
				continue
			}
			order, ok := etlDimOrderOf(n, i, t, before)
			if !ok {
				continue
			}
			cur := EtCanonicalDimOrder(t)
			if slices.Equal(order, cur) {
				continue
			}
			nt := *t
			nt.DimOrder = order
			if nt.IsContiguous() {
				nt.DimOrder = nil
			}
			old[r] = cur
			r.SetType(&nt)
			c.Fired(n, "result "+r.String()+" dim order "+etlOrderText(cur)+" → "+etlOrderText(order))
			c.Stat("dim-orders-changed", 1)
			changed = true
		}
		return nil
	})
	return pm.Result{Changed: changed}, err
}

// etlDimOrderOf is the canonical dim order of n's result i (of type t) by
// the pass's rules; false when the result keeps its own. before gives an
// operand's dim order as the traced program had it.
func etlDimOrderOf(n *ir.Node, i int, t *ir.TensorType, before func(*ir.Value) []int) ([]int, bool) {
	if n.Op.Has(ir.PropHigherOrder) || n.Op.Has(ir.PropSymbolic) || n.Op.Has(ir.PropView) {
		return nil, false
	}
	for _, a := range n.Op.Info().Schema.Args {
		if a.Name == "memory_format" || a.Name == "dim_order" {
			return nil, false
		}
	}
	if etlConvOps[n.Op] {
		return etlConvDimOrder(n, i, t)
	}
	switch {
	case n.Op.Has(ir.PropPointwise):
		return EtCanonicalDimOrder(&ir.TensorType{Shape: t.Shape, DimOrder: etlIteratorOrder(n, t)}), true
	case etlViewCopyOps[n.Op], n.Op == ir.OpAtenNonzero:
		return EtCanonicalDimOrder(&ir.TensorType{Shape: t.Shape}), true
	}
	if i != 0 {
		return nil, false
	}
	self := etlFirstTensorOperand(n)
	if self == nil {
		return nil, false
	}
	st := self.Tensor()
	mine := EtCanonicalDimOrder(t)
	if st.Rank() != t.Rank() || !etlSameShape(st, t) || (&ir.TensorType{Shape: t.Shape, DimOrder: mine}).IsContiguous() ||
		!slices.Equal(before(self), mine) {
		return nil, false
	}
	return EtCanonicalDimOrder(st), true
}

// etlConvOps are the convolutions whose result follows their input's
// layout.
var etlConvOps = map[ir.Op]bool{
	ir.OpAtenConvolution: true, ir.OpAtenConv1d: true, ir.OpAtenConv2d: true, ir.OpAtenConv3d: true,
	ir.OpAtenConv1dPadding: true, ir.OpAtenConv2dPadding: true, ir.OpAtenConv3dPadding: true,
}

// etlConvDimOrder: a convolution's result i (type t) in its input's order
// when that is the default or channels-last; false otherwise.
func etlConvDimOrder(n *ir.Node, i int, t *ir.TensorType) ([]int, bool) {
	if i != 0 || n.Op.ArgIndex("input") < 0 {
		return nil, false
	}
	in := n.Arg("input")
	if in.Kind != ir.ArgValue || in.Value.Tensor() == nil {
		return nil, false
	}
	it := in.Value.Tensor()
	switch {
	case it.IsContiguous():
		return EtCanonicalDimOrder(&ir.TensorType{Shape: t.Shape}), true
	case etIsChannelsLast(it.DimOrder) && t.Rank() == it.Rank():
		order := make([]int, 0, t.Rank())
		order = append(order, 0)
		for d := 2; d < t.Rank(); d++ {
			order = append(order, d)
		}
		order = append(order, 1)
		return EtCanonicalDimOrder(&ir.TensorType{Shape: t.Shape, DimOrder: order}), true
	}
	return nil, false
}

// etlIteratorOrder is TensorIterator's layout for a pointwise op's result
// of type t: an insertion sort of the dims, innermost first, where the
// first operand whose strides order two dims decides and operands
// broadcast along either dim are skipped. It returns the dim order,
// outermost first.
func etlIteratorOrder(n *ir.Node, t *ir.TensorType) []int {
	r := t.Rank()
	// pos[k][d]: where out dim d sits in operand k's dim order (larger is
	// inner, so a smaller stride); -1 where operand k broadcasts along d.
	var pos [][]int
	for _, a := range n.Args {
		if a.Kind != ir.ArgValue || a.Value.Tensor() == nil {
			continue
		}
		ot := a.Value.Tensor()
		or := ot.Rank()
		if or > r {
			continue
		}
		order := EtCanonicalDimOrder(ot)
		at := make([]int, or)
		for j, d := range order {
			at[d] = j
		}
		p := make([]int, r)
		for d := range p {
			p[d] = -1
			od := d - (r - or)
			if od < 0 {
				continue
			}
			if v, ok := ot.Shape[od].Const(); ok && v == 1 {
				continue
			}
			p[d] = at[od]
		}
		pos = append(pos, p)
	}
	isOne := func(d int) bool { v, ok := t.Shape[d].Const(); return ok && v == 1 }
	// shouldSwap: 1 when dim0 belongs after (outside) dim1 in the
	// innermost-first permutation, -1 when before, 0 when undecided.
	shouldSwap := func(d0, d1 int) int {
		if isOne(d0) || isOne(d1) {
			return 0
		}
		for _, p := range pos {
			if p[d0] < 0 || p[d1] < 0 {
				continue
			}
			if p[d0] > p[d1] { // d0 inner: smaller stride
				return -1
			}
			if p[d0] < p[d1] {
				return 1
			}
		}
		return 0
	}
	perm := make([]int, r) // innermost first
	for i := range perm {
		perm[i] = r - 1 - i
	}
	for i := 1; i < r; i++ {
		d1 := i
		for d0 := i - 1; d0 >= 0; d0-- {
			cmp := shouldSwap(perm[d0], perm[d1])
			if cmp > 0 {
				perm[d0], perm[d1] = perm[d1], perm[d0]
				d1 = d0
			} else if cmp < 0 {
				break
			}
		}
	}
	order := make([]int, r)
	for i, d := range perm {
		order[r-1-i] = d
	}
	return order
}

// etlFirstTensorOperand is n's first operand of tensor type.
func etlFirstTensorOperand(n *ir.Node) *ir.Value {
	for _, a := range n.Args {
		if a.Kind == ir.ArgValue && a.Value.Tensor() != nil {
			return a.Value
		}
	}
	return nil
}

func etlSameShape(a, b *ir.TensorType) bool {
	if a.Rank() != b.Rank() {
		return false
	}
	for i := range a.Shape {
		if !a.Shape[i].Equal(b.Shape[i]) {
			return false
		}
	}
	return true
}

func etlOrderText(order []int) string {
	return ir.IntsArg(etlInts(order)...).String()
}

func etlInts(xs []int) []int64 {
	out := make([]int64, len(xs))
	for i, x := range xs {
		out[i] = int64(x)
	}
	return out
}
