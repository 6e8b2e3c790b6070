package interp

import (
	"fmt"
	"strings"

	"github.com/fxport/fxport/ir"
)

// Tensor is a strided view of a storage: torch's tensor model. Views share
// the storage of the tensor they were made from.
type Tensor struct {
	DType   ir.DType
	Shape   []int64
	Strides []int64 // in elements
	Offset  int64   // in elements
	st      *storage
}

// storage holds the elements of one or more tensors. Exactly one slice is
// used, chosen by the dtype's domain.
type storage struct {
	f []float64
	i []int64
	c []complex128
}

// MaxElements bounds the size of one tensor (2^28 elements, 2 GiB of
// float64 storage): a program asking for more fails with an error instead of
// exhausting memory.
var MaxElements int64 = 1 << 28

// errTooLarge is the panic value of an oversized allocation; runKernel
// turns it into the node's error.
type errTooLarge struct{ n int64 }

func (e errTooLarge) Error() string {
	return fmt.Sprintf("a tensor of %d elements exceeds the interpreter's limit of %d", e.n, MaxElements)
}

func newStorage(dt ir.DType, n int64) *storage {
	if n > MaxElements || n < 0 {
		panic(errTooLarge{n})
	}
	switch domainOf(dt) {
	case domFloat:
		return &storage{f: make([]float64, n)}
	case domComplex:
		return &storage{c: make([]complex128, n)}
	}
	return &storage{i: make([]int64, n)}
}

// contiguousStrides returns the row-major strides of shape.
func contiguousStrides(shape []int64) []int64 {
	st := make([]int64, len(shape))
	acc := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = acc
		if shape[i] > 1 {
			acc *= shape[i]
		}
	}
	return st
}

// numel is the product of the dims.
func numel(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

// NewTensor returns a zero-filled contiguous tensor. dt must be supported.
func NewTensor(dt ir.DType, shape ...int64) *Tensor {
	shape = append([]int64{}, shape...)
	return &Tensor{DType: dt, Shape: shape, Strides: contiguousStrides(shape), st: newStorage(dt, numel(shape))}
}

// FromFloat64 builds a contiguous tensor of a float, int or bool dtype from
// row-major values (converted and rounded to dt).
func FromFloat64(dt ir.DType, shape []int64, data []float64) *Tensor {
	t := NewTensor(dt, shape...)
	switch domainOf(dt) {
	case domFloat:
		for i, x := range data {
			t.st.f[i] = roundFloat(dt, x)
		}
	case domInt:
		for i, x := range data {
			t.st.i[i] = floatToInt(dt, x)
		}
	case domComplex:
		for i, x := range data {
			t.st.c[i] = complex(x, 0)
		}
	}
	return t
}

// FromInt64 builds a contiguous tensor from row-major int values.
func FromInt64(dt ir.DType, shape []int64, data []int64) *Tensor {
	t := NewTensor(dt, shape...)
	switch domainOf(dt) {
	case domFloat:
		for i, x := range data {
			t.st.f[i] = roundFloat(dt, float64(x))
		}
	case domInt:
		for i, x := range data {
			t.st.i[i] = wrapInt(dt, x)
		}
	case domComplex:
		for i, x := range data {
			t.st.c[i] = complex(float64(x), 0)
		}
	}
	return t
}

// FromComplex128 builds a contiguous complex tensor.
func FromComplex128(dt ir.DType, shape []int64, data []complex128) *Tensor {
	t := NewTensor(dt, shape...)
	for i, x := range data {
		t.st.c[i] = roundComplex(dt, x)
	}
	return t
}

func roundComplex(dt ir.DType, x complex128) complex128 {
	if dt == ir.Complex64 {
		return complex(float64(float32(real(x))), float64(float32(imag(x))))
	}
	return x
}

// Scalar0 builds a 0-dim tensor holding x converted to dt.
func Scalar0(dt ir.DType, x float64) *Tensor { return FromFloat64(dt, nil, []float64{x}) }

// ScalarInt0 builds a 0-dim tensor holding the int x converted to dt.
func ScalarInt0(dt ir.DType, x int64) *Tensor { return FromInt64(dt, nil, []int64{x}) }

// Rank is the number of dims.
func (t *Tensor) Rank() int { return len(t.Shape) }

// Numel is the number of elements.
func (t *Tensor) Numel() int64 { return numel(t.Shape) }

// IsContiguous reports a row-major layout (dims of size 1 may have any stride).
func (t *Tensor) IsContiguous() bool {
	acc := int64(1)
	for i := len(t.Shape) - 1; i >= 0; i-- {
		if t.Shape[i] == 1 {
			continue
		}
		if t.Strides[i] != acc {
			return false
		}
		acc *= t.Shape[i]
	}
	return true
}

// view makes a tensor sharing t's storage.
func (t *Tensor) view(shape, strides []int64, offset int64) *Tensor {
	return &Tensor{DType: t.DType, Shape: shape, Strides: strides, Offset: offset, st: t.st}
}

// Alias returns a new tensor object viewing the same elements.
func (t *Tensor) Alias() *Tensor {
	return t.view(append([]int64{}, t.Shape...), append([]int64{}, t.Strides...), t.Offset)
}

// forEachOffset calls f with the storage offset of every element, in
// row-major order of the logical index.
func (t *Tensor) forEachOffset(f func(off int64)) {
	forEach1(t.Shape, t.Strides, t.Offset, f)
}

func forEach1(shape, strides []int64, base int64, f func(off int64)) {
	n := numel(shape)
	if n == 0 {
		return
	}
	r := len(shape)
	if r == 0 {
		f(base)
		return
	}
	idx := make([]int64, r)
	inner, istr := shape[r-1], strides[r-1]
	off := base
	for {
		o := off
		for k := int64(0); k < inner; k++ {
			f(o)
			o += istr
		}
		// Advance the odometer over the outer dims.
		d := r - 2
		for ; d >= 0; d-- {
			idx[d]++
			off += strides[d]
			if idx[d] < shape[d] {
				break
			}
			off -= strides[d] * shape[d]
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

// forEach2 walks two tensors of the same shape in lockstep.
func forEach2(shape, sa, sb []int64, oa, ob int64, f func(a, b int64)) {
	if numel(shape) == 0 {
		return
	}
	r := len(shape)
	if r == 0 {
		f(oa, ob)
		return
	}
	idx := make([]int64, r)
	inner, ia, ib := shape[r-1], sa[r-1], sb[r-1]
	for {
		a, b := oa, ob
		for k := int64(0); k < inner; k++ {
			f(a, b)
			a += ia
			b += ib
		}
		d := r - 2
		for ; d >= 0; d-- {
			idx[d]++
			oa += sa[d]
			ob += sb[d]
			if idx[d] < shape[d] {
				break
			}
			oa -= sa[d] * shape[d]
			ob -= sb[d] * shape[d]
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

// forEach3 walks three tensors of the same shape in lockstep.
func forEach3(shape, sa, sb, sc []int64, oa, ob, oc int64, f func(a, b, c int64)) {
	if numel(shape) == 0 {
		return
	}
	r := len(shape)
	if r == 0 {
		f(oa, ob, oc)
		return
	}
	idx := make([]int64, r)
	for {
		f(oa, ob, oc)
		d := r - 1
		for ; d >= 0; d-- {
			idx[d]++
			oa += sa[d]
			ob += sb[d]
			oc += sc[d]
			if idx[d] < shape[d] {
				break
			}
			oa -= sa[d] * shape[d]
			ob -= sb[d] * shape[d]
			oc -= sc[d] * shape[d]
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

// Contiguous returns t itself when it is contiguous with no gaps, otherwise
// a contiguous copy.
func (t *Tensor) Contiguous() *Tensor {
	if t.IsContiguous() {
		return t
	}
	return t.Clone()
}

// Clone returns a contiguous copy with its own storage.
func (t *Tensor) Clone() *Tensor {
	out := NewTensor(t.DType, t.Shape...)
	copyInto(out, t)
	return out
}

// copyInto writes src (same shape, converted to dst's dtype) into dst.
func copyInto(dst, src *Tensor) {
	dd, sd := domainOf(dst.DType), domainOf(src.DType)
	ds, ss := dst.st, src.st
	switch {
	case dd == domFloat && sd == domFloat:
		if dst.DType == src.DType || roundsExactly(src.DType, dst.DType) {
			forEach2(dst.Shape, dst.Strides, src.Strides, dst.Offset, src.Offset, func(a, b int64) { ds.f[a] = ss.f[b] })
		} else {
			dt := dst.DType
			forEach2(dst.Shape, dst.Strides, src.Strides, dst.Offset, src.Offset, func(a, b int64) { ds.f[a] = roundFloat(dt, ss.f[b]) })
		}
	case dd == domFloat && sd == domInt:
		dt, st := dst.DType, src.DType
		forEach2(dst.Shape, dst.Strides, src.Strides, dst.Offset, src.Offset, func(a, b int64) { ds.f[a] = roundFloat(dt, intToFloat(st, ss.i[b])) })
	case dd == domInt && sd == domInt:
		dt := dst.DType
		forEach2(dst.Shape, dst.Strides, src.Strides, dst.Offset, src.Offset, func(a, b int64) { ds.i[a] = wrapInt(dt, ss.i[b]) })
	case dd == domInt && sd == domFloat:
		dt := dst.DType
		forEach2(dst.Shape, dst.Strides, src.Strides, dst.Offset, src.Offset, func(a, b int64) { ds.i[a] = floatToInt(dt, ss.f[b]) })
	case dd == domComplex && sd == domComplex:
		dt := dst.DType
		forEach2(dst.Shape, dst.Strides, src.Strides, dst.Offset, src.Offset, func(a, b int64) { ds.c[a] = roundComplex(dt, ss.c[b]) })
	case dd == domComplex && sd == domFloat:
		dt := dst.DType
		forEach2(dst.Shape, dst.Strides, src.Strides, dst.Offset, src.Offset, func(a, b int64) { ds.c[a] = roundComplex(dt, complex(ss.f[b], 0)) })
	case dd == domComplex && sd == domInt:
		dt, st := dst.DType, src.DType
		forEach2(dst.Shape, dst.Strides, src.Strides, dst.Offset, src.Offset, func(a, b int64) {
			ds.c[a] = roundComplex(dt, complex(intToFloat(st, ss.i[b]), 0))
		})
	case dd == domFloat && sd == domComplex: // torch keeps the real part
		dt := dst.DType
		forEach2(dst.Shape, dst.Strides, src.Strides, dst.Offset, src.Offset, func(a, b int64) { ds.f[a] = roundFloat(dt, real(ss.c[b])) })
	case dd == domInt && sd == domComplex:
		dt := dst.DType
		forEach2(dst.Shape, dst.Strides, src.Strides, dst.Offset, src.Offset, func(a, b int64) { ds.i[a] = floatToInt(dt, real(ss.c[b])) })
	}
}

// roundsExactly reports that every value of src is a value of dst.
func roundsExactly(src, dst ir.DType) bool {
	switch dst {
	case ir.Float64:
		return true
	case ir.Float32:
		return src != ir.Float64
	}
	return false
}

// To returns t converted to dt (t itself when it already has that dtype).
func (t *Tensor) To(dt ir.DType) *Tensor {
	if t.DType == dt {
		return t
	}
	out := NewTensor(dt, t.Shape...)
	copyInto(out, t)
	return out
}

// Float64s returns the elements in row-major order as float64 (ints and
// bools converted, complex values' real parts).
func (t *Tensor) Float64s() []float64 {
	c := t.To(ir.Float64).Contiguous()
	return append([]float64(nil), c.st.f[c.Offset:c.Offset+c.Numel()]...)
}

// floats returns the row-major float64 values of a float tensor without
// copying when possible; callers must not modify the result.
func (t *Tensor) floats() []float64 {
	if domainOf(t.DType) != domFloat {
		return t.Float64s()
	}
	if t.IsContiguous() {
		return t.st.f[t.Offset : t.Offset+t.Numel()]
	}
	c := t.Clone()
	return c.st.f
}

// ints returns the row-major values of an int or bool tensor without copying
// when possible; callers must not modify the result. Float values are
// truncated.
func (t *Tensor) ints() []int64 {
	if domainOf(t.DType) != domInt {
		return t.To(ir.Int64).ints()
	}
	if t.IsContiguous() {
		return t.st.i[t.Offset : t.Offset+t.Numel()]
	}
	return t.Clone().st.i
}

// complexes returns the row-major values as complex128.
func (t *Tensor) complexes() []complex128 {
	c := t.To(ir.Complex128)
	if c.IsContiguous() {
		return c.st.c[c.Offset : c.Offset+c.Numel()]
	}
	return c.Clone().st.c
}

// Int64s returns the elements in row-major order as int64 (floats truncated).
func (t *Tensor) Int64s() []int64 { return append([]int64(nil), t.ints()...) }

// Item returns the single element of a one-element tensor as float64.
func (t *Tensor) itemFloat() float64 {
	switch domainOf(t.DType) {
	case domFloat:
		return t.st.f[t.Offset]
	case domComplex:
		return real(t.st.c[t.Offset])
	}
	return intToFloat(t.DType, t.st.i[t.Offset])
}

func (t *Tensor) itemInt() int64 {
	switch domainOf(t.DType) {
	case domFloat:
		return floatToInt(ir.Int64, t.st.f[t.Offset])
	case domComplex:
		return floatToInt(ir.Int64, real(t.st.c[t.Offset]))
	}
	return t.st.i[t.Offset]
}

// Item returns the value of a one-element tensor as a Value of its kind:
// float64 for float dtypes, bool for bool, int64 for integers.
func (t *Tensor) Item() (Value, error) {
	if t.Numel() != 1 {
		return nil, fmt.Errorf("a tensor with %d elements cannot be converted to a scalar", t.Numel())
	}
	// The element of a one-element tensor sits at Offset whatever the strides.
	switch domainOf(t.DType) {
	case domFloat:
		return t.st.f[t.Offset], nil
	case domComplex:
		return t.st.c[t.Offset], nil
	}
	if t.DType == ir.Bool {
		return t.st.i[t.Offset] != 0, nil
	}
	return t.st.i[t.Offset], nil
}

// String prints a short description: dtype, shape and up to 8 values.
func (t *Tensor) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s%v", t.DType.Abbr(), t.Shape)
	n := t.Numel()
	if n == 0 {
		return b.String()
	}
	b.WriteString(" [")
	var vals []string
	switch domainOf(t.DType) {
	case domFloat:
		for i, x := range t.floats() {
			if i == 8 {
				break
			}
			vals = append(vals, fmt.Sprintf("%g", x))
		}
	case domComplex:
		for i, x := range t.complexes() {
			if i == 8 {
				break
			}
			vals = append(vals, fmt.Sprintf("%g", x))
		}
	default:
		for i, x := range t.ints() {
			if i == 8 {
				break
			}
			vals = append(vals, fmt.Sprint(x))
		}
	}
	b.WriteString(strings.Join(vals, " "))
	if n > 8 {
		b.WriteString(" …")
	}
	b.WriteString("]")
	return b.String()
}

// storageLen is the number of elements in t's storage.
func (t *Tensor) storageLen() int64 {
	switch {
	case t.st.f != nil:
		return int64(len(t.st.f))
	case t.st.c != nil:
		return int64(len(t.st.c))
	}
	return int64(len(t.st.i))
}

// checkBounds verifies that every element of a view lies inside its storage.
func checkBounds(shape, strides []int64, offset, size int64) error {
	if numel(shape) == 0 {
		return nil
	}
	lo, hi := offset, offset
	for i, d := range shape {
		if strides[i] >= 0 {
			hi += (d - 1) * strides[i]
		} else {
			lo += (d - 1) * strides[i]
		}
	}
	if lo < 0 || hi >= size {
		return fmt.Errorf("view of shape %v, strides %v, offset %d needs elements [%d, %d] of a storage of %d", shape, strides, offset, lo, hi, size)
	}
	return nil
}

// Complex128s returns the elements in row-major order as complex128.
func (t *Tensor) Complex128s() []complex128 { return append([]complex128(nil), t.complexes()...) }
