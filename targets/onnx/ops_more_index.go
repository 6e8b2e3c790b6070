package onnx

import (
	"fmt"
	"math"

	"github.com/fxport/fxport/ir"
)

// Shape, scatter and gather ops beyond the basic table, and the ops whose
// ONNX form has a data-dependent shape.

// srcLikeIndex slices src down to index's shape (torch reads only that part
// of src; ONNX ScatterElements wants equal shapes).
func (b *Builder) srcLikeIndex(r *argReader, src string) string {
	ss, is := r.Shape("src"), r.Shape("index")
	same := len(ss) == len(is)
	for i := 0; same && i < len(ss); i++ {
		same = ss[i].Equal(is[i])
	}
	if same {
		return src
	}
	rank := int64(len(is))
	zeros, axes := make([]int64, rank), make([]int64, rank)
	for i := range axes {
		axes[i] = int64(i)
	}
	idx := r.T("index")
	return b.Tmp("Slice", []string{src, b.I64s(zeros...), b.Tmp("Shape", []string{idx}), b.I64s(axes...)})
}

// reduceIdentity is the neutral element of a scatter_reduce reduction.
func reduceIdentity(red string, dt ir.DType) float64 {
	switch red {
	case "prod":
		return 1
	case "amax":
		if dt.IsFloat() {
			return math.Inf(-1)
		}
		return math.MinInt32
	case "amin":
		if dt.IsFloat() {
			return math.Inf(1)
		}
		return math.MaxInt32
	}
	return 0
}

func init() {
	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		dt := r.out(0).DType
		x, idx, src := r.In("self", dt), r.T("index"), r.In("src", dt)
		dim := normDim(r.Int("dim"), r.Rank("self"))
		if r.err != nil {
			return r.err
		}
		src = b.srcLikeIndex(r, src)
		b.Emit(n.Results[0], "ScatterElements", []string{x, idx, src}, AttrInt("axis", dim), AttrString("reduction", "add"))
		return r.err
	}, ir.OpAtenScatterAdd)
	lower(17, func(b *Builder, n *ir.Node) error {
		// scatter_reduce.two: ScatterElements with the reduction (max/min
		// from opset 18); include_self=False first overwrites the scattered
		// positions with the reduction's identity; mean divides by the count.
		r := reader(b, n)
		dt := r.out(0).DType
		x, idx, src := r.In("self", dt), r.T("index"), r.In("src", dt)
		dim := normDim(r.Int("dim"), r.Rank("self"))
		red := r.Str("reduce")
		inc := r.Bool("include_self")
		if r.err != nil {
			return r.err
		}
		src = b.srcLikeIndex(r, src)
		if r.err != nil {
			return r.err
		}
		onnxRed := map[string]string{"sum": "add", "mean": "add", "prod": "mul", "amax": "max", "amin": "min"}[red]
		if onnxRed == "" {
			return fmt.Errorf("scatter_reduce with reduce=%q", red)
		}
		if (onnxRed == "max" || onnxRed == "min") && b.opset < 18 {
			return fmt.Errorf("scatter_reduce %q needs ONNX opset 18 or newer (ScatterElements max/min): export with --opset 18", red)
		}
		axis := AttrInt("axis", dim)
		base := x
		if !inc {
			id, err := b.Scalar(dt, reduceIdentity(red, dt))
			if err != nil {
				return err
			}
			fill := b.Tmp("Expand", []string{id, b.Tmp("Shape", []string{idx})})
			base = b.Tmp("ScatterElements", []string{x, idx, fill}, axis)
		}
		out := b.Tmp("ScatterElements", []string{base, idx, src}, axis, AttrString("reduction", onnxRed))
		if red == "mean" {
			one, _ := b.Scalar(dt, 1)
			start := b.Tmp("Expand", []string{one, b.Tmp("Shape", []string{x})})
			if !inc {
				start = b.Tmp("Expand", []string{b.zeroOf(dt), b.Tmp("Shape", []string{x})})
			}
			ones := b.Tmp("Expand", []string{one, b.Tmp("Shape", []string{idx})})
			cnt := b.Tmp("Max", []string{b.Tmp("ScatterElements", []string{start, idx, ones}, axis, AttrString("reduction", "add")), one})
			if dt.IsFloat() {
				out = b.Tmp("Div", []string{out, cnt})
			} else {
				out = b.FloorDivIntTyped(out, cnt)
			}
			if !inc {
				// untouched positions keep self
				touched := b.Tmp("Greater", []string{b.Tmp("ScatterElements", []string{b.Tmp("Expand", []string{b.zeroOf(dt), b.Tmp("Shape", []string{x})}), idx, ones}, axis, AttrString("reduction", "add")), b.zeroOf(dt)})
				out = b.Tmp("Where", []string{touched, out, x})
			}
		}
		b.Bind(n.Results[0], out)
		return nil
	}, ir.OpAtenScatterReduceTwo)
	lower(17, func(b *Builder, n *ir.Node) error {
		// select_scatter: src (unsqueezed at dim) overwrites row index.
		r := reader(b, n)
		dt := r.out(0).DType
		x, src := r.In("self", dt), r.In("src", dt)
		rank := r.Rank("self")
		dim := normDim(r.Int("dim"), rank)
		index := r.Int("index")
		shape := r.Shape("self")
		if r.err != nil {
			return r.err
		}
		size, ok := shape[dim].Const()
		if !ok {
			return fmt.Errorf("select_scatter along a symbolic dim")
		}
		if index < 0 {
			index += size
		}
		u := b.Tmp("Unsqueeze", []string{src, b.I64s(dim)})
		idxShape := b.Tmp("Shape", []string{u})
		pos := b.Tmp("Expand", []string{b.I64(index), idxShape})
		b.Emit(n.Results[0], "ScatterElements", []string{x, pos, u}, AttrInt("axis", dim))
		return nil
	}, ir.OpAtenSelectScatter)
	lower(17, func(b *Builder, n *ir.Node) error {
		// slice_scatter: ScatterElements at start + k·step along dim.
		r := reader(b, n)
		dt := r.out(0).DType
		x, src := r.In("self", dt), r.In("src", dt)
		rank := r.Rank("self")
		dim := normDim(r.Int("dim"), rank)
		start := r.IntOr("start", 0)
		step := r.IntOr("step", 1)
		shape := r.Shape("self")
		srcShape := r.Shape("src")
		if r.err != nil {
			return r.err
		}
		size, ok := shape[dim].Const()
		if !ok {
			return fmt.Errorf("slice_scatter along a symbolic dim")
		}
		cnt, ok := srcShape[dim].Const()
		if !ok {
			return fmt.Errorf("slice_scatter of a symbolic source length")
		}
		if start < 0 {
			start += size
		}
		if start < 0 {
			start = 0
		}
		pos := make([]int64, cnt)
		for i := range pos {
			pos[i] = start + int64(i)*step
		}
		bshape := make([]int64, rank)
		for i := range bshape {
			bshape[i] = 1
		}
		bshape[dim] = cnt
		idx, err := b.Const(ir.Int64, bshape, encodeI64s(pos))
		if err != nil {
			return err
		}
		full := b.Tmp("Expand", []string{idx, b.Tmp("Shape", []string{src})})
		b.Emit(n.Results[0], "ScatterElements", []string{x, full, src}, AttrInt("axis", dim))
		return nil
	}, ir.OpAtenSliceScatter)
	lower(17, func(b *Builder, n *ir.Node) error {
		// repeat: Tile, after unsqueezing leading dims when repeats is longer.
		r := reader(b, n)
		x := r.T("self")
		rank := r.Rank("self")
		reps := r.Arg("repeats")
		if r.err != nil {
			return r.err
		}
		k := len(reps.List) - rank
		if k < 0 {
			return fmt.Errorf("repeat with %d repeats for a rank-%d tensor", len(reps.List), rank)
		}
		if k > 0 {
			axes := make([]int64, k)
			for i := range axes {
				axes[i] = int64(i)
			}
			x = b.Tmp("Unsqueeze", []string{x, b.I64s(axes...)})
		}
		rs, err := b.IntList(reps)
		if err != nil {
			return err
		}
		b.Emit(n.Results[0], "Tile", []string{x, rs})
		return nil
	}, ir.OpAtenRepeat)
	lower(17, func(b *Builder, n *ir.Node) error {
		// unbind: Split into pieces of 1, each squeezed.
		r := reader(b, n)
		x := r.T("self")
		rank := r.Rank("self")
		dim := normDim(r.Int("dim"), rank)
		if r.err != nil {
			return r.err
		}
		k := len(n.Results)
		ones := make([]int64, k)
		for i := range ones {
			ones[i] = 1
		}
		parts := b.TmpN("Split", []string{x, b.I64s(ones...)}, k, AttrInt("axis", dim))
		for i, res := range n.Results {
			if res.NumUses() > 0 {
				b.Emit(res, "Squeeze", []string{parts[i], b.I64s(dim)})
			}
		}
		return nil
	}, ir.OpAtenUnbindInt, ir.OpAtenUnbindCopyInt)
	lower(17, func(b *Builder, n *ir.Node) error {
		// diagonal: dim1, dim2 moved last, flattened, the diagonal gathered.
		r := reader(b, n)
		x := r.T("self")
		rank := r.Rank("self")
		off := r.IntOr("offset", 0)
		d1, d2 := normDim(r.IntOr("dim1", 0), rank), normDim(r.IntOr("dim2", 1), rank)
		shape, ok := staticShape(r.Shape("self"))
		if r.err != nil {
			return r.err
		}
		if !ok {
			return fmt.Errorf("diagonal of a symbolic shape")
		}
		var perm []int64
		for i := 0; i < rank; i++ {
			if int64(i) != d1 && int64(i) != d2 {
				perm = append(perm, int64(i))
			}
		}
		perm = append(perm, d1, d2)
		n1, n2 := shape[d1], shape[d2]
		rowOff, colOff := int64(0), int64(0)
		if off >= 0 {
			colOff = off
		} else {
			rowOff = -off
		}
		l := n1 - rowOff
		if n2-colOff < l {
			l = n2 - colOff
		}
		if l < 0 {
			l = 0
		}
		idx := make([]int64, l)
		for i := range idx {
			idx[i] = (int64(i)+rowOff)*n2 + int64(i) + colOff
		}
		t := b.Tmp("Transpose", []string{x}, AttrInts("perm", perm...))
		lead := make([]int64, 0, rank-1)
		for i := 0; i < rank-2; i++ {
			lead = append(lead, 0)
		}
		flat := b.Tmp("Reshape", []string{t, b.I64s(append(lead, n1*n2)...)})
		b.Emit(n.Results[0], "Gather", []string{flat, b.I64s(idx...)}, AttrInt("axis", int64(rank-2)))
		return nil
	}, ir.OpAtenDiagonal, ir.OpAtenDiagonalCopy)
	lower(17, func(b *Builder, n *ir.Node) error {
		// nonzero: NonZero gives [rank, count]; torch gives [count, rank].
		r := reader(b, n)
		x := r.T("self")
		if r.err != nil {
			return r.err
		}
		b.Emit(n.Results[0], "Transpose", []string{b.Tmp("NonZero", []string{x})}, AttrInts("perm", 1, 0))
		return nil
	}, ir.OpAtenNonzero)
}

// FloorDivIntTyped is floor division of integer tensors of any integer dtype.
func (b *Builder) FloorDivIntTyped(a, d string) string {
	q := b.Tmp("Div", []string{a, d})
	rem := b.Tmp("Sub", []string{a, b.Tmp("Mul", []string{q, d})})
	zero := b.Tmp("Sub", []string{d, d})
	nonzero := b.Tmp("Not", []string{b.Tmp("Equal", []string{rem, zero})})
	signDiff := b.Tmp("Xor", []string{b.Tmp("Less", []string{a, zero}), b.Tmp("Less", []string{d, zero})})
	one := b.Tmp("Div", []string{d, d})
	return b.Tmp("Where", []string{b.Tmp("And", []string{nonzero, signDiff}), b.Tmp("Sub", []string{q, one}), q})
}

func init() {
	lower(17, func(b *Builder, n *ir.Node) error {
		// sym_numel: Size (a 0-d INT64).
		r := reader(b, n)
		x := r.T("self")
		if r.err != nil {
			return r.err
		}
		b.Emit(n.Results[0], "Size", []string{x})
		return nil
	}, ir.OpAtenSymNumel)
	lower(17, func(b *Builder, n *ir.Node) error {
		// sym_stride.int of a contiguous tensor: the product of the later dims
		// (functionalized programs hold contiguous values).
		r := reader(b, n)
		x := r.T("self")
		rank := r.Rank("self")
		dim := normDim(r.Int("dim"), rank)
		if r.err != nil {
			return r.err
		}
		if int(dim) == rank-1 || rank == 0 {
			b.Bind(n.Results[0], b.I64(1))
			return nil
		}
		later := b.Tmp("Slice", []string{b.Tmp("Shape", []string{x}), b.I64s(dim + 1), b.I64s(int64(rank)), b.I64s(0)})
		p := b.reduceOver("ReduceProd", later, []int64{0}, false)
		b.Bind(n.Results[0], p)
		return nil
	}, ir.OpAtenSymStrideInt)
	lower(17, func(b *Builder, n *ir.Node) error {
		// sym_storage_offset of a functional value: 0.
		b.Bind(n.Results[0], b.I64(0))
		return nil
	}, ir.OpAtenSymStorageOffset)
	lower(17, func(b *Builder, n *ir.Node) error {
		// copy(self, src): src cast to self's dtype, broadcast to its shape.
		r := reader(b, n)
		dt := r.out(0).DType
		x, src := r.T("self"), r.In("src", dt)
		if r.err != nil {
			return r.err
		}
		b.Emit(n.Results[0], "Expand", []string{src, b.Tmp("Shape", []string{x})})
		return nil
	}, ir.OpAtenCopy)
	lower(17, func(b *Builder, n *ir.Node) error {
		// fill: the value broadcast to self's shape.
		r := reader(b, n)
		dt := r.out(0).DType
		x, v := r.T("self"), r.In("value", dt)
		if r.err != nil {
			return r.err
		}
		b.Emit(n.Results[0], "Expand", []string{v, b.Tmp("Shape", []string{x})})
		return nil
	}, ir.OpAtenFillScalar, ir.OpAtenFillTensor)
	lower(17, func(b *Builder, n *ir.Node) error {
		// empty_strided: uninitialized memory in torch; zeros here.
		r := reader(b, n)
		dt := r.out(0).DType
		shape, err := b.ShapeTensor(r.out(0).Shape)
		if err != nil {
			return err
		}
		b.Emit(n.Results[0], "Expand", []string{b.zeroOf(dt), shape})
		return r.err
	}, ir.OpAtenEmptyStrided)
}
