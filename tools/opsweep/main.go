// Command opsweep runs the op-by-op conformance sweep (make ops) and writes
// tools/opsweep/results.json and docs/ops.md.
//
//	go run ./tools/opsweep -cases DIR [-gen] [-anchors] [-merge]
//	go run ./tools/opsweep -merge-anchors FILE
//	go run ./tools/opsweep -render
//
// With -gen it first has tools/opsweep/sweep.py (the venv's torch) write
// the one-op programs into DIR (with -anchors also torch's own exporters'
// verdicts, DIR/anchors.json). It then exports every case with fxport to
// ONNX, portable and XNNPACK (in this process), has sweep.py judge the
// files in one process (ONNX Runtime and onnx.checker; the genuine
// ExecuTorch runtime), and writes the results and the doc. Anchor verdicts
// missing from DIR are kept from the existing results file. With -merge
// the results file keeps its other rows: only the cases DIR holds are
// replaced (or added), so a sweep of a few ops (sweep.py gen --only OP)
// updates their rows without dropping the rest. -merge-anchors FILE sets
// only the anchor verdicts of the results file's rows from FILE (an
// anchors.json that sweep.py anchors wrote; fxport's verdicts and the
// other rows stay as they are) and regenerates the doc. -render only
// regenerates docs/ops.md from the results file.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fxport/fxport"
)

func main() {
	casesDir := flag.String("cases", "", "the case directory sweep.py gen writes (or wrote)")
	doGen := flag.Bool("gen", false, "run sweep.py gen first")
	anchors := flag.Bool("anchors", false, "with -gen: also run torch's own exporters (slow)")
	results := flag.String("results", "tools/opsweep/results.json", "the results file to write")
	doc := flag.String("doc", "docs/ops.md", "the Markdown table to write")
	render := flag.Bool("render", false, "only render -doc from -results")
	merge := flag.Bool("merge", false, "replace only the rows of the cases in -cases, keeping the results file's others")
	python := flag.String("python", "third_party/venv/bin/python", "the venv's Python")
	mergeAnchorsFrom := flag.String("merge-anchors", "", "set only the anchor verdicts of the results file's rows from this anchors.json, then render")
	flag.Parse()
	if *mergeAnchorsFrom != "" {
		if err := mergeAnchorsFile(*mergeAnchorsFrom, *results, *doc); err != nil {
			fmt.Fprintln(os.Stderr, "opsweep:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*casesDir, *doGen, *anchors, *merge, *results, *doc, *render, *python); err != nil {
		fmt.Fprintln(os.Stderr, "opsweep:", err)
		os.Exit(1)
	}
}

func run(casesDir string, doGen, anchors, merge bool, resultsPath, docPath string, render bool, python string) error {
	if render {
		r, err := ReadResults(resultsPath)
		if err != nil {
			return err
		}
		return os.WriteFile(docPath, []byte(r.Markdown()), 0o644)
	}
	if casesDir == "" {
		return fmt.Errorf("-cases DIR is required")
	}
	script := filepath.Join("tools", "opsweep", "sweep.py")
	if doGen {
		args := []string{script, "gen", casesDir}
		if anchors {
			args = append(args, "--anchors")
		}
		if err := runPy(python, args...); err != nil {
			return err
		}
	}
	r, err := Sweep(casesDir, casesDir, python, script)
	if err != nil {
		return err
	}
	old, err := ReadResults(resultsPath)
	switch {
	case err == nil:
		keepAnchors(r, old)
		if merge {
			r = mergeResults(old, r)
		}
	case merge:
		return fmt.Errorf("-merge: %w", err)
	}
	b, err := r.Marshal()
	if err != nil {
		return err
	}
	if err := os.WriteFile(resultsPath, b, 0o644); err != nil {
		return err
	}
	return os.WriteFile(docPath, []byte(r.Markdown()), 0o644)
}

func runPy(python string, args ...string) error {
	cmd := exec.Command(python, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.Env = append(os.Environ(), "PYTHONWARNINGS=ignore")
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", python, strings.Join(args, " "), err)
	}
	return nil
}

// keepAnchors copies the anchor verdicts of old rows that r lacks.
func keepAnchors(r, old *Results) {
	prev := map[string]map[string]string{}
	for _, row := range old.Rows {
		if len(row.Anchors) > 0 {
			prev[row.Case] = row.Anchors
		}
	}
	for i := range r.Rows {
		if len(r.Rows[i].Anchors) == 0 {
			r.Rows[i].Anchors = prev[r.Rows[i].Case]
		}
	}
}

// mergeAnchorsFile sets the anchor verdicts of resultsPath's rows from the
// anchors.json at path and rewrites the results and the doc.
func mergeAnchorsFile(path, resultsPath, docPath string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var rows map[string]map[string]string
	if err := json.Unmarshal(b, &rows); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	r, err := ReadResults(resultsPath)
	if err != nil {
		return err
	}
	for _, c := range mergeAnchors(r, rows) {
		fmt.Fprintf(os.Stderr, "opsweep: %s: case %s has no row in %s; its anchors are not kept\n", path, c, resultsPath)
	}
	out, err := r.Marshal()
	if err != nil {
		return err
	}
	if err := os.WriteFile(resultsPath, out, 0o644); err != nil {
		return err
	}
	return os.WriteFile(docPath, []byte(r.Markdown()), 0o644)
}

// mergeAnchors sets the anchor verdicts of r's rows from rows (case →
// target → verdict): a target rows has replaces the row's, the others stay.
// It returns the cases of rows that r has no row for, sorted.
func mergeAnchors(r *Results, rows map[string]map[string]string) []string {
	at := map[string]int{}
	for i, row := range r.Rows {
		at[row.Case] = i
	}
	var missing []string
	for c, vs := range rows {
		i, ok := at[c]
		if !ok {
			missing = append(missing, c)
			continue
		}
		if r.Rows[i].Anchors == nil {
			r.Rows[i].Anchors = map[string]string{}
		}
		for t, v := range vs {
			r.Rows[i].Anchors[t] = v
		}
	}
	sort.Strings(missing)
	return missing
}

// mergeResults is old with the rows of r's cases replaced by r's (a case
// old lacks is added). The op list and torch version are r's when it has
// them (the case directory's not_swept.json), else old's.
func mergeResults(old, r *Results) *Results {
	out := &Results{Torch: old.Torch, Core: old.Core, NotSwept: old.NotSwept}
	if r.Torch != "" {
		out.Torch = r.Torch
	}
	if len(r.Core) > 0 {
		out.Core, out.NotSwept = r.Core, r.NotSwept
	}
	fresh := map[string]bool{}
	for _, row := range r.Rows {
		fresh[row.Case] = true
	}
	for _, row := range old.Rows {
		if !fresh[row.Case] {
			out.Rows = append(out.Rows, row)
		}
	}
	out.Rows = append(out.Rows, r.Rows...)
	sort.Slice(out.Rows, func(i, j int) bool { return out.Rows[i].Case < out.Rows[j].Case })
	return out
}

type meta struct {
	Op           string `json:"op"`
	DType        string `json:"dtype"`
	InGraph      *bool  `json:"in_graph"`
	CaptureError string `json:"capture_error"`
}

type manifestItem struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	Path string `json:"path"`
	Case string `json:"case"`
}

var targetOf = map[string]fxport.Target{"onnx": fxport.ONNX, "portable": fxport.ExecuTorchPortable, "xnnpack": fxport.ExecuTorchXNNPACK}

// Sweep exports and judges every case of dir, writing fxport's files, the
// judge's manifest and its verdicts into work. dir/not_swept.json (the
// core op list) is optional.
func Sweep(dir, work, python, script string) (*Results, error) {
	var ns struct {
		Torch    string            `json:"torch"`
		NotSwept map[string]string `json:"not_swept"`
		Core     []string          `json:"core"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, "not_swept.json")); err == nil {
		if err := json.Unmarshal(b, &ns); err != nil {
			return nil, err
		}
	}
	var anchorRows map[string]map[string]string
	if b, err := os.ReadFile(filepath.Join(dir, "anchors.json")); err == nil {
		if err := json.Unmarshal(b, &anchorRows); err != nil {
			return nil, err
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := filepath.Join(work, "fxport")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	r := &Results{Torch: ns.Torch, Core: ns.Core, NotSwept: ns.NotSwept}
	var items []manifestItem
	rowAt := map[string]int{}
	for _, e := range entries {
		cdir := filepath.Join(dir, e.Name())
		mb, err := os.ReadFile(filepath.Join(cdir, "meta.json"))
		if !e.IsDir() || err != nil {
			continue
		}
		var m meta
		if err := json.Unmarshal(mb, &m); err != nil {
			return nil, fmt.Errorf("%s: %w", cdir, err)
		}
		row := Row{Case: e.Name(), Op: m.Op, DType: m.DType, FXPort: map[string]string{}, Anchors: anchorRows[e.Name()]}
		for _, t := range Targets {
			switch {
			case m.CaptureError != "":
				row.FXPort[t] = "capture: " + m.CaptureError
				continue
			case m.InGraph != nil && !*m.InGraph:
				row.FXPort[t] = "capture: torch.export's Core ATen decomposition removes the op"
				continue
			}
			path := filepath.Join(out, e.Name()+"."+t+targetOf[t].Ext())
			if err := export(filepath.Join(cdir, "program.pt2"), targetOf[t], path); err != nil {
				row.FXPort[t] = "refused: " + reason(err, cdir)
				continue
			}
			kind := "pte"
			if t == "onnx" {
				kind = "onnx"
			}
			items = append(items, manifestItem{Name: e.Name() + "/" + t, Kind: kind, Path: path, Case: cdir})
		}
		rowAt[e.Name()] = len(r.Rows)
		r.Rows = append(r.Rows, row)
	}
	verdicts, err := judge(python, script, work, items)
	if err != nil {
		return nil, err
	}
	for _, it := range items {
		c, t, _ := strings.Cut(it.Name, "/")
		v, ok := verdicts[it.Name]
		if !ok {
			v = "fail: the judge printed no verdict"
		}
		r.Rows[rowAt[c]].FXPort[t] = v
	}
	sort.Slice(r.Rows, func(i, j int) bool { return r.Rows[i].Case < r.Rows[j].Case })
	return r, nil
}

// export runs fxport's pipeline for one target, recovering a panic as an
// error (the sweep must finish and show it).
func export(src string, t fxport.Target, path string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	_, err = fxport.Export(context.Background(), fxport.File(src), t, fxport.Options{Output: path})
	return err
}

// reason is an export error in one line: its header, then each listed
// problem without the source location (", from FILE:LINE …"), the case's
// paths cut.
func reason(err error, cdir string) string {
	s := err.Error()
	s = strings.ReplaceAll(s, cdir+string(filepath.Separator), "")
	s = strings.ReplaceAll(s, cdir, "")
	var parts []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if i := strings.Index(l, ", from "); i >= 0 {
			l = l[:i]
		}
		l = strings.TrimSuffix(l, ":")
		if l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}

func judge(python, script, dir string, items []manifestItem) (map[string]string, error) {
	man := filepath.Join(dir, "manifest.json")
	b, err := json.MarshalIndent(items, "", " ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(man, b, 0o644); err != nil {
		return nil, err
	}
	outPath := filepath.Join(dir, "verdicts.json")
	if err := runPy(python, script, "judge", man, outPath); err != nil {
		return nil, err
	}
	vb, err := os.ReadFile(outPath)
	if err != nil {
		return nil, err
	}
	var v map[string]string
	return v, json.Unmarshal(vb, &v)
}
