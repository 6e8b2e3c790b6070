package interp

import (
	"fmt"

	"github.com/fxport/fxport/ir"
)

// broadcastShapes is torch's broadcasting of shapes (aligned at the last dim).
func broadcastShapes(shapes ...[]int64) ([]int64, error) {
	r := 0
	for _, s := range shapes {
		r = max(r, len(s))
	}
	out := make([]int64, r)
	for i := range out {
		out[i] = 1
	}
	for _, s := range shapes {
		for i, d := range s {
			j := r - len(s) + i
			switch {
			case out[j] == d || d == 1:
			case out[j] == 1:
				out[j] = d
			default:
				return nil, domainErrorf("shapes %v are not broadcastable (dim %d: %d vs %d)", shapes, j, out[j], d)
			}
		}
	}
	return out, nil
}

// expandTo views t with the given shape, broadcasting size-1 dims (stride 0).
func expandTo(t *Tensor, shape []int64) (*Tensor, error) {
	if len(shape) < t.Rank() {
		return nil, fmt.Errorf("cannot expand shape %v to %v", t.Shape, shape)
	}
	lead := len(shape) - t.Rank()
	strides := make([]int64, len(shape))
	for i := range shape {
		if i < lead {
			if shape[i] < 0 {
				return nil, fmt.Errorf("cannot expand shape %v to %v", t.Shape, shape)
			}
			continue
		}
		d := t.Shape[i-lead]
		switch {
		case shape[i] == -1 || shape[i] == d:
			strides[i] = t.Strides[i-lead]
		case d == 1:
			strides[i] = 0
		default:
			return nil, fmt.Errorf("cannot expand shape %v to %v (dim %d: %d vs %d)", t.Shape, shape, i, d, shape[i])
		}
	}
	out := make([]int64, len(shape))
	for i := range shape {
		out[i] = shape[i]
		if shape[i] == -1 {
			out[i] = t.Shape[i-lead]
		}
	}
	return t.view(out, strides, t.Offset), nil
}

// broadcastAll expands tensors to their common shape.
func broadcastAll(ts ...*Tensor) ([]*Tensor, []int64, error) {
	shapes := make([][]int64, len(ts))
	for i, t := range ts {
		shapes[i] = t.Shape
	}
	shape, err := broadcastShapes(shapes...)
	if err != nil {
		return nil, nil, err
	}
	out := make([]*Tensor, len(ts))
	for i, t := range ts {
		if out[i], err = expandTo(t, shape); err != nil {
			return nil, nil, err
		}
	}
	return out, shape, nil
}

// unaryF applies f to every element of x converted to the float dtype dt.
func unaryF(x *Tensor, dt ir.DType, f func(float64) float64) *Tensor {
	in := x.To(dt)
	out := NewTensor(dt, x.Shape...)
	src, dst := in.st.f, out.st.f
	k := 0
	in.forEachOffset(func(off int64) {
		dst[k] = roundFloat(dt, f(src[off]))
		k++
	})
	return out
}

// unaryI applies f to every element of x converted to the integer dtype dt.
func unaryI(x *Tensor, dt ir.DType, f func(int64) int64) *Tensor {
	in := x.To(dt)
	out := NewTensor(dt, x.Shape...)
	src, dst := in.st.i, out.st.i
	k := 0
	in.forEachOffset(func(off int64) {
		dst[k] = wrapInt(dt, f(src[off]))
		k++
	})
	return out
}

// unaryC applies f to every element of x converted to the complex dtype dt.
func unaryC(x *Tensor, dt ir.DType, f func(complex128) complex128) *Tensor {
	in := x.To(dt)
	out := NewTensor(dt, x.Shape...)
	src, dst := in.st.c, out.st.c
	k := 0
	in.forEachOffset(func(off int64) {
		dst[k] = roundComplex(dt, f(src[off]))
		k++
	})
	return out
}

// predicate applies a float test to every element and returns a bool tensor.
func predicate(x *Tensor, f func(float64) bool, fi func(int64) bool) *Tensor {
	out := NewTensor(ir.Bool, x.Shape...)
	dst := out.st.i
	k := 0
	switch domainOf(x.DType) {
	case domFloat:
		src := x.st.f
		x.forEachOffset(func(off int64) {
			if f(src[off]) {
				dst[k] = 1
			}
			k++
		})
	case domComplex:
		src := x.st.c
		x.forEachOffset(func(off int64) {
			if f(real(src[off])) || f(imag(src[off])) {
				dst[k] = 1
			}
			k++
		})
	default:
		src := x.st.i
		x.forEachOffset(func(off int64) {
			if fi(src[off]) {
				dst[k] = 1
			}
			k++
		})
	}
	return out
}

// binaryF broadcasts a and b, converts them to the float dtype dt and applies f.
func binaryF(a, b *Tensor, dt ir.DType, f func(x, y float64) float64) (*Tensor, error) {
	ts, shape, err := broadcastAll(a.To(dt), b.To(dt))
	if err != nil {
		return nil, err
	}
	out := NewTensor(dt, shape...)
	x, y, o := ts[0], ts[1], out.st.f
	xs, ys := x.st.f, y.st.f
	k := 0
	forEach2(shape, x.Strides, y.Strides, x.Offset, y.Offset, func(i, j int64) {
		o[k] = roundFloat(dt, f(xs[i], ys[j]))
		k++
	})
	return out, nil
}

// binaryI broadcasts a and b, converts them to the integer dtype dt and applies f.
func binaryI(a, b *Tensor, dt ir.DType, f func(x, y int64) (int64, error)) (*Tensor, error) {
	ts, shape, err := broadcastAll(a.To(dt), b.To(dt))
	if err != nil {
		return nil, err
	}
	out := NewTensor(dt, shape...)
	x, y, o := ts[0], ts[1], out.st.i
	xs, ys := x.st.i, y.st.i
	k := 0
	var ferr error
	forEach2(shape, x.Strides, y.Strides, x.Offset, y.Offset, func(i, j int64) {
		v, err := f(xs[i], ys[j])
		if err != nil && ferr == nil {
			ferr = err
		}
		o[k] = wrapInt(dt, v)
		k++
	})
	return out, ferr
}

// binaryC broadcasts a and b, converts them to the complex dtype dt and applies f.
func binaryC(a, b *Tensor, dt ir.DType, f func(x, y complex128) complex128) (*Tensor, error) {
	ts, shape, err := broadcastAll(a.To(dt), b.To(dt))
	if err != nil {
		return nil, err
	}
	out := NewTensor(dt, shape...)
	x, y, o := ts[0], ts[1], out.st.c
	xs, ys := x.st.c, y.st.c
	k := 0
	forEach2(shape, x.Strides, y.Strides, x.Offset, y.Offset, func(i, j int64) {
		o[k] = roundComplex(dt, f(xs[i], ys[j]))
		k++
	})
	return out, nil
}

// compareOp broadcasts a and b, converts them to dt and compares them.
func compareOp(a, b *Tensor, dt ir.DType, ff func(x, y float64) bool, fi func(x, y int64) bool) (*Tensor, error) {
	if domainOf(dt) == domComplex {
		dt = ir.Complex128
	}
	ts, shape, err := broadcastAll(a.To(dt), b.To(dt))
	if err != nil {
		return nil, err
	}
	out := NewTensor(ir.Bool, shape...)
	x, y, o := ts[0], ts[1], out.st.i
	k := 0
	set := func(b bool) {
		if b {
			o[k] = 1
		}
		k++
	}
	switch domainOf(dt) {
	case domFloat:
		xs, ys := x.st.f, y.st.f
		forEach2(shape, x.Strides, y.Strides, x.Offset, y.Offset, func(i, j int64) { set(ff(xs[i], ys[j])) })
	case domComplex:
		xs, ys := x.st.c, y.st.c
		forEach2(shape, x.Strides, y.Strides, x.Offset, y.Offset, func(i, j int64) {
			set(ff(real(xs[i]), real(ys[j])) && ff(imag(xs[i]), imag(ys[j])))
		})
	default:
		xs, ys := x.st.i, y.st.i
		forEach2(shape, x.Strides, y.Strides, x.Offset, y.Offset, func(i, j int64) { set(fi(xs[i], ys[j])) })
	}
	return out, nil
}

// ternaryF applies f to three broadcast tensors converted to the float dtype dt.
func ternaryF(a, b, c *Tensor, dt ir.DType, f func(x, y, z float64) float64) (*Tensor, error) {
	ts, shape, err := broadcastAll(a.To(dt), b.To(dt), c.To(dt))
	if err != nil {
		return nil, err
	}
	out := NewTensor(dt, shape...)
	o := out.st.f
	xs, ys, zs := ts[0].st.f, ts[1].st.f, ts[2].st.f
	k := 0
	forEach3(shape, ts[0].Strides, ts[1].Strides, ts[2].Strides, ts[0].Offset, ts[1].Offset, ts[2].Offset, func(i, j, l int64) {
		o[k] = roundFloat(dt, f(xs[i], ys[j], zs[l]))
		k++
	})
	return out, nil
}

// ternaryI applies f to three broadcast tensors converted to the integer dtype dt.
func ternaryI(a, b, c *Tensor, dt ir.DType, f func(x, y, z int64) int64) (*Tensor, error) {
	ts, shape, err := broadcastAll(a.To(dt), b.To(dt), c.To(dt))
	if err != nil {
		return nil, err
	}
	out := NewTensor(dt, shape...)
	o := out.st.i
	xs, ys, zs := ts[0].st.i, ts[1].st.i, ts[2].st.i
	k := 0
	forEach3(shape, ts[0].Strides, ts[1].Strides, ts[2].Strides, ts[0].Offset, ts[1].Offset, ts[2].Offset, func(i, j, l int64) {
		o[k] = wrapInt(dt, f(xs[i], ys[j], zs[l]))
		k++
	})
	return out, nil
}

// selectWhere picks a where cond is true and b elsewhere (cond any dtype, nonzero = true).
func selectWhere(cond, a, b *Tensor, dt ir.DType) (*Tensor, error) {
	cb := cond.To(ir.Bool)
	switch domainOf(dt) {
	case domFloat:
		return ternaryF(cb, a, b, dt, func(c, x, y float64) float64 {
			if c != 0 {
				return x
			}
			return y
		})
	case domInt:
		return ternaryI(cb, a, b, dt, func(c, x, y int64) int64 {
			if c != 0 {
				return x
			}
			return y
		})
	}
	// Complex: select through the real and imaginary parts.
	ts, shape, err := broadcastAll(cb, a.To(dt), b.To(dt))
	if err != nil {
		return nil, err
	}
	out := NewTensor(dt, shape...)
	cs, xs, ys, o := ts[0].st.i, ts[1].st.c, ts[2].st.c, out.st.c
	k := 0
	forEach3(shape, ts[0].Strides, ts[1].Strides, ts[2].Strides, ts[0].Offset, ts[1].Offset, ts[2].Offset, func(i, j, l int64) {
		if cs[i] != 0 {
			o[k] = xs[j]
		} else {
			o[k] = ys[l]
		}
		k++
	})
	return out, nil
}
