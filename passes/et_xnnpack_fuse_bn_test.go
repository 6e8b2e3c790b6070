package passes

import (
	"encoding/binary"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

func bnF32(xs ...float32) *ir.InlineSource {
	b := make([]byte, 4*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return &ir.InlineSource{Data: b}
}

func bnRead(t *testing.T, s ir.WeightSource) []float32 {
	t.Helper()
	r, err := s.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) != s.Size() {
		t.Fatalf("%d bytes, Size says %d", len(b), s.Size())
	}
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// The fold computes torch's fuse_conv_bn_weights per output channel, for
// a plain and a grouped transposed weight, and its spelling parses back.
func TestBNFoldSource(t *testing.T) {
	gamma, beta := bnF32(2, 0.5), bnF32(1, -1)
	mean, vr := bnF32(0.5, -2), bnF32(3, 0) // eps 1: scales 2/2 = 1 and 0.5/1 = 0.5
	// Conv weight [2, 1, 1, 2]: channel 0 = {1, 2}, channel 1 = {3, 4}.
	w := &BNFoldSource{Part: "weight", Shape: []int64{2, 1, 1, 2}, Groups: 1, Eps: 1, Weight: bnF32(1, 2, 3, 4), Gamma: gamma, Beta: beta, Mean: mean, Var: vr}
	b := &BNFoldSource{Part: "bias", Shape: []int64{2}, Groups: 1, Eps: 1, Bias: bnF32(1.5, 0), Gamma: gamma, Beta: beta, Mean: mean, Var: vr}
	for _, c := range []struct {
		s    *BNFoldSource
		want []float32
	}{
		{w, []float32{1, 2, 1.5, 2}},
		{b, []float32{(1.5-0.5)*1 + 1, (0+2)*0.5 - 1}},
		// Transposed [I=4, O/g=1, 1, 1] in 2 groups: inputs 0, 1 feed
		// channel 0, inputs 2, 3 channel 1.
		{&BNFoldSource{Part: "weight", Shape: []int64{4, 1, 1, 1}, Transposed: true, Groups: 2, Eps: 1, Weight: bnF32(1, 2, 3, 4), Gamma: gamma, Mean: mean, Var: vr},
			[]float32{1, 2, 1.5, 2}},
		// No affine parameters and no bias: γ = 1, β = 0, b = 0.
		{&BNFoldSource{Part: "bias", Shape: []int64{2}, Groups: 1, Eps: 1, Mean: mean, Var: vr}, []float32{-0.25, 2}},
	} {
		got := bnRead(t, c.s)
		for i := range c.want {
			if math.Abs(float64(got[i]-c.want[i])) > 1e-6 {
				t.Fatalf("%s: got %v, want %v", c.s, got, c.want)
			}
		}
		back, err := ir.ParseWeightSource(c.s.String())
		if err != nil {
			t.Fatalf("%s: %v", c.s, err)
		}
		if back.String() != c.s.String() {
			t.Fatalf("round trip: %s != %s", back, c.s)
		}
		if again := bnRead(t, back); len(again) != len(got) || again[0] != got[0] || again[len(got)-1] != got[len(got)-1] {
			t.Fatalf("parsed source gives %v, want %v", again, got)
		}
	}
}

func TestBNFoldSourceRejects(t *testing.T) {
	for _, c := range []struct{ spelling, want string }{
		{`bn_fold(part="weight", shape=[2, 1], groups=1, eps=1e-05, mean="inline(\"0000000000000000\")", var="inline(\"0000000000000000\")")`, "takes weight="},
		{`bn_fold(part="bias", shape=[2], groups=1, eps=1e-05, mean="inline(\"00000000\")", var="inline(\"0000000000000000\")")`, "mean inline"},
		{`bn_fold(part="bias", shape=[2], groups=1, eps=-1.0, mean="inline(\"0000000000000000\")", var="inline(\"0000000000000000\")")`, "eps"},
		{`bn_fold(part="scale", shape=[2], groups=1, eps=1e-05, mean="inline(\"0000000000000000\")", var="inline(\"0000000000000000\")")`, "part"},
		{`bn_fold(part="bias", shape=[2], eps=1e-05, mean="inline(\"0000000000000000\")", var="inline(\"0000000000000000\")")`, "missing groups"},
		{`bn_fold(part="bias", shape=[2], groups=1, eps=1e-05, mean="inline(\"0000000000000000\")", var="inline(\"0000000000000000\")", alpha=1)`, "unknown argument"},
		{`bn_fold(part="weight", shape=[3, 1, 1, 1], transposed=True, groups=2, eps=1e-05, weight="inline(\"000000000000000000000000\")", mean="inline(\"0000000000000000\")", var="inline(\"0000000000000000\")")`, "3 input channels in 2 groups"},
	} {
		if _, err := ir.ParseWeightSource(c.spelling); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.spelling, err, c.want)
		}
	}
	// A source that changes size after the fold is caught when read.
	s := &BNFoldSource{Part: "bias", Shape: []int64{2}, Groups: 1, Eps: 1, Mean: bnF32(0, 0), Var: bnF32(1, 1)}
	s.Mean = bnF32(0)
	if _, err := s.Open(); err == nil || !strings.Contains(err.Error(), "mean") {
		t.Fatalf("short mean: err = %v", err)
	}
}

// The fold runs in the XNNPACK pipeline before the partitioner, and only
// there.
func TestXNNPACKFuseBatchNormOrder(t *testing.T) {
	pl, err := pm.Build(pm.TargetExecuTorch, "executorch.xnnpack")
	if err != nil {
		t.Fatal(err)
	}
	s := pl.String()
	fuse, part := strings.Index(s, etxFuseBNName), strings.Index(s, "xnnpack-partition")
	if fuse < 0 || part < 0 || fuse > part {
		t.Fatalf("%s must run before xnnpack-partition: %s", etxFuseBNName, s)
	}
	pl, err = pm.Build(pm.TargetExecuTorch, "executorch.portable")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(pl.String(), etxFuseBNName) {
		t.Fatalf("%s runs in the portable pipeline: %s", etxFuseBNName, pl)
	}
}
