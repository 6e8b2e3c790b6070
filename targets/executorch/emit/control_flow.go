package emit

import (
	"github.com/fxport/fxport/ir"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
)

// Control flow is emitted inline, as exir does (pte-format.md §4.3): for
//
//	%r… = higher_order.cond(%pred, ^true, ^false, [%op…])
//
// the chain gets
//
//	JumpFalseCall(pred → F)
//	<true region's instructions>  MoveCall(true result_i → r_i)…
//	JumpFalseCall(Bool false → E)          (an unconditional jump)
//	F: <false region's instructions>  MoveCall(false result_i → r_i)…
//	E: …
//
// Region inputs are the operands' values (no copies). Values inside the
// regions are planned like main-graph values (targets/executorch/plan: the
// two branches may share bytes, nothing in a branch overlaps a value live
// across the cond, and a branch's returned value usually shares its
// result's storage, which makes its MoveCall a copy onto itself); the
// emitter reads their mem metadata like any node's.

var opCond = ir.OpHigherOrderCond

// emitCond emits a higher_order.cond node inline with jumps and moves.
func (m *method) emitCond(n *ir.Node) error {
	if len(n.Args) != 4 || n.Args[1].Kind != ir.ArgGraph || n.Args[2].Kind != ir.ArgGraph || n.Args[3].Kind != ir.ArgList {
		return n.Errorf("cond: want (pred, true region, false region, [operands])")
	}
	pred := n.Args[0]
	var predIdx int32
	switch {
	case pred.Kind == ir.ArgBool:
		predIdx = m.add(evBool(pred.Bool()))
	case pred.Kind == ir.ArgValue && condPredicate(pred.Value):
		idx, err := m.operand(pred.Value)
		if err != nil {
			return n.Errorf("cond predicate: %v", err)
		}
		predIdx = idx
	default:
		return n.Errorf("cond predicate %s is not a bool, SymBool or one-element bool tensor", pred)
	}
	results := make([]int32, len(n.Results))
	for i, r := range n.Results {
		idx, err := m.emitResult(r)
		if err != nil {
			return n.Errorf("result %d: %v", i, err)
		}
		results[i] = idx
	}
	operands := n.Args[3].List
	jumpToFalse := m.jumpFalse(predIdx)
	if err := m.emitBranch(n, n.Args[1].Graph, operands, results); err != nil {
		return err
	}
	jumpToEnd := m.jumpFalse(m.add(evBool(false)))
	jumpToFalse.DestinationInstruction = int32(len(m.chain.Instructions))
	if err := m.emitBranch(n, n.Args[2].Graph, operands, results); err != nil {
		return err
	}
	jumpToEnd.DestinationInstruction = int32(len(m.chain.Instructions))
	return nil
}

// condPredicate reports whether v can steer a JumpFalseCall: a bool, a
// SymBool or a bool tensor of one element.
func condPredicate(v *ir.Value) bool {
	switch t := v.Type.(type) {
	case *ir.SymBoolType:
		return true
	case *ir.ScalarType:
		return t.Kind == ir.BoolKind
	case *ir.TensorType:
		if t.DType != ir.Bool {
			return false
		}
		for _, d := range t.Shape {
			if c, ok := d.Const(); !ok || c != 1 {
				return false
			}
		}
		return true
	}
	return false
}

// jumpFalse appends a JumpFalseCall on value cond and returns it so that
// its destination can be set once known.
func (m *method) jumpFalse(cond int32) *etfb.JumpFalseCallT {
	j := &etfb.JumpFalseCallT{CondValueIndex: cond}
	m.chain.Instructions = append(m.chain.Instructions, &etfb.InstructionT{InstrArgs: &etfb.InstructionArgumentsT{
		Type: etfb.InstructionArgumentsJumpFalseCall, Value: j,
	}})
	return j
}

// emitBranch emits region g of cond node n: its inputs are the operands'
// values, its nodes' instructions follow, and its results are moved into
// the cond's result values.
func (m *method) emitBranch(n *ir.Node, g *ir.Graph, operands []ir.Arg, results []int32) error {
	if g == nil || len(g.Inputs) != len(operands) {
		return n.Errorf("cond region %v takes %d inputs for %d operands", g, len(g.Inputs), len(operands))
	}
	for i, in := range g.Inputs {
		a := operands[i]
		var idx int32
		var err error
		if a.Kind == ir.ArgValue {
			idx, err = m.operand(a.Value)
		} else {
			idx, err = m.literal(a)
		}
		if err != nil {
			return n.Errorf("cond operand %d: %v", i, err)
		}
		m.index[in] = idx
	}
	for _, rn := range g.Nodes() {
		if err := m.emitNode(rn); err != nil {
			return err
		}
	}
	outs := g.Outputs()
	if len(outs) != len(results) {
		return n.Errorf("cond region %s returns %d values for %d results", g.Name, len(outs), len(results))
	}
	for i, a := range outs {
		var from int32
		var err error
		if a.Kind == ir.ArgValue {
			from, err = m.operand(a.Value)
		} else {
			from, err = m.literal(a)
		}
		if err != nil {
			return n.Errorf("cond region %s output %d: %v", g.Name, i, err)
		}
		m.chain.Instructions = append(m.chain.Instructions, &etfb.InstructionT{InstrArgs: &etfb.InstructionArgumentsT{
			Type: etfb.InstructionArgumentsMoveCall, Value: &etfb.MoveCallT{MoveFrom: from, MoveTo: results[i]},
		}})
	}
	return nil
}
