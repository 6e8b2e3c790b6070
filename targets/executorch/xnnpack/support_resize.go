package xnnpack

import (
	"github.com/fxport/fxport/ir"
)

// Support rules for bilinear resizing and transposed convolution
// (pte-format.md §8.6); their visitors are in nodes_resize.go.

func init() {
	addRule(ir.OpAtenUpsampleBilinear2dVec, "UpsampleBilinear2dConfig", checkResize)
	addRule(ir.OpAtenUpsampleBilinear2d, "UpsampleBilinear2dConfig", checkResize)
}

// checkResize: rank 4, static spatial sizes in and out, a literal
// align_corners, and scale factors (when given) that equal out/in exactly,
// since XNNPACK derives its scale from the sizes while torch uses 1/scale.
func checkResize(c *checker, n *ir.Node) string {
	in, out := n.Args[0].Value.Tensor(), n.Results[0].Tensor()
	if in.Rank() != 4 {
		return "rank-4 input only"
	}
	sz := make([]int64, 4)
	for i := 2; i < 4; i++ {
		a, ok1 := in.Shape[i].Const()
		b, ok2 := out.Shape[i].Const()
		if !ok1 || !ok2 {
			return "spatial sizes must be static"
		}
		sz[i-2], sz[i] = a, b
	}
	if a := n.Arg("align_corners"); a.Kind != ir.ArgBool {
		return "align_corners must be a literal"
	}
	var scales []float64
	if n.Op == ir.OpAtenUpsampleBilinear2dVec {
		if sf := n.Arg("scale_factors"); !sf.IsNone() {
			for _, e := range sf.List {
				f, ok := number(e)
				if !ok {
					return "scale factors must be literals"
				}
				scales = append(scales, f)
			}
			if len(scales) != 2 {
				return "two scale factors expected"
			}
		}
	} else {
		for _, k := range []string{"scales_h", "scales_w"} {
			if a := n.Arg(k); !a.IsNone() {
				f, ok := number(a)
				if !ok {
					return k + " must be a literal"
				}
				scales = append(scales, f)
			} else {
				scales = append(scales, 0)
			}
		}
	}
	if !n.Arg("align_corners").Bool() {
		for i, f := range scales {
			if f > 0 && float64(sz[i])*f != float64(sz[2+i]) {
				return "scale factor differs from output/input size (XNNPACK uses the size ratio)"
			}
		}
	}
	return ""
}

// checkDeconv: transposed 2-D convolution with literal groups dividing the
// static input channels, a constant weight and bias, static
// stride/padding/dilation/output_padding, and an output padding below the
// stride (XNNPACK's adjustment limit).
func checkDeconv(c *checker, n *ir.Node) string {
	g := n.Arg("groups")
	if g.Kind != ir.ArgInt || g.Int < 1 {
		return "groups must be a positive literal"
	}
	if quantConv(n) { // quant_deconv.go
		if _, why := matchQConv(n, func(v *ir.Value) bool { return c.consts[v] }); why != "" {
			return why
		}
	} else if !c.consts[n.Arg("weight").Value] {
		return "weight must be a constant"
	}
	if b := n.Arg("bias"); b.Kind == ir.ArgValue && !c.consts[b.Value] {
		return "bias must be a constant"
	}
	var v [4][]int64
	for i, k := range []string{"stride", "padding", "dilation", "output_padding"} {
		x, ok := ints(n.Arg(k), 2)
		if !ok {
			return k + " must be two static ints"
		}
		v[i] = x
	}
	for i := 0; i < 2; i++ {
		if v[0][i] < 1 || v[2][i] < 1 || v[1][i] < 0 || v[3][i] < 0 {
			return "stride and dilation must be positive, padding non-negative"
		}
		if v[3][i] >= v[0][i] {
			return "output_padding must be smaller than the stride"
		}
	}
	ch, ok := n.Arg("input").Value.Tensor().Shape[1].Const()
	if !ok {
		return "channels must be static"
	}
	if ch%g.Int != 0 {
		return "groups must divide the input channels"
	}
	if _, ok := n.Arg("weight").Value.Tensor().StaticShape(); !ok {
		return "weight shape must be static"
	}
	return ""
}
