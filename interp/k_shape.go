package interp

import (
	"fmt"

	"github.com/fxport/fxport/ir"
)

// Data movement: cat, stack, padding, repeat, triangles, pixel shuffle,
// one_hot, repeat_interleave, copies and dtype conversions.

func init() {
	register(kCat("tensors"), ir.OpAtenCat)
	register(kCat("tensors"), ir.OpPrimsCat)
	register(kStack, ir.OpAtenStack)
	register(kConstantPad, ir.OpAtenConstantPadNd)
	register(kPad, ir.OpAtenPad)
	register(kModePad("reflect", "padding"), ir.OpAtenReflectionPad1d, ir.OpAtenReflectionPad2d, ir.OpAtenReflectionPad3d)
	register(kModePad("replicate", "padding"), ir.OpAtenReplicationPad1d, ir.OpAtenReplicationPad2d, ir.OpAtenReplicationPad3d)
	register(kRepeat, ir.OpAtenRepeat)
	register(kTri(true), ir.OpAtenTril)
	register(kTri(false), ir.OpAtenTriu)
	register(kPixelShuffle(true), ir.OpAtenPixelShuffle)
	register(kPixelShuffle(false), ir.OpAtenPixelUnshuffle)
	register(kOneHot, ir.OpAtenOneHot)
	register(kRepeatInterleave, ir.OpAtenRepeatInterleaveSelfInt, ir.OpAtenRepeatInterleaveSelfTensor, ir.OpAtenRepeatInterleaveTensor)
	register(kCopy, ir.OpAtenCopy)
	register(kToCopy("dtype", true), ir.OpAten_ToCopy, ir.OpDimOrderOps_ToDimOrderCopy)
	register(kToCopy("dtype", false), ir.OpAtenToDtype, ir.OpAtenToDtypeLayout, ir.OpAtenToDevice)
	register(kConvertElementType, ir.OpPrimsConvertElementType)
	register(kIdentityCopy, ir.OpPrimsDevicePut)
	register(kMaskedScatter, ir.OpAtenMaskedScatter)
	register(kItem, ir.OpAten_LocalScalarDense, ir.OpAtenItem)
}

// catTensors concatenates along dim d into dtype dt, skipping the legacy
// empty 1-D tensors torch ignores.
func catTensors(ts []*Tensor, d int, dt ir.DType) (*Tensor, error) {
	var keep []*Tensor
	for _, t := range ts {
		if t.Rank() == 1 && t.Shape[0] == 0 {
			continue
		}
		keep = append(keep, t)
	}
	if len(keep) == 0 {
		if len(ts) == 0 {
			return nil, fmt.Errorf("cat expects a non-empty list of tensors")
		}
		return NewTensor(dt, 0), nil
	}
	ref := keep[0]
	if ref.Rank() == 0 {
		return nil, fmt.Errorf("zero-dimensional tensor cannot be concatenated")
	}
	shape := append([]int64{}, ref.Shape...)
	shape[d] = 0
	for i, t := range keep {
		if t.Rank() != ref.Rank() {
			return nil, fmt.Errorf("tensors must have the same number of dimensions: got %d and %d", ref.Rank(), t.Rank())
		}
		for j := range t.Shape {
			if j != d && t.Shape[j] != ref.Shape[j] {
				return nil, fmt.Errorf("sizes of tensors must match except in dimension %d: expected %d but got %d for tensor %d in dimension %d", d, ref.Shape[j], t.Shape[j], i, j)
			}
		}
		shape[d] += t.Shape[d]
	}
	out := NewTensor(dt, shape...)
	start := int64(0)
	for _, t := range keep {
		end := start + t.Shape[d]
		dst, err := sliceView(out, int64(d), &start, &end, 1)
		if err != nil {
			return nil, err
		}
		copyInto(dst, t)
		start = end
	}
	return out, nil
}

func promoteTensors(ts []*Tensor) (ir.DType, error) {
	ops := make([]ir.Operand, 0, len(ts))
	for _, t := range ts {
		ops = append(ops, ir.Operand{DType: t.DType})
	}
	return ir.ResultTypeOf(ops...)
}

func kCat(name string) kernel {
	return func(c *call) ([]Value, error) {
		ts, err := c.tensors(name)
		if err != nil {
			return nil, err
		}
		if len(ts) == 0 {
			return nil, fmt.Errorf("cat expects a non-empty list of tensors")
		}
		for i, t := range ts {
			if t == nil {
				return nil, fmt.Errorf("tensors[%d] is None", i)
			}
		}
		dt, err := promoteTensors(ts)
		if err != nil {
			return nil, err
		}
		rank := 0
		for _, t := range ts {
			if !(t.Rank() == 1 && t.Shape[0] == 0) {
				rank = t.Rank()
				break
			}
		}
		dim, err := c.int("dim")
		if err != nil {
			return nil, err
		}
		d, err := normDim(dim, rank)
		if err != nil {
			return nil, err
		}
		return one0(catTensors(ts, d, dt))
	}
}

func kStack(c *call) ([]Value, error) {
	ts, err := c.tensors("tensors")
	if err != nil {
		return nil, err
	}
	if len(ts) == 0 {
		return nil, fmt.Errorf("stack expects a non-empty list of tensors")
	}
	dim, err := c.int("dim")
	if err != nil {
		return nil, err
	}
	d, err := normDim(dim, ts[0].Rank()+1)
	if err != nil {
		return nil, err
	}
	us := make([]*Tensor, len(ts))
	for i, t := range ts {
		if t == nil || !sameShape(t.Shape, ts[0].Shape) {
			return nil, fmt.Errorf("stack expects each tensor to be equal size, but got %v at entry 0 and %v at entry %d", ts[0].Shape, shapeOf(t), i)
		}
		if us[i], err = unsqueezeView(t, int64(d)); err != nil {
			return nil, err
		}
	}
	dt, err := promoteTensors(ts)
	if err != nil {
		return nil, err
	}
	return one0(catTensors(us, d, dt))
}

func shapeOf(t *Tensor) []int64 {
	if t == nil {
		return nil
	}
	return t.Shape
}

// constantPad pads (negative amounts crop) the trailing dims of x with v.
func constantPad(x *Tensor, pad []int64, v *Tensor) (*Tensor, error) {
	if len(pad)%2 != 0 || len(pad)/2 > x.Rank() {
		return nil, fmt.Errorf("padding length %d must be even and at most twice the rank %d", len(pad), x.Rank())
	}
	shape := append([]int64{}, x.Shape...)
	src, dstStart := x, make([]int64, x.Rank())
	for i := 0; i < len(pad)/2; i++ {
		d := x.Rank() - 1 - i
		l, r := pad[2*i], pad[2*i+1]
		shape[d] = x.Shape[d] + l + r
		if shape[d] < 0 {
			return nil, fmt.Errorf("the input size %d, plus negative padding %d and %d resulted in a negative output size", x.Shape[d], l, r)
		}
		s, e := max(0, -l), x.Shape[d]-max(0, -r)
		if e < s {
			e = s
		}
		var err error
		if src, err = sliceView(src, int64(d), &s, &e, 1); err != nil {
			return nil, err
		}
		dstStart[d] = max(0, l)
	}
	out, err := fillLike(shape, x.DType, v)
	if err != nil {
		return nil, err
	}
	dst := out
	for d := range shape {
		s := dstStart[d]
		e := s + src.Shape[d]
		if dst, err = sliceView(dst, int64(d), &s, &e, 1); err != nil {
			return nil, err
		}
	}
	copyInto(dst, src)
	return out, nil
}

func kConstantPad(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	pad, err := c.ints("pad")
	if err != nil {
		return nil, err
	}
	v, err := c.scalar("value")
	if err != nil {
		return nil, err
	}
	return one0(constantPad(x, pad, v.tensor()))
}

// indexPad pads the trailing dims with indices mapped by mode.
func indexPad(x *Tensor, pad []int64, mode string) (*Tensor, error) {
	if len(pad)%2 != 0 || len(pad)/2 > x.Rank() {
		return nil, fmt.Errorf("padding length %d must be even and at most twice the rank %d", len(pad), x.Rank())
	}
	out := x
	for i := 0; i < len(pad)/2; i++ {
		d := x.Rank() - 1 - i
		l, r := pad[2*i], pad[2*i+1]
		n := x.Shape[d]
		size := n + l + r
		if size < 0 {
			return nil, fmt.Errorf("negative output size for dim %d", d)
		}
		if mode == "reflect" && (l >= n || r >= n) {
			return nil, fmt.Errorf("padding size should be less than the corresponding input dimension, but got padding (%d, %d) at dimension %d of input %v", l, r, d, x.Shape)
		}
		if n == 0 && size > 0 {
			return nil, fmt.Errorf("cannot pad an empty dimension with mode %s", mode)
		}
		idx := make([]int64, size)
		for j := range idx {
			k := int64(j) - l
			switch mode {
			case "reflect":
				if k < 0 {
					k = -k
				}
				if k >= n {
					k = 2*(n-1) - k
				}
			case "replicate":
				k = min(max(k, 0), n-1)
			case "circular":
				k = ((k % n) + n) % n
			}
			idx[j] = k
		}
		var err error
		if out, err = indexSelect(out, d, idx); err != nil {
			return nil, err
		}
	}
	if out == x {
		out = x.Clone()
	}
	return out, nil
}

func kPad(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	pad, err := c.ints("pad")
	if err != nil {
		return nil, err
	}
	mode, err := c.str("mode")
	if err != nil {
		return nil, err
	}
	switch mode {
	case "constant":
		v, _, err := c.optFloat("value")
		if err != nil {
			return nil, err
		}
		return one0(constantPad(x, pad, Scalar0(ir.Float64, v)))
	case "reflect", "replicate", "circular":
		return one0(indexPad(x, pad, mode))
	}
	return nil, fmt.Errorf("unknown padding mode %q", mode)
}

func kModePad(mode, name string) kernel {
	return func(c *call) ([]Value, error) {
		x, err := c.tensor("self")
		if err != nil {
			return nil, err
		}
		pad, err := c.ints(name)
		if err != nil {
			return nil, err
		}
		return one0(indexPad(x, pad, mode))
	}
}

func kRepeat(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	reps, err := c.ints("repeats")
	if err != nil {
		return nil, err
	}
	if len(reps) < x.Rank() {
		return nil, fmt.Errorf("number of dimensions of repeat dims (%d) can not be smaller than number of dimensions of tensor (%d)", len(reps), x.Rank())
	}
	lead := len(reps) - x.Rank()
	shape := make([]int64, len(reps))
	for i := range shape {
		shape[i] = 1
		if i >= lead {
			shape[i] = x.Shape[i-lead]
		}
	}
	out, err := viewAs(x, shape, true)
	if err != nil {
		return nil, err
	}
	for d, r := range reps {
		if r < 0 {
			return nil, fmt.Errorf("repeats cannot be negative, got %d", r)
		}
		n := shape[d]
		idx := make([]int64, n*r)
		for j := range idx {
			idx[j] = int64(j) % max(n, 1)
		}
		if out, err = indexSelect(out, d, idx); err != nil {
			return nil, err
		}
	}
	return one(out.Contiguous().Clone()), nil
}

func kTri(lower bool) kernel {
	return func(c *call) ([]Value, error) {
		x, err := c.tensor("self")
		if err != nil {
			return nil, err
		}
		diag, err := c.int("diagonal")
		if err != nil {
			return nil, err
		}
		if x.Rank() < 2 {
			return nil, fmt.Errorf("tril/triu: input tensor must have at least 2 dimensions")
		}
		rows, cols := x.Shape[x.Rank()-2], x.Shape[x.Rank()-1]
		keep := make([]int64, rows*cols)
		for i := int64(0); i < rows; i++ {
			for j := int64(0); j < cols; j++ {
				if (lower && j-i <= diag) || (!lower && j-i >= diag) {
					keep[i*cols+j] = 1
				}
			}
		}
		mask := FromInt64(ir.Bool, []int64{rows, cols}, keep)
		return one0(selectWhere(mask, x, NewTensor(x.DType), x.DType))
	}
}

func kPixelShuffle(up bool) kernel {
	return func(c *call) ([]Value, error) {
		x, err := c.tensor("self")
		if err != nil {
			return nil, err
		}
		name := "upscale_factor"
		if !up {
			name = "downscale_factor"
		}
		r, err := c.int(name)
		if err != nil {
			return nil, err
		}
		if x.Rank() < 3 || r <= 0 {
			return nil, fmt.Errorf("pixel_shuffle expects a rank >= 3 input and a positive factor")
		}
		b := x.Shape[:x.Rank()-3]
		ch, h, w := x.Shape[x.Rank()-3], x.Shape[x.Rank()-2], x.Shape[x.Rank()-1]
		nb := int64(len(b))
		var shape, perm, final []int64
		if up {
			if ch%(r*r) != 0 {
				return nil, fmt.Errorf("pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor")
			}
			oc := ch / (r * r)
			shape = append(append([]int64{}, b...), oc, r, r, h, w)
			final = append(append([]int64{}, b...), oc, h*r, w*r)
			perm = seq(nb)
			perm = append(perm, nb, nb+3, nb+1, nb+4, nb+2)
		} else {
			if h%r != 0 || w%r != 0 {
				return nil, fmt.Errorf("pixel_unshuffle expects height and width to be divisible by downscale_factor")
			}
			shape = append(append([]int64{}, b...), ch, h/r, r, w/r, r)
			final = append(append([]int64{}, b...), ch*r*r, h/r, w/r)
			perm = seq(nb)
			perm = append(perm, nb, nb+2, nb+4, nb+1, nb+3)
		}
		v, err := viewAs(x, shape, true)
		if err != nil {
			return nil, err
		}
		p, err := permuteView(v, perm)
		if err != nil {
			return nil, err
		}
		return one0(viewAs(p.Clone(), final, true))
	}
}

func seq(n int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i)
	}
	return out
}

func kOneHot(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	if x.DType != ir.Int64 {
		return nil, fmt.Errorf("one_hot is only applicable to index tensor of type LongTensor, got %s", x.DType)
	}
	n, err := c.int("num_classes")
	if err != nil {
		return nil, err
	}
	vals := x.ints()
	if n == -1 {
		if len(vals) == 0 {
			return nil, fmt.Errorf("can not infer total number of classes from empty tensor")
		}
		for _, v := range vals {
			n = max(n, v+1)
		}
	}
	out := NewTensor(ir.Int64, append(append([]int64{}, x.Shape...), n)...)
	for i, v := range vals {
		if v < 0 || v >= n {
			return nil, domainErrorf("class values must be non-negative and smaller than num_classes (%d), got %d", n, v)
		}
		out.st.i[int64(i)*n+v] = 1
	}
	return one(out), nil
}

func kRepeatInterleave(c *call) ([]Value, error) {
	if !c.has("self") { // repeat_interleave.Tensor(repeats): indices
		reps, err := c.tensor("repeats")
		if err != nil {
			return nil, err
		}
		var idx []int64
		for i, r := range reps.ints() {
			if r < 0 {
				return nil, domainErrorf("repeats can not be negative")
			}
			for k := int64(0); k < r; k++ {
				idx = append(idx, int64(i))
			}
		}
		return one(FromInt64(reps.DType, []int64{int64(len(idx))}, idx)), nil
	}
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	dim, hasDim, err := c.optInt("dim")
	if err != nil {
		return nil, err
	}
	if !hasDim {
		if x, err = viewAs(x, []int64{x.Numel()}, true); err != nil {
			return nil, err
		}
		dim = 0
	}
	d, err := normDim(dim, x.Rank())
	if err != nil {
		return nil, err
	}
	n := x.Shape[d]
	var reps []int64
	switch r := c.args[c.schema.ArgIndex("repeats")].(type) {
	case *Tensor:
		reps = r.ints()
		if len(reps) == 1 {
			reps = repeatN(reps[0], n)
		}
	default:
		k, err := toInt(r)
		if err != nil {
			return nil, fmt.Errorf("argument \"repeats\": %w", err)
		}
		reps = repeatN(k, n)
	}
	if int64(len(reps)) != n {
		return nil, fmt.Errorf("repeats must have the same size as input along dim, got %d and %d", len(reps), n)
	}
	var idx []int64
	for i, r := range reps {
		if r < 0 {
			return nil, domainErrorf("repeats can not be negative")
		}
		for k := int64(0); k < r; k++ {
			idx = append(idx, int64(i))
		}
	}
	return one0(indexSelect(x, d, idx))
}

func repeatN(v, n int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func kCopy(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	src, err := c.tensor("src")
	if err != nil {
		return nil, err
	}
	b, err := expandTo(src, x.Shape)
	if err != nil {
		return nil, err
	}
	out := NewTensor(x.DType, x.Shape...)
	copyInto(out, b)
	return one(out), nil
}

// kToCopy converts a tensor's dtype. Functional variants always copy; the
// to.* views return their input when nothing changes and copy=False.
func kToCopy(name string, alwaysCopy bool) kernel {
	return func(c *call) ([]Value, error) {
		x, err := c.tensor("self")
		if err != nil {
			return nil, err
		}
		dt := x.DType
		if d, ok, err := c.optDType(name); err != nil {
			return nil, err
		} else if ok {
			dt = d
		}
		if err := checkDType(dt); err != nil {
			return nil, err
		}
		cp := alwaysCopy
		if c.has("copy") {
			b, err := c.bool("copy")
			if err != nil {
				return nil, err
			}
			cp = cp || b
		}
		if !cp && dt == x.DType {
			return one(x.Alias()), nil
		}
		out := NewTensor(dt, x.Shape...)
		copyInto(out, x)
		return one(out), nil
	}
}

func kConvertElementType(c *call) ([]Value, error) {
	x, err := c.tensor("a")
	if err != nil {
		return nil, err
	}
	v, err := c.arg("dtype")
	if err != nil {
		return nil, err
	}
	dt, err := toDType(v)
	if err != nil {
		return nil, err
	}
	if err := checkDType(dt); err != nil {
		return nil, err
	}
	out := NewTensor(dt, x.Shape...)
	copyInto(out, x)
	return one(out), nil
}

func kMaskedScatter(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	mask, err := c.tensor("mask")
	if err != nil {
		return nil, err
	}
	src, err := c.tensor("source")
	if err != nil {
		return nil, err
	}
	if mask.DType != ir.Bool {
		return nil, fmt.Errorf("masked_scatter only supports boolean masks, got %s", mask.DType)
	}
	m, err := expandTo(mask, x.Shape)
	if err != nil {
		return nil, err
	}
	out := x.Clone()
	flat := src.Contiguous().To(x.DType)
	sv, _ := viewAs(flat, []int64{flat.Numel()}, true)
	k := int64(0)
	mi := m.Contiguous().ints()
	var ferr error
	j := int64(0)
	out.forEachOffset(func(off int64) {
		if mi[j] != 0 {
			if k >= sv.Numel() {
				ferr = fmt.Errorf("masked_scatter: the number of elements in source (%d) is smaller than the number of ones in mask", sv.Numel())
			} else {
				copyElem(out, off, sv, sv.Offset+k*sv.Strides[0])
			}
			k++
		}
		j++
	})
	if ferr != nil {
		return nil, ferr
	}
	return one(out), nil
}

// copyElem copies one element between tensors of the same dtype.
func copyElem(dst *Tensor, doff int64, src *Tensor, soff int64) {
	switch {
	case dst.st.f != nil:
		dst.st.f[doff] = src.st.f[soff]
	case dst.st.c != nil:
		dst.st.c[doff] = src.st.c[soff]
	default:
		dst.st.i[doff] = src.st.i[soff]
	}
}

func kItem(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	v, err := x.Item()
	if err != nil {
		return nil, err
	}
	return one(v), nil
}
