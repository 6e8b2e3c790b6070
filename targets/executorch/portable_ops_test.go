package executorch_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxport/fxport/internal/testenv"
	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/interp/npy"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/emit"
	"github.com/fxport/fxport/targets/executorch/internal/ettest"
)

// portableOp is a one-op program for the portable kernels: its IR body
// (inputs %x0, %x1, …; result %y), its inputs and torch eager's reference
// expression (tools/etops/judge.py evaluates it on the same inputs).
type portableOp struct {
	name   string
	inputs []opInput
	body   string
	out    string // the result type
	ref    string
}

type opInput struct {
	typ    string // f32[2, 3], i64[2]
	lo, hi float64
	round  bool    // integer-valued floats (for comparisons)
	ints   []int64 // explicit int64 data
}

// portableOps are ops the kernel list made emittable (hardtanh … leaky_relu)
// and ops that reach the portable kernels only decomposed by
// legalize-kernels (zeros_like, ones_like, softplus, index_copy, triu,
// upsample_*2d.default, silu, hardswish, max_pool2d).
var portableOps = []portableOp{
	{"hardtanh", fin("f32[2, 3, 4]"), "aten.hardtanh.default(%x0, -0.5, 1.25)", "f32[2, 3, 4]", "F.hardtanh(x0, -0.5, 1.25)"},
	{"avg_pool2d", fin("f32[1, 2, 7, 7]"), "aten.avg_pool2d.default(%x0, [3, 3], [2, 2], [1, 1])", "f32[1, 2, 4, 4]", "F.avg_pool2d(x0, 3, 2, 1)"},
	{"upsample_bilinear2d_vec", fin("f32[1, 2, 3, 5]"), "aten.upsample_bilinear2d.vec(%x0, [6, 10], False, None)", "f32[1, 2, 6, 10]", "F.interpolate(x0, size=(6, 10), mode='bilinear', align_corners=False)"},
	{"upsample_bilinear2d_aligned", fin("f32[1, 2, 3, 4]"), "aten.upsample_bilinear2d.default(%x0, [6, 8], True, None, None)", "f32[1, 2, 6, 8]", "F.interpolate(x0, size=(6, 8), mode='bilinear', align_corners=True)"},
	{"upsample_nearest2d", fin("f32[1, 2, 3, 4]"), "aten.upsample_nearest2d.default(%x0, [6, 8], None, None)", "f32[1, 2, 6, 8]", "F.interpolate(x0, size=(6, 8), mode='nearest')"},
	{"constant_pad_nd", fin("f32[1, 2, 3, 4]"), "aten.constant_pad_nd.default(%x0, [1, 2, 0, 3], 0.5)", "f32[1, 2, 6, 7]", "F.pad(x0, (1, 2, 0, 3), value=0.5)"},
	{"log", []opInput{{typ: "f32[3, 5]", lo: 0.1, hi: 3}}, "aten.log.default(%x0)", "f32[3, 5]", "torch.log(x0)"},
	{"cos", fin("f32[3, 5]"), "aten.cos.default(%x0)", "f32[3, 5]", "torch.cos(x0)"},
	{"sin", fin("f32[3, 5]"), "aten.sin.default(%x0)", "f32[3, 5]", "torch.sin(x0)"},
	{"cumsum", fin("f32[3, 6]"), "aten.cumsum.default(%x0, 1)", "f32[3, 6]", "torch.cumsum(x0, 1)"},
	{"argmax", fin("f32[4, 7]"), "aten.argmax.default(%x0, 1)", "i64[4]", "torch.argmax(x0, 1)"},
	{"eq", []opInput{{typ: "f32[3, 4]", lo: -2, hi: 2, round: true}, {typ: "f32[3, 4]", lo: -1.5, hi: 2.5, round: true}}, "aten.eq.Tensor(%x0, %x1)", "b8[3, 4]", "torch.eq(x0, x1)"},
	{"triu", fin("f32[4, 5]"), "aten.triu.default(%x0, 1)", "f32[4, 5]", "torch.triu(x0, 1)"},
	{"tril", fin("f32[4, 5]"), "aten.tril.default(%x0, -1)", "f32[4, 5]", "torch.tril(x0, -1)"},
	{"grid_sampler_2d", []opInput{{typ: "f32[1, 2, 4, 5]", lo: -2, hi: 2}, {typ: "f32[1, 3, 6, 2]", lo: -1, hi: 1}}, "aten.grid_sampler_2d.default(%x0, %x1, 0, 0, False)", "f32[1, 2, 3, 6]", "F.grid_sample(x0, x1, mode='bilinear', padding_mode='zeros', align_corners=False)"},
	{"zeros_like", fin("f32[2, 3]"), "aten.zeros_like.default(%x0)\n  %y: f32[2, 3] = aten.sub.Tensor(%z, %x0)", "f32[2, 3]", "-x0"},
	{"ones_like", fin("f32[2, 3]"), "aten.ones_like.default(%x0)\n  %y: f32[2, 3] = aten.sub.Tensor(%z, %x0)", "f32[2, 3]", "1 - x0"},
	{"softplus", []opInput{{typ: "f32[3, 4]", lo: -3, hi: 3}}, "aten.softplus.default(%x0, 2.0, 3.0)", "f32[3, 4]", "F.softplus(x0, beta=2.0, threshold=3.0)"},
	{"index_copy", []opInput{{typ: "f32[3, 4]", lo: -2, hi: 2}, {typ: "f32[3, 2]", lo: 3, hi: 5}, {typ: "i64[2]", ints: []int64{2, 0}}}, "aten.index_copy.default(%x0, 1, %x2, %x1)", "f32[3, 4]", "x0.index_copy(1, x2, x1)"},
	{"max_pool2d", fin("f32[1, 2, 6, 6]"), "aten.max_pool2d.default(%x0, [2, 2], [3, 3])", "f32[1, 2, 2, 2]", "F.max_pool2d(x0, 2, 3)"},
	{"elu", fin("f32[2, 5]"), "aten.elu.default(%x0, 0.7)", "f32[2, 5]", "F.elu(x0, 0.7)"},
	{"amin", fin("f32[3, 5]"), "aten.amin.default(%x0, [1])", "f32[3]", "torch.amin(x0, 1)"},
	{"reciprocal", []opInput{{typ: "f32[3, 4]", lo: 0.5, hi: 2}}, "aten.reciprocal.default(%x0)", "f32[3, 4]", "torch.reciprocal(x0)"},
	{"flip", fin("f32[2, 3, 4]"), "aten.flip.default(%x0, [0, 2])", "f32[2, 3, 4]", "torch.flip(x0, [0, 2])"},
	{"roll", fin("f32[2, 5]"), "aten.roll.default(%x0, [2], [1])", "f32[2, 5]", "torch.roll(x0, 2, 1)"},
	{"pixel_shuffle", fin("f32[1, 8, 2, 3]"), "aten.pixel_shuffle.default(%x0, 2)", "f32[1, 2, 4, 6]", "F.pixel_shuffle(x0, 2)"},
	{"leaky_relu", fin("f32[3, 4]"), "aten.leaky_relu.default(%x0, 0.2)", "f32[3, 4]", "F.leaky_relu(x0, 0.2)"},
	{"logit", []opInput{{typ: "f32[3, 4]", lo: 0.05, hi: 0.95}}, "aten.logit.default(%x0, 0.001)", "f32[3, 4]", "torch.logit(x0, 0.001)"},
	{"silu", fin("f32[3, 4]"), "aten.silu.default(%x0)", "f32[3, 4]", "F.silu(x0)"},
	{"hardswish", []opInput{{typ: "f32[3, 4]", lo: -4, hi: 4}}, "aten.hardswish.default(%x0)", "f32[3, 4]", "F.hardswish(x0)"},
}

func fin(typ string) []opInput { return []opInput{{typ: typ, lo: -2, hi: 2}} }

// program is the IR text of the one-op program.
func (c portableOp) program() string {
	var ins, params []string
	for i, in := range c.inputs {
		ins = append(ins, fmt.Sprintf("input x%d: user_input\n", i))
		params = append(params, fmt.Sprintf("%%x%d: %s", i, in.typ))
	}
	first := "%y: " + c.out
	if strings.Contains(c.body, "\n") { // a helper value %z feeds %y
		first = "%z: " + c.out
	}
	return strings.Join(ins, "") + "output user_output\ngraph forward(" + strings.Join(params, ", ") + ") {\n  " +
		first + " = " + c.body + "\n  return %y\n}\n"
}

// tensor makes input in (of type t), deterministic and spread over [lo, hi].
func (in opInput) tensor(t *ir.TensorType) *interp.Tensor {
	shape := make([]int64, len(t.Shape))
	n := 1
	for i, d := range t.Shape {
		shape[i], _ = d.Const()
		n *= int(shape[i])
	}
	if in.ints != nil {
		return interp.FromInt64(t.DType, shape, in.ints)
	}
	xs := make([]float64, n)
	for k := range xs {
		u := 0.5 + 0.5*math.Sin(float64(k*7+3)*1.3)
		xs[k] = in.lo + (in.hi-in.lo)*u
		if in.round {
			xs[k] = math.Round(xs[k])
		}
	}
	return interp.FromFloat64(t.DType, shape, xs)
}

type judgeCase struct {
	Name   string   `json:"name"`
	PTE    string   `json:"pte"`
	Inputs []string `json:"inputs"`
	Ref    string   `json:"ref"`
}

type judgeResult struct {
	Name     string   `json:"name"`
	OK       bool     `json:"ok"`
	Err      string   `json:"err"`
	Detail   string   `json:"detail"`
	Registry []string `json:"registry"`
}

// TestPortableOpsOnGenuineRuntime exports each one-op program to a portable
// .pte with fxport and runs it on the genuine ExecuTorch runtime
// (executorch.runtime, full verification) against torch eager; it also
// checks that the runtime registers every portable kernel of
// gen/etkernels.spec.
func TestPortableOpsOnGenuineRuntime(t *testing.T) {
	py := testenv.Python(t)
	root := testenv.Root(t)
	dir := t.TempDir()
	var cases []judgeCase
	for _, c := range portableOps {
		p := ettest.Parse(t, c.program(), c.name+".fxir")
		var inputs []string
		for i, in := range c.inputs {
			v := p.Main.Inputs[i]
			path := filepath.Join(dir, fmt.Sprintf("%s_input_%d.npy", c.name, i))
			if err := npy.WriteFile(path, in.tensor(v.Type.(*ir.TensorType))); err != nil {
				t.Fatal(err)
			}
			inputs = append(inputs, path)
		}
		ettest.Lower(t, p, "executorch.portable", "")
		_, data := ettest.Emit(t, p, c.name, emit.Options{})
		pte := filepath.Join(dir, c.name+".pte")
		if err := os.WriteFile(pte, data, 0o644); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, judgeCase{c.name, pte, inputs, c.ref})
	}
	manifest := filepath.Join(dir, "cases.json")
	js, _ := json.Marshal(cases)
	if err := os.WriteFile(manifest, js, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, filepath.Join(root, "tools", "etops", "judge.py"), manifest)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("judge.py: %v\n%s", err, stderr.String())
	}
	passed := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<22)
	seen := map[string]bool{}
	for sc.Scan() {
		var r judgeResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("judge.py printed %q: %v", sc.Text(), err)
		}
		if r.Registry != nil {
			checkRegistry(t, root, r.Registry)
			continue
		}
		seen[r.Name] = true
		switch {
		case r.Err != "":
			t.Errorf("%s: genuine runtime: %s", r.Name, r.Err)
		case !r.OK:
			t.Errorf("%s: differs from torch: %s", r.Name, r.Detail)
		default:
			passed++
		}
	}
	for _, c := range cases {
		if !seen[c.Name] {
			t.Errorf("%s: no result from judge.py\n%s", c.Name, stderr.String())
		}
	}
	t.Logf("%d/%d one-op portable programs match torch on the genuine ExecuTorch runtime", passed, len(cases))
}

// checkRegistry checks that the genuine runtime registers every portable
// kernel of gen/etkernels.spec (custom_ops.yaml's allclose is not built
// into the Python runtime; the quantized library is loaded separately).
func checkRegistry(t *testing.T, root string, registry []string) {
	t.Helper()
	reg := map[string]bool{}
	for _, r := range registry {
		reg[r] = true
	}
	src, err := os.ReadFile(filepath.Join(root, "gen", "etkernels.spec"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(line, "#") || !strings.Contains(line, "lib=portable") {
			continue
		}
		name := line[:strings.IndexByte(line, '(')]
		if strings.HasPrefix(name, "aten::allclose.") {
			continue
		}
		n++
		if !reg[name] {
			t.Errorf("kernel %s of gen/etkernels.spec is not registered in the genuine runtime", name)
		}
	}
	t.Logf("%d portable kernels of gen/etkernels.spec registered in the genuine runtime", n)
}
