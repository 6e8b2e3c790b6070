package onnxfix

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
	"github.com/fxport/fxport/passes/edit"
	"github.com/fxport/fxport/pm"
)

// FixSymbolicFactoryShape reads floor-div factory sizes off an existing tensor (ONNX-FX15).
var FixSymbolicFactoryShape = pm.RegisterNodeFix(&pm.NodeFix{
	ID:      "ONNX-FX15",
	Name:    fixSymbolicFactoryShapeName,
	Backend: pm.BackendONNX,
	Targets: []ir.Op{
		ir.OpAtenFull, ir.OpAtenZeros, ir.OpAtenOnes, ir.OpAtenEmptyMemoryFormat,
		ir.OpAtenRand, ir.OpAtenRandn,
		ir.OpAtenNewFull, ir.OpAtenNewZeros, ir.OpAtenNewOnes, ir.OpAtenNewEmpty,
	},
	Doc: `take a factory's floor-divided size from a tensor that already has it

ONNX Runtime's CUDA provider mis-evaluates signed floor division, so a
factory size computed as a SymInt floor-division (s0 // 2) can be wrong at
run time. When a size element is a SymInt computed by arithmetic (not
already a sym_size) whose expression contains a floor-division, and a
tensor defined earlier in the same graph (inputs first, then node results
in order) has a dim with the same canonical expression, the element is
replaced by sym_size.int of that dim. Elements without such a tensor are
left. The node is changed in place.`,
	Fix: fixSymbolicFactoryShape,
})

const fixSymbolicFactoryShapeName = "fix-symbolic-factory-shape"

func fixSymbolicFactoryShape(n *ir.Node, c *pm.Ctx) (bool, error) {
	i := n.Op.ArgIndex("size")
	if i < 0 || n.Args[i].Kind != ir.ArgList {
		return false, nil
	}
	elems := append([]ir.Arg(nil), n.Args[i].List...)
	changed := false
	b := edit.FixBuilder(n, fixSymbolicFactoryShapeName)
	for j, e := range elems {
		if e.Kind != ir.ArgValue || e.Value.Def == nil || e.Value.Def.Op == edit.OpSymSizeInt {
			continue
		}
		st, ok := e.Value.Type.(*ir.SymIntType)
		if !ok || !st.Expr.IsValid() || !fxHasFloorDiv(st.Expr) {
			continue
		}
		t, d := fxEarlierTensorWithDim(n, st.Expr)
		if t == nil {
			continue
		}
		v, err := b.Value(edit.OpSymSizeInt, ir.ValueArg(t), ir.IntArg(int64(d)))
		if err != nil {
			return false, err
		}
		c.Fired(n, fmt.Sprintf("size[%d] = %s read as sym_size(%s, %d)", j, st.Expr, t, d))
		elems[j] = ir.ValueArg(v)
		changed = true
	}
	if !changed {
		return false, nil
	}
	n.SetArg(i, ir.ListArg(elems...))
	n.AddProvenance(fixSymbolicFactoryShapeName)
	c.MarkChanged()
	return true, nil
}

// fxHasFloorDiv reports whether e contains a floor division.
func fxHasFloorDiv(e sym.Expr) bool {
	if e.Op() == sym.OpFloorDiv {
		return true
	}
	for _, a := range e.Args() {
		if fxHasFloorDiv(a) {
			return true
		}
	}
	return false
}

// fxEarlierTensorWithDim finds the first tensor defined before n in its
// graph (inputs, then node results in order) with a dim equal to e.
func fxEarlierTensorWithDim(n *ir.Node, e sym.Expr) (*ir.Value, int) {
	find := func(v *ir.Value) int {
		t := v.Tensor()
		if t == nil {
			return -1
		}
		for d, s := range t.Shape {
			if s.Equal(e) {
				return d
			}
		}
		return -1
	}
	for _, in := range n.Graph.Inputs {
		if d := find(in); d >= 0 {
			return in, d
		}
	}
	for m := n.Graph.First(); m != nil && m != n; m = m.Next() {
		for _, r := range m.Results {
			if d := find(r); d >= 0 {
				return r, d
			}
		}
	}
	return nil, -1
}
