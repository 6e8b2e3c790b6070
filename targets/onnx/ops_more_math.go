package onnx

import (
	"fmt"
	"math"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

// Elementwise ops and reductions ONNX has no single op for, written as
// small ONNX compositions with torch's semantics.

// staticShape returns the constant dims of shape (ok false if one is symbolic).
func staticShape(shape []sym.Expr) ([]int64, bool) {
	out := make([]int64, len(shape))
	for i, d := range shape {
		c, ok := d.Const()
		if !ok {
			return nil, false
		}
		out[i] = c
	}
	return out, true
}

// reduceAxes reads an optional dim list argument (None or [] = every dim),
// normalized.
func reduceAxes(r *argReader, name string, rank int) []int64 {
	var axes []int64
	if name != "" && r.Has(name) {
		a := r.Arg(name)
		if a.Kind == ir.ArgInt {
			axes = []int64{a.Int}
		} else {
			axes = r.Ints(name)
		}
	}
	if len(axes) == 0 {
		for i := 0; i < rank; i++ {
			axes = append(axes, int64(i))
		}
	}
	for i := range axes {
		axes[i] = normDim(axes[i], rank)
	}
	return axes
}

// reduceOver emits opType over axes (input form; ReduceSum-like from 13, the
// rest from 18, attribute form at 17).
func (b *Builder) reduceOver(opType, x string, axes []int64, keep bool) string {
	k := int64(0)
	if keep {
		k = 1
	}
	if len(axes) == 0 {
		return x
	}
	if opType == "ReduceSum" || b.opset >= 18 {
		return b.Tmp(opType, []string{x, b.I64s(axes...)}, AttrInt("keepdims", k))
	}
	return b.Tmp(opType, []string{x}, AttrInts("axes", axes...), AttrInt("keepdims", k))
}

// countOver is the number of elements over axes of x, as a 0-d value of dt.
func (b *Builder) countOver(x string, shape []sym.Expr, axes []int64, dt ir.DType) (string, error) {
	n := int64(1)
	static := true
	for _, a := range axes {
		c, ok := shape[a].Const()
		if !ok {
			static = false
			break
		}
		n *= c
	}
	if static {
		return b.Scalar(dt, float64(n))
	}
	dims := b.Tmp("Gather", []string{b.Tmp("Shape", []string{x}), b.I64s(axes...)}, AttrInt("axis", 0))
	cnt := b.Tmp("ReduceProd", []string{dims}, AttrInt("keepdims", 0))
	if b.opset < 18 {
		cnt = b.Tmp("ReduceProd", []string{dims}, AttrInts("axes", 0), AttrInt("keepdims", 0))
	}
	return b.CastTo(cnt, ir.Int64, dt)
}

// variance is Σ(x − mean)² / (N − correction) over axes, with the mean.
func (b *Builder) variance(x string, shape []sym.Expr, axes []int64, correction float64, keep bool, dt ir.DType) (v, mean string, err error) {
	m := b.reduceOver("ReduceMean", x, axes, true)
	d := b.Tmp("Sub", []string{x, m})
	ss := b.reduceOver("ReduceSum", b.Tmp("Mul", []string{d, d}), axes, keep)
	n, err := b.countOver(x, shape, axes, dt)
	if err != nil {
		return "", "", err
	}
	c, err := b.Scalar(dt, correction)
	if err != nil {
		return "", "", err
	}
	v = b.Tmp("Div", []string{ss, b.Tmp("Max", []string{b.Tmp("Sub", []string{n, c}), b.zeroOf(dt)})})
	if !keep {
		m = b.reduceOver("ReduceMean", x, axes, false)
	}
	return v, m, nil
}

func (b *Builder) zeroOf(dt ir.DType) string { s, _ := b.Scalar(dt, 0); return s }

// correctionOf reads var/std's correction: .correction (default 1), .dim and
// .default (unbiased, default true).
func correctionOf(r *argReader) float64 {
	switch {
	case r.n.Op.ArgIndex("correction") >= 0:
		if r.Has("correction") {
			return r.Float("correction")
		}
		return 1
	case r.n.Op.ArgIndex("unbiased") >= 0:
		if r.Bool("unbiased") {
			return 1
		}
		return 0
	}
	return 1
}

func init() {
	lower(17, unaryChain(func(b *Builder, x string, dt ir.DType) (string, error) {
		c, err := b.Scalar(dt, 1/math.Ln10)
		return b.Tmp("Mul", []string{b.Tmp("Log", []string{x}), c}), err
	}), ir.OpAtenLog10)
	lower(17, unaryChain(func(b *Builder, x string, dt ir.DType) (string, error) {
		two, err := b.Scalar(dt, 2)
		return b.Tmp("Pow", []string{two, x}), err
	}), ir.OpAtenExp2)
	lower(17, unaryChain(func(b *Builder, x string, dt ir.DType) (string, error) {
		return b.Tmp("Mul", []string{x, x}), nil
	}), ir.OpAtenSquare)
	lower(17, unaryChain(func(b *Builder, x string, dt ir.DType) (string, error) {
		// frac(x) = x − trunc(x)
		t := b.Tmp("Mul", []string{b.Tmp("Sign", []string{x}), b.Tmp("Floor", []string{b.Tmp("Abs", []string{x})})})
		return b.Tmp("Sub", []string{x, t}), nil
	}), ir.OpAtenFrac)
	lower(17, unary("Sign"), ir.OpAtenSgn)
	lower(17, unaryChain(func(b *Builder, x string, dt ir.DType) (string, error) {
		six, err := b.Scalar(dt, 6)
		return b.Tmp("Clip", []string{x, b.zeroOf(dt), six}), err
	}), ir.OpAtenRelu6)
	pred := func(f func(b *Builder, x string, dt ir.DType) string) Lowering {
		return func(b *Builder, n *ir.Node) error {
			r := reader(b, n)
			dt := r.DT("self")
			x := r.In("self", dt)
			if r.err != nil {
				return r.err
			}
			b.Bind(n.Results[0], f(b, x, dt))
			return nil
		}
	}
	allFalse := func(b *Builder, x string) string {
		s, _ := b.Scalar(ir.Bool, 0)
		return b.Tmp("Expand", []string{s, b.Tmp("Shape", []string{x})})
	}
	lower(17, pred(func(b *Builder, x string, dt ir.DType) string {
		if !dt.IsFloat() {
			return allFalse(b, x)
		}
		return b.Tmp("IsInf", []string{x})
	}), ir.OpAtenIsinf)
	lower(17, pred(func(b *Builder, x string, dt ir.DType) string {
		if !dt.IsFloat() {
			return b.Tmp("Not", []string{allFalse(b, x)})
		}
		return b.Tmp("Not", []string{b.Tmp("Or", []string{b.Tmp("IsInf", []string{x}), b.Tmp("IsNaN", []string{x})})})
	}), ir.OpAtenIsfinite)

	// atan2(y, x): atan(y/x) moved into the quadrant of (x, y); 0 at the origin.
	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		dt := r.out(0).DType
		y, x := r.In("self", dt), r.In("other", dt)
		if r.err != nil {
			return r.err
		}
		c := func(v float64) string { s, _ := b.Scalar(dt, v); return s }
		base := b.Tmp("Atan", []string{b.Tmp("Div", []string{y, x})})
		yNeg := b.Tmp("Less", []string{y, c(0)})
		shift := b.Tmp("Where", []string{yNeg, c(-math.Pi), c(math.Pi)})
		q := b.Tmp("Where", []string{b.Tmp("Less", []string{x, c(0)}), b.Tmp("Add", []string{base, shift}), base})
		origin := b.Tmp("And", []string{b.Tmp("Equal", []string{x, c(0)}), b.Tmp("Equal", []string{y, c(0)})})
		b.Emit(n.Results[0], "Where", []string{origin, c(0), q})
		return nil
	}, ir.OpAtenAtan2)
	lower(17, func(b *Builder, n *ir.Node) error {
		// hypot(x, y) = sqrt(x² + y²)
		r := reader(b, n)
		dt := r.out(0).DType
		x, y := r.In("self", dt), r.In("other", dt)
		if r.err != nil {
			return r.err
		}
		b.Emit(n.Results[0], "Sqrt", []string{b.Tmp("Add", []string{b.Tmp("Mul", []string{x, x}), b.Tmp("Mul", []string{y, y})})})
		return nil
	}, ir.OpAtenHypot)
	lower(17, binaryOp("Max"), ir.OpAtenMaxOther)
	lower(17, binaryOp("Min"), ir.OpAtenMinOther)
	bound := func(opType, arg string) Lowering {
		return func(b *Builder, n *ir.Node) error {
			r := reader(b, n)
			dt := r.out(0).DType
			x, y := r.In("self", dt), r.In(arg, dt)
			if r.err != nil {
				return r.err
			}
			b.Emit(n.Results[0], opType, []string{x, y})
			return nil
		}
	}
	lower(17, bound("Max", "min"), ir.OpAtenClampMin)
	lower(17, bound("Min", "max"), ir.OpAtenClampMax)
	bitwise := func(boolOp, intOp string) Lowering {
		return func(b *Builder, n *ir.Node) error {
			r := reader(b, n)
			dt := r.out(0).DType
			x, y := r.In("self", dt), r.In("other", dt)
			if r.err != nil {
				return r.err
			}
			if dt == ir.Bool {
				b.Emit(n.Results[0], boolOp, []string{x, y})
			} else {
				b.Emit(n.Results[0], intOp, []string{x, y})
			}
			return nil
		}
	}
	lower(18, bitwise("And", "BitwiseAnd"), ir.OpAtenBitwiseAndScalar)
	lower(18, bitwise("Or", "BitwiseOr"), ir.OpAtenBitwiseOrScalar)
	lower(18, bitwise("Xor", "BitwiseXor"), ir.OpAtenBitwiseXorTensor, ir.OpAtenBitwiseXorScalar)

	// Reductions.
	lower(17, func(b *Builder, n *ir.Node) error {
		// max.dim / min.dim: the values (ReduceMax/Min) and the first index (ArgMax/Min).
		r := reader(b, n)
		dt := r.DT("self")
		rank := r.Rank("self")
		dim := normDim(r.Int("dim"), rank)
		keep := r.Bool("keepdim")
		x := r.T("self")
		if r.err != nil {
			return r.err
		}
		isMax := n.Op == ir.OpAtenMaxDim
		red, arg := "ReduceMin", "ArgMin"
		if isMax {
			red, arg = "ReduceMax", "ArgMax"
		}
		k := int64(0)
		if keep {
			k = 1
		}
		if rank == 0 {
			b.Bind(n.Results[0], x)
			b.Bind(n.Results[1], b.I64(0))
			return nil
		}
		xin := x
		if dt == ir.Bool {
			xin, _ = b.CastTo(x, ir.Bool, ir.Int32)
		}
		v := b.reduceOver(red, xin, []int64{dim}, keep)
		if dt == ir.Bool {
			v, _ = b.CastTo(v, ir.Int32, ir.Bool)
		}
		b.Bind(n.Results[0], v)
		b.Emit(n.Results[1], arg, []string{xin}, AttrInt("axis", dim), AttrInt("keepdims", k), AttrInt("select_last_index", 0))
		return nil
	}, ir.OpAtenMaxDim, ir.OpAtenMinDim)
	lower(17, func(b *Builder, n *ir.Node) error {
		// max.default / min.default: every element.
		r := reader(b, n)
		dt := r.DT("self")
		x := r.T("self")
		rank := r.Rank("self")
		if r.err != nil {
			return r.err
		}
		red := "ReduceMin"
		if n.Op == ir.OpAtenMax {
			red = "ReduceMax"
		}
		xin := x
		if dt == ir.Bool {
			xin, _ = b.CastTo(x, ir.Bool, ir.Int32)
		}
		v := b.reduceOver(red, xin, reduceAxes(r, "", rank), false)
		if dt == ir.Bool {
			v, _ = b.CastTo(v, ir.Int32, ir.Bool)
		}
		b.Bind(n.Results[0], v)
		return nil
	}, ir.OpAtenMax, ir.OpAtenMin)
	lower(17, func(b *Builder, n *ir.Node) error {
		// prod: ReduceProd in the result dtype.
		r := reader(b, n)
		dt := r.out(0).DType
		x := r.In("self", dt)
		rank := r.Rank("self")
		keep := r.n.Op.ArgIndex("keepdim") >= 0 && r.Bool("keepdim")
		axes := reduceAxes(r, "dim", rank)
		if r.err != nil {
			return r.err
		}
		if rank == 0 {
			b.Bind(n.Results[0], x)
			return nil
		}
		b.Bind(n.Results[0], b.reduceOver("ReduceProd", x, axes, keep))
		return nil
	}, ir.OpAtenProd, ir.OpAtenProdDimInt)
	anyAll := func(all bool) Lowering {
		return func(b *Builder, n *ir.Node) error {
			// any: count of nonzero > 0; all: count of zeros == 0 (empty
			// reductions give False / True as in torch).
			r := reader(b, n)
			x := r.In("self", ir.Bool)
			rank := r.Rank("self")
			keep := r.n.Op.ArgIndex("keepdim") >= 0 && r.Bool("keepdim")
			axes := reduceAxes(r, "dim", rank)
			if r.err != nil {
				return r.err
			}
			if all {
				x = b.Tmp("Not", []string{x})
			}
			cnt := b.reduceOver("ReduceSum", b.Tmp("Cast", []string{x}, AttrInt("to", 7)), axes, keep)
			var res string
			if all {
				res = b.Tmp("Equal", []string{cnt, b.I64(0)})
			} else {
				res = b.Tmp("Greater", []string{cnt, b.I64(0)})
			}
			out, err := b.CastTo(res, ir.Bool, r.out(0).DType)
			if err != nil {
				return err
			}
			b.Bind(n.Results[0], out)
			return nil
		}
	}
	lower(17, anyAll(false), ir.OpAtenAny, ir.OpAtenAnyDim, ir.OpAtenAnyDims)
	lower(17, anyAll(true), ir.OpAtenAll, ir.OpAtenAllDim, ir.OpAtenAllDims)
	variance := func(std, withMean bool) Lowering {
		return func(b *Builder, n *ir.Node) error {
			r := reader(b, n)
			dt := r.out(0).DType
			x := r.In("self", dt)
			rank := r.Rank("self")
			shape := r.Shape("self")
			keep := r.n.Op.ArgIndex("keepdim") >= 0 && r.Bool("keepdim")
			axes := reduceAxes(r, "dim", rank)
			corr := correctionOf(r)
			if r.err != nil {
				return r.err
			}
			if !dt.IsFloat() {
				return fmt.Errorf("variance of a %s tensor", dt)
			}
			v, m, err := b.variance(x, shape, axes, corr, keep, dt)
			if err != nil {
				return err
			}
			if std {
				v = b.Tmp("Sqrt", []string{v})
			}
			b.Bind(n.Results[0], v)
			if withMean {
				b.Bind(n.Results[1], m)
			}
			return nil
		}
	}
	lower(17, variance(false, false), ir.OpAtenVarCorrection, ir.OpAtenVarDim, ir.OpAtenVar)
	lower(17, variance(true, false), ir.OpAtenStdCorrection, ir.OpAtenStdDim, ir.OpAtenStd)
	lower(17, variance(false, true), ir.OpAtenVarMeanCorrection)
	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		dt := r.out(0).DType
		x := r.In("self", dt)
		rank := r.Rank("self")
		keep := r.Bool("keepdim")
		axes := reduceAxes(r, "dim", rank)
		if r.err != nil {
			return r.err
		}
		b.Bind(n.Results[0], b.reduceOver("ReduceLogSumExp", x, axes, keep))
		return nil
	}, ir.OpAtenLogsumexp)
	lower(17, lowerBetaAlphaMatMul("batch1", "batch2"), ir.OpAtenBaddbmm)
	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		dt := r.out(0).DType
		x, y := r.In("self", dt), r.In("vec", dt)
		if r.err != nil {
			return r.err
		}
		b.Emit(n.Results[0], "MatMul", []string{x, y})
		return nil
	}, ir.OpAtenMv)
	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		dt := r.out(0).DType
		x, y := r.In("self", dt), r.In("tensor", dt)
		if r.err != nil {
			return r.err
		}
		b.Emit(n.Results[0], "MatMul", []string{x, y})
		return nil
	}, ir.OpAtenDot)
	lower(17, func(b *Builder, n *ir.Node) error {
		// _cdist_forward: ‖x1_i − x2_j‖_p over the last dim, by broadcasting.
		r := reader(b, n)
		dt := r.out(0).DType
		x1, x2 := r.In("x1", dt), r.In("x2", dt)
		p := r.Float("p")
		if r.err != nil {
			return r.err
		}
		d := b.Tmp("Sub", []string{b.Tmp("Unsqueeze", []string{x1, b.I64s(-2)}), b.Tmp("Unsqueeze", []string{x2, b.I64s(-3)})})
		out, err := b.pNorm(d, p, dt)
		if err != nil {
			return err
		}
		b.Bind(n.Results[0], out)
		return nil
	}, ir.OpAten_CdistForward)
	lower(17, func(b *Builder, n *ir.Node) error {
		// _pdist_forward: the upper triangle (i < j, row major) of the
		// pairwise distance matrix.
		r := reader(b, n)
		dt := r.out(0).DType
		x := r.In("self", dt)
		p := r.Float("p")
		shape := r.Shape("self")
		if r.err != nil {
			return r.err
		}
		rows, ok := shape[0].Const()
		if !ok {
			return fmt.Errorf("pdist over a symbolic row count (%s)", shape[0])
		}
		d := b.Tmp("Sub", []string{b.Tmp("Unsqueeze", []string{x, b.I64s(1)}), b.Tmp("Unsqueeze", []string{x, b.I64s(0)})})
		full, err := b.pNorm(d, p, dt)
		if err != nil {
			return err
		}
		var idx []int64
		for i := int64(0); i < rows; i++ {
			for j := i + 1; j < rows; j++ {
				idx = append(idx, i*rows+j)
			}
		}
		flat := b.Tmp("Reshape", []string{full, b.I64s(-1)})
		b.Emit(n.Results[0], "Gather", []string{flat, b.I64s(idx...)}, AttrInt("axis", 0))
		return nil
	}, ir.OpAten_PdistForward)
}

// pNorm is the p-norm of d over its last dim: p = 0 counts nonzeros, p = inf
// is the max, 1 and 2 use ReduceL1/L2.
func (b *Builder) pNorm(d string, p float64, dt ir.DType) (string, error) {
	last := []int64{-1}
	switch {
	case p == 0:
		nz := b.Tmp("Not", []string{b.Tmp("Equal", []string{d, b.zeroOf(dt)})})
		c, err := b.CastTo(nz, ir.Bool, dt)
		if err != nil {
			return "", err
		}
		return b.reduceOver("ReduceSum", c, last, false), nil
	case math.IsInf(p, 1):
		return b.reduceOver("ReduceMax", b.Tmp("Abs", []string{d}), last, false), nil
	case p == 1:
		return b.reduceOver("ReduceSum", b.Tmp("Abs", []string{d}), last, false), nil
	case p == 2:
		return b.Tmp("Sqrt", []string{b.reduceOver("ReduceSum", b.Tmp("Mul", []string{d, d}), last, false)}), nil
	}
	pe, err := b.Scalar(dt, p)
	if err != nil {
		return "", err
	}
	inv, _ := b.Scalar(dt, 1/p)
	s := b.reduceOver("ReduceSum", b.Tmp("Pow", []string{b.Tmp("Abs", []string{d}), pe}), last, false)
	return b.Tmp("Pow", []string{s, inv}), nil
}
