package xnnpack_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/targets/executorch/emit"
	"github.com/fxport/fxport/targets/executorch/internal/ettest"
	"github.com/fxport/fxport/targets/executorch/run"
	"github.com/fxport/fxport/targets/executorch/xnnpack"
)

// quantPrograms are the quantized programs of the qs8_* and qd8 tests
// (and run's portable quantized linear), each fully delegated when nothing
// is excluded.
func quantPrograms() []qprog {
	qb4w := []float64{0.0625, 0.03125, 0.125, 0.25, 0.015625, 0.5, 0.09375, 0.046875}
	return []qprog{
		{"qs8-linear", ettest.QS8Linear(), []int64{5, 4}, 0.01},
		{"qs8-perchannel-linear", qs8PerChannelSrc(false), []int64{5, 4}, 0.01},
		{"qs8-perchannel-mm-bare", qs8PerChannelSrc(true), []int64{5, 4}, 0.02},
		{"qs8-conv", convSrc([4]int{4, 3, 3, 2}, 1, [4]int{1, 3, 6, 5}, [4]int{1, 4, 3, 4}, nil, true), []int64{1, 3, 6, 5}, 0.02},
		{"qs8-conv-perchannel", convSrc([4]int{4, 3, 3, 2}, 1, [4]int{2, 3, 6, 5}, [4]int{2, 4, 3, 4}, []float64{0.004, 0.01, 0.007, 0.002}, true), []int64{2, 3, 6, 5}, 0.02},
		{"qs8-conv-depthwise", convSrc([4]int{3, 1, 3, 2}, 3, [4]int{1, 3, 6, 5}, [4]int{1, 3, 3, 4}, []float64{0.009, 0.003, 0.006}, false), []int64{1, 3, 6, 5}, 0.02},
		{"qs8-add", qaddSrc, []int64{2, 3, 4}, 0.025},
		{"qs8-submul", qsubmulSrc, []int64{2, 3, 4}, 0.025},
		{"qs8-add-linear", qs8AddLinearSrc(), []int64{5, 4}, 4*127*0.01*0.02 + 0.03},
		{"qs8-conv-add", qs8ConvAddSrc(), []int64{1, 2, 5, 5}, 3*127*0.03*0.06 + 0.05},
		{"qd8-linear", dynLinear(false, hexI64(0, 0, 0)), []int64{5, 4}, 4 * 127 * 0.02 * 2.4 / 255},
		{"qd8-linear-per-token", dynLinear(true, hexI64(0, 0, 0)), []int64{5, 4}, 1e-5},
		{"qd8-linear-rank3", qd8Rank3Src(), []int64{2, 3, 4}, 1e-5},
		{"qb4w-linear", qb4wLinear(32, qb4w, -8), []int64{3, 64}, 1e-5},
		{"qs8-pool", qPoolSrc, []int64{1, 3, 6, 5}, 0.0101},
		{"qs8-qc4w-linear", qc4wSrc(false), []int64{5, 5}, 0.01},
		{"qd8-qc4w-linear", qc4wSrc(true), []int64{5, 5}, 1e-5},
		{"qs8-deconv", deconvPT.src(), deconvPT.shape(), 0.02},
		{"qs8-deconv-perchannel", deconvPC.src(), deconvPC.shape(), 0.02},
		{"qs8-deconv-groups", deconvGroups.src(), deconvGroups.shape(), 0.02},
		{"qd8-conv", dynConvPC.src(), dynConvPC.shape(), dynConvPC.tol()},
		{"qd8-conv-groups", dynConvGroups.src(), dynConvGroups.shape(), dynConvGroups.tol()},
	}
}

// excludePipeline is executorch.xnnpack with partition-exclude=cfg.
func excludePipeline(t *testing.T, cfg string) *pm.Pipeline {
	t.Helper()
	pl, err := pm.ParsePipeline(ettest.XNNPACKExclude(t, cfg))
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

// exportExcluded lowers q with cfg excluded, checks every delegate (no
// node of the excluded config inside, no int8 value but a constant
// crossing its boundary), emits, encodes, decodes and runs it, and compares the result
// with want within q.tol. It returns the number of delegated nodes.
func exportExcluded(t *testing.T, q qprog, cfg string, want []float64) int {
	t.Helper()
	p := ettest.Parse(t, q.src, q.name+".fxir")
	lower(t, p, ettest.XNNPACKExclude(t, cfg))
	consts := map[*ir.Value]bool{}
	for i, v := range p.Main.Inputs {
		consts[v] = i < len(p.Signature.Inputs) && xnnpack.IsConstantKind(p.Signature.Inputs[i].Kind)
	}
	delegated := 0
	for _, n := range p.Main.Nodes() {
		if n.Op != xnnpack.OpCallDelegate {
			continue
		}
		for _, v := range append(n.Operands(), n.Results...) {
			if tt := v.Tensor(); tt != nil && tt.DType == ir.Int8 && !consts[v] {
				t.Errorf("int8 value %s crosses the delegate boundary:\n%s", v, ir.Print(p))
			}
		}
		for _, m := range n.Args[0].Graph.Nodes() {
			delegated++
			if c, _ := xnnpack.ConfigOf(m.Op); c == cfg {
				t.Errorf("%s (%s) delegated although %s is excluded", m.Op.Info().Name, c, cfg)
			}
		}
	}
	f, _ := ettest.Emit(t, p, q.name+".pte", emit.Options{NoMetadataMethod: true})
	got, err := run.Run(f, []interp.Value{sweepInput(q.shape)}, run.Options{})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	gs := got[0].(*interp.Tensor).Float64s()
	if len(gs) != len(want) {
		t.Fatalf("%d outputs, interpreter %d", len(gs), len(want))
	}
	for i := range want {
		if d := math.Abs(gs[i] - want[i]); !(d <= q.tol*1.0001) {
			t.Errorf("y[%d] = %g, interpreter %g (tolerance %g)", i, gs[i], want[i], q.tol)
		}
	}
	return delegated
}

// Every partitioner config excluded from every quantized program: the
// export delegates a consistent subset (nothing of the excluded config,
// no int8 value crossing a delegate boundary) or leaves the pattern on
// the portable quantized kernels, and always emits, encodes, decodes and
// runs within the program's tolerance of the interpreter on the unlowered
// IR. Each program is fully delegated with nothing excluded, and at least
// one exclusion changes what is delegated.
func TestExcludeEveryConfigQuantized(t *testing.T) {
	cfgs := xnnpack.Configs()
	for _, q := range quantPrograms() {
		t.Run(q.name, func(t *testing.T) {
			ref, want := q.reference(t)
			used := map[string]bool{}
			for _, n := range ref.Main.Nodes() {
				if c, ok := xnnpack.ConfigOf(n.Op); ok {
					used[c] = true
				}
			}
			full := exportExcluded(t, q, "", want)
			if want := len(ref.Main.Nodes()); full != want {
				t.Errorf("nothing excluded: %d of %d nodes delegated", full, want)
			}
			changed := 0
			for _, cfg := range cfgs {
				t.Run(cfg, func(t *testing.T) {
					if n := exportExcluded(t, q, cfg, want); n != full {
						changed++
						if !used[cfg] {
							t.Errorf("excluding %s, which covers none of the program's ops, delegates %d nodes instead of %d", cfg, n, full)
						}
					}
				})
			}
			if changed == 0 {
				t.Errorf("no exclusion changed the delegation")
			}
		})
	}
}

// The two failures the sweep was written for, at the partitioner: with the
// input/output quantize excluded, the dequantizes reading it and the
// addmm are released (their int8 inputs would come from outside); with
// the dequantizes excluded, the addmm is released (its quantized input and
// weight would be computed outside: "weight is not static"). Nothing is
// delegated either way, and each release names a node it needed. An fp32
// linear whose weight transpose is excluded releases its mm for the same
// reason (the relu stays delegated).
func TestExcludeReleasesWhatSerializationNeeds(t *testing.T) {
	fp32Linear := fmt.Sprintf(`input p_w: parameter "w"
input x: user_input
output user_output
weight "w": f32[3, 4] = inline("%s")
graph forward(%%p_w: f32[3, 4], %%x: f32[5, 4]) {
  %%wt: f32[4, 3] = aten.permute_copy.default(%%p_w, [1, 0])
  %%y: f32[5, 3] = aten.mm.default(%%x, %%wt)
  %%r: f32[5, 3] = aten.relu.default(%%y)
  return %%r
}
`, hexF32(0.5, -0.25, 0.125, 0.75, -0.5, 0.25, 1, -0.125, 0.375, 0.0625, -0.75, 0.5))
	for _, tc := range []struct {
		name, src string
		exclude   []string
		want      map[string]string // released node → the value its reason names
		parts     int
	}{
		{"quantize", ettest.QS8Linear(), []string{"QuantizedPerTensorConfig"}, map[string]string{"xd": "%xq", "yd": "%yq", "y": "%xq", "wd": "%y"}, 0},
		{"dequantize", ettest.QS8Linear(), []string{"DeQuantizedPerTensorConfig"}, map[string]string{"y": "%xq"}, 0},
		{"dequantize-per-channel", qs8PerChannelSrc(false), []string{"DeQuantizedPerChannelConfig"}, map[string]string{"y": "%wd", "xd": "%y"}, 0},
		{"fp32-permute", fp32Linear, []string{"PermuteConfig"}, map[string]string{"y": "%wt"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ir.Parse([]byte(tc.src), tc.name+".fxir")
			if err != nil {
				t.Fatal(err)
			}
			res, err := xnnpack.Run(p, xnnpack.Options{Exclude: tc.exclude})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Partitions) != tc.parts {
				t.Errorf("%d partitions, want %d:\n%s", len(res.Partitions), tc.parts, ir.Print(p))
			}
			got := map[string]string{}
			for _, r := range res.Rejected {
				got[r.Node.Results[0].Name] = r.Reason
			}
			for node, needed := range tc.want {
				if r := got[node]; !strings.Contains(r, "needs "+needed+" ") {
					t.Errorf("%%%s: reason %q, want one naming %s", node, r, needed)
				}
			}
			// The whole export goes through: emission, the runner and the
			// interpreter on the unlowered IR agree.
			q := qprog{tc.name, tc.src, []int64{5, 4}, 0.01}
			_, want := q.reference(t)
			exportExcluded(t, q, tc.exclude[0], want)
		})
	}
}
