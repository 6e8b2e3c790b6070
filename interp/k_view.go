package interp

import (
	"fmt"

	"github.com/fxport/fxport/ir"
)

// View ops: results share their input's storage. The *_copy twins return
// contiguous copies of the same values.

// normDim wraps a possibly negative dim for a tensor of the given rank
// (a 0-dim tensor accepts 0 and -1).
func normDim(d int64, rank int) (int, error) {
	r := int64(rank)
	if r == 0 {
		r = 1
	}
	if d < -r || d >= r {
		return 0, fmt.Errorf("dimension out of range (expected to be in range of [%d, %d], but got %d)", -r, r-1, d)
	}
	if d < 0 {
		d += r
	}
	return int(d), nil
}

// inferSize resolves a single -1 in shape against numel.
func inferSize(shape []int64, n int64) ([]int64, error) {
	out := append([]int64{}, shape...)
	neg := -1
	prod := int64(1)
	for i, d := range shape {
		switch {
		case d == -1:
			if neg >= 0 {
				return nil, fmt.Errorf("only one dimension can be inferred in shape %v", shape)
			}
			neg = i
		case d < 0:
			return nil, fmt.Errorf("invalid shape dimension %d", d)
		default:
			prod *= d
		}
	}
	if neg >= 0 {
		if prod == 0 || n%prod != 0 {
			return nil, domainErrorf("shape %v is invalid for input of size %d", shape, n)
		}
		out[neg] = n / prod
		return out, nil
	}
	if prod != n {
		return nil, domainErrorf("shape %v is invalid for input of size %d", shape, n)
	}
	return out, nil
}

// computeStride finds strides that let a tensor of oldShape/oldStride be
// viewed as newShape without copying (torch's computeStride).
func computeStride(oldShape, oldStride, newShape []int64) ([]int64, bool) {
	if len(oldShape) == 0 {
		st := make([]int64, len(newShape))
		for i := range st {
			st[i] = 1
		}
		return st, true
	}
	n := numel(oldShape)
	if n == 0 {
		return contiguousStrides(newShape), true
	}
	newStride := make([]int64, len(newShape))
	viewD := len(newShape) - 1
	chunkBase := oldStride[len(oldStride)-1]
	tensorNumel, viewNumel := int64(1), int64(1)
	for td := len(oldShape) - 1; td >= 0; td-- {
		tensorNumel *= oldShape[td]
		if td == 0 || (oldShape[td-1] != 1 && oldStride[td-1] != tensorNumel*chunkBase) {
			for viewD >= 0 && (viewNumel < tensorNumel || newShape[viewD] == 1) {
				newStride[viewD] = viewNumel * chunkBase
				viewNumel *= newShape[viewD]
				viewD--
			}
			if viewNumel != tensorNumel {
				return nil, false
			}
			if td > 0 {
				chunkBase = oldStride[td-1]
				tensorNumel, viewNumel = 1, 1
			}
		}
	}
	if viewD != -1 {
		return nil, false
	}
	return newStride, true
}

// viewAs reshapes t; copy says whether a copy is allowed when no view exists.
func viewAs(t *Tensor, shape []int64, allowCopy bool) (*Tensor, error) {
	shape, err := inferSize(shape, t.Numel())
	if err != nil {
		return nil, err
	}
	if st, ok := computeStride(t.Shape, t.Strides, shape); ok {
		return t.view(shape, st, t.Offset), nil
	}
	if !allowCopy {
		return nil, fmt.Errorf("view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces); use reshape")
	}
	c := t.Clone()
	return c.view(shape, contiguousStrides(shape), 0), nil
}

func copied(vs []Value, err error) ([]Value, error) {
	if err != nil {
		return nil, err
	}
	for i, v := range vs {
		if t, ok := v.(*Tensor); ok {
			vs[i] = t.Clone()
		}
	}
	return vs, nil
}

// viewKernel registers a view op and its copying twins.
func viewKernel(k kernel, views []ir.Op, copies []ir.Op) {
	register(k, views...)
	if len(copies) > 0 {
		register(func(c *call) ([]Value, error) { return copied(k(c)) }, copies...)
	}
}

func init() {
	viewKernel(kView(false), []ir.Op{ir.OpAtenView, ir.OpExecutorchPrimEtView}, []ir.Op{ir.OpAtenViewCopy})
	register(kView(true), ir.OpAtenReshape, ir.OpAten_UnsafeView, ir.OpPrimsReshape)
	viewKernel(kExpand, []ir.Op{ir.OpAtenExpand}, []ir.Op{ir.OpAtenExpandCopy})
	register(kExpandAs, ir.OpAtenExpandAs)
	register(kBroadcastInDim, ir.OpPrimsBroadcastInDim)
	viewKernel(kPermute("dims"), []ir.Op{ir.OpAtenPermute}, []ir.Op{ir.OpAtenPermuteCopy})
	register(kPermute("permutation"), ir.OpPrimsTranspose)
	viewKernel(kTranspose, []ir.Op{ir.OpAtenTransposeInt}, []ir.Op{ir.OpAtenTransposeCopyInt})
	viewKernel(kT, []ir.Op{ir.OpAtenT}, []ir.Op{ir.OpAtenTCopy})
	register(kMovedim, ir.OpAtenMovedimInt)
	viewKernel(kSelect, []ir.Op{ir.OpAtenSelectInt}, []ir.Op{ir.OpAtenSelectCopyInt})
	viewKernel(kSlice, []ir.Op{ir.OpAtenSliceTensor}, []ir.Op{ir.OpAtenSliceCopyTensor})
	register(kNarrow, ir.OpAtenNarrow)
	viewKernel(kSqueeze("dim"), []ir.Op{ir.OpAtenSqueeze, ir.OpAtenSqueezeDim, ir.OpAtenSqueezeDims}, []ir.Op{ir.OpAtenSqueezeCopy, ir.OpAtenSqueezeCopyDim, ir.OpAtenSqueezeCopyDims})
	register(kSqueeze("dimensions"), ir.OpPrimsSqueeze)
	viewKernel(kUnsqueeze, []ir.Op{ir.OpAtenUnsqueeze}, []ir.Op{ir.OpAtenUnsqueezeCopy})
	register(kFlatten, ir.OpAtenFlattenUsingInts)
	register(kUnflatten, ir.OpAtenUnflattenInt)
	viewKernel(kSplit, []ir.Op{ir.OpAtenSplitTensor}, []ir.Op{ir.OpAtenSplitCopyTensor, ir.OpAtenUnsafeSplitTensor})
	viewKernel(kSplitWithSizes, []ir.Op{ir.OpAtenSplitWithSizes}, []ir.Op{ir.OpAtenSplitWithSizesCopy, ir.OpAtenUnsafeSplitWithSizes})
	register(kChunk, ir.OpAtenChunk)
	viewKernel(kUnbind, []ir.Op{ir.OpAtenUnbindInt}, []ir.Op{ir.OpAtenUnbindCopyInt})
	viewKernel(kDiagonal, []ir.Op{ir.OpAtenDiagonal}, []ir.Op{ir.OpAtenDiagonalCopy})
	viewKernel(kAsStrided, []ir.Op{ir.OpAtenAsStrided}, []ir.Op{ir.OpAtenAsStridedCopy})
	register(kAlias, ir.OpAtenAlias, ir.OpAtenDetach, ir.OpAtenLiftFresh, ir.OpPrimsViewOf)
	register(kUnfold, ir.OpAtenUnfold)
	register(kViewDType, ir.OpAtenViewDtype)
	viewKernel(kViewAsReal, []ir.Op{ir.OpAtenViewAsReal}, []ir.Op{ir.OpAtenViewAsRealCopy})
	register(kViewAsComplex, ir.OpAtenViewAsComplex)
}

func kView(allowCopy bool) kernel {
	return func(c *call) ([]Value, error) {
		x, err := c.tensor(c.argName0())
		if err != nil {
			return nil, err
		}
		name := "size"
		if !c.has(name) {
			name = "shape"
		}
		shape, err := c.ints(name)
		if err != nil {
			return nil, err
		}
		return one0(viewAs(x, shape, allowCopy))
	}
}

func kExpand(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	size, err := c.ints("size")
	if err != nil {
		return nil, err
	}
	return one0(expandTo(x, size))
}

func kExpandAs(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	o, err := c.tensor("other")
	if err != nil {
		return nil, err
	}
	return one0(expandTo(x, o.Shape))
}

func kBroadcastInDim(c *call) ([]Value, error) {
	x, err := c.tensor("a")
	if err != nil {
		return nil, err
	}
	shape, err := c.ints("shape")
	if err != nil {
		return nil, err
	}
	bdims, err := c.ints("broadcast_dimensions")
	if err != nil {
		return nil, err
	}
	if len(bdims) != x.Rank() {
		return nil, fmt.Errorf("broadcast_dimensions has %d entries for a rank-%d input", len(bdims), x.Rank())
	}
	strides := make([]int64, len(shape))
	for i, d := range bdims {
		if d < 0 || int(d) >= len(shape) {
			return nil, fmt.Errorf("broadcast dimension %d out of range", d)
		}
		switch x.Shape[i] {
		case shape[d]:
			strides[d] = x.Strides[i]
		case 1:
		default:
			return nil, fmt.Errorf("cannot broadcast dim %d of size %d to %d", i, x.Shape[i], shape[d])
		}
	}
	return one(x.view(append([]int64{}, shape...), strides, x.Offset)), nil
}

func permuteView(x *Tensor, dims []int64) (*Tensor, error) {
	if len(dims) != x.Rank() {
		return nil, fmt.Errorf("permute: number of dims %d doesn't match the input's rank %d", len(dims), x.Rank())
	}
	shape := make([]int64, len(dims))
	strides := make([]int64, len(dims))
	seen := make([]bool, len(dims))
	for i, d := range dims {
		k, err := normDim(d, x.Rank())
		if err != nil {
			return nil, err
		}
		if seen[k] {
			return nil, fmt.Errorf("permute: repeated dim %d", d)
		}
		seen[k] = true
		shape[i], strides[i] = x.Shape[k], x.Strides[k]
	}
	return x.view(shape, strides, x.Offset), nil
}

func kPermute(name string) kernel {
	return func(c *call) ([]Value, error) {
		x, err := c.tensor(c.argName0())
		if err != nil {
			return nil, err
		}
		dims, err := c.ints(name)
		if err != nil {
			return nil, err
		}
		return one0(permuteView(x, dims))
	}
}

func transposeView(x *Tensor, a, b int64) (*Tensor, error) {
	if x.Rank() == 0 {
		return x.Alias(), nil
	}
	i, err := normDim(a, x.Rank())
	if err != nil {
		return nil, err
	}
	j, err := normDim(b, x.Rank())
	if err != nil {
		return nil, err
	}
	shape := append([]int64{}, x.Shape...)
	strides := append([]int64{}, x.Strides...)
	shape[i], shape[j] = shape[j], shape[i]
	strides[i], strides[j] = strides[j], strides[i]
	return x.view(shape, strides, x.Offset), nil
}

func kTranspose(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	a, err := c.int("dim0")
	if err != nil {
		return nil, err
	}
	b, err := c.int("dim1")
	if err != nil {
		return nil, err
	}
	return one0(transposeView(x, a, b))
}

func kT(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	if x.Rank() > 2 {
		return nil, fmt.Errorf("t() expects a tensor with <= 2 dimensions, but self is %dD", x.Rank())
	}
	if x.Rank() < 2 {
		return one(x.Alias()), nil
	}
	return one0(transposeView(x, 0, 1))
}

func kMovedim(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	s, err := c.int("source")
	if err != nil {
		return nil, err
	}
	d, err := c.int("destination")
	if err != nil {
		return nil, err
	}
	src, err := normDim(s, x.Rank())
	if err != nil {
		return nil, err
	}
	dst, err := normDim(d, x.Rank())
	if err != nil {
		return nil, err
	}
	if x.Rank() == 0 {
		return one(x.Alias()), nil
	}
	var order []int64
	for i := 0; i < x.Rank(); i++ {
		if i != src {
			order = append(order, int64(i))
		}
	}
	order = append(order[:dst], append([]int64{int64(src)}, order[dst:]...)...)
	return one0(permuteView(x, order))
}

func selectView(x *Tensor, dim, index int64) (*Tensor, error) {
	if x.Rank() == 0 {
		return nil, fmt.Errorf("select() cannot be applied to a 0-dim tensor")
	}
	d, err := normDim(dim, x.Rank())
	if err != nil {
		return nil, err
	}
	size := x.Shape[d]
	if index < -size || index >= size {
		return nil, fmt.Errorf("select(): index %d out of range for tensor of size %v at dimension %d", index, x.Shape, d)
	}
	if index < 0 {
		index += size
	}
	shape := append(append([]int64{}, x.Shape[:d]...), x.Shape[d+1:]...)
	strides := append(append([]int64{}, x.Strides[:d]...), x.Strides[d+1:]...)
	return x.view(shape, strides, x.Offset+index*x.Strides[d]), nil
}

func kSelect(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	dim, err := c.int("dim")
	if err != nil {
		return nil, err
	}
	idx, err := c.int("index")
	if err != nil {
		return nil, err
	}
	return one0(selectView(x, dim, idx))
}

// sliceBounds clamps start/end the way torch's slice does.
func sliceBounds(size int64, start, end *int64, step int64) (int64, int64, error) {
	if step <= 0 {
		return 0, 0, fmt.Errorf("slice step must be positive, got %d", step)
	}
	s, e := int64(0), size
	if start != nil {
		s = *start
	}
	if end != nil {
		e = *end
	}
	if s < 0 {
		s += size
	}
	if e < 0 {
		e += size
	}
	s = min(max(s, 0), size)
	e = min(max(e, s), size)
	return s, e, nil
}

func sliceView(x *Tensor, dim int64, start, end *int64, step int64) (*Tensor, error) {
	if x.Rank() == 0 {
		return nil, fmt.Errorf("slice() cannot be applied to a 0-dim tensor")
	}
	d, err := normDim(dim, x.Rank())
	if err != nil {
		return nil, err
	}
	s, e, err := sliceBounds(x.Shape[d], start, end, step)
	if err != nil {
		return nil, err
	}
	shape := append([]int64{}, x.Shape...)
	strides := append([]int64{}, x.Strides...)
	shape[d] = (e - s + step - 1) / step
	strides[d] *= step
	return x.view(shape, strides, x.Offset+s*x.Strides[d]), nil
}

func optIntPtr(c *call, name string) (*int64, error) {
	v, ok, err := c.optInt(name)
	if err != nil || !ok {
		return nil, err
	}
	return &v, nil
}

func kSlice(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	dim, err := c.int("dim")
	if err != nil {
		return nil, err
	}
	start, err := optIntPtr(c, "start")
	if err != nil {
		return nil, err
	}
	end, err := optIntPtr(c, "end")
	if err != nil {
		return nil, err
	}
	step, err := c.int("step")
	if err != nil {
		return nil, err
	}
	return one0(sliceView(x, dim, start, end, step))
}

func kNarrow(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	dim, err := c.int("dim")
	if err != nil {
		return nil, err
	}
	start, err := c.int("start")
	if err != nil {
		return nil, err
	}
	length, err := c.int("length")
	if err != nil {
		return nil, err
	}
	d, err := normDim(dim, x.Rank())
	if err != nil {
		return nil, err
	}
	size := x.Shape[d]
	if start < -size || start > size {
		return nil, fmt.Errorf("narrow: start %d out of range for dimension of size %d", start, size)
	}
	if start < 0 {
		start += size
	}
	if length < 0 || start+length > size {
		return nil, fmt.Errorf("narrow: start (%d) + length (%d) exceeds dimension size (%d)", start, length, size)
	}
	end := start + length
	return one0(sliceView(x, int64(d), &start, &end, 1))
}

func squeezeView(x *Tensor, dims []int64, all bool) (*Tensor, error) {
	drop := make([]bool, x.Rank())
	if all {
		for i, d := range x.Shape {
			drop[i] = d == 1
		}
	} else {
		for _, d := range dims {
			k, err := normDim(d, x.Rank())
			if err != nil {
				return nil, err
			}
			if x.Rank() > 0 && x.Shape[k] == 1 {
				drop[k] = true
			}
		}
	}
	var shape, strides []int64
	for i := range x.Shape {
		if !drop[i] {
			shape = append(shape, x.Shape[i])
			strides = append(strides, x.Strides[i])
		}
	}
	return x.view(shape, strides, x.Offset), nil
}

func kSqueeze(name string) kernel {
	return func(c *call) ([]Value, error) {
		x, err := c.tensor(c.argName0())
		if err != nil {
			return nil, err
		}
		if !c.has(name) {
			return one0(squeezeView(x, nil, true))
		}
		dims, err := c.ints(name)
		if err != nil {
			return nil, err
		}
		return one0(squeezeView(x, dims, false))
	}
}

func unsqueezeView(x *Tensor, dim int64) (*Tensor, error) {
	d, err := normDim(dim, x.Rank()+1)
	if err != nil {
		return nil, err
	}
	st := int64(1)
	if d < x.Rank() {
		st = x.Shape[d] * x.Strides[d]
	}
	shape := append(append(append([]int64{}, x.Shape[:d]...), 1), x.Shape[d:]...)
	strides := append(append(append([]int64{}, x.Strides[:d]...), st), x.Strides[d:]...)
	return x.view(shape, strides, x.Offset), nil
}

func kUnsqueeze(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	d, err := c.int("dim")
	if err != nil {
		return nil, err
	}
	return one0(unsqueezeView(x, d))
}

func kFlatten(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	s, err := c.int("start_dim")
	if err != nil {
		return nil, err
	}
	e, err := c.int("end_dim")
	if err != nil {
		return nil, err
	}
	if x.Rank() == 0 {
		return one0(viewAs(x, []int64{1}, true))
	}
	a, err := normDim(s, x.Rank())
	if err != nil {
		return nil, err
	}
	b, err := normDim(e, x.Rank())
	if err != nil {
		return nil, err
	}
	if a > b {
		return nil, fmt.Errorf("flatten() has invalid args: start_dim cannot come after end_dim")
	}
	shape := append([]int64{}, x.Shape[:a]...)
	shape = append(shape, numel(x.Shape[a:b+1]))
	shape = append(shape, x.Shape[b+1:]...)
	return one0(viewAs(x, shape, true))
}

func kUnflatten(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	dim, err := c.int("dim")
	if err != nil {
		return nil, err
	}
	sizes, err := c.ints("sizes")
	if err != nil {
		return nil, err
	}
	d, err := normDim(dim, x.Rank())
	if err != nil {
		return nil, err
	}
	sizes, err = inferSize(sizes, x.Shape[d])
	if err != nil {
		return nil, fmt.Errorf("unflatten: %w", err)
	}
	shape := append(append(append([]int64{}, x.Shape[:d]...), sizes...), x.Shape[d+1:]...)
	return one0(viewAs(x, shape, true))
}

// splitViews cuts dim d into pieces of the given sizes.
func splitViews(x *Tensor, d int, sizes []int64) ([]Value, error) {
	var total int64
	for _, s := range sizes {
		if s < 0 {
			return nil, fmt.Errorf("split sizes must be non-negative, got %v", sizes)
		}
		total += s
	}
	if total != x.Shape[d] {
		return nil, fmt.Errorf("split sizes %v do not sum to the dimension size %d", sizes, x.Shape[d])
	}
	out := make([]Value, len(sizes))
	start := int64(0)
	for i, s := range sizes {
		end := start + s
		v, err := sliceView(x, int64(d), &start, &end, 1)
		if err != nil {
			return nil, err
		}
		out[i] = v
		start = end
	}
	return out, nil
}

func splitDim(c *call, x *Tensor) (int, error) {
	dim, err := c.int("dim")
	if err != nil {
		return 0, err
	}
	if x.Rank() == 0 {
		return 0, fmt.Errorf("cannot split a 0-dim tensor")
	}
	return normDim(dim, x.Rank())
}

func kSplit(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	d, err := splitDim(c, x)
	if err != nil {
		return nil, err
	}
	n, err := c.int("split_size")
	if err != nil {
		return nil, err
	}
	size := x.Shape[d]
	if n < 0 || (n == 0 && size != 0) {
		return nil, fmt.Errorf("split_size can only be 0 if dimension size is 0, but got %d", n)
	}
	var sizes []int64
	if n == 0 {
		sizes = []int64{0}
	}
	for s := int64(0); s < size; s += n {
		sizes = append(sizes, min(n, size-s))
	}
	return splitViews(x, d, sizes)
}

func kSplitWithSizes(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	d, err := splitDim(c, x)
	if err != nil {
		return nil, err
	}
	sizes, err := c.ints("split_sizes")
	if err != nil {
		return nil, err
	}
	return splitViews(x, d, sizes)
}

func kChunk(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	d, err := splitDim(c, x)
	if err != nil {
		return nil, err
	}
	n, err := c.int("chunks")
	if err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, fmt.Errorf("chunk expects chunks to be greater than 0, got %d", n)
	}
	size := x.Shape[d]
	each := (size + n - 1) / n
	if each == 0 {
		each = 1
		if size == 0 {
			sizes := make([]int64, n)
			return splitViews(x, d, sizes)
		}
	}
	var sizes []int64
	for s := int64(0); s < size; s += each {
		sizes = append(sizes, min(each, size-s))
	}
	return splitViews(x, d, sizes)
}

func kUnbind(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	d, err := splitDim(c, x)
	if err != nil {
		return nil, err
	}
	out := make([]Value, x.Shape[d])
	for i := range out {
		v, err := selectView(x, int64(d), int64(i))
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func diagonalView(x *Tensor, offset, dim1, dim2 int64) (*Tensor, error) {
	a, err := normDim(dim1, x.Rank())
	if err != nil {
		return nil, err
	}
	b, err := normDim(dim2, x.Rank())
	if err != nil {
		return nil, err
	}
	if a == b {
		return nil, fmt.Errorf("diagonal dimensions cannot be identical %d, %d", dim1, dim2)
	}
	off := x.Offset
	var n int64
	if offset >= 0 {
		n = max(min(x.Shape[a], x.Shape[b]-offset), 0)
		if n > 0 {
			off += offset * x.Strides[b]
		}
	} else {
		n = max(min(x.Shape[a]+offset, x.Shape[b]), 0)
		if n > 0 {
			off -= offset * x.Strides[a]
		}
	}
	var shape, strides []int64
	for i := range x.Shape {
		if i != a && i != b {
			shape = append(shape, x.Shape[i])
			strides = append(strides, x.Strides[i])
		}
	}
	shape = append(shape, n)
	strides = append(strides, x.Strides[a]+x.Strides[b])
	return x.view(shape, strides, off), nil
}

func kDiagonal(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	off, err := c.int("offset")
	if err != nil {
		return nil, err
	}
	d1, err := c.int("dim1")
	if err != nil {
		return nil, err
	}
	d2, err := c.int("dim2")
	if err != nil {
		return nil, err
	}
	return one0(diagonalView(x, off, d1, d2))
}

func kAsStrided(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	size, err := c.ints("size")
	if err != nil {
		return nil, err
	}
	stride, err := c.ints("stride")
	if err != nil {
		return nil, err
	}
	if len(size) != len(stride) {
		return nil, fmt.Errorf("as_strided: %d sizes for %d strides", len(size), len(stride))
	}
	off, ok, err := c.optInt("storage_offset")
	if err != nil {
		return nil, err
	}
	if !ok {
		off = x.Offset
	}
	if err := checkBounds(size, stride, off, x.storageLen()); err != nil {
		return nil, fmt.Errorf("as_strided: %w", err)
	}
	return one(x.view(append([]int64{}, size...), append([]int64{}, stride...), off)), nil
}

func kAlias(c *call) ([]Value, error) {
	x, err := c.tensor(c.argName0())
	if err != nil {
		return nil, err
	}
	return one(x.Alias()), nil
}

func kUnfold(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	dim, err := c.int("dimension")
	if err != nil {
		return nil, err
	}
	size, err := c.int("size")
	if err != nil {
		return nil, err
	}
	step, err := c.int("step")
	if err != nil {
		return nil, err
	}
	d, err := normDim(dim, x.Rank())
	if err != nil {
		return nil, err
	}
	if step <= 0 {
		return nil, fmt.Errorf("unfold: step must be positive, got %d", step)
	}
	if x.Rank() == 0 {
		if size > 1 {
			return nil, fmt.Errorf("unfold: size %d exceeds the size of a 0-dim tensor", size)
		}
		return one(x.view([]int64{size}, []int64{1}, x.Offset)), nil
	}
	if size > x.Shape[d] {
		return nil, fmt.Errorf("unfold: maximum size for tensor at dimension %d is %d but size is %d", d, x.Shape[d], size)
	}
	shape := append([]int64{}, x.Shape...)
	strides := append([]int64{}, x.Strides...)
	shape[d] = (x.Shape[d]-size)/step + 1
	strides[d] = x.Strides[d] * step
	shape = append(shape, size)
	strides = append(strides, x.Strides[d])
	return one(x.view(shape, strides, x.Offset)), nil
}

// kViewDType reinterprets the bytes of a tensor as another dtype. The
// result is a copy (the interpreter's storage is typed), so later in-place
// writes through it do not reach the input.
func kViewDType(c *call) ([]Value, error) {
	x, err := c.tensor("self")
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
	from, to := int64(x.DType.Size()), int64(dt.Size())
	shape := append([]int64{}, x.Shape...)
	if from != to {
		if x.Rank() == 0 {
			return nil, fmt.Errorf("view.dtype: a 0-dim tensor cannot change element size")
		}
		last := shape[len(shape)-1] * from
		if last%to != 0 {
			return nil, fmt.Errorf("view.dtype: last dim of %d bytes does not divide into %s elements", last, dt)
		}
		shape[len(shape)-1] = last / to
	}
	return one0(FromBytes(dt, shape, x.Bytes()))
}

func kViewAsReal(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	if domainOf(x.DType) != domComplex {
		return nil, fmt.Errorf("view_as_real is only supported for complex tensors, got %s", x.DType)
	}
	dt := x.DType.ToReal()
	vals := x.complexes()
	data := make([]float64, 2*len(vals))
	for i, v := range vals {
		data[2*i], data[2*i+1] = real(v), imag(v)
	}
	return one(FromFloat64(dt, append(append([]int64{}, x.Shape...), 2), data)), nil
}

func kViewAsComplex(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	if x.Rank() == 0 || x.Shape[x.Rank()-1] != 2 || (x.DType != ir.Float32 && x.DType != ir.Float64) {
		return nil, fmt.Errorf("view_as_complex needs a float32/float64 tensor whose last dim is 2, got %s%v", x.DType, x.Shape)
	}
	vals := x.floats()
	data := make([]complex128, len(vals)/2)
	for i := range data {
		data[i] = complex(vals[2*i], vals[2*i+1])
	}
	return one(FromComplex128(x.DType.ToComplex(), append([]int64{}, x.Shape[:x.Rank()-1]...), data)), nil
}
