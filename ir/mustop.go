package ir

import "fmt"

// MustLookupOp is LookupOp for names known at compile time; it panics when
// the op is not in the table.
func MustLookupOp(name string) Op {
	op, ok := LookupOp(name)
	if !ok {
		panic(fmt.Sprintf("ir: unknown op %q", name))
	}
	return op
}
