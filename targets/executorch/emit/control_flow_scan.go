package emit

import (
	"github.com/fxport/fxport/ir"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/plan"
)

// A scan is emitted as a counted loop: for
//
//	%c…, %ys… = higher_order.scan(^combine_fn, [%init…], [%xs…], [%a…])
//
// the chain gets
//
//	MoveCall(Int 0 → i)                       (reset the counter)
//	n = sym_size.int(xs_0, 0)                 (a constant Int when static)
//	zeros.out([n, row dims…], out=ys_k)…       (dynamic stacked outputs only)
//	carry(init_k → c_k)…
//	H: p = executorch_prim::lt.Scalar(i, n)
//	JumpFalseCall(p → E)
//	select_copy.int_out(xs_j, 0, i, out=slice_j)…
//	<combine_fn's instructions>
//	executorch_prim::et_copy_index(ys_k, combine y_k, i)…
//	carry(combine carry_k → c_k)…
//	i = executorch_prim::add.Scalar(i, 1)
//	JumpFalseCall(Bool false → H)             (an unconditional jump back)
//	E: …
//
// The carry results c_k are the loop-carried slots (copied in and back as
// a while_loop's, see control_flow_while.go) and combine_fn reads them as
// its carry inputs; the stacked outputs ys_k are written one row per
// iteration. The slice inputs slice_j have storage of their own, planned
// by targets/executorch/plan (recorded on the scan node, meta mem.xs),
// written at the top of each iteration and, like every value inside the
// loop, live within one iteration (the planner numbers positions in this
// order, so its per-iteration lifetimes match it). The per-step outputs
// are written before the carry copies so that a step output which is a
// carry input is read before the copy overwrites it.

var (
	opScan          = ir.OpHigherOrderScan
	opSelectCopyOut = ir.OpAtenSelectCopyIntOut
	opEtCopyIndex   = ir.OpExecutorchPrimEtCopyIndexTensor
	opPrimLt        = ir.OpExecutorchPrimLtScalar
	opPrimAdd       = ir.OpExecutorchPrimAddScalar
	opSymSizeInt    = ir.OpAtenSymSizeInt
	opMapImpl       = ir.OpHigherOrderMapImpl
	opZerosOut      = ir.OpAtenZerosOut
)

// emitScan emits a higher_order.scan node as a counted loop; a
// higher_order.map_impl (f, [xs], [pos_args]) is emitted the same way as a
// scan without carries.
func (m *method) emitScan(n *ir.Node) error {
	parts, ok := plan.ScanParts(n)
	if !ok {
		return n.Errorf("%s: want (combine_fn, [init], [xs], [additional inputs]) for scan or (f, [xs], [pos_args]) for map_impl, with a region taking one input per init, xs and additional input", n.Op.Info().Name)
	}
	f, init, xs, extra := parts.Body, parts.Init, parts.Xs, parts.Extra
	if len(xs) == 0 {
		// torch never traces one: torch.scan returns init unchanged when xs
		// has no leaves, and scan's and map's tracing read the trip count
		// from xs[0]'s leading dim. A hand-written one has no length.
		return n.Errorf("%s without xs has no trip count (the loop runs once per row of xs; torch.scan with empty xs returns init without tracing a scan)", n.Op.Info().Name)
	}
	if len(n.Results) < len(init) {
		return n.Errorf("scan has %d results for %d carried values", len(n.Results), len(init))
	}
	nys := len(n.Results) - len(init)
	results := make([]int32, len(n.Results))
	for i, r := range n.Results {
		if i >= len(init) && r.Tensor() == nil {
			return n.Errorf("scan output %d (%s) is not a tensor", i, r)
		}
		idx, err := m.emitResult(r)
		if err != nil {
			return n.Errorf("scan result %d: %v", i, err)
		}
		results[i] = idx
	}
	slots, ys := results[:len(init)], results[len(init):]
	xsIdx := make([]int32, len(xs))
	for j, a := range xs {
		if a.Kind != ir.ArgValue || a.Value.Tensor() == nil || len(a.Value.Tensor().Shape) == 0 {
			return n.Errorf("scan xs %d is not a tensor with a leading dim", j)
		}
		idx, err := m.operand(a.Value)
		if err != nil {
			return n.Errorf("scan xs %d: %v", j, err)
		}
		xsIdx[j] = idx
	}
	extraIdx := make([]int32, len(extra))
	for i, a := range extra {
		idx, err := m.argIndex(a)
		if err != nil {
			return n.Errorf("scan additional input %d: %v", i, err)
		}
		extraIdx[i] = idx
	}
	// Counter and trip count.
	counter := m.add(evInt(0))
	m.move(m.add(evInt(0)), counter)
	var length int32
	if c, ok := xs[0].Value.Tensor().Shape[0].Const(); ok {
		length = m.add(evInt(c))
	} else {
		length = m.add(evInt(0))
		if err := m.kernel(opSymSizeInt, xsIdx[0], m.add(evInt(0)), length); err != nil {
			return n.Errorf("scan trip count: %v", err)
		}
	}
	for k, r := range n.Results[len(init):] {
		if err := m.sizeStacked(n, k, r, ys[k], length); err != nil {
			return err
		}
	}
	for i, a := range init {
		from, err := m.argIndex(a)
		if err != nil {
			return n.Errorf("scan init %d: %v", i, err)
		}
		if err := m.carry(n.Results[i], from, slots[i]); err != nil {
			return n.Errorf("scan init %d: %v", i, err)
		}
	}
	slices := plan.ScanSlices(n)
	for i, in := range f.Inputs {
		switch {
		case i < len(init):
			m.index[in] = slots[i]
		case i < len(init)+len(xs):
		default:
			m.index[in] = extraIdx[i-len(init)-len(xs)]
		}
	}
	sliceIdx := make([]int32, len(slices))
	for j, in := range slices {
		if in.Tensor() == nil {
			return n.Errorf("scan combine_fn %s input %s (a slice of xs %d) is not a tensor", f.Name, in, j)
		}
		if _, planned := m.rec.Allocs[in]; !planned {
			return n.Errorf("scan combine_fn %s input %s has no planned storage (meta %s missing; re-run plan-memory)", f.Name, in, plan.MetaScanSlices)
		}
		idx, err := m.emitResult(in)
		if err != nil {
			return n.Errorf("scan slice %d: %v", j, err)
		}
		m.index[in] = idx
		sliceIdx[j] = idx
	}
	head := int32(len(m.chain.Instructions))
	pred := m.add(evBool(false))
	if err := m.kernel(opPrimLt, counter, length, pred); err != nil {
		return n.Errorf("scan: %v", err)
	}
	exit := m.jumpFalse(pred)
	zero := m.add(evInt(0))
	for j := range xsIdx {
		// select_copy.int_out(self, dim, index, *, out) -> out
		if err := m.kernel(opSelectCopyOut, xsIdx[j], zero, counter, sliceIdx[j], sliceIdx[j]); err != nil {
			return n.Errorf("scan xs %d: %v", j, err)
		}
	}
	for _, rn := range f.Nodes() {
		if err := m.emitNode(rn); err != nil {
			return err
		}
	}
	outs := f.Outputs()
	if len(outs) != len(init)+nys {
		return n.Errorf("scan combine_fn %s returns %d values for %d carried values and %d outputs", f.Name, len(outs), len(init), nys)
	}
	from := make([]int32, len(outs))
	for i, a := range outs {
		idx, err := m.argIndex(a)
		if err != nil {
			return n.Errorf("scan combine_fn %s output %d: %v", f.Name, i, err)
		}
		from[i] = idx
	}
	for k := range ys {
		if err := m.kernel(opEtCopyIndex, ys[k], from[len(init)+k], counter); err != nil {
			return n.Errorf("scan output %d: %v", k, err)
		}
	}
	if err := m.carryBack(n, "scan combine_fn "+f.Name, n.Results[:len(init)], from[:len(init)], slots); err != nil {
		return err
	}
	if err := m.kernel(opPrimAdd, counter, m.add(evInt(1)), counter); err != nil {
		return n.Errorf("scan: %v", err)
	}
	back := m.jumpFalse(m.add(evBool(false)))
	back.DestinationInstruction = head
	exit.DestinationInstruction = int32(len(m.chain.Instructions))
	return nil
}

// sizeStacked gives stacked output k of scan n (value ys, a dynamic-bound
// tensor when any dim is symbolic) the sizes [trip count, row dims…]
// before the loop, with aten::zeros.out. Without it the tensor would keep
// the sizes it is emitted with, its upper bounds: ExecuTorch's
// et_copy_index only ever grows copy_to (to index + 1 rows) and never
// shrinks it, so a scan over fewer rows than the bound would return the
// bound's rows, the tail unwritten. A static stacked output needs nothing.
// The row dims must be static (a symbolic one is known only once the body
// has run: an error naming the node).
func (m *method) sizeStacked(n *ir.Node, k int, r *ir.Value, ys, length int32) error {
	t := r.Tensor()
	if t == nil || len(t.Shape) == 0 {
		return n.Errorf("scan stacked output %d (%s) is not a tensor with a leading dim", k, r)
	}
	dynamic := false
	for _, d := range t.Shape {
		if _, ok := d.Const(); !ok {
			dynamic = true
		}
	}
	if !dynamic {
		return nil
	}
	items := []int64{int64(length)}
	for i, d := range t.Shape[1:] {
		c, ok := d.Const()
		if !ok {
			return n.Errorf("scan stacked output %d (%s): row dim %d (%s) is symbolic; only the leading dim of a stacked output may be dynamic", k, r, i+1, d)
		}
		items = append(items, int64(m.add(evInt(c))))
	}
	size := m.add(&etfb.EValueT{Val: &etfb.KernelTypesT{Type: etfb.KernelTypesIntList, Value: &etfb.IntListT{Items: items}}})
	// zeros.out(SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)
	if err := m.kernel(opZerosOut, size, ys, ys); err != nil {
		return n.Errorf("scan stacked output %d: %v", k, err)
	}
	return nil
}

// kernel appends a KernelCall of op on value indices args (arguments in
// schema order, then the returns).
func (m *method) kernel(op ir.Op, args ...int32) error {
	idx, err := m.operatorIndex(op.Info())
	if err != nil {
		return err
	}
	m.chain.Instructions = append(m.chain.Instructions, &etfb.InstructionT{InstrArgs: &etfb.InstructionArgumentsT{
		Type: etfb.InstructionArgumentsKernelCall, Value: &etfb.KernelCallT{OpIndex: idx, Args: args},
	}})
	return nil
}
