package fxtext

// Argument fix-ups for what torch prints that the IR spells otherwise:
// operand tuples of vararg higher-order ops, and graph-form strings split at
// ", ". (Wrapped numbers in Tensor slots, aten.add.Tensor(x, 1), are kept:
// the IR accepts them as torch.export writes them.)

import (
	"strings"

	"github.com/fxport/fxport/ir"
)

func isNumberLit(a ir.Arg) bool {
	return a.Kind == ir.ArgInt || a.Kind == ir.ArgFloat || a.Kind == ir.ArgBool
}

// splatOperands spreads the operand tuple newer torch prints for vararg
// higher-order ops (invoke_subgraph(g, 'id', (x, y)) rather than
// invoke_subgraph(g, 'id', x, y)) into the varargs.
func splatOperands(op ir.Op, posE []*expr) []*expr {
	s := &op.Info().Schema
	if !s.VarArgs || !op.Has(ir.PropHigherOrder) || len(posE) != len(s.Args)+1 {
		return posE
	}
	hasGraph := false
	for _, a := range s.Args {
		hasGraph = hasGraph || a.Type.Base == ir.KGraph
	}
	last := posE[len(posE)-1]
	if !hasGraph || (last.kind != eTuple && last.kind != eList) {
		return posE
	}
	return append(append([]*expr(nil), posE[:len(posE)-1]...), last.elems...)
}

// repairWords rejoins a graph-form string that str() printed with ", " inside
// it (an assertion message, say) and that was therefore split: surplus
// words after the schema's last positional argument belong to it when it
// is a string.
func repairWords(s *ir.Schema, posE []*expr) []*expr {
	if s.VarArgs || len(posE) <= len(s.Args) {
		return posE
	}
	last := -1
	for i, a := range s.Args {
		if !a.KwargOnly {
			last = i
		}
	}
	if last < 0 || last >= len(posE) || s.Args[last].Type.Base != ir.KStr || s.Args[last].Type.List {
		return posE
	}
	parts := []string{}
	for _, e := range posE[last:] {
		if e.kind != eWord {
			return posE
		}
		parts = append(parts, e.name)
	}
	joined := *posE[last]
	joined.name = strings.Join(parts, ", ")
	return append(append([]*expr(nil), posE[:last]...), &joined)
}
