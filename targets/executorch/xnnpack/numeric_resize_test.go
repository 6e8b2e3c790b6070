package xnnpack_test

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
)

// inlineF32 renders n float32 weights from a deterministic formula as an
// inline weight source.
func inlineF32(n, seed int) string {
	b := make([]byte, 4*n)
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(math.Cos(float64(i*5+seed))*0.7)))
	}
	return `inline("` + hex.EncodeToString(b) + `")`
}

// Bilinear resizing in NHWC: explicit sizes with and without align
// corners, exact scale factors, and the .default overload.
func TestNumericResizeBilinear(t *testing.T) {
	got := checkNumeric(t, `input x: user_input
output user_output
output user_output
output user_output
output user_output
graph forward(%x: f32[1, 3, 5, 4]) {
  %a: f32[1, 3, 7, 9] = aten.upsample_bilinear2d.vec(%x, [7, 9], False, None)
  %b: f32[1, 3, 10, 3] = aten.upsample_bilinear2d.vec(%x, [10, 3], True, None)
  %c: f32[1, 3, 10, 6] = aten.upsample_bilinear2d.vec(%x, None, False, [2.0, 1.5])
  %d: f32[1, 3, 8, 8] = aten.upsample_bilinear2d.default(%x, [8, 8], False)
  %r: f32[1, 3, 8, 8] = aten.relu.default(%d)
  return %a, %b, %c, %r
}
`, []string{"XNNStaticResizeBilinear2D"}, []string{"aten.upsample_bilinear2d.vec", "aten.upsample_bilinear2d.default"})
	if n := strings.Count(strings.Join(got, " "), "XNNStaticResizeBilinear2D"); n != 4 {
		t.Errorf("%d resize nodes, want 4: %v", n, got)
	}
}

// Transposed convolution: stride, padding, output padding, dilation, bias
// and a fused relu; the filter is written OHWI.
func TestNumericConvTranspose(t *testing.T) {
	src := `input w1: parameter "w1"
input b1: parameter "b1"
input w2: parameter "w2"
input x: user_input
output user_output
output user_output
weight "w1": f32[3, 4, 3, 3] = ` + inlineF32(108, 1) + `
weight "b1": f32[4] = ` + inlineF32(4, 2) + `
weight "w2": f32[3, 2, 2, 3] = ` + inlineF32(36, 3) + `
graph forward(%w1: f32[3, 4, 3, 3], %b1: f32[4], %w2: f32[3, 2, 2, 3], %x: f32[1, 3, 5, 4]) {
  %c: f32[1, 4, 10, 8] = aten.convolution.default(%x, %w1, %b1, [2, 2], [1, 1], [1, 1], True, [1, 1], 1)
  %r: f32[1, 4, 10, 8] = aten.relu.default(%c)
  %d: f32[1, 2, 7, 8] = aten.convolution.default(%x, %w2, None, [1, 2], [0, 1], [2, 1], True, [0, 1], 1)
  return %r, %d
}
`
	got := checkNumeric(t, src, []string{"XNNConvTranspose2d"}, []string{"aten.convolution.default"})
	if n := strings.Count(strings.Join(got, " "), "XNNConvTranspose2d"); n != 2 {
		t.Errorf("%d transposed convolutions, want 2: %v", n, got)
	}
}

// Grouped transposed convolution: two groups of 2 → 3 channels (stride,
// padding, output padding, bias, fused relu) and four groups of 1 → 2
// (dilation); the filter is [groups·O, kh, kw, I] and Groups is written.
func TestNumericConvTransposeGrouped(t *testing.T) {
	src := `input w1: parameter "w1"
input b1: parameter "b1"
input w2: parameter "w2"
input x: user_input
output user_output
output user_output
weight "w1": f32[4, 3, 3, 2] = ` + inlineF32(72, 5) + `
weight "b1": f32[6] = ` + inlineF32(6, 6) + `
weight "w2": f32[4, 2, 2, 3] = ` + inlineF32(48, 7) + `
graph forward(%w1: f32[4, 3, 3, 2], %b1: f32[6], %w2: f32[4, 2, 2, 3], %x: f32[1, 4, 5, 4]) {
  %c: f32[1, 6, 10, 6] = aten.convolution.default(%x, %w1, %b1, [2, 2], [1, 1], [1, 1], True, [1, 0], 2)
  %r: f32[1, 6, 10, 6] = aten.relu.default(%c)
  %d: f32[1, 8, 7, 6] = aten.convolution.default(%x, %w2, None, [1, 1], [0, 0], [2, 1], True, [0, 0], 4)
  return %r, %d
}
`
	got := checkNumeric(t, src, []string{"XNNConvTranspose2d"}, []string{"aten.convolution.default"})
	if n := strings.Count(strings.Join(got, " "), "XNNConvTranspose2d"); n != 2 {
		t.Errorf("%d transposed convolutions, want 2: %v", n, got)
	}
}

// Constraints XNNPACK cannot meet keep the op portable: a scale factor
// that is not the size ratio and an output padding not below the stride.
func TestNumericResizeDeconvRejected(t *testing.T) {
	for _, c := range []struct{ name, pre, in, body, out, op string }{
		{"resize-scale", "", "f32[1, 2, 5, 5]", `aten.upsample_bilinear2d.vec(%x, None, False, [1.7, 1.7])`, "f32[1, 2, 8, 8]", "aten.upsample_bilinear2d"},
		{"deconv-outpad", "f32[2, 1, 3, 3]", "f32[1, 2, 4, 4]", `aten.convolution.default(%x, %w, None, [1, 1], [0, 0], [2, 2], True, [1, 1], 1)`, "f32[1, 1, 9, 9]", "aten.convolution"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := "input x: user_input\noutput user_output\ngraph forward(%x: " + c.in + ") {\n"
			if c.pre != "" {
				src = "input w: parameter \"w\"\ninput x: user_input\noutput user_output\nweight \"w\": " + c.pre + " = " + inlineF32(18, 4) +
					"\ngraph forward(%w: " + c.pre + ", %x: " + c.in + ") {\n"
			}
			src += "  %p: " + c.out + " = " + c.body + "\n  %a: " + c.out + " = aten.add.Tensor(%p, %p)\n  return %a\n}\n"
			p, err := ir.Parse([]byte(src), "x.fxir")
			if err != nil {
				t.Fatal(err)
			}
			lower(t, p, "")
			found := false
			for _, n := range p.Main.Nodes() {
				found = found || strings.HasPrefix(n.Op.Info().Name, c.op)
			}
			if !found {
				t.Fatalf("%s was delegated:\n%s", c.op, ir.Print(p))
			}
		})
	}
}
