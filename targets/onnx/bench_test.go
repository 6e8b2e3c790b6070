package onnx

import (
	"encoding/binary"
	"fmt"
	"github.com/fxport/fxport/internal/testenv"
	"math"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// Synthetic transformer for BenchmarkTransformerExport: a pre-norm decoder
// block (layer norm, Q/K/V addmm, view/permute to 2 heads with a symbolic
// sequence dim s0, bmm, scaled softmax, output projection, residual, layer
// norm, GELU MLP, residual) repeated; 36 IR nodes per block. Weights are
// tied across blocks (ALBERT-style) so the model stays small: the benchmark
// measures per-node work.
const (
	benchHidden   = 16
	benchFFN      = 32
	benchPerBlock = 36
)

var benchWeights = []struct {
	name  string
	shape []int
}{
	{"ln1.weight", []int{benchHidden}}, {"ln1.bias", []int{benchHidden}},
	{"q.weight", []int{benchHidden, benchHidden}}, {"q.bias", []int{benchHidden}},
	{"k.weight", []int{benchHidden, benchHidden}}, {"k.bias", []int{benchHidden}},
	{"v.weight", []int{benchHidden, benchHidden}}, {"v.bias", []int{benchHidden}},
	{"o.weight", []int{benchHidden, benchHidden}}, {"o.bias", []int{benchHidden}},
	{"ln2.weight", []int{benchHidden}}, {"ln2.bias", []int{benchHidden}},
	{"fc.weight", []int{benchHidden, benchFFN}}, {"fc.bias", []int{benchFFN}},
	{"proj.weight", []int{benchFFN, benchHidden}}, {"proj.bias", []int{benchHidden}},
}

func benchParam(name string) string { return "p_" + strings.ReplaceAll(name, ".", "_") }

// transformerText writes the IR text of a blocks-deep synthetic transformer.
func transformerText(blocks int) string {
	var b strings.Builder
	b.WriteString("meta \"export.model_class\" = \"SyntheticTransformer\"\nsymbol s0: [2, 64] hint 8\n")
	for _, w := range benchWeights {
		fmt.Fprintf(&b, "input %s: parameter %q\n", benchParam(w.name), w.name)
	}
	b.WriteString("input x: user_input\noutput user_output\n")
	for wi, w := range benchWeights {
		n := 1
		dims := make([]string, len(w.shape))
		for i, d := range w.shape {
			n *= d
			dims[i] = strconv.Itoa(d)
		}
		raw := make([]byte, 4*n)
		for i := range n {
			v := float32(((i*7+wi*3)%13)-6) / 64
			if strings.HasSuffix(w.name, "ln1.weight") || strings.HasSuffix(w.name, "ln2.weight") {
				v = 1
			}
			binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
		}
		fmt.Fprintf(&b, "weight %q: f32[%s] = inline(\"%x\")\n", w.name, strings.Join(dims, ", "), raw)
	}
	b.WriteString("\ngraph forward(")
	for _, w := range benchWeights {
		dims := make([]string, len(w.shape))
		for i, d := range w.shape {
			dims[i] = strconv.Itoa(d)
		}
		fmt.Fprintf(&b, "%%%s: f32[%s], ", benchParam(w.name), strings.Join(dims, ", "))
	}
	fmt.Fprintf(&b, "%%x: f32[1, s0, %d]) {\n", benchHidden)
	h := "x"
	H, F := benchHidden, benchFFN
	for i := range blocks {
		r := strings.NewReplacer("$h", h, "$i", "_"+strconv.Itoa(i), "$H", strconv.Itoa(H), "$F", strconv.Itoa(F))
		b.WriteString(r.Replace(`  %ln$i: f32[1, s0, $H], %ln$i_m: f32[1, s0, 1], %ln$i_r: f32[1, s0, 1] = aten.native_layer_norm.default(%$h, [$H], %p_ln1_weight, %p_ln1_bias, 1e-05)
  %x2d$i: f32[s0, $H] = aten.view.default(%ln$i, [-1, $H])
  %q$i: f32[s0, $H] = aten.addmm.default(%p_q_bias, %x2d$i, %p_q_weight)
  %k$i: f32[s0, $H] = aten.addmm.default(%p_k_bias, %x2d$i, %p_k_weight)
  %v$i: f32[s0, $H] = aten.addmm.default(%p_v_bias, %x2d$i, %p_v_weight)
  %n$i: Sym(s0) = aten.sym_size.int(%ln$i, 1)
  %q4$i: f32[1, s0, 2, 8] = aten.view.default(%q$i, [1, %n$i, 2, 8])
  %qp$i: f32[1, 2, s0, 8]{0,2,1,3} = aten.permute.default(%q4$i, [0, 2, 1, 3])
  %qc$i: f32[1, 2, s0, 8] = aten.clone.default(%qp$i, memory_format=torch.contiguous_format)
  %q3$i: f32[2, s0, 8] = aten.view.default(%qc$i, [2, %n$i, 8])
  %k4$i: f32[1, s0, 2, 8] = aten.view.default(%k$i, [1, %n$i, 2, 8])
  %kp$i: f32[1, 2, 8, s0]{0,3,1,2} = aten.permute.default(%k4$i, [0, 2, 3, 1])
  %kc$i: f32[1, 2, 8, s0] = aten.clone.default(%kp$i, memory_format=torch.contiguous_format)
  %k3$i: f32[2, 8, s0] = aten.view.default(%kc$i, [2, 8, %n$i])
  %v4$i: f32[1, s0, 2, 8] = aten.view.default(%v$i, [1, %n$i, 2, 8])
  %vp$i: f32[1, 2, s0, 8]{0,2,1,3} = aten.permute.default(%v4$i, [0, 2, 1, 3])
  %vc$i: f32[1, 2, s0, 8] = aten.clone.default(%vp$i, memory_format=torch.contiguous_format)
  %v3$i: f32[2, s0, 8] = aten.view.default(%vc$i, [2, %n$i, 8])
  %sc$i: f32[2, s0, s0] = aten.bmm.default(%q3$i, %k3$i)
  %sd$i: f32[2, s0, s0] = aten.div.Tensor(%sc$i, 2.8284271247461903)
  %sm$i: f32[2, s0, s0] = aten._softmax.default(%sd$i, -1, False)
  %o$i: f32[2, s0, 8] = aten.bmm.default(%sm$i, %v3$i)
  %o4$i: f32[1, 2, s0, 8] = aten.view.default(%o$i, [1, 2, %n$i, 8])
  %op$i: f32[1, s0, 2, 8]{0,2,1,3} = aten.permute.default(%o4$i, [0, 2, 1, 3])
  %oc$i: f32[1, s0, 2, 8] = aten.clone.default(%op$i, memory_format=torch.contiguous_format)
  %o2$i: f32[s0, $H] = aten.view.default(%oc$i, [-1, $H])
  %pr$i: f32[s0, $H] = aten.addmm.default(%p_o_bias, %o2$i, %p_o_weight)
  %pr3$i: f32[1, s0, $H] = aten.view.default(%pr$i, [1, %n$i, $H])
  %r$i: f32[1, s0, $H] = aten.add.Tensor(%$h, %pr3$i)
  %lnb$i: f32[1, s0, $H], %lnb$i_m: f32[1, s0, 1], %lnb$i_r: f32[1, s0, 1] = aten.native_layer_norm.default(%r$i, [$H], %p_ln2_weight, %p_ln2_bias, 1e-05)
  %f2d$i: f32[s0, $H] = aten.view.default(%lnb$i, [-1, $H])
  %fc$i: f32[s0, $F] = aten.addmm.default(%p_fc_bias, %f2d$i, %p_fc_weight)
  %g$i: f32[s0, $F] = aten.gelu.default(%fc$i)
  %fp$i: f32[s0, $H] = aten.addmm.default(%p_proj_bias, %g$i, %p_proj_weight)
  %fp3$i: f32[1, s0, $H] = aten.view.default(%fp$i, [1, %n$i, $H])
  %h$i: f32[1, s0, $H] = aten.add.Tensor(%r$i, %fp3$i)
`))
		h = "h_" + strconv.Itoa(i)
	}
	fmt.Fprintf(&b, "  return %%%s\n}\n", h)
	return b.String()
}

func transformerProgram(tb testing.TB, blocks int) *ir.Program {
	tb.Helper()
	p, err := ir.Parse([]byte(transformerText(blocks)), "synthetic_transformer.fxir")
	if err != nil {
		tb.Fatal(err)
	}
	if err := ir.Verify(p); err != nil {
		tb.Fatal(err)
	}
	return p
}

// irNodes counts the main graph's nodes, the return excluded.
func irNodes(p *ir.Program) int {
	n := 0
	for _, x := range p.Main.Nodes() {
		if !x.IsReturn() {
			n++
		}
	}
	return n
}

// The synthetic transformer is correct: a small instance matches the
// reference interpreter in ORT, optimized.
func TestSyntheticTransformerInORT(t *testing.T) {
	needORT(t)
	p := transformerProgram(t, 2)
	if got := irNodes(p); got != 2*benchPerBlock {
		t.Errorf("%d nodes for 2 blocks, want %d", got, 2*benchPerBlock)
	}
	runPipeline(t, p)
	m := checkInORT(t, p, DefaultOpset, 1e-4)
	if !m.Optimization.Ran || m.Optimization.Stats.NodesAfter >= m.Optimization.Stats.NodesBefore {
		t.Errorf("optimizer: %+v", m.Optimization)
	}
}

// BenchmarkTransformerExport exports a ~100k-node synthetic transformer
// (default ONNX pipeline + optimizer + emit + write) and, once, times
// Debian's onnx.shape_inference.infer_shapes on the written model.
//
//	go test -run=NONE -bench=TransformerExport -benchtime=3x ./targets/onnx
func BenchmarkTransformerExport(b *testing.B) {
	blocks := 100_000 / benchPerBlock
	src := transformerProgram(b, blocks)
	path := filepath.Join(b.TempDir(), "transformer.onnx")
	var m *Model
	var pipeline, emit time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		p := src.Clone()
		b.StartTimer()
		t0 := time.Now()
		pl, err := pm.Build(pm.TargetONNX, "")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := pm.Run(p, pl, nil, pm.Config{}); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		m, err = Emit(p, Options{Opset: 17})
		if err != nil {
			b.Fatal(err)
		}
		if err := m.Write(path); err != nil {
			b.Fatal(err)
		}
		pipeline += t1.Sub(t0)
		emit += time.Since(t1)
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(irNodes(src)), "ir-nodes")
	b.ReportMetric(float64(m.Optimization.Stats.NodesBefore), "onnx-nodes-emitted")
	b.ReportMetric(float64(len(m.Proto.Graph.Node)), "onnx-nodes")
	b.ReportMetric(pipeline.Seconds()/n, "pipeline-s")
	b.ReportMetric(emit.Seconds()/n, "emit+opt+write-s")
	b.ReportMetric((pipeline+emit).Seconds()/n, "export-s")
	py := testenv.Python(b)
	out, err := exec.Command(py, filepath.Join(onnxcheckDir, "shape_infer_time.py"), path).CombinedOutput()
	if err != nil {
		b.Fatalf("shape inference: %v\n%s", err, out)
	}
	for _, f := range strings.Fields(string(out)) {
		if v, ok := strings.CutPrefix(f, "infer_s="); ok {
			s, err := strconv.ParseFloat(v, 64)
			if err != nil {
				b.Fatalf("shape_infer_time.py: %q: %v", out, err)
			}
			b.ReportMetric(s, "shape-infer-s")
		}
	}
	b.Logf("shape_infer_time.py: %s", strings.TrimSpace(string(out)))
}
