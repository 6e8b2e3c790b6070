package cuda

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

// Symbolic sizes and the partition. sym_size has a SymInt result, so it
// stays on the host; a claimed node reading it would make the SymInt a
// delegate operand, which the CUDA runtime cannot take (it passes device
// tensors only, pte-format.md §9.2). Two rewrites avoid that:
//
//   - reanchorSymSizes (before partitioning): sym_size.int(%t, d) of an
//     intermediate %t whose size equals a dim of a graph input reads the
//     input instead, so it no longer depends on the partition and the
//     nodes reading it can still be claimed;
//   - anchorSymInputs (while outlining): a SymInt the region would take as
//     input is recomputed inside the region by sym_size.int of a region
//     tensor input that has a dim equal to it.

var opSymSize = ir.MustLookupOp("aten.sym_size.int")

// findDim returns the first tensor of cands (and the dim) whose size at
// that dim equals e.
func findDim(e sym.Expr, cands []*ir.Value) (*ir.Value, int, bool) {
	if !e.IsValid() {
		return nil, 0, false
	}
	for _, v := range cands {
		t := v.Tensor()
		if t == nil {
			continue
		}
		for d, s := range t.Shape {
			if s.Equal(e) {
				return v, d, true
			}
		}
	}
	return nil, 0, false
}

// reanchorSymSizes points each sym_size.int of an intermediate tensor of
// p's main graph at a graph input with an equal dim, when there is one
// (user inputs first). It returns the number of nodes changed.
func reanchorSymSizes(p *ir.Program) int {
	var users, others []*ir.Value
	for i, v := range p.Main.Inputs {
		if i < len(p.Signature.Inputs) && p.Signature.Inputs[i].Kind == ir.UserInput {
			users = append(users, v)
		} else {
			others = append(others, v)
		}
	}
	cands := append(users, others...)
	count := 0
	for _, n := range p.Main.Nodes() {
		if n.Op != opSymSize || len(n.Args) != 2 || len(n.Results) != 1 || n.Args[0].Kind != ir.ArgValue || n.Args[0].Value.IsInput() {
			continue
		}
		st, ok := n.Results[0].Type.(*ir.SymIntType)
		if !ok {
			continue
		}
		in, d, ok := findDim(st.Expr, cands)
		if !ok {
			continue
		}
		n.SetArg(0, ir.ValueArg(in))
		n.SetArg(1, ir.IntArg(int64(d)))
		n.AddProvenance(passName)
		count++
	}
	return count
}

// anchorSymInputs splits the would-be region inputs: SymInts equal to a dim
// of a tensor input are returned in anchored (value → tensor input and
// dim), the rest in kept, in order.
func anchorSymInputs(inputs []*ir.Value) (kept []*ir.Value, anchored []anchor) {
	for _, v := range inputs {
		if st, ok := v.Type.(*ir.SymIntType); ok {
			if t, d, ok := findDim(st.Expr, inputs); ok {
				anchored = append(anchored, anchor{v, t, d})
				continue
			}
		}
		kept = append(kept, v)
	}
	return kept, anchored
}

// anchor is a SymInt recomputed in the region as sym_size.int(tensor, dim).
type anchor struct {
	v      *ir.Value
	tensor *ir.Value
	dim    int
}
