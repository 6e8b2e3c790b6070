package emit

import (
	"github.com/fxport/fxport/ir"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
)

// A while_loop is emitted inline too: for
//
//	%r… = higher_order.while_loop(^cond_fn, ^body_fn, [%c…], [%a…])
//
// the chain gets
//
//	carry(c_i → r_i)…                       (initial carried values)
//	H: <cond_fn's instructions>
//	JumpFalseCall(pred → E)
//	<body_fn's instructions>  carry(body result_i → r_i)…
//	JumpFalseCall(Bool false → H)           (an unconditional jump back)
//	E: …
//
// The results r_i are the loop-carried slots: both regions read their
// carried inputs from them and the additional inputs from the operands.
// The planner (targets/executorch/plan) numbers positions in this order:
// it keeps the slots live across the whole loop and gives every value
// inside the loop a lifetime within one iteration (body values with
// disjoint lifetimes share bytes), never overlapping the slots or anything
// live across the loop.
//
// carry is a MoveCall for a non-tensor value (ints, floats, bools are
// values: assignment is a copy). For a tensor it is a KernelCall of
// aten::clone.out writing into the slot's own planned storage: ExecuTorch's
// MoveCall assigns the EValue, so a moved-into slot would share the body
// output's tensor from then on, and the next trip's kernels would write
// that output while later ones still read the carried value through the
// slot (and an initial move would let the back-edge copy write into the
// operand c_i). clone.out resizes the slot to the copied tensor's sizes, so
// dynamically shaped carried values keep their current shape.

var (
	opWhile    = ir.OpHigherOrderWhileLoop
	opCloneOut = ir.OpAtenCloneOut
)

// emitWhile emits a higher_order.while_loop node inline with jumps and moves.
func (m *method) emitWhile(n *ir.Node) error {
	if len(n.Args) != 4 || n.Args[0].Kind != ir.ArgGraph || n.Args[1].Kind != ir.ArgGraph ||
		n.Args[2].Kind != ir.ArgList || n.Args[3].Kind != ir.ArgList || n.Args[0].Graph == nil || n.Args[1].Graph == nil {
		return n.Errorf("while_loop: want (cond_fn, body_fn, [carried inputs], [additional inputs])")
	}
	condFn, bodyFn := n.Args[0].Graph, n.Args[1].Graph
	carried, extra := n.Args[2].List, n.Args[3].List
	if len(n.Results) != len(carried) {
		return n.Errorf("while_loop has %d results for %d carried inputs", len(n.Results), len(carried))
	}
	slots := make([]int32, len(n.Results))
	for i, r := range n.Results {
		idx, err := m.emitResult(r)
		if err != nil {
			return n.Errorf("carried value %d: %v", i, err)
		}
		slots[i] = idx
	}
	for i, a := range carried {
		from, err := m.argIndex(a)
		if err != nil {
			return n.Errorf("carried input %d: %v", i, err)
		}
		if err := m.carry(n.Results[i], from, slots[i]); err != nil {
			return n.Errorf("carried input %d: %v", i, err)
		}
	}
	extraIdx := make([]int32, len(extra))
	for i, a := range extra {
		idx, err := m.argIndex(a)
		if err != nil {
			return n.Errorf("additional input %d: %v", i, err)
		}
		extraIdx[i] = idx
	}
	for _, g := range []*ir.Graph{condFn, bodyFn} {
		if len(g.Inputs) != len(slots)+len(extraIdx) {
			return n.Errorf("while_loop region %s takes %d inputs for %d carried and %d additional inputs", g.Name, len(g.Inputs), len(slots), len(extraIdx))
		}
		for i, in := range g.Inputs {
			if i < len(slots) {
				m.index[in] = slots[i]
			} else {
				m.index[in] = extraIdx[i-len(slots)]
			}
		}
	}
	head := int32(len(m.chain.Instructions))
	for _, rn := range condFn.Nodes() {
		if err := m.emitNode(rn); err != nil {
			return err
		}
	}
	outs := condFn.Outputs()
	if len(outs) != 1 {
		return n.Errorf("while_loop cond_fn %s returns %d values, want 1", condFn.Name, len(outs))
	}
	var pred int32
	switch p := outs[0]; {
	case p.Kind == ir.ArgBool:
		pred = m.add(evBool(p.Bool()))
	case p.Kind == ir.ArgValue && condPredicate(p.Value):
		idx, err := m.operand(p.Value)
		if err != nil {
			return n.Errorf("while_loop predicate: %v", err)
		}
		pred = idx
	default:
		return n.Errorf("while_loop cond_fn %s returns %s, not a bool, SymBool or one-element bool tensor", condFn.Name, p)
	}
	exit := m.jumpFalse(pred)
	for _, rn := range bodyFn.Nodes() {
		if err := m.emitNode(rn); err != nil {
			return err
		}
	}
	outs = bodyFn.Outputs()
	if len(outs) != len(slots) {
		return n.Errorf("while_loop body_fn %s returns %d values for %d carried values", bodyFn.Name, len(outs), len(slots))
	}
	from := make([]int32, len(outs))
	for i, a := range outs {
		idx, err := m.argIndex(a)
		if err != nil {
			return n.Errorf("while_loop body_fn %s output %d: %v", bodyFn.Name, i, err)
		}
		from[i] = idx
	}
	if err := m.carryBack(n, "while_loop body_fn "+bodyFn.Name, n.Results, from, slots); err != nil {
		return err
	}
	back := m.jumpFalse(m.add(evBool(false)))
	back.DestinationInstruction = head
	exit.DestinationInstruction = int32(len(m.chain.Instructions))
	return nil
}

// argIndex is the value index of a value argument or of a fresh literal.
func (m *method) argIndex(a ir.Arg) (int32, error) {
	if a.Kind == ir.ArgValue {
		return m.operand(a.Value)
	}
	return m.literal(a)
}

// carryBack copies the body's carried outputs from[i] into the carried
// slots slots[i] of results, in order, skipping an output that is its own
// slot (the body returns its carried input unchanged). A permuted carry,
// output i reading slot j < i that carry j overwrites first, would see the
// new value: a non-tensor slot j is saved into a fresh value by a MoveCall
// before any carry runs, and carry i reads that; a tensor slot has no
// storage to save into, so the lowering pass loop-carry-copies copies such
// an output in the body (an error names the node when it has not run).
func (m *method) carryBack(n *ir.Node, region string, results []*ir.Value, from, slots []int32) error {
	from = append([]int32(nil), from...)
	saved := map[int]int32{}
	for i := range from {
		for j := 0; j < i; j++ {
			if from[i] != slots[j] || from[j] == slots[j] {
				continue
			}
			if results[j].Tensor() != nil {
				return n.Errorf("%s returns carried input %d as carried value %d while carried value %d changes; run the lowering pass loop-carry-copies, which copies it in the body", region, j, i, j)
			}
			tmp, ok := saved[j]
			if !ok {
				tmp = m.add(evNull())
				m.move(slots[j], tmp)
				saved[j] = tmp
			}
			from[i] = tmp
		}
	}
	for i := range from {
		if from[i] == slots[i] {
			continue
		}
		if err := m.carry(results[i], from[i], slots[i]); err != nil {
			return n.Errorf("%s output %d: %v", region, i, err)
		}
	}
	return nil
}

// carry writes value from into the carried slot to of result r: a copy
// kernel for a tensor, a MoveCall for anything else.
func (m *method) carry(r *ir.Value, from, to int32) error {
	if r.Tensor() == nil {
		m.move(from, to)
		return nil
	}
	op, err := m.operatorIndex(opCloneOut.Info())
	if err != nil {
		return err
	}
	// clone.out(self, *, memory_format=None, out) -> out: args, then the return.
	format := m.add(evNull())
	m.chain.Instructions = append(m.chain.Instructions, &etfb.InstructionT{InstrArgs: &etfb.InstructionArgumentsT{
		Type:  etfb.InstructionArgumentsKernelCall,
		Value: &etfb.KernelCallT{OpIndex: op, Args: []int32{from, format, to, to}},
	}})
	return nil
}

// move appends a MoveCall from value from into value to.
func (m *method) move(from, to int32) {
	m.chain.Instructions = append(m.chain.Instructions, &etfb.InstructionT{InstrArgs: &etfb.InstructionArgumentsT{
		Type: etfb.InstructionArgumentsMoveCall, Value: &etfb.MoveCallT{MoveFrom: from, MoveTo: to},
	}})
}
