package ir

import "fmt"

// OpTable maps ops to values of one kind: the interpreter's kernels, the
// ONNX target's lowerings, the XNNPACK delegate's support rules. Tables are
// filled from init functions; adding an op twice or an invalid Op panics,
// naming the table and the op, so a wrong table fails every test of the
// package that holds it.
type OpTable[V any] struct {
	name string
	vals []V
	has  []bool
	n    int
}

// NewOpTable returns an empty table; name appears in its panics.
func NewOpTable[V any](name string) *OpTable[V] { return &OpTable[V]{name: name} }

// Add maps each of ops to v.
func (t *OpTable[V]) Add(v V, ops ...Op) {
	for _, op := range ops {
		if _, dup := t.Lookup(op); dup {
			panic(fmt.Sprintf("%s: %s added twice", t.name, op))
		}
		t.Put(op, v)
	}
}

// Put maps op to v, replacing an earlier value.
func (t *OpTable[V]) Put(op Op, v V) {
	if op <= OpInvalid || int(op) >= len(opTab) {
		panic(fmt.Sprintf("%s: invalid op %d", t.name, int32(op)))
	}
	if int(op) >= len(t.vals) {
		vals := make([]V, len(opTab))
		has := make([]bool, len(opTab))
		copy(vals, t.vals)
		copy(has, t.has)
		t.vals, t.has = vals, has
	}
	if !t.has[op] {
		t.n++
	}
	t.vals[op], t.has[op] = v, true
}

// Lookup returns the value of op.
func (t *OpTable[V]) Lookup(op Op) (V, bool) {
	if op <= OpInvalid || int(op) >= len(t.vals) || !t.has[op] {
		var zero V
		return zero, false
	}
	return t.vals[op], true
}

// Has reports whether op has a value.
func (t *OpTable[V]) Has(op Op) bool {
	_, ok := t.Lookup(op)
	return ok
}

// Len is the number of ops with a value.
func (t *OpTable[V]) Len() int { return t.n }

// Ops lists the ops with a value, in op order.
func (t *OpTable[V]) Ops() []Op {
	out := make([]Op, 0, t.n)
	for i, ok := range t.has {
		if ok {
			out = append(out, Op(i))
		}
	}
	return out
}
