package interp

import (
	"fmt"

	"github.com/fxport/fxport/ir"
)

// RunOp runs one op outside a program on already evaluated arguments, given
// in the order of op's schema (trailing defaulted arguments may be left
// out). In-place and out= variants write into their tensor arguments as in
// a program run. It returns the op's results (a Tensor[] result is one
// []Value); an op without a kernel, or a kernel error, is an error naming
// the op. Kernels that consult the node's declared result types (none of
// the common ones) see no node, and random ops draw from a generator seeded
// with 0.
func RunOp(op ir.Op, args []Value) ([]Value, error) {
	k, schema, sem := lookup(op)
	if k == nil {
		return nil, fmt.Errorf("op %s is not supported by the interpreter", op)
	}
	m := newMachine(nil, Options{})
	outs, err := runKernel(k, &call{m: m, op: sem, schema: schema, args: args})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return outs, nil
}
