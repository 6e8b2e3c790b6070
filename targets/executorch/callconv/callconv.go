// Package callconv is ExecuTorch's kernel calling convention, derived from
// an op's schema: what a KernelCall's argument list holds and how many
// entries the runtime's kernel wrapper takes. The emitter writes calls by
// it and fxport's runner checks them by it, so both agree with the genuine
// runtime (pte-format.md §4.2, docs/targets/executorch.md "Calling
// convention").
//
// A KernelCall's args are the schema's arguments in order (out arguments
// included, where the schema puts them), then at most one return slot:
//
//   - an out variant (an op with keyword-only mutable arguments) always has
//     one: the out tensor itself when it has exactly one out argument and
//     that argument is a Tensor, otherwise one TensorList value holding every
//     out tensor in order (several outs, as native_layer_norm.out's
//     out0..out2; or a Tensor[] out, as split_copy.Tensor_out, which returns
//     nothing but still gets the slot);
//   - any other op has one when its schema returns anything: the returned
//     value when it returns one non-list value, a TensorList when it returns
//     several values or a list; none when it returns nothing (et_copy_index).
//
// This is exir's _emit_operator; the generated kernel wrappers of the
// runtime check the count (`Expected 11 args received 13` is a mismatch).
package callconv

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fxport/fxport/ir"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
)

// Slot is the kind of a KernelCall's return slot.
type Slot uint8

// Return slot kinds.
const (
	// NoSlot: the call ends with the schema's last argument.
	NoSlot Slot = iota
	// ValueSlot: one value after the arguments (the out tensor of an out
	// variant with one Tensor out, the self of an in-place op, or the
	// single result).
	ValueSlot
	// ListSlot: one TensorList value after the arguments, holding the out
	// tensors (out variants) or the results (other ops) in order.
	ListSlot
)

func (s Slot) String() string {
	switch s {
	case NoSlot:
		return "no return slot"
	case ValueSlot:
		return "one return value"
	case ListSlot:
		return "one TensorList return value"
	}
	return "Slot(?)"
}

// IsOut reports whether schema s is an out variant in exir's sense: it has
// keyword-only arguments that it writes.
func IsOut(s *ir.Schema) bool {
	return len(OutArgs(s)) > 0
}

// OutArgs are the indices of s's out arguments: keyword-only and mutable.
func OutArgs(s *ir.Schema) []int {
	var outs []int
	for i, a := range s.Args {
		if a.KwargOnly && a.Mutates() {
			outs = append(outs, i)
		}
	}
	return outs
}

// ReturnSlot is the return slot a KernelCall of schema s carries.
func ReturnSlot(s *ir.Schema) Slot {
	if outs := OutArgs(s); len(outs) > 0 {
		if len(outs) == 1 && !s.Args[outs[0]].Type.List {
			return ValueSlot
		}
		return ListSlot
	}
	switch {
	case len(s.Returns) == 0:
		return NoSlot
	case len(s.Returns) == 1 && !s.Returns[0].Type.List:
		return ValueSlot
	}
	return ListSlot
}

// Arity is the number of entries a KernelCall of schema s has: the
// arguments plus the return slot, if any.
func Arity(s *ir.Schema) int {
	n := len(s.Args)
	if ReturnSlot(s) != NoSlot {
		n++
	}
	return n
}

// Check reports the first kernel call of plan that breaks the convention
// for an operator op resolves to a schema (operators it cannot resolve are
// skipped): a wrong argument count, or a return slot that is not the out
// tensor (one Tensor out) or a TensorList of exactly the out tensors.
func Check(plan *etfb.ExecutionPlanT, op func(*etfb.OperatorT) (*ir.Schema, bool)) error {
	for ci, ch := range plan.Chains {
		for ii, in := range ch.Instructions {
			if in == nil || in.InstrArgs == nil {
				continue
			}
			k, ok := in.InstrArgs.Value.(*etfb.KernelCallT)
			if !ok || k.OpIndex < 0 || int(k.OpIndex) >= len(plan.Operators) {
				continue
			}
			o := plan.Operators[k.OpIndex]
			s, ok := op(o)
			if !ok {
				continue
			}
			where := fmt.Sprintf("method %s: chain %d: instruction %d: %s.%s", plan.Name, ci, ii, o.Name, o.Overload)
			if want := Arity(s); len(k.Args) != want {
				return fmt.Errorf("%s: %d arguments, want %d (%d schema arguments and %s)", where, len(k.Args), want, len(s.Args), ReturnSlot(s))
			}
			if !IsOut(s) {
				continue
			}
			var outs []int32
			for _, i := range OutArgs(s) {
				a := k.Args[i]
				if s.Args[i].Type.List {
					l, ok := listItems(plan, a)
					if !ok {
						return fmt.Errorf("%s: out argument %q (value %d) is not a TensorList", where, s.Args[i].Name, a)
					}
					outs = append(outs, l...)
				} else {
					outs = append(outs, a)
				}
			}
			slot := k.Args[len(s.Args)]
			if ReturnSlot(s) == ValueSlot {
				if slot != outs[0] {
					return fmt.Errorf("%s: return slot is value %d, want the out tensor %d", where, slot, outs[0])
				}
				continue
			}
			l, ok := listItems(plan, slot)
			if !ok || !slices.Equal(l, outs) {
				return fmt.Errorf("%s: return slot (value %d) is not a TensorList of the out tensors %v", where, slot, outs)
			}
		}
	}
	return nil
}

// listItems are the items of value vi when it is a TensorList.
func listItems(plan *etfb.ExecutionPlanT, vi int32) ([]int32, bool) {
	if vi < 0 || int(vi) >= len(plan.Values) || plan.Values[vi] == nil || plan.Values[vi].Val == nil {
		return nil, false
	}
	l, ok := plan.Values[vi].Val.Value.(*etfb.TensorListT)
	if !ok {
		return nil, false
	}
	return l.Items, true
}

// Lookup resolves an operator entry through fxport's op table (`ns::name`
// with overload `o` is the op `ns.name.o`, `default` when empty).
func Lookup(o *etfb.OperatorT) (*ir.Schema, bool) {
	if o == nil {
		return nil, false
	}
	ov := o.Overload
	if ov == "" {
		ov = "default"
	}
	op, ok := ir.LookupOp(strings.Replace(o.Name, "::", ".", 1) + "." + ov)
	if !ok {
		return nil, false
	}
	return &op.Info().Schema, true
}
