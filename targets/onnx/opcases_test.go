package onnx

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/fxport/fxport/frontends/pt2"
	"github.com/fxport/fxport/internal/ort"
	"github.com/fxport/fxport/internal/testenv"
	"github.com/fxport/fxport/ir"
)

// opCasesDir holds the one-op programs tools/onnxcheck/gen_opcases.py writes
// with genuine torch.export (program.pt2, io/*.npy from torch eager).
const opCasesDir = "testdata/opcases"

// torchCase is one program of opCasesDir, read and through the ONNX pipeline.
type torchCase struct {
	name string
	dir  string
	p    *ir.Program
	ops  []ir.Op // the program's ops as read, before the pipeline
	// random: outputs drawn by random ops (random.json), judged by shape,
	// dtype and bounds.
	random map[string]*[2]float64
}

func loadOpCases(t *testing.T) []torchCase {
	t.Helper()
	entries, err := os.ReadDir(opCasesDir)
	if err != nil {
		t.Fatalf("%s: %v (tools/onnxcheck/gen_opcases.py writes it)", opCasesDir, err)
	}
	var out []torchCase
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(opCasesDir, e.Name())
		p, err := pt2.Read(filepath.Join(dir, "program.pt2"))
		if err != nil {
			t.Errorf("%s: the frontend cannot read it: %v", e.Name(), err)
			continue
		}
		seen := map[ir.Op]bool{}
		var ops []ir.Op
		for _, g := range p.Graphs() {
			for _, n := range g.Nodes() {
				if !n.IsReturn() && !seen[n.Op] {
					seen[n.Op] = true
					ops = append(ops, n.Op)
				}
			}
		}
		runPipeline(t, p)
		var random map[string]*[2]float64
		if data, err := os.ReadFile(filepath.Join(dir, "random.json")); err == nil {
			if err := json.Unmarshal(data, &random); err != nil {
				t.Fatalf("%s/random.json: %v", dir, err)
			}
		}
		out = append(out, torchCase{e.Name(), dir, p, ops, random})
	}
	return out
}

// TestOpCasesGenuine exports every one-op torch program at every offered
// opset and has the venv's onnx.checker (full check) and ONNX Runtime judge
// each model against torch eager's outputs. An opset below what an op needs
// must be refused with a MissingOpsError naming the opset to choose.
func TestOpCasesGenuine(t *testing.T) {
	testenv.Python(t)
	tmp := t.TempDir()
	var cases []judgeCase
	refused := 0
	for _, c := range loadOpCases(t) {
		for _, opset := range Opsets() {
			name := fmt.Sprintf("%s@%d", c.name, opset)
			m, err := Emit(c.p.Clone(), Options{Opset: opset})
			var missing *MissingOpsError
			if errors.As(err, &missing) && asksNewerOpset(err.Error(), opset) {
				refused++
				continue
			}
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			path := filepath.Join(tmp, fmt.Sprintf("%s_%d.onnx", c.name, opset))
			if err := m.Write(path); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			jc := ioCase(name, path, filepath.Join(c.dir, "io"), len(m.Inputs), len(m.Outputs))
			jc.Random = c.random
			cases = append(cases, jc)
		}
	}
	verdicts := judge(t, cases)
	passed := 0
	for _, c := range cases {
		v := verdicts[c.Name]
		if strings.HasPrefix(v, "ok ") {
			passed++
		} else if v != "" {
			t.Error(v)
		}
	}
	t.Logf("%d of %d one-op models pass onnx.checker and ONNX Runtime against torch; %d refused below the op's opset", passed, len(cases), refused)
}

// opCaseOps maps each op to the one-op torch programs that hold it.
func opCaseOps(t *testing.T) map[ir.Op][]string {
	t.Helper()
	out := map[ir.Op][]string{}
	entries, err := os.ReadDir(opCasesDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		p, err := pt2.Read(filepath.Join(opCasesDir, e.Name(), "program.pt2"))
		if err != nil {
			continue
		}
		for _, n := range p.Main.Nodes() {
			if n.IsReturn() {
				continue
			}
			if l := out[n.Op]; len(l) == 0 || l[len(l)-1] != e.Name() {
				out[n.Op] = append(out[n.Op], e.Name())
			}
		}
	}
	for op := range out {
		sort.Strings(out[op])
	}
	return out
}

var opsetAdvice = regexp.MustCompile(`--opset (\d+)`)

// asksNewerOpset reports whether every problem of a MissingOpsError text
// names another --opset to choose: an op ONNX has only from a newer opset,
// or one ONNX Runtime runs only at an older one.
func asksNewerOpset(msg string, opset int) bool {
	ms := opsetAdvice.FindAllStringSubmatch(msg, -1)
	if len(ms) == 0 || strings.Count(msg, "\n  aten.") != len(ms) {
		return false
	}
	for _, m := range ms {
		if v, _ := strconv.Atoi(m[1]); v == opset {
			return false
		}
	}
	return true
}

// upsample_bicubic2d.default (which torch.export always decomposes, and the
// interpreter lacks) must give in ORT what its .vec form, judged against
// torch in TestOpCasesGenuine, gives.
func TestBicubicDefaultMatchesVec(t *testing.T) {
	needORT(t)
	for _, ac := range []string{"False", "True"} {
		def := parse(t, "graph forward(%x: f32[2, 3, 5, 4]) {\n  %y: f32[2, 3, 7, 9] = aten.upsample_bicubic2d.default(%x, [7, 9], "+ac+")\n  return %y\n}\n")
		vec := parse(t, "graph forward(%x: f32[2, 3, 5, 4]) {\n  %y: f32[2, 3, 7, 9] = aten.upsample_bicubic2d.vec(%x, [7, 9], "+ac+", None)\n  return %y\n}\n")
		in := toORT(t, randInputs(t, def, 3)[0])
		var outs [][]float64
		for _, p := range []*ir.Program{def, vec} {
			m, err := Emit(p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.RunORT([]ort.Tensor{in})
			if err != nil {
				t.Fatal(err)
			}
			v, err := got[0].Float64s()
			if err != nil {
				t.Fatal(err)
			}
			outs = append(outs, v)
		}
		if d := Compare("y", outs[0], nil, outs[1], nil); !d.OK(1e-6) {
			t.Errorf("align_corners=%s: .default differs from .vec: max abs %g", ac, d.MaxAbs)
		}
	}
}
