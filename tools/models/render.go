// Package models renders docs/models.md from the model sweep's results
// (tools/models/sweep.py, `make models`): the transformers architectures and
// the torchvision models it captured with fxport capture's machinery,
// exported with fxport to ONNX, portable and XNNPACK .pte and judged with
// the genuine runtimes, beside transformers.exporters on the same models.
package models

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Targets are the result keys of fxport's three exports, in table order.
var Targets = []string{"onnx", "portable", "xnnpack"}

// Result is one target's outcome.
type Result struct {
	Status  string   `json:"status"` // pass, mismatch, export-failed
	Seconds *float64 `json:"seconds"`
	Error   string   `json:"error"`
	Worst   *float64 `json:"worst"` // max|got-exp| / max|exp|
	// EarlierRun marks a transformers.exporters result kept from an earlier
	// run of the sweep (same config, seed and inputs), not timed beside
	// fxport's in this one.
	EarlierRun bool `json:"earlier_run"`
}

// Capture is the capture step's outcome.
type Capture struct {
	Status  string   `json:"status"` // ok, capture-failed, build-failed
	Seconds float64  `json:"seconds"`
	Nodes   int      `json:"nodes"`
	Fired   []string `json:"fired"`
	Error   string   `json:"error"`
	// DynamicError is why a dynamic capture failed when a static one was kept.
	DynamicError string `json:"dynamic_error"`
}

// Model is one entry's record.
type Model struct {
	Name    string            `json:"name"`
	Source  string            `json:"source"`
	Arch    string            `json:"arch"`
	Task    string            `json:"task"`
	Family  string            `json:"family"`
	Class   string            `json:"class"`
	Params  int64             `json:"params"`
	Dynamic []string          `json:"dynamic"`
	Capture Capture           `json:"capture"`
	Fxport  map[string]Result `json:"fxport"`
	HF      map[string]Result `json:"hf"`
	// Recheck names the table entry the model re-checks: "export-skip"
	// (EXPORT_SKIPS, captured with the skip ignored) or "disable-optimize"
	// (ONNX_DISABLE_OPTIMIZE, also exported with the optimizer forced on).
	Recheck string `json:"recheck"`
	// JudgedBatches: the batch sizes a dynamic-batch model was judged at
	// (the example's and a second one, so the symbolic dim is exercised).
	JudgedBatches []int `json:"judged_batches"`
}

// Results is the sweep's file.
type Results struct {
	Env    map[string]string `json:"env"`
	Models []Model           `json:"models"`
}

// Load reads a results file.
func Load(path string) (*Results, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Results
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// Passed reports whether target key of m exported and matched eager.
func (m *Model) Passed(key string) bool {
	r, ok := m.Fxport[key]
	return ok && m.Capture.Status == "ok" && r.Status == "pass"
}

// Reason is why target key of m did not pass ("" when it passed).
func (m *Model) Reason(key string) string {
	if m.Capture.Status != "ok" {
		return m.Capture.Status + ": " + m.Capture.Error
	}
	r, ok := m.Fxport[key]
	if !ok {
		return "not run"
	}
	if r.Status == "pass" {
		return ""
	}
	return r.Status + ": " + r.Error
}

// Count is how many of ms pass key ("all": every fxport target).
func Count(ms []Model, key string) int {
	n := 0
	for i := range ms {
		ok := true
		for _, k := range Targets {
			if (key == "all" || key == k) && !ms[i].Passed(k) {
				ok = false
			}
		}
		if ok {
			n++
		}
	}
	return n
}

func pct(n, d int) string {
	if d == 0 {
		return "0%"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(n)/float64(d))
}

func cell(r Result, captured bool, notes *[]string, label string) string {
	if !captured {
		return "—"
	}
	switch r.Status {
	case "":
		return "not run"
	case "pass":
		w := ""
		if r.Worst != nil {
			w = " " + fmt.Sprintf("%.0e", *r.Worst)
		}
		return "✓" + w
	}
	*notes = append(*notes, label+": "+r.Status+": "+oneLine(r.Error))
	return fmt.Sprintf("✗ %s [%d]", short(r.Status), len(*notes))
}

func short(status string) string {
	switch status {
	case "export-failed":
		return "export"
	case "mismatch":
		return "runtime"
	}
	return status
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.ReplaceAll(s, "|", "\\|")
	if s == "" {
		return "(no message)"
	}
	return s
}

func secs(v *float64) string {
	if v == nil {
		return ""
	}
	return fmt.Sprintf("%.1f", *v)
}

// fxportSeconds is capture plus the slowest of fxport's three exports.
func fxportSeconds(m *Model, key string) *float64 {
	r, ok := m.Fxport[key]
	if !ok || r.Seconds == nil {
		return nil
	}
	v := m.Capture.Seconds + *r.Seconds
	return &v
}

// Render writes docs/models.md.
func Render(r *Results) []byte {
	var b bytes.Buffer
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("# Model sweep\n\n")
	w("<!-- Code generated by `make models` (tools/models/sweep.py, then `go test ./tools/models -run TestModelsDoc -update`). DO NOT EDIT. -->\n\n")
	var envs []string
	for k, v := range r.Env {
		envs = append(envs, k+" "+v)
	}
	sort.Strings(envs)
	w("Every model below is built with random weights from a tiny config (no downloads; the list is data: ")
	w("`tools/models/archs.json`, `tools/models/torchvision.json`), captured with `fxport capture`'s machinery ")
	w("(the catalog's capture steps, `torch.export`, `run_decompositions`; the dims in *dynamic* stay symbolic), ")
	w("exported by fxport to ONNX, portable `.pte` and XNNPACK `.pte`, and judged against torch eager with the ")
	w("genuine tools: `onnx.checker` + ONNX Runtime, and the genuine ExecuTorch runtime (fp32 rule: ")
	w("max |got − expected| ≤ 1e-4 × max |expected|; ✓ shows that ratio). ")
	w("Where transformers ships `transformers.exporters`, its `OnnxExporter` and `ExecutorchExporter` ")
	w("(XNNPACK) export the same model on the same inputs in the same run and are judged the same way. ")
	w("Times are wall seconds on a shared 2-core machine: fxport's is capture (torch.export + ")
	w("run_decompositions) plus `fxport export`; transformers' is its whole export. Versions: %s.\n\n", strings.Join(envs, ", "))

	groups := []struct{ source, title string }{{"transformers", "transformers architectures"}, {"torchvision", "torchvision models"}}
	for _, g := range groups {
		var ms []Model
		for _, m := range r.Models {
			src := m.Source
			if src == "" {
				src = "transformers"
			}
			if src == g.source {
				ms = append(ms, m)
			}
		}
		if len(ms) == 0 {
			continue
		}
		renderGroup(&b, g.title, g.source == "transformers", ms)
	}
	var rc []Model
	for _, m := range r.Models {
		if m.Recheck != "" {
			rc = append(rc, m)
		}
	}
	if len(rc) > 0 {
		renderRecheck(&b, rc)
	}
	return b.Bytes()
}

// Verdict says whether a re-checked table entry is still needed.
func Verdict(m *Model) string {
	switch m.Recheck {
	case "export-skip":
		if m.Capture.Status == "build-failed" {
			return "not re-checked: the sweep's tiny config does not build"
		}
		if Count([]Model{*m}, "all") == 1 {
			return "not needed: captured and exported to every target with the skip ignored"
		}
		return "still needed"
	case "disable-optimize":
		if m.Capture.Status != "ok" {
			return "not re-checked: " + m.Capture.Status
		}
		if opt, ok := m.Fxport["onnx_optimized"]; ok && opt.Status == "pass" {
			return "not needed by fxport's optimizer: the optimized export matches"
		}
		return "still needed"
	}
	return ""
}

func renderRecheck(b *bytes.Buffer, ms []Model) {
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	w("## EXPORT_SKIPS and ONNX_DISABLE_OPTIMIZE re-checked\n\n")
	w("EXPORT_SKIPS (`capture/fxport_capture/export_skips.json`, refused by `fxport capture` unless `--ignore-skips`) and ")
	w("ONNX_DISABLE_OPTIMIZE (`targets/onnx/disable_optimize.json`) hold one reason per entry. The sweep captures each ")
	w("EXPORT_SKIPS class it can build with the skip ignored (the entry is still needed while that fails), and exports ")
	w("each disable-optimize class to ONNX twice: as the table says (unoptimized) and with fxport's optimizer forced on ")
	w("(`--optimize`). Entries without a row here have no tiny config in the sweep yet (`tools/models/skips.json`).\n\n")
	w("| model | table | class | capture | ONNX | ONNX optimized | portable | XNNPACK | verdict |\n")
	w("|---|---|---|---|---|---|---|---|---|\n")
	var notes []string
	for i := range ms {
		m := &ms[i]
		if m.Capture.Status == NotRun {
			w("| `%s` | %s | %s | not run by the last sweep | | | | | |\n", m.Name, map[bool]string{true: "ONNX_DISABLE_OPTIMIZE", false: "EXPORT_SKIPS"}[m.Recheck == "disable-optimize"], m.Class)
			continue
		}
		ok := m.Capture.Status == "ok"
		capCell := fmt.Sprintf("%.1f s (%d ops)", m.Capture.Seconds, m.Capture.Nodes)
		if !ok {
			notes = append(notes, m.Name+": "+m.Capture.Status+": "+oneLine(m.Capture.Error))
			capCell = fmt.Sprintf("✗ %s [%d]", m.Capture.Status, len(notes))
		}
		opt := "—"
		if r, has := m.Fxport["onnx_optimized"]; has {
			opt = cell(r, ok, &notes, m.Name+" onnx optimized")
			if r.Status == "pass" && r.Seconds != nil {
				opt += fmt.Sprintf(" (%.1f s)", *r.Seconds)
			}
		}
		var cells []string
		for _, k := range Targets {
			cells = append(cells, cell(m.Fxport[k], ok, &notes, m.Name+" "+k))
		}
		table := "EXPORT_SKIPS"
		if m.Recheck == "disable-optimize" {
			table = "ONNX_DISABLE_OPTIMIZE"
		}
		w("| `%s` | %s | %s | %s | %s | %s | %s | %s | %s |\n", m.Name, table, m.Class, capCell, cells[0], opt, cells[1], cells[2], Verdict(m))
	}
	w("\n")
	for i, n := range notes {
		w("%d. %s\n", i+1, n)
	}
	if len(notes) > 0 {
		w("\n")
	}
}

// NotRun is the capture status of a listed model the last sweep did not
// reach (its time ran out): listed by name, outside the counts.
const NotRun = "not-run"

func renderGroup(b *bytes.Buffer, title string, hf bool, all []Model) {
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	var ms []Model
	var skipped []string
	for _, m := range all {
		if m.Capture.Status == NotRun {
			skipped = append(skipped, "`"+m.Name+"`")
		} else {
			ms = append(ms, m)
		}
	}
	n := len(ms)
	captured := 0
	for _, m := range ms {
		if m.Capture.Status == "ok" {
			captured++
		}
	}
	w("## %s\n\n", strings.ToUpper(title[:1])+title[1:])
	w("**%d** models; captured %d (%s); exported and matching eager: ONNX **%d (%s)**, portable `.pte` **%d (%s)**, XNNPACK `.pte` **%d (%s)**; all three %d (%s).",
		n, captured, pct(captured, n), Count(ms, "onnx"), pct(Count(ms, "onnx"), n), Count(ms, "portable"), pct(Count(ms, "portable"), n),
		Count(ms, "xnnpack"), pct(Count(ms, "xnnpack"), n), Count(ms, "all"), pct(Count(ms, "all"), n))
	if hf {
		ho, he, fo, fe, both, hn := 0, 0, 0, 0, 0, 0
		var fxT, hfT float64
		for i := range ms {
			m := &ms[i]
			if m.HF == nil {
				continue
			}
			hn++
			if m.HF["onnx"].Status == "pass" {
				ho++
				if m.Passed("onnx") {
					fo++
				}
			}
			if m.HF["executorch"].Status == "pass" {
				he++
				if m.Passed("xnnpack") {
					fe++
				}
			}
			for _, k := range [][2]string{{"onnx", "onnx"}, {"xnnpack", "executorch"}} {
				if m.Passed(k[0]) && m.HF[k[1]].Status == "pass" && m.HF[k[1]].Seconds != nil && !m.HF[k[1]].EarlierRun {
					fxT += *fxportSeconds(m, k[0])
					hfT += *m.HF[k[1]].Seconds
					both++
				}
			}
		}
		w(" transformers.exporters ran on %d of them (the CPU time of this machine allowed no more; \"not run\" below): `OnnxExporter` %d of %d matching, `ExecutorchExporter` (XNNPACK) %d of %d matching; ",
			hn, ho, hn, he, hn)
		w("fxport matches on %d of the %d the ONNX exporter matches and on %d of the %d the ExecuTorch exporter matches", fo, ho, fe, he)
		if both > 0 && hfT > 0 {
			w("; where both match in the same run (%d exports), fxport (capture + export) takes %.0f s in all, transformers.exporters %.0f s", both, fxT, hfT)
		}
		w(".")
	}
	if len(skipped) > 0 {
		w(" Listed but not run by the last sweep (its time ran out; `make models ONLY=...` runs them): %s.", strings.Join(skipped, ", "))
	}
	w("\n\n")
	if hf {
		w("| model | family | class | params | dynamic | capture s (ops) | ONNX | portable | XNNPACK | fxport s ONNX / XNN | HF ONNX | HF ExecuTorch | HF s ONNX / ET |\n")
		w("|---|---|---|---:|---|---|---|---|---|---|---|---|---|\n")
	} else {
		w("| model | class | params | dynamic | capture s (ops) | ONNX | portable | XNNPACK | fxport s ONNX / XNN |\n")
		w("|---|---|---:|---|---|---|---|---|---|\n")
	}
	var notes []string
	for i := range ms {
		m := &ms[i]
		ok := m.Capture.Status == "ok"
		capCell := fmt.Sprintf("%.1f (%d)", m.Capture.Seconds, m.Capture.Nodes)
		if !ok {
			notes = append(notes, m.Name+": "+m.Capture.Status+": "+oneLine(m.Capture.Error))
			capCell = fmt.Sprintf("✗ %s [%d]", m.Capture.Status, len(notes))
		} else if m.Capture.DynamicError != "" {
			notes = append(notes, m.Name+": dynamic capture failed, captured static: "+oneLine(m.Capture.DynamicError))
			capCell += fmt.Sprintf(" static [%d]", len(notes))
		}
		dyn := strings.Join(dynamicDims(m.Dynamic), ", ")
		if dyn == "" {
			dyn = "static"
		}
		if len(m.JudgedBatches) > 1 {
			bs := make([]string, len(m.JudgedBatches))
			for i, n := range m.JudgedBatches {
				bs[i] = fmt.Sprint(n)
			}
			dyn += " (judged at batch " + strings.Join(bs, " and ") + ")"
		}
		cells := make([]string, 0, 3)
		for _, k := range Targets {
			cells = append(cells, cell(m.Fxport[k], ok, &notes, m.Name+" "+k))
		}
		fxs := secs(fxportSeconds(m, "onnx")) + " / " + secs(fxportSeconds(m, "xnnpack"))
		name := "`" + m.Name + "`"
		if hf {
			ho, he, hs := "not run", "not run", ""
			if m.HF != nil {
				ho = cell(m.HF["onnx"], true, &notes, m.Name+" transformers.exporters ONNX")
				he = cell(m.HF["executorch"], true, &notes, m.Name+" transformers.exporters ExecuTorch")
				hs = secs(m.HF["onnx"].Seconds) + " / " + secs(m.HF["executorch"].Seconds)
				if m.HF["onnx"].EarlierRun {
					hs += " (earlier run)"
				}
			}
			w("| %s | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", name, m.Family, m.Class, m.Params, dyn, capCell,
				cells[0], cells[1], cells[2], fxs, ho, he, hs)
		} else {
			w("| %s | %s | %d | %s | %s | %s | %s | %s | %s |\n", name, m.Class, m.Params, dyn, capCell, cells[0], cells[1], cells[2], fxs)
		}
	}
	w("\n")
	if len(notes) > 0 {
		w("### Why the others failed (%s)\n\n", title)
		for i, n := range notes {
			w("%d. %s\n", i+1, n)
		}
		w("\n")
	}
}

// dynamicDims spells the dynamic dims for the table: "input_ids.1" stays as
// it is; a positional input ("0.0", torchvision's batch) becomes "input 0
// dim 0".
func dynamicDims(ds []string) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		in, dim, ok := strings.Cut(d, ".")
		if _, err := strconv.Atoi(in); ok && err == nil {
			d = "input " + in + " dim " + dim
		}
		out[i] = d
	}
	return out
}
