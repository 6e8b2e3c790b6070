package fxtext

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
)

// minParseRate is the share of the dump corpus that must parse. It is
// pinned just under the rate measured when it was last raised, so that a
// change that makes dumps unreadable fails here.
const minParseRate = 0.99

// minMappedRate is the share that must read with no opaque call.
const minMappedRate = 0.70

// sidecar is what tools/fxdumps/gen.py records next to the dumps of one
// program stage: torch's own types of the main graph's values.
type sidecar struct {
	Source string                     `json:"source"`
	Inputs map[string]string          `json:"inputs"`
	Nodes  map[string]json.RawMessage `json:"nodes"`
}

// dumpForm is the form a corpus file name says it is: <program>.<stage>.<form>.txt
// (testdata/dumps) or <name>.<form>.txt (testdata/eras).
func dumpForm(path string) (stage, form string) {
	parts := strings.Split(strings.TrimSuffix(filepath.Base(path), ".txt"), ".")
	form = parts[len(parts)-1]
	stage = "era"
	if !strings.Contains(path, "testdata/eras") && len(parts) >= 3 {
		stage = parts[len(parts)-2]
	}
	return stage, form
}

// torchInconsistent lists dumps whose annotations torch itself printed
// inconsistently, with the reason.
var torchInconsistent = map[string]string{
	"shape_cond.module.readable":         "ep.module() specializes the input to f32[6, 2] but the cond subgraphs keep f32[s77, 2]",
	"shape_cond.module.readable_plain":   "same",
	"shape_cond.module.readable_strides": "same",
	// ExportDB's cond_operands example, printed by TestPublicSuiteDumps.
	"exportdb_cond_operands.module.readable":         "ep.module() specializes the input to f32[3, 2] but the cond subgraphs keep f32[s77, 2]",
	"exportdb_cond_operands.module.readable_plain":   "same",
	"exportdb_cond_operands.module.readable_strides": "same",
}

type rate struct{ ok, all int }

func (r rate) String() string {
	return fmt.Sprintf("%d/%d (%.1f%%)", r.ok, r.all, 100*float64(r.ok)/float64(max(r.all, 1)))
}

// TestDumpCorpus parses every genuine dump (testdata/dumps, printed by
// tools/fxdumps/gen.py with torch; testdata/eras, written in older
// torch releases' print formats) without types, prints the parse rate per form and stage, and
// fails below minParseRate. Dumps whose program stage has torch's shape
// propagation recorded are then given their input types (Retype) and every
// inferred tensor type must equal torch's.
func TestDumpCorpus(t *testing.T) {
	files, _ := filepath.Glob("testdata/dumps/*.txt")
	eras, _ := filepath.Glob("testdata/eras/*.txt")
	files = append(files, eras...)
	if len(files) < 100 {
		t.Fatalf("only %d dumps in testdata/dumps and testdata/eras: regenerate with third_party/venv/bin/python tools/fxdumps/gen.py --out frontends/fxtext/testdata/dumps", len(files))
	}
	m := measureDumps(t, files)
	if got := float64(m.total.ok) / float64(m.total.all); got < minParseRate {
		t.Errorf("parse rate %s is below the pinned %.0f%%; the unread dumps are logged above with the line and what is missing", m.total, 100*minParseRate)
	}
	if got := float64(m.mapped) / float64(m.total.all); got < minMappedRate {
		t.Errorf("only %s of the dumps read with every node mapped, below the pinned %.0f%%", rate{m.mapped, m.total.all}, 100*minMappedRate)
	}
	if m.compared == 0 {
		t.Error("no inferred type was compared with torch's: the sidecar JSON files are missing")
	}
}

// dumpMeasure is what measureDumps found over a set of dumps.
type dumpMeasure struct {
	total              rate
	mapped             int // parsed with no opaque call
	compared, mismatch int // inferred types compared with torch's, and how many differ
}

// measureDumps parses every dump in files without types, logs the parse
// rate per form and stage and every unread dump, checks annotated dumps
// against shape inference, and retypes untyped dumps from their sidecars
// (reporting every inferred type that differs from torch's as an error).
func measureDumps(t *testing.T, files []string) dumpMeasure {
	t.Helper()
	sort.Strings(files)
	byForm, byStage := map[string]*rate{}, map[string]*rate{}
	total := rate{}
	var failures []string
	compared, mismatches, opaqueLeft := 0, 0, 0
	mapped, annotated, retyped, typedAll := 0, 0, 0, 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		stage, form := dumpForm(f)
		if byForm[form] == nil {
			byForm[form] = &rate{}
		}
		if byStage[stage] == nil {
			byStage[stage] = &rate{}
		}
		byForm[form].all++
		byStage[stage].all++
		total.all++
		p, err := Parse(src, f, Options{})
		if err != nil {
			failures = append(failures, err.Error())
			continue
		}
		byForm[form].ok++
		byStage[stage].ok++
		total.ok++
		if !hasOpaque(p) {
			mapped++
		}
		if form != "graph" && form != "code" {
			// Annotated forms carry torch's (symbolic) types: they must agree
			// with shape inference.
			annotated++
			if err := ir.VerifyWith(p, ir.VerifyOptions{Types: true}); err != nil {
				if why, known := torchInconsistent[strings.TrimSuffix(filepath.Base(f), ".txt")]; known {
					t.Logf("%s: annotations disagree with shape inference (%s): %v", f, why, err)
				} else {
					t.Errorf("%s: annotations disagree with shape inference: %v", f, err)
				}
			}
			continue
		}
		side := readSidecar(t, f)
		if side == nil || len(side.Inputs) == 0 {
			continue
		}
		n, bad := checkInferred(t, f, string(src), p, side, &opaqueLeft)
		retyped++
		if len(ir.UnknownValues(p)) == 0 {
			typedAll++
		}
		compared += n
		mismatches += len(bad)
		for _, b := range bad {
			t.Error(b)
		}
	}
	names := func(m map[string]*rate) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	var b strings.Builder
	fmt.Fprintf(&b, "parse rate without types: %s\n", total)
	for _, k := range names(byForm) {
		fmt.Fprintf(&b, "  form %-16s %s\n", k, byForm[k])
	}
	for _, k := range names(byStage) {
		fmt.Fprintf(&b, "  stage %-15s %s\n", k, byStage[k])
	}
	fmt.Fprintf(&b, "with no opaque call (every node mapped to a known op): %s\n", rate{mapped, total.all})
	fmt.Fprintf(&b, "annotated dumps checked against shape inference (ir.VerifyWith Types): %d\n", annotated)
	fmt.Fprintf(&b, "untyped dumps fully typed once given torch's input types: %s\n", rate{typedAll, retyped})
	fmt.Fprintf(&b, "inferred types compared with torch's shape propagation: %d, mismatches %d, left unknown behind an opaque op %d\n", compared, mismatches, opaqueLeft)
	t.Log("\n" + b.String())
	for _, f := range failures {
		t.Log("unread: " + f)
	}
	return dumpMeasure{total: total, mapped: mapped, compared: compared, mismatch: mismatches}
}

func readSidecar(t *testing.T, dump string) *sidecar {
	base := strings.TrimSuffix(dump, ".txt")
	base = base[:strings.LastIndexByte(base, '.')]
	raw, err := os.ReadFile(base + ".json")
	if err != nil {
		return nil
	}
	var s sidecar
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%s.json: %v", base, err)
	}
	return &s
}

// checkInferred retypes p from the sidecar's input types and compares every
// main-graph value torch typed as one tensor.
func checkInferred(t *testing.T, file, src string, p *ir.Program, side *sidecar, opaqueLeft *int) (int, []string) {
	types := map[string]ir.Type{}
	have := map[string]bool{}
	for _, in := range p.Main.Inputs {
		have[in.Name] = true
	}
	for _, in := range p.Signature.Inputs {
		have[in.Target] = true
	}
	for name, text := range side.Inputs {
		if !have[name] {
			continue
		}
		ty, err := ir.ParseType(text)
		if err != nil {
			t.Fatalf("%s: sidecar input %s: %v", file, name, err)
		}
		types[name] = ty
	}
	if err := Retype(p, types); err != nil {
		return 0, []string{fmt.Sprintf("%s: retype: %v", file, err)}
	}
	var bad []string
	n := 0
	vals := append([]*ir.Value(nil), p.Main.Inputs...)
	for _, node := range p.Main.Nodes() {
		vals = append(vals, node.Results...)
	}
	for _, v := range vals {
		raw, ok := side.Nodes[v.Name]
		if !ok {
			continue
		}
		var want string
		if json.Unmarshal(raw, &want) != nil || !strings.Contains(want, "[") {
			continue // a tuple, a SymInt or a Python number
		}
		wt, err := ir.ParseType(want)
		if err != nil {
			continue
		}
		n++
		where := fmt.Sprintf("%s:%d", file, lineOf(src, v.Name))
		switch {
		case ir.IsUnknown(v.Type) && fedByOpaque(v):
			*opaqueLeft++
		case ir.IsUnknown(v.Type):
			bad = append(bad, fmt.Sprintf("%s: %%%s stays unknown after retyping; torch says %s", where, v.Name, want))
		case ir.TypeEqual(v.Type, ir.Token) && want == "f32[0]":
			// torch's values for effect tokens are empty tensors.
		case !ir.TypesCompatible(v.Type, wt) && !sameUpToUnbacked(v.Type, wt):
			bad = append(bad, fmt.Sprintf("%s: %%%s is inferred %s, torch says %s", where, v.Name, v.Type, want))
		}
	}
	return n, bad
}

// sameUpToUnbacked reports types that differ only where both sides hold a
// data-dependent (unbacked) size symbol: torch and fxtext number those
// independently (torch's u0, u1, … count every symbol its tracer made;
// fxtext's are u<node ID>), and torch makes a fresh one where fxtext keeps
// an expression of an earlier one (a slice with data-dependent bounds).
func sameUpToUnbacked(got, want ir.Type) bool {
	g, ok1 := got.(*ir.TensorType)
	w, ok2 := want.(*ir.TensorType)
	if !ok1 || !ok2 || g.DType != w.DType || len(g.Shape) != len(w.Shape) {
		return false
	}
	unbacked := func(d string) bool { return len(d) > 1 && d[0] == 'u' && strings.Trim(d[1:], "0123456789_") == "" }
	for i := range g.Shape {
		gd, wd := g.Shape[i].String(), w.Shape[i].String()
		if gd != wd && !(unbacked(gd) && unbacked(wd)) {
			return false
		}
	}
	return true
}

// fedByOpaque reports a value computed (transitively) from an opaque call,
// whose results fxtext cannot type.
func fedByOpaque(v *ir.Value) bool {
	seen := map[*ir.Value]bool{}
	var walk func(v *ir.Value) bool
	walk = func(v *ir.Value) bool {
		if seen[v] || v.Def == nil {
			return false
		}
		seen[v] = true
		if v.Def.Op.Info().Name == "opaque.call.default" {
			return true
		}
		found := false
		for _, a := range v.Def.Args {
			for _, x := range a.Values() {
				found = found || ir.IsUnknown(x.Type) && walk(x)
			}
		}
		return found
	}
	return walk(v)
}

func hasOpaque(p *ir.Program) bool {
	for _, g := range p.Graphs() {
		for _, n := range g.Nodes() {
			if isOpaque(n.Op) {
				return true
			}
		}
	}
	return false
}

// lineOf is the line that defines name in a graph-form or code-form dump.
func lineOf(src, name string) int {
	for i, line := range strings.Split(src, "\n") {
		l := strings.TrimSpace(line)
		if strings.HasPrefix(l, "%"+name+" :") || strings.HasPrefix(l, name+" = ") || strings.HasPrefix(l, name+": ") {
			return i + 1
		}
	}
	return 0
}
