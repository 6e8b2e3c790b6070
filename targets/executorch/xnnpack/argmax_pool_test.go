package xnnpack_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/internal/ettest"
	"github.com/fxport/fxport/targets/executorch/xnnpack"
)

// argmaxExport lowers src for XNNPACK, emits, encodes and decodes it, runs
// the .pte on inputs made by gen and compares every output with the
// interpreter's on the unlowered IR exactly (dtype, shape, each element).
// It returns the delegate graphs' node kinds and the lowered program.
func argmaxExport(t *testing.T, src string, gen func(k int) float64) ([]string, *ir.Program) {
	t.Helper()
	c := xnnExport(t, src, "argmax", "", func(ref *ir.Program) []interp.Value {
		return ettest.Inputs(t, ref, func(_, k int) float64 { return gen(k) })
	})
	kinds := delegateKinds(c.f)
	wantWithin(t, c.run(t), c.want, within(0), fmt.Sprintf("(nodes %v)\n%s", kinds, ir.Print(c.p)))
	return kinds, c.p
}

// smooth inputs have no ties; steps have many (values -3…2).
func smooth(k int) float64 { return math.Sin(float64(k*7+1)) * 2.5 }
func steps(k int) float64  { return math.Floor(math.Sin(float64(k*5+2)) * 3) }

func hasKind(kinds []string, k string) bool {
	return strings.Contains(" "+strings.Join(kinds, " ")+" ", " "+k+" ")
}

func assertNoOp(t *testing.T, p *ir.Program, names ...string) {
	t.Helper()
	for _, n := range p.Main.Nodes() {
		for _, name := range names {
			if n.Op.Info().Name == name {
				t.Fatalf("%s is left in the main graph:\n%s", name, ir.Print(p))
			}
		}
	}
}

// max_pool2d_with_indices with stride = kernel, with and without padding,
// becomes XNNArgMaxPooling2d; values and indices equal torch's exactly,
// ties included (XNNPACK's window order is made torch's row-major one).
func TestNumericArgMaxPool(t *testing.T) {
	for _, c := range []struct {
		name, in, args, out string
	}{
		{"2x2", "f32[2, 3, 6, 8]", "[2, 2]", "[2, 3, 3, 4]"},
		{"2x2-explicit-stride-ragged", "f32[1, 2, 7, 9]", "[2, 2], [2, 2]", "[1, 2, 3, 4]"},
		{"3x2-nonsquare", "f32[1, 4, 9, 6]", "[3, 2], [3, 2]", "[1, 4, 3, 3]"},
		{"2x1", "f32[1, 2, 6, 3]", "[2, 1], [2, 1]", "[1, 2, 3, 3]"},
		{"pad-both", "f32[1, 2, 7, 5]", "[3, 2], [3, 2], [1, 1]", "[1, 2, 3, 3]"},
		{"pad-rows", "f32[2, 1, 6, 6]", "[2, 3], [2, 3], [1, 0]", "[2, 1, 4, 2]"},
		{"pad-cols", "f32[1, 3, 4, 7]", "[2, 4], [2, 4], [0, 2]", "[1, 3, 2, 2]"},
	} {
		for _, gen := range []struct {
			name string
			f    func(int) float64
		}{{"smooth", smooth}, {"ties", steps}} {
			t.Run(c.name+"/"+gen.name, func(t *testing.T) {
				src := "input x: user_input\noutput user_output\noutput user_output\ngraph forward(%x: " + c.in + ") {\n" +
					"  %r: " + c.in + " = aten.relu.default(%x)\n" +
					"  %v: f32" + c.out + ", %i: i64" + c.out + " = aten.max_pool2d_with_indices.default(%r, " + c.args + ")\n" +
					"  %n: f32" + c.out + " = aten.neg.default(%v)\n" +
					"  return %n, %i\n}\n"
				kinds, p := argmaxExport(t, src, gen.f)
				if !hasKind(kinds, "XNNArgMaxPooling2d") {
					t.Fatalf("delegate graph lacks XNNArgMaxPooling2d: %v", kinds)
				}
				assertNoOp(t, p, "aten.max_pool2d_with_indices.default", "aten.max_pool2d_with_indices.out", "xnnpack.argmax_pool2d.default")
			})
		}
	}
}

// Only the indices used: the values are an internal XNNPACK value.
func TestNumericArgMaxPoolIndicesOnly(t *testing.T) {
	src := `input x: user_input
output user_output
graph forward(%x: f32[1, 3, 4, 6]) {
  %v: f32[1, 3, 3, 4], %i: i64[1, 3, 3, 4] = aten.max_pool2d_with_indices.default(%x, [2, 2], [2, 2], [1, 1])
  return %i
}
`
	for _, gen := range []func(int) float64{smooth, steps} {
		kinds, _ := argmaxExport(t, src, gen)
		if !hasKind(kinds, "XNNArgMaxPooling2d") {
			t.Fatalf("delegate graph lacks XNNArgMaxPooling2d: %v", kinds)
		}
	}
}

// What XNNPACK's argmax pooling cannot express stays on portable kernels
// (and still runs): stride ≠ kernel, dilation, ceil_mode, unused indices.
func TestNumericArgMaxPoolRejectedStayPortable(t *testing.T) {
	for _, c := range []struct{ name, in, args, out string }{
		{"stride", "f32[1, 2, 7, 7]", "[3, 3], [2, 2]", "[1, 2, 3, 3]"},
		{"dilation", "f32[1, 2, 8, 8]", "[2, 2], [2, 2], [0, 0], [2, 2]", "[1, 2, 3, 3]"},
		{"ceil-mode", "f32[1, 2, 7, 7]", "[2, 2], [2, 2], [0, 0], [1, 1], True", "[1, 2, 4, 4]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := "input x: user_input\noutput user_output\noutput user_output\ngraph forward(%x: " + c.in + ") {\n" +
				"  %v: f32" + c.out + ", %i: i64" + c.out + " = aten.max_pool2d_with_indices.default(%x, " + c.args + ")\n" +
				"  %n: f32" + c.out + " = aten.neg.default(%v)\n" +
				"  return %n, %i\n}\n"
			kinds, p := argmaxExport(t, src, smooth)
			if hasKind(kinds, "XNNArgMaxPooling2d") {
				t.Fatalf("%s was delegated: %v", c.name, kinds)
			}
			found := false
			for _, n := range p.Main.Nodes() {
				found = found || n.Op.Info().Name == "aten.max_pool2d_with_indices.out"
			}
			if !found {
				t.Fatalf("max_pool2d_with_indices is not on a portable kernel:\n%s", ir.Print(p))
			}
		})
	}
	t.Run("indices-unused", func(t *testing.T) {
		src := `input x: user_input
output user_output
graph forward(%x: f32[1, 2, 6, 6]) {
  %v: f32[1, 2, 3, 3], %i: i64[1, 2, 3, 3] = aten.max_pool2d_with_indices.default(%x, [2, 2], [2, 2])
  %n: f32[1, 2, 3, 3] = aten.neg.default(%v)
  return %n
}
`
		kinds, _ := argmaxExport(t, src, smooth)
		if hasKind(kinds, "XNNArgMaxPooling2d") {
			t.Fatalf("unused indices were delegated as argmax pooling: %v", kinds)
		}
	})
}

// partition_exclude=MaxPool2dConfig keeps the pooling portable; by
// default the region holds the argmax pooling between its transposes, and
// an ineligible pooling is reported with its reason.
func TestArgMaxPoolPartition(t *testing.T) {
	src := `input x: user_input
output user_output
output user_output
output user_output
graph forward(%x: f32[1, 2, 6, 6]) {
  %r: f32[1, 2, 6, 6] = aten.relu.default(%x)
  %v: f32[1, 2, 3, 3], %i: i64[1, 2, 3, 3] = aten.max_pool2d_with_indices.default(%r, [2, 2], [2, 2])
  %w: f32[1, 2, 2, 2], %j: i64[1, 2, 2, 2] = aten.max_pool2d_with_indices.default(%r, [3, 3], [2, 2])
  return %v, %i, %j
}
`
	count := func(p *ir.Program, name string) (main, region int) {
		for _, n := range p.Main.Nodes() {
			if n.Op.Info().Name == name {
				main++
			}
			if n.Op == xnnpack.OpCallDelegate {
				for _, m := range n.Args[0].Graph.Nodes() {
					if m.Op.Info().Name == name {
						region++
					}
				}
			}
		}
		return main, region
	}
	p, err := ir.Parse([]byte(src), "x.fxir")
	if err != nil {
		t.Fatal(err)
	}
	res, err := xnnpack.Run(p, xnnpack.Options{Exclude: []string{"MaxPool2dConfig"}})
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := count(p, "aten.max_pool2d_with_indices.default"); m != 2 {
		t.Fatalf("excluded: %d max_pool2d_with_indices left, want 2:\n%s", m, ir.Print(p))
	}
	if m, r := count(p, "xnnpack.argmax_pool2d.default"); m+r != 0 || len(res.Partitions) != 1 {
		t.Fatalf("excluded: argmax pooling made, or %d partitions (want relu alone):\n%s", len(res.Partitions), ir.Print(p))
	}
	if p, err = ir.Parse([]byte(src), "x.fxir"); err != nil {
		t.Fatal(err)
	}
	if res, err = xnnpack.Run(p, xnnpack.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := ir.VerifyWith(p, ir.VerifyOptions{Types: true}); err != nil {
		t.Fatalf("%v\n%s", err, ir.Print(p))
	}
	if m, _ := count(p, "aten.max_pool2d_with_indices.default"); m != 1 {
		t.Fatalf("%d max_pool2d_with_indices left, want the stride-2 one:\n%s", m, ir.Print(p))
	}
	if m, r := count(p, "xnnpack.argmax_pool2d.default"); m != 0 || r != 1 {
		t.Fatalf("argmax pooling: %d in main, %d in regions, want 0 and 1:\n%s", m, r, ir.Print(p))
	}
	found := false
	for _, rj := range res.Rejected {
		found = found || strings.Contains(rj.Reason, "stride differs from the kernel")
	}
	if !found {
		t.Fatalf("the stride-2 pooling is not reported: %+v", res.Rejected)
	}
}

// Two argmax poolings in a chain (one padded): each gets its own tables,
// both run in one delegate.
func TestNumericArgMaxPoolChained(t *testing.T) {
	src := `input x: user_input
output user_output
output user_output
output user_output
graph forward(%x: f32[1, 2, 8, 8]) {
  %v1: f32[1, 2, 4, 4], %i1: i64[1, 2, 4, 4] = aten.max_pool2d_with_indices.default(%x, [2, 2])
  %v2: f32[1, 2, 3, 3], %i2: i64[1, 2, 3, 3] = aten.max_pool2d_with_indices.default(%v1, [2, 2], [2, 2], [1, 1])
  %p1: f32[1, 2, 4, 4], %j1: i64[1, 2, 4, 4] = aten.max_pool2d_with_indices.default(%x, [2, 2])
  return %v2, %i1, %i2
}
`
	for _, gen := range []func(int) float64{smooth, steps} {
		kinds, p := argmaxExport(t, src, gen)
		if n := countKind(kinds, "XNNArgMaxPooling2d"); n != 2 {
			t.Fatalf("%d XNNArgMaxPooling2d nodes, want 2 (the third pooling's indices are unused): %v", n, kinds)
		}
		tables := 0
		for _, w := range p.Weights {
			if strings.HasPrefix(w.Name, "_xnnpack_argmax_pool_") {
				tables++
			}
		}
		if tables != 6 {
			t.Errorf("%d index tables, want 2 for the unpadded pooling and 4 for the padded one", tables)
		}
	}
}
