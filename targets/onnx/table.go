package onnx

import (
	"fmt"
	"sort"

	"github.com/fxport/fxport/ir"
)

// Lowering emits the ONNX nodes of one IR node.
type Lowering func(b *Builder, n *ir.Node) error

// version is one lowering of an op, valid from MinOpset on.
type version struct {
	MinOpset int
	Lower    Lowering
}

var (
	table       = ir.NewOpTable[[]version]("ONNX lowerings")
	unsupported = ir.NewOpTable[string]("ONNX unsupported ops")
)

// lower registers a lowering for ops from minOpset on. Two lowerings of one
// op from the same opset are a programming error.
func lower(minOpset int, f Lowering, ops ...ir.Op) {
	for _, op := range ops {
		vs, _ := table.Lookup(op)
		for _, v := range vs {
			if v.MinOpset == minOpset {
				panic(fmt.Sprintf("ONNX lowerings: %s lowered twice from opset %d", op, minOpset))
			}
		}
		vs = append(vs, version{minOpset, f})
		sort.Slice(vs, func(i, j int) bool { return vs[i].MinOpset < vs[j].MinOpset })
		table.Put(op, vs)
	}
}

// Unsupported declares ops the ONNX target deliberately does not lower, with
// the reason (they stay listed in the coverage table).
func Unsupported(why string, ops ...ir.Op) { unsupported.Add(why, ops...) }

// versions lists the lowerings of op by MinOpset.
func versions(op ir.Op) []version {
	vs, _ := table.Lookup(op)
	return vs
}

// resolve returns the lowering of op at opset: the entry with the largest
// MinOpset not above it.
func resolve(op ir.Op, opset int) (Lowering, error) {
	vs := versions(op)
	for i := len(vs) - 1; i >= 0; i-- {
		if vs[i].MinOpset <= opset {
			return vs[i].Lower, nil
		}
	}
	if len(vs) > 0 {
		return nil, fmt.Errorf("%s needs opset ≥ %d (have %d)", op, vs[0].MinOpset, opset)
	}
	if why, ok := unsupported.Lookup(op); ok {
		return nil, fmt.Errorf("%s is not supported by the ONNX target: %s", op, why)
	}
	return nil, fmt.Errorf("%s has no ONNX lowering", op)
}

// Covered reports whether op has a lowering at some opset.
func Covered(op ir.Op) bool { return len(versions(op)) > 0 }

// CoveredOps lists the ops with a lowering, in op order.
func CoveredOps() []ir.Op {
	return table.Ops()
}

// UnsupportedOps maps each deliberately unsupported op to its reason.
func UnsupportedOps() map[ir.Op]string {
	out := make(map[ir.Op]string, unsupported.Len())
	for _, op := range unsupported.Ops() {
		out[op], _ = unsupported.Lookup(op)
	}
	return out
}

// MinOpset is the smallest opset op can be lowered at (0 if none).
func MinOpset(op ir.Op) int {
	if vs := versions(op); len(vs) > 0 {
		return vs[0].MinOpset
	}
	return 0
}

func unsupportedWhy(op ir.Op) string {
	why, _ := unsupported.Lookup(op)
	return why
}
