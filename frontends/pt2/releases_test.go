package pt2

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/interp/npy"
	"github.com/fxport/fxport/ir"
)

// releaseManifest is testdata/releases/torch-<v>/manifest.json, written by
// testdata/releases/gen.py with the torch release that saved the archives.
type releaseManifest struct {
	Torch    string                    `json:"torch"`
	Programs map[string]releaseProgram `json:"programs"`
}

type releaseProgram struct {
	File   string `json:"file"`
	Inputs []struct {
		Kind       string `json:"kind"`
		Name       string `json:"name"`
		Target     string `json:"target"`
		Persistent *bool  `json:"persistent"`
	} `json:"inputs"`
	Outputs []struct {
		Kind   string `json:"kind"`
		Target string `json:"target"`
	} `json:"outputs"`
	State           map[string]releaseTensor `json:"state"`
	RangeConstraint map[string][2]*int64     `json:"range_constraints"`
	UserInputTypes  map[string]struct {
		DType string   `json:"dtype"`
		Shape []string `json:"shape"`
	} `json:"user_input_types"`
	Example struct {
		Args    []releaseTensor          `json:"args"`
		Kwargs  map[string]releaseTensor `json:"kwargs"`
		Outputs []releaseTensor          `json:"outputs"`
	} `json:"example"`
}

type releaseTensor struct {
	DType  string    `json:"dtype"`
	Shape  []int64   `json:"shape"`
	Values []float64 `json:"values"`
}

func (rt releaseTensor) tensor(t *testing.T) *interp.Tensor {
	t.Helper()
	dt, ok := ir.DTypeFromName(rt.DType)
	if !ok {
		t.Fatalf("manifest dtype %q", rt.DType)
	}
	if dt.IsFloat() {
		return interp.FromFloat64(dt, rt.Shape, rt.Values)
	}
	ints := make([]int64, len(rt.Values))
	for i, v := range rt.Values {
		ints[i] = int64(v)
	}
	return interp.FromInt64(dt, rt.Shape, ints)
}

// wantLayouts is the container each torch release writes (docs/frontends.md).
func wantLayout(torch string) string {
	parts := strings.SplitN(strings.SplitN(torch, "+", 2)[0], ".", 3)
	minor, _ := strconv.Atoi(parts[1])
	switch {
	case parts[0] == "2" && minor <= 7:
		return LayoutLegacyZip
	case parts[0] == "2" && minor == 8:
		return LayoutArchivePickle
	}
	return LayoutArchive
}

// TestTorchReleases reads every archive that a genuine torch release saved
// (testdata/releases/torch-*/, see gen.py there) and checks it against what
// that torch recorded: the container layout and torch version, the
// signature (kinds, names, state-dict targets, buffer persistence), user
// input dtypes and shapes with the symbolic dims and their ranges, every
// parameter, buffer and constant value, and, run by the interpreter, torch's
// outputs on the example inputs.
func TestTorchReleases(t *testing.T) {
	dirs, err := filepath.Glob("testdata/releases/torch-*")
	if err != nil {
		t.Fatal(err)
	}
	layouts := map[string]bool{}
	for _, dir := range dirs {
		raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m releaseManifest
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		layouts[wantLayout(m.Torch)] = true
		names := make([]string, 0, len(m.Programs))
		for name := range m.Programs {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			want := m.Programs[name]
			t.Run(filepath.Base(dir)+"/"+name, func(t *testing.T) {
				checkRelease(t, filepath.Join(dir, want.File), m.Torch, want)
			})
		}
	}
	if len(dirs) < 3 || len(layouts) < 3 {
		t.Fatalf("archives of %d torch releases covering layouts %v: want at least three releases and all three layouts", len(dirs), layouts)
	}
}

func checkRelease(t *testing.T, path, torch string, want releaseProgram) {
	p, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.VerifyWith(p, ir.VerifyOptions{Types: true}); err != nil {
		t.Fatal(err)
	}
	if got, _ := p.Meta.Get(MetaTorchVersion); got != torch {
		t.Errorf("torch version %q, manifest says %q", got, torch)
	}
	if got, _ := p.Meta.Get(MetaLayout); got != wantLayout(torch) {
		t.Errorf("layout %q, torch %s writes %q", got, torch, wantLayout(torch))
	}

	// Signature.
	sig := p.Signature
	if len(sig.Inputs) != len(want.Inputs) {
		t.Fatalf("%d input specs, torch has %d", len(sig.Inputs), len(want.Inputs))
	}
	for i, w := range want.Inputs {
		g := sig.Inputs[i]
		if g.Kind.String() != w.Kind || g.Name != w.Name {
			t.Errorf("input %d: %s %q, torch has %s %q", i, g.Kind, g.Name, w.Kind, w.Name)
		}
		if w.Kind != "user_input" && g.Target != w.Target {
			t.Errorf("input %d (%s): target %q, torch has %q", i, w.Name, g.Target, w.Target)
		}
		if w.Kind == "buffer" && w.Persistent != nil && g.Persistent != *w.Persistent {
			t.Errorf("buffer %s: persistent %v, torch has %v", w.Target, g.Persistent, *w.Persistent)
		}
	}
	if len(sig.Outputs) != len(want.Outputs) {
		t.Fatalf("%d output specs, torch has %d", len(sig.Outputs), len(want.Outputs))
	}
	for i, w := range want.Outputs {
		if g := sig.Outputs[i]; g.Kind.String() != w.Kind || g.Target != w.Target {
			t.Errorf("output %d: %s %q, torch has %s %q", i, g.Kind, g.Target, w.Kind, w.Target)
		}
	}

	// User input types; symbolic dims carry torch's range.
	for _, in := range p.Main.Inputs {
		w, ok := want.UserInputTypes[in.Name]
		if !ok {
			continue
		}
		tt, ok := in.Type.(*ir.TensorType)
		if !ok {
			t.Fatalf("input %s has type %s, torch has a tensor", in.Name, in.Type)
		}
		if tt.DType.String() != w.DType || tt.Rank() != len(w.Shape) {
			t.Errorf("input %s: %s, torch has %s%v", in.Name, tt, w.DType, w.Shape)
			continue
		}
		for d, s := range w.Shape {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				if c, ok := tt.Shape[d].Const(); !ok || c != n {
					t.Errorf("input %s dim %d: %s, torch has %d", in.Name, d, tt.Shape[d], n)
				}
				continue
			}
			r, ok := want.RangeConstraint[s]
			if !ok || tt.Shape[d].IsConst() {
				t.Errorf("input %s dim %d: %s, torch has symbol %s with range %v", in.Name, d, tt.Shape[d], s, r)
				continue
			}
			got, ok := p.Env.Range(tt.Shape[d].String())
			if !ok || got.Lo.Inf != 0 || got.Lo.V != *r[0] || (r[1] != nil && (got.Hi.Inf != 0 || got.Hi.V != *r[1])) {
				t.Errorf("symbol %s: range %v, torch has [%d, %v]", tt.Shape[d], got, *r[0], r[1])
			}
		}
	}

	// Weights: every parameter, buffer and constant, value by value.
	for fqn, w := range want.State {
		pw := p.Weight(fqn)
		if pw == nil {
			t.Errorf("no weight %q", fqn)
			continue
		}
		got, err := interp.LoadWeight(pw)
		if err != nil {
			t.Errorf("weight %q: %v", fqn, err)
			continue
		}
		compareTensor(t, "weight "+fqn, got, w.tensor(t), 0)
	}

	// torch's outputs on the example inputs, by the interpreter.
	var inputs []interp.Value
	for _, a := range want.Example.Args {
		inputs = append(inputs, a.tensor(t))
	}
	keys := make([]string, 0, len(want.Example.Kwargs))
	for k := range want.Example.Kwargs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		inputs = append(inputs, want.Example.Kwargs[k].tensor(t))
	}
	res, err := interp.Run(p, inputs, interp.Options{})
	if err != nil {
		t.Fatalf("interpreting on torch's example inputs: %v", err)
	}
	var outs []*interp.Tensor
	for i, o := range res.Outputs {
		if sig.Outputs[i].Kind == ir.UserOutput {
			outs = append(outs, o.(*interp.Tensor))
		}
	}
	if len(outs) != len(want.Example.Outputs) {
		t.Fatalf("%d user outputs, torch gives %d", len(outs), len(want.Example.Outputs))
	}
	for i, w := range want.Example.Outputs {
		compareTensor(t, "output "+strconv.Itoa(i), outs[i], w.tensor(t), 1e-5)
	}
}

// compareTensor fails unless got has want's dtype and shape and its values
// within tol·(1+|want|) (tol 0: exactly).
func compareTensor(t *testing.T, what string, got, want *interp.Tensor, tol float64) {
	t.Helper()
	if got.DType != want.DType || !slices.Equal(got.Shape, want.Shape) {
		t.Errorf("%s: %s%v, torch has %s%v", what, got.DType, got.Shape, want.DType, want.Shape)
		return
	}
	g, w := got.Float64s(), want.Float64s()
	for i := range w {
		if d := math.Abs(g[i] - w[i]); d > tol*(1+math.Abs(w[i])) || math.IsNaN(g[i]) != math.IsNaN(w[i]) {
			t.Errorf("%s: element %d is %v, torch has %v", what, i, g[i], w[i])
			return
		}
	}
}

// TestFxgen113Legacy reads the one program kept from the corpus fxgen wrote
// with torch 1.13's make_fx and its own serializer (before fxgen moved to
// genuine torch.export): a Llama block whose KV cache is updated with
// index_copy (torch 2.14 writes index_put) and whose rotary tables are two
// strided views of one constants record; the interpreter must reproduce
// eager torch 1.13's output from io/.
func TestFxgen113Legacy(t *testing.T) {
	dir := "testdata/fxgen113/llama_block"
	p, err := Read(filepath.Join(dir, "program.pt2"))
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.VerifyWith(p, ir.VerifyOptions{Types: true}); err != nil {
		t.Fatal(err)
	}
	if v, _ := p.Meta.Get(MetaTorchVersion); !strings.HasPrefix(v, "1.13") {
		t.Fatalf("torch version %q, want the 1.13 make_fx program", v)
	}
	var inputs []interp.Value
	for i := 0; i < 2; i++ {
		x, err := npy.ReadFile(filepath.Join(dir, "io", "input_"+strconv.Itoa(i)+".npy"))
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, x)
	}
	res, err := interp.Run(p, inputs, interp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := npy.ReadFile(filepath.Join(dir, "io", "output_0.npy"))
	if err != nil {
		t.Fatal(err)
	}
	var got *interp.Tensor
	for i, o := range res.Outputs {
		if p.Signature.Outputs[i].Kind == ir.UserOutput {
			got = o.(*interp.Tensor)
		}
	}
	if got == nil {
		t.Fatal("no user output")
	}
	compareTensor(t, "output 0", got, want, 1e-4)
}
