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
	table       = map[ir.Op][]version{}
	unsupported = map[ir.Op]string{}
)

// lower registers a lowering for ops (by IR name) from minOpset on. An
// unknown op name is a programming error caught by TestTableOpsExist.
func lower(minOpset int, f Lowering, names ...string) {
	for _, name := range names {
		op, ok := ir.LookupOp(name)
		if !ok {
			badNames = append(badNames, name)
			continue
		}
		vs := append(table[op], version{minOpset, f})
		sort.Slice(vs, func(i, j int) bool { return vs[i].MinOpset < vs[j].MinOpset })
		table[op] = vs
	}
}

// Unsupported declares ops the ONNX target deliberately does not lower, with
// the reason (they stay listed in the coverage table).
func Unsupported(why string, names ...string) {
	for _, name := range names {
		op, ok := ir.LookupOp(name)
		if !ok {
			badNames = append(badNames, name)
			continue
		}
		unsupported[op] = why
	}
}

var badNames []string

// resolve returns the lowering of op at opset: the entry with the largest
// MinOpset not above it.
func resolve(op ir.Op, opset int) (Lowering, error) {
	vs := table[op]
	for i := len(vs) - 1; i >= 0; i-- {
		if vs[i].MinOpset <= opset {
			return vs[i].Lower, nil
		}
	}
	if len(vs) > 0 {
		return nil, fmt.Errorf("%s needs opset ≥ %d (have %d)", op, vs[0].MinOpset, opset)
	}
	if why, ok := unsupported[op]; ok {
		return nil, fmt.Errorf("%s is not supported by the ONNX target: %s", op, why)
	}
	return nil, fmt.Errorf("%s has no ONNX lowering", op)
}

// Covered reports whether op has a lowering at some opset.
func Covered(op ir.Op) bool { return len(table[op]) > 0 }

// CoveredOps lists the ops with a lowering, in op order.
func CoveredOps() []ir.Op {
	var out []ir.Op
	for op := range table {
		out = append(out, op)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// UnsupportedOps maps each deliberately unsupported op to its reason.
func UnsupportedOps() map[ir.Op]string {
	out := make(map[ir.Op]string, len(unsupported))
	for k, v := range unsupported {
		out[k] = v
	}
	return out
}

// MinOpset is the smallest opset op can be lowered at (0 if none).
func MinOpset(op ir.Op) int {
	if vs := table[op]; len(vs) > 0 {
		return vs[0].MinOpset
	}
	return 0
}
