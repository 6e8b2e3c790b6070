package onnx

import (
	"fmt"
	"math"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
	pb "github.com/fxport/fxport/targets/onnx/onnxpb"
)

// Padding, resampling, pooling and normalization ops beyond the basic
// table, each with torch's semantics (checked against torch eager in ORT by
// TestOpCasesGenuine).

// onnxPads turns torch's pad list (last dim first: left, right pairs) into
// ONNX Pad's [begin..., end...] over every dim.
func onnxPads(pad []int64, rank int) ([]int64, error) {
	if len(pad)%2 != 0 || len(pad)/2 > rank {
		return nil, fmt.Errorf("pad list %v does not fit a rank-%d tensor", pad, rank)
	}
	out := make([]int64, 2*rank)
	for i := 0; i < len(pad)/2; i++ {
		d := rank - 1 - i
		out[d], out[rank+d] = pad[2*i], pad[2*i+1]
	}
	return out, nil
}

// padLowering lowers a pad op with a fixed mode ("" = read the mode argument).
func padLowering(fixedMode, padArg string) Lowering {
	return func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		dt := r.out(0).DType
		x := r.In("self", dt)
		rank := r.Rank("self")
		pad := r.Ints(padArg)
		mode := fixedMode
		value := 0.0
		if mode == "" {
			mode = r.Str("mode")
			if r.Has("value") {
				value = r.Float("value")
			}
		} else if n.Op.ArgIndex("value") >= 0 {
			value = r.Float("value")
		}
		if r.err != nil {
			return r.err
		}
		pads, err := onnxPads(pad, rank)
		if err != nil {
			return err
		}
		switch mode {
		case "constant":
			v, err := b.Scalar(dt, value)
			if err != nil {
				return err
			}
			b.Emit(n.Results[0], "Pad", []string{x, b.I64s(pads...), v}, AttrString("mode", "constant"))
		case "reflect", "replicate":
			m := map[string]string{"reflect": "reflect", "replicate": "edge"}[mode]
			b.Emit(n.Results[0], "Pad", []string{x, b.I64s(pads...)}, AttrString("mode", m))
		case "circular":
			for _, p := range pads {
				if p < 0 {
					return fmt.Errorf("circular padding with negative pads %v", pad)
				}
			}
			if b.opset >= 19 {
				b.Emit(n.Results[0], "Pad", []string{x, b.I64s(pads...)}, AttrString("mode", "wrap"))
				return nil
			}
			// Before opset 19: the wrapped slices concatenated on each dim.
			shape, ok := staticShape(r.Shape("self"))
			if !ok {
				return fmt.Errorf("circular padding of a symbolic shape needs opset 19 (Pad mode wrap)")
			}
			y := x
			for d := 0; d < rank; d++ {
				lo, hi := pads[d], pads[rank+d]
				if lo == 0 && hi == 0 {
					continue
				}
				if lo > shape[d] || hi > shape[d] {
					return fmt.Errorf("circular padding %v wider than the dim (%d)", pad, shape[d])
				}
				parts := []string{}
				if lo > 0 {
					parts = append(parts, b.Tmp("Slice", []string{y, b.I64s(shape[d] - lo), b.I64s(shape[d]), b.I64s(int64(d))}))
				}
				parts = append(parts, y)
				if hi > 0 {
					parts = append(parts, b.Tmp("Slice", []string{y, b.I64s(0), b.I64s(hi), b.I64s(int64(d))}))
				}
				y = b.Tmp("Concat", parts, AttrInt("axis", int64(d)))
			}
			b.Bind(n.Results[0], y)
		default:
			return fmt.Errorf("padding mode %q", mode)
		}
		return nil
	}
}

// resizeLowering lowers the upsample_* family to Resize. kind is "nearest",
// "nearest-exact", "linear" or "cubic"; vec says the op takes output_size /
// scale_factors lists (else output_size plus per-dim scales_*).
func resizeLowering(kind string, vec bool) Lowering {
	return func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		dt := r.out(0).DType
		inName := "self"
		if vec {
			inName = "input"
		}
		x := r.In(inName, dt)
		inShape, outShape := r.Shape(inName), r.out(0).Shape
		alignCorners := false
		if n.Op.ArgIndex("align_corners") >= 0 {
			alignCorners = r.Bool("align_corners")
		}
		if r.err != nil {
			return r.err
		}
		// The resampled dims need static sizes (the scales are checked
		// against them); the batch and channel dims may be symbolic: they
		// get scale 1, or their runtime size in the sizes input.
		in, inOK := leadingFreeShape(inShape, 2)
		out, outOK := leadingFreeShape(outShape, 2)
		if !inOK || !outOK || len(in) != len(out) {
			return fmt.Errorf("resampling with symbolic spatial dims (%v → %v) is not lowered", inShape, outShape)
		}
		k := len(in) - 2
		// torch maps coordinates with the given scale factors when they are
		// given (and align_corners is off), else with in/out.
		var scales []float64
		if vec && r.Has("scale_factors") {
			a := r.Arg("scale_factors")
			for _, e := range a.List {
				switch e.Kind {
				case ir.ArgFloat:
					scales = append(scales, e.Float)
				case ir.ArgInt:
					scales = append(scales, float64(e.Int))
				}
			}
		} else if !vec {
			names := map[int][]string{1: {"scales"}, 2: {"scales_h", "scales_w"}, 3: {"scales_d", "scales_h", "scales_w"}}[k]
			for _, nm := range names {
				if n.Op.ArgIndex(nm) < 0 || !r.Has(nm) {
					scales = nil
					break
				}
				scales = append(scales, r.Float(nm))
			}
		}
		if len(scales) == 1 && k > 1 {
			for len(scales) < k {
				scales = append(scales, scales[0])
			}
		}
		useScales := len(scales) == k && !alignCorners
		var s32 []float32
		for i := 0; useScales && i < k; i++ {
			if int64(math.Floor(float64(in[2+i])*scales[i])) != out[2+i] {
				useScales = false
				break
			}
			// ONNX shape inference computes floor(in · float32 scale): nudge it up
			// by ulps until that gives torch's size (the mapping moves by
			// ~1e-7 relative).
			f := float32(scales[i])
			for j := 0; j < 4 && int64(math.Floor(float64(in[2+i])*float64(f))) < out[2+i]; j++ {
				f = math.Nextafter32(f, float32(math.Inf(1)))
			}
			if int64(math.Floor(float64(in[2+i])*float64(f))) != out[2+i] {
				useScales = false
			}
			s32 = append(s32, f)
		}
		attrs := []*pb.AttributeProto{}
		switch kind {
		case "nearest":
			attrs = append(attrs, AttrString("mode", "nearest"), AttrString("coordinate_transformation_mode", "asymmetric"), AttrString("nearest_mode", "floor"))
		case "nearest-exact":
			attrs = append(attrs, AttrString("mode", "nearest"), AttrString("coordinate_transformation_mode", "half_pixel"), AttrString("nearest_mode", "round_prefer_ceil"))
		case "linear", "cubic":
			ct := "pytorch_half_pixel"
			if alignCorners {
				ct = "align_corners"
			}
			attrs = append(attrs, AttrString("mode", kind), AttrString("coordinate_transformation_mode", ct))
			if kind == "cubic" {
				attrs = append(attrs, AttrFloat("cubic_coeff_a", -0.75))
			}
		}
		if useScales {
			fs := append([]float32{1, 1}, s32...)
			data := make([]byte, 0, 4*len(fs))
			for _, f := range fs {
				u := math.Float32bits(f)
				data = append(data, byte(u), byte(u>>8), byte(u>>16), byte(u>>24))
			}
			sc, err := b.Const(ir.Float32, []int64{int64(len(fs))}, data)
			if err != nil {
				return err
			}
			b.Emit(n.Results[0], "Resize", []string{x, "", sc}, attrs...)
			return nil
		}
		sizes, err := b.ShapeTensor(outShape)
		if err != nil {
			return err
		}
		b.Emit(n.Results[0], "Resize", []string{x, "", "", sizes}, attrs...)
		return nil
	}
}

// leadingFreeShape is shape's static sizes, with -1 for the first lead dims
// where they are symbolic; false when a later dim is symbolic (or the rank
// is below lead).
func leadingFreeShape(shape []sym.Expr, lead int) ([]int64, bool) {
	if len(shape) < lead {
		return nil, false
	}
	out := make([]int64, len(shape))
	for i, d := range shape {
		c, ok := d.Const()
		switch {
		case ok:
			out[i] = c
		case i < lead:
			out[i] = -1
		default:
			return nil, false
		}
	}
	return out, true
}

// poolAttrs expands a pooling op's int lists to k dims.
func poolList(v []int64, k int, def int64) []int64 {
	if len(v) == 0 {
		v = []int64{def}
	}
	if len(v) == 1 && k > 1 {
		out := make([]int64, k)
		for i := range out {
			out[i] = v[0]
		}
		return out
	}
	return v
}

// poolSpatial is the number of spatial dims of a pooling op; its input
// has that many plus two dims, or plus one unbatched.
var poolSpatial = map[ir.Op]int{
	ir.OpAtenAvgPool1d: 1, ir.OpAtenAvgPool2d: 2, ir.OpAtenAvgPool3d: 3,
	ir.OpAtenMaxPool1dWithIndices: 1, ir.OpAtenMaxPool2dWithIndices: 2, ir.OpAtenMaxPool3dWithIndices: 3,
	ir.OpAtenMaxPool1d: 1, ir.OpAtenMaxPool2d: 2, ir.OpAtenMaxPool3d: 3,
}

// unbatchedIn gives an unbatched input (rank k+1, ONNX's pools and Col2Im
// want a batch dim) a leading 1; it reports whether it did.
func unbatchedIn(b *Builder, x string, rank, k int) (string, bool) {
	if rank != k+1 {
		return x, false
	}
	return b.Tmp("Unsqueeze", []string{x, b.I64s(0)}), true
}

// squeezeOut binds v to name without the leading 1 unbatchedIn added.
func squeezeOut(b *Builder, v *ir.Value, name string) {
	b.Emit(v, "Squeeze", []string{name, b.I64s(0)})
}

// ceilTrim is, for a ceil_mode pool over a static spatial shape, torch's
// output size on every spatial axis where it is one less than ONNX's
// shape inference (torch drops a last window that would start in the
// right padding), and nil when no axis differs. The windows that remain
// are the same, so the ONNX result sliced to these sizes is torch's.
func ceilTrim(shape []sym.Expr, k int, ceil bool, ks, st, pad, dil []int64) map[int]int64 {
	if !ceil || len(shape) < k {
		return nil
	}
	var out map[int]int64
	for i, d := range shape[len(shape)-k:] {
		in, ok := d.Const()
		if !ok || st[i] <= 0 {
			return nil
		}
		eff := ks[i]
		if dil != nil {
			eff = dil[i]*(ks[i]-1) + 1
		}
		span := in + 2*pad[i] - eff
		if span < 0 {
			return nil
		}
		onnx := (span+st[i]-1)/st[i] + 1
		if (onnx-1)*st[i] >= in+pad[i] {
			if out == nil {
				out = map[int]int64{}
			}
			out[i] = onnx - 1
		}
	}
	return out
}

// trimPooled slices the batched pool result y to ceilTrim's sizes.
func trimPooled(b *Builder, y string, trim map[int]int64) string {
	if trim == nil {
		return y
	}
	var axes, ends []int64
	for i := 0; i < 3; i++ {
		if e, ok := trim[i]; ok {
			axes, ends = append(axes, int64(2+i)), append(ends, e)
		}
	}
	return b.Tmp("Slice", []string{y, b.I64s(make([]int64, len(axes))...), b.I64s(ends...), b.I64s(axes...)})
}

// pooledOut binds v to the batched result y, squeezing the batch dim
// unbatchedIn added.
func pooledOut(b *Builder, v *ir.Value, y string, unb bool) {
	if unb {
		squeezeOut(b, v, y)
		return
	}
	b.Bind(v, y)
}

func b2i(v bool) int64 {
	if v {
		return 1
	}
	return 0
}

func init() {
	lower(17, padLowering("constant", "pad"), ir.OpAtenConstantPadNd)
	lower(17, padLowering("reflect", "padding"), ir.OpAtenReflectionPad1d, ir.OpAtenReflectionPad2d, ir.OpAtenReflectionPad3d)
	lower(17, padLowering("replicate", "padding"), ir.OpAtenReplicationPad1d, ir.OpAtenReplicationPad2d, ir.OpAtenReplicationPad3d)
	lower(17, padLowering("", "pad"), ir.OpAtenPad)

	lower(17, resizeLowering("linear", true), ir.OpAtenUpsampleBilinear2dVec, ir.OpAtenUpsampleLinear1dVec, ir.OpAtenUpsampleTrilinear3dVec)
	lower(17, resizeLowering("linear", false), ir.OpAtenUpsampleBilinear2d, ir.OpAtenUpsampleLinear1d, ir.OpAtenUpsampleTrilinear3d)
	lower(17, resizeLowering("cubic", true), ir.OpAtenUpsampleBicubic2dVec)
	lower(17, resizeLowering("cubic", false), ir.OpAtenUpsampleBicubic2d)
	lower(17, resizeLowering("nearest", true), ir.OpAtenUpsampleNearest2dVec, ir.OpAtenUpsampleNearest1dVec, ir.OpAtenUpsampleNearest3dVec)
	lower(17, resizeLowering("nearest", false), ir.OpAtenUpsampleNearest2d, ir.OpAtenUpsampleNearest1d, ir.OpAtenUpsampleNearest3d)
	lower(17, resizeLowering("nearest-exact", true), ir.OpAten_UpsampleNearestExact2dVec)
	lower(17, resizeLowering("nearest-exact", false), ir.OpAten_UpsampleNearestExact2d)

	lower(17, func(b *Builder, n *ir.Node) error {
		// grid_sampler_2d → GridSample (mode names changed at opset 20).
		r := reader(b, n)
		dt := r.out(0).DType
		x, g := r.In("input", dt), r.In("grid", dt)
		im, pm := r.Int("interpolation_mode"), r.Int("padding_mode")
		ac := r.Bool("align_corners")
		if r.err != nil {
			return r.err
		}
		modes := []string{"bilinear", "nearest", "bicubic"}
		if b.opset >= 20 {
			modes = []string{"linear", "nearest", "cubic"}
		}
		pads := []string{"zeros", "border", "reflection"}
		if im < 0 || im > 2 || pm < 0 || pm > 2 {
			return fmt.Errorf("grid_sampler_2d interpolation_mode %d / padding_mode %d", im, pm)
		}
		b.Emit(n.Results[0], "GridSample", []string{x, g}, AttrString("mode", modes[im]), AttrString("padding_mode", pads[pm]), AttrInt("align_corners", b2i(ac)))
		return nil
	}, ir.OpAtenGridSampler2d)

	// Average pooling of any rank; divisor_override divides the window sum.
	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		dt := r.out(0).DType
		x := r.In("self", dt)
		ks := r.Ints("kernel_size")
		k := poolSpatial[n.Op]
		shape := r.Shape("self")
		x, unb := unbatchedIn(b, x, r.Rank("self"), k)
		st, pad := r.Ints("stride"), r.Ints("padding")
		ceil, cip := r.Bool("ceil_mode"), r.Bool("count_include_pad")
		div := int64(0)
		if n.Op.ArgIndex("divisor_override") >= 0 && r.Has("divisor_override") {
			div = r.Int("divisor_override")
		}
		if r.err != nil {
			return r.err
		}
		ks = poolList(ks, k, 1)
		if len(st) == 0 {
			st = ks
		}
		st, pad = poolList(st, k, 1), poolList(pad, k, 0)
		if div != 0 {
			if ceil {
				return fmt.Errorf("average pooling with both divisor_override and ceil_mode is not lowered")
			}
			cip = true
		}
		attrs := []*pb.AttributeProto{AttrInts("kernel_shape", ks...), AttrInts("strides", st...),
			AttrInts("pads", append(append([]int64{}, pad...), pad...)...), AttrInt("ceil_mode", b2i(ceil)), AttrInt("count_include_pad", b2i(cip))}
		trim := ceilTrim(shape, k, ceil, ks, st, pad, nil)
		if div == 0 && !unb && trim == nil {
			b.Emit(n.Results[0], "AveragePool", []string{x}, attrs...)
			return nil
		}
		y := trimPooled(b, b.Tmp("AveragePool", []string{x}, attrs...), trim)
		if div != 0 {
			win := int64(1)
			for _, v := range ks {
				win *= v
			}
			s, err := b.Scalar(dt, float64(win)/float64(div))
			if err != nil {
				return err
			}
			if !unb {
				b.Emit(n.Results[0], "Mul", []string{y, s})
				return nil
			}
			y = b.Tmp("Mul", []string{y, s})
		}
		pooledOut(b, n.Results[0], y, unb)
		return nil
	}, ir.OpAtenAvgPool1d, ir.OpAtenAvgPool2d, ir.OpAtenAvgPool3d)

	// Max pooling of any rank, with torch's indices: ONNX flattens the
	// whole tensor, torch each (n, c) plane, so indices are taken modulo
	// the plane size.
	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		dt := r.out(0).DType
		x := r.In("self", dt)
		k := poolSpatial[n.Op]
		x, unb := unbatchedIn(b, x, r.Rank("self"), k)
		ks, st, pad, dil := r.Ints("kernel_size"), r.Ints("stride"), r.Ints("padding"), r.Ints("dilation")
		ceil := r.Bool("ceil_mode")
		shape := r.Shape("self")
		if r.err != nil {
			return r.err
		}
		ks = poolList(ks, k, 1)
		if len(st) == 0 {
			st = ks
		}
		st, pad, dil = poolList(st, k, 1), poolList(pad, k, 0), poolList(dil, k, 1)
		attrs := []*pb.AttributeProto{AttrInts("kernel_shape", ks...), AttrInts("strides", st...),
			AttrInts("pads", append(append([]int64{}, pad...), pad...)...), AttrInts("dilations", dil...), AttrInt("ceil_mode", b2i(ceil))}
		trim := ceilTrim(shape, k, ceil, ks, st, pad, dil)
		if len(n.Results) < 2 || n.Results[1].NumUses() == 0 {
			if !unb && trim == nil {
				b.EmitN([]*ir.Value{n.Results[0]}, "MaxPool", []string{x}, attrs...)
				return nil
			}
			pooledOut(b, n.Results[0], trimPooled(b, b.Tmp("MaxPool", []string{x}, attrs...), trim), unb)
			return nil
		}
		plane := int64(1)
		for _, d := range shape[len(shape)-k:] {
			c, ok := d.Const()
			if !ok {
				return fmt.Errorf("max pooling indices over a symbolic spatial shape %v", shape)
			}
			plane *= c
		}
		outs := b.TmpN("MaxPool", []string{x}, 2, attrs...)
		if !unb && trim == nil {
			b.Bind(n.Results[0], outs[0])
			b.Emit(n.Results[1], "Mod", []string{outs[1], b.I64(plane)})
			return nil
		}
		pooledOut(b, n.Results[0], trimPooled(b, outs[0], trim), unb)
		pooledOut(b, n.Results[1], trimPooled(b, b.Tmp("Mod", []string{outs[1], b.I64(plane)}), trim), unb)
		return nil
	}, ir.OpAtenMaxPool2dWithIndices, ir.OpAtenMaxPool3dWithIndices, ir.OpAtenMaxPool1dWithIndices, ir.OpAtenMaxPool1d,
		ir.OpAtenMaxPool2d, ir.OpAtenMaxPool3d)

	// Adaptive average pooling: even windows are AveragePool; uneven ones
	// (torch's windows [⌊i·in/out⌋, ⌈(i+1)·in/out⌉)) are a MatMul with the
	// averaging matrix of each spatial dim.
	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		dt := r.out(0).DType
		x := r.In("self", dt)
		osz := r.Ints("output_size")
		shape := r.Shape("self")
		if r.err != nil {
			return r.err
		}
		k := len(osz)
		if k > len(shape) {
			return fmt.Errorf("adaptive pooling to %d dims of a rank-%d tensor", k, len(shape))
		}
		// Only the pooled dims need static sizes (the windows are built
		// from them); the leading batch and channel dims may be symbolic
		// (-1 below: AveragePool and MatMul carry them through as they are).
		sp, ok := staticShape(shape[len(shape)-k:])
		if !ok {
			return fmt.Errorf("adaptive pooling over the symbolic spatial dims of %v", shape)
		}
		in := make([]int64, len(shape))
		for i := range in {
			in[i] = -1
		}
		copy(in[len(in)-k:], sp)
		even := true
		var ks []int64
		for i, o := range osz {
			if o <= 0 || sp[i]%o != 0 {
				even = false
				break
			}
			ks = append(ks, sp[i]/o)
		}
		if even {
			allOne := true
			for _, o := range osz {
				allOne = allOne && o == 1
			}
			if allOne && len(in) == k+2 {
				b.Emit(n.Results[0], "GlobalAveragePool", []string{x})
				return nil
			}
			if xb, unb := unbatchedIn(b, x, len(in), k); unb {
				squeezeOut(b, n.Results[0], b.Tmp("AveragePool", []string{xb}, AttrInts("kernel_shape", ks...), AttrInts("strides", ks...)))
				return nil
			}
			b.Emit(n.Results[0], "AveragePool", []string{x}, AttrInts("kernel_shape", ks...), AttrInts("strides", ks...))
			return nil
		}
		if !dt.IsFloat() {
			return fmt.Errorf("uneven adaptive pooling of a %s tensor", dt)
		}
		// Pool the last dim, then rotate it to the front of the spatial
		// dims; after k steps every dim is pooled and in place.
		y := x
		rank := len(in)
		cur := append([]int64{}, in...)
		for step := 0; step < k; step++ {
			d := k - 1 - step // spatial dim now last
			inLen, outLen := cur[rank-1], osz[d]
			m := make([]float64, inLen*outLen)
			for o := int64(0); o < outLen; o++ {
				s := (o * inLen) / outLen
				e := ((o+1)*inLen + outLen - 1) / outLen
				for i := s; i < e; i++ {
					m[i*outLen+o] = 1 / float64(e-s)
				}
			}
			mat, err := b.floatConst(dt, []int64{inLen, outLen}, m)
			if err != nil {
				return err
			}
			y = b.Tmp("MatMul", []string{y, mat})
			cur[rank-1] = outLen
			if k > 1 {
				// move the pooled last dim to the front of the spatial dims
				perm := []int64{}
				for i := 0; i < rank-k; i++ {
					perm = append(perm, int64(i))
				}
				perm = append(perm, int64(rank-1))
				for i := rank - k; i < rank-1; i++ {
					perm = append(perm, int64(i))
				}
				y = b.Tmp("Transpose", []string{y}, AttrInts("perm", perm...))
				nc := append([]int64{}, cur[:rank-k]...)
				nc = append(nc, cur[rank-1])
				nc = append(nc, cur[rank-k:rank-1]...)
				cur = nc
			}
		}
		b.Bind(n.Results[0], y)
		return nil
	}, ir.OpAtenAdaptiveAvgPool1d, ir.OpAtenAdaptiveAvgPool2d, ir.OpAten_AdaptiveAvgPool2d, ir.OpAten_AdaptiveAvgPool3d)

}

// floatConst is a constant of dtype dt (a float type) holding vs.
func (b *Builder) floatConst(dt ir.DType, shape []int64, vs []float64) (string, error) {
	var data []byte
	for _, v := range vs {
		e, err := encodeScalar(dt, v)
		if err != nil {
			return "", err
		}
		data = append(data, e...)
	}
	return b.Const(dt, shape, data)
}

// batchNormStats computes training-mode batch norm over every dim but 1:
// the output, the batch mean and rstd ([C]) and the biased variance.
func (b *Builder) batchNormStats(r *argReader, dt ir.DType, eps float64) (out, mean, rstd, variance string, err error) {
	x := r.In("input", dt)
	shape := r.Shape("input")
	if r.err != nil {
		return "", "", "", "", r.err
	}
	c, ok := shape[1].Const()
	if !ok {
		return "", "", "", "", fmt.Errorf("batch norm over a symbolic channel count")
	}
	axes := []int64{0}
	bshape := []int64{1, c}
	for i := 2; i < len(shape); i++ {
		axes = append(axes, int64(i))
		bshape = append(bshape, 1)
	}
	m := b.reduceOver("ReduceMean", x, axes, true)
	d := b.Tmp("Sub", []string{x, m})
	v := b.reduceOver("ReduceMean", b.Tmp("Mul", []string{d, d}), axes, true)
	e, err := b.Scalar(dt, eps)
	if err != nil {
		return "", "", "", "", err
	}
	rs := b.Tmp("Reciprocal", []string{b.Tmp("Sqrt", []string{b.Tmp("Add", []string{v, e})})})
	y := b.Tmp("Mul", []string{d, rs})
	if r.Has("weight") {
		y = b.Tmp("Mul", []string{y, b.Tmp("Reshape", []string{r.In("weight", dt), b.I64s(bshape...)})})
	}
	if r.Has("bias") {
		y = b.Tmp("Add", []string{y, b.Tmp("Reshape", []string{r.In("bias", dt), b.I64s(bshape...)})})
	}
	flat := b.I64s(c)
	return y, b.Tmp("Reshape", []string{m, flat}), b.Tmp("Reshape", []string{rs, flat}), b.Tmp("Reshape", []string{v, flat}), r.err
}

func init() {
	// Batch norm with batch statistics (training=True): the normalized
	// output and the saved mean/rstd; _functional also returns the updated
	// running statistics (momentum, unbiased variance). In eval mode
	// (training=False) the running statistics normalize.
	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		dt := r.out(0).DType
		eps, mom := r.Float("eps"), r.Float("momentum")
		training := r.Bool("training")
		hasStats := n.Op.ArgIndex("running_mean") >= 0
		if r.err != nil {
			return r.err
		}
		if !training {
			if !hasStats {
				return fmt.Errorf("batch norm without running statistics in eval mode")
			}
			x := r.In("input", dt)
			shape := r.Shape("input")
			bshape := []int64{1, -1}
			for range shape[2:] {
				bshape = append(bshape, 1)
			}
			e, _ := b.Scalar(dt, eps)
			rm := b.Tmp("Reshape", []string{r.In("running_mean", dt), b.I64s(bshape...)})
			rs := b.Tmp("Reciprocal", []string{b.Tmp("Sqrt", []string{b.Tmp("Add", []string{b.Tmp("Reshape", []string{r.In("running_var", dt), b.I64s(bshape...)}), e})})})
			y := b.Tmp("Mul", []string{b.Tmp("Sub", []string{x, rm}), rs})
			if r.Has("weight") {
				y = b.Tmp("Mul", []string{y, b.Tmp("Reshape", []string{r.In("weight", dt), b.I64s(bshape...)})})
			}
			if r.Has("bias") {
				y = b.Tmp("Add", []string{y, b.Tmp("Reshape", []string{r.In("bias", dt), b.I64s(bshape...)})})
			}
			b.Bind(n.Results[0], y)
			for i, res := range n.Results[1:] {
				if res.NumUses() > 0 {
					if i >= 2 {
						b.Bind(res, map[int]string{2: r.In("running_mean", dt), 3: r.In("running_var", dt)}[i])
						continue
					}
					return fmt.Errorf("the saved statistics of an eval-mode batch norm are used")
				}
			}
			return r.err
		}
		y, mean, rstd, v, err := b.batchNormStats(r, dt, eps)
		if err != nil {
			return err
		}
		b.Bind(n.Results[0], y)
		b.Bind(n.Results[1], mean)
		b.Bind(n.Results[2], rstd)
		if len(n.Results) == 5 {
			in, ok := staticShape(r.Shape("input"))
			if !ok {
				return fmt.Errorf("running statistics of a symbolic batch")
			}
			cnt := int64(1)
			for i, d := range in {
				if i != 1 {
					cnt *= d
				}
			}
			m1, _ := b.Scalar(dt, 1-mom)
			m, _ := b.Scalar(dt, mom)
			unb, _ := b.Scalar(dt, float64(cnt)/math.Max(float64(cnt-1), 1))
			rmean := b.Tmp("Add", []string{b.Tmp("Mul", []string{r.In("running_mean", dt), m1}), b.Tmp("Mul", []string{mean, m})})
			rvar := b.Tmp("Add", []string{b.Tmp("Mul", []string{r.In("running_var", dt), m1}), b.Tmp("Mul", []string{b.Tmp("Mul", []string{v, unb}), m})})
			b.Bind(n.Results[3], rmean)
			b.Bind(n.Results[4], rvar)
		}
		return r.err
	}, ir.OpAten_NativeBatchNormLegitNoStats, ir.OpAten_NativeBatchNormLegit, ir.OpAten_NativeBatchNormLegitFunctional)

	// _embedding_bag: each index's row (times per_sample_weights, padding_idx
	// rows dropped) accumulated into its bag by ScatterElements (sum, mean:
	// divided by the bag's count, max: opset 18); empty bags are zero.
	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		dt := r.out(0).DType
		w := r.In("weight", dt)
		idx := r.In("indices", ir.Int64)
		off := r.In("offsets", ir.Int64)
		mode := r.Int("mode")
		last := r.Bool("include_last_offset")
		pad := r.IntOr("padding_idx", -1)
		outShape := r.out(0).Shape
		if r.err != nil {
			return r.err
		}
		if mode == 2 && b.opset < 18 {
			return fmt.Errorf("embedding_bag mode max needs ONNX opset 18 or newer (ScatterElements max): export with --opset 18")
		}
		bags, ok := outShape[0].Const()
		if !ok {
			return fmt.Errorf("embedding_bag with a symbolic bag count")
		}
		if pad < 0 {
			if ws, ok := staticShape(r.Shape("weight")); ok && pad < 0 && pad != -1 {
				pad += ws[0]
			}
		}
		starts := off
		if last {
			starts = b.Tmp("Slice", []string{off, b.I64s(0), b.I64s(bags), b.I64s(0)})
		}
		nIdx := b.Tmp("Shape", []string{idx})
		pos := b.Tmp("Range", []string{b.I64(0), b.Tmp("Squeeze", []string{nIdx, b.I64s(0)}), b.I64(1)})
		le := b.Tmp("Cast", []string{b.Tmp("LessOrEqual", []string{b.Tmp("Unsqueeze", []string{starts, b.I64s(0)}), b.Tmp("Unsqueeze", []string{pos, b.I64s(1)})})}, AttrInt("to", 7))
		bag := b.Tmp("Sub", []string{b.reduceOver("ReduceSum", le, []int64{1}, false), b.I64(1)})
		rows := b.Tmp("Gather", []string{w, idx}, AttrInt("axis", 0))
		one, _ := b.Scalar(dt, 1)
		weight := b.Tmp("Expand", []string{one, nIdx})
		if pad >= 0 {
			keep := b.Tmp("Not", []string{b.Tmp("Equal", []string{idx, b.I64(pad)})})
			weight, _ = b.CastTo(keep, ir.Bool, dt)
		}
		if r.Has("per_sample_weights") {
			weight = b.Tmp("Mul", []string{weight, r.In("per_sample_weights", dt)})
		}
		zeros, err := b.ShapeTensor(outShape)
		if err != nil {
			return err
		}
		acc := b.Tmp("Expand", []string{b.zeroOf(dt), zeros})
		bagIdx := b.Tmp("Expand", []string{b.Tmp("Unsqueeze", []string{bag, b.I64s(1)}), b.Tmp("Shape", []string{rows})})
		cntZeros := b.Tmp("Expand", []string{b.zeroOf(dt), b.I64s(bags)})
		cnt := b.Tmp("ScatterElements", []string{cntZeros, bag, weight}, AttrInt("axis", 0), AttrString("reduction", "add"))
		if pad >= 0 && mode != 0 {
			// mean/max count only non-padding rows
			keep, _ := b.CastTo(b.Tmp("Not", []string{b.Tmp("Equal", []string{idx, b.I64(pad)})}), ir.Bool, dt)
			cnt = b.Tmp("ScatterElements", []string{cntZeros, bag, keep}, AttrInt("axis", 0), AttrString("reduction", "add"))
		} else if mode != 0 {
			cnt = b.Tmp("ScatterElements", []string{cntZeros, bag, b.Tmp("Expand", []string{one, nIdx})}, AttrInt("axis", 0), AttrString("reduction", "add"))
		}
		cnt2 := b.Tmp("Unsqueeze", []string{cnt, b.I64s(1)})
		var out string
		switch mode {
		case 0, 1:
			out = b.Tmp("ScatterElements", []string{acc, bagIdx, b.Tmp("Mul", []string{rows, b.Tmp("Unsqueeze", []string{weight, b.I64s(1)})})},
				AttrInt("axis", 0), AttrString("reduction", "add"))
			if mode == 1 {
				out = b.Tmp("Div", []string{out, b.Tmp("Max", []string{cnt2, one})})
			}
		case 2:
			ninf, _ := b.Scalar(dt, math.Inf(-1))
			src := rows
			if pad >= 0 {
				keep := b.Tmp("Unsqueeze", []string{b.Tmp("Not", []string{b.Tmp("Equal", []string{idx, b.I64(pad)})}), b.I64s(1)})
				src = b.Tmp("Where", []string{keep, rows, ninf})
			}
			init := b.Tmp("Expand", []string{ninf, zeros})
			out = b.Tmp("ScatterElements", []string{init, bagIdx, src}, AttrInt("axis", 0), AttrString("reduction", "max"))
			out = b.Tmp("Where", []string{b.Tmp("Greater", []string{cnt2, b.zeroOf(dt)}), out, b.zeroOf(dt)})
		default:
			return fmt.Errorf("embedding_bag mode %d", mode)
		}
		b.Bind(n.Results[0], out)
		return embeddingBagExtras(b, n, mode, bag, cnt, rows, out, idx, nIdx, pad)
	}, ir.OpAten_EmbeddingBag, ir.OpAten_EmbeddingBagForwardOnly)
}

func init() {
	lower(18, func(b *Builder, n *ir.Node) error {
		// col2im (fold) is ONNX Col2Im: the same [N, C·∏k, L] layout.
		r := reader(b, n)
		dt := r.out(0).DType
		x := r.In("self", dt)
		osz, ks, dil, pad, st := r.Ints("output_size"), r.Ints("kernel_size"), r.Ints("dilation"), r.Ints("padding"), r.Ints("stride")
		if r.err != nil {
			return r.err
		}
		ks, dil, pad, st = poolList(ks, 2, 1), poolList(dil, 2, 1), poolList(pad, 2, 0), poolList(st, 2, 1)
		if xb, unb := unbatchedIn(b, x, r.Rank("self"), 1); unb {
			squeezeOut(b, n.Results[0], b.Tmp("Col2Im", []string{xb, b.I64s(osz...), b.I64s(ks...)}, AttrInts("dilations", dil...),
				AttrInts("pads", append(append([]int64{}, pad...), pad...)...), AttrInts("strides", st...)))
			return nil
		}
		b.Emit(n.Results[0], "Col2Im", []string{x, b.I64s(osz...), b.I64s(ks...)}, AttrInts("dilations", dil...),
			AttrInts("pads", append(append([]int64{}, pad...), pad...)...), AttrInts("strides", st...))
		return nil
	}, ir.OpAtenCol2im)
}
