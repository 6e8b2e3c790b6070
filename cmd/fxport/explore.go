package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	fxapi "github.com/fxport/fxport"
	"github.com/fxport/fxport/internal/atomicfile"
	"github.com/fxport/fxport/internal/explorer"
	"github.com/fxport/fxport/internal/progress"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/provenance"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/pte"
	"github.com/fxport/fxport/targets/onnx"
)

// runExplore: fxport explore PROGRAM --target T -o PAGE.html — one export,
// rendered as a self-contained HTML page (internal/explorer) from the pass
// manager's report and its print-after-change dumps, and the summary of
// the artifact the export wrote.
func runExplore(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("explore", stderr)
	target := fs.String("target", "", "target: "+strings.TrimSuffix(targetNames(), ", all"))
	backend := fs.String("backend", "", "backend for --target executorch (executorch.xnnpack, executorch.portable, …)")
	out := fs.String("o", "", "the HTML page to write")
	artifact := fs.String("artifact", "", "also keep the exported artifact (.onnx, .pte, .pt2) at this path (default: a temporary file, removed)")
	pipelineText := fs.String("pipeline", "", "run this pipeline text instead of the target's default")
	noTime := fs.Bool("no-time", false, "leave the pass durations out (a deterministic page, for goldens)")
	opset := fs.Int("opset", onnx.DefaultOpset, fmt.Sprintf("ONNX: default-domain opset (%d–%d)", onnx.MinSupportedOpset, onnx.MaxSupportedOpset))
	var exclude, include listFlag
	fs.Var(&exclude, "exclude-patch", "do not install these patches (names or catalog IDs)")
	fs.Var(&include, "include-patch", "install these opt-in patches (names or catalog IDs)")
	alias(fs, "exclude-patches", "exclude-patch")
	alias(fs, "include-patches", "include-patch")
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return usageErr("want one PROGRAM, got %d", len(files))
	}
	if *target == "" || *out == "" {
		return usageErr("--target and -o are required")
	}
	if *target == "all" {
		return usageErr("--target all: a page shows one export; pick one target (%s)", strings.TrimSuffix(targetNames(), ", all"))
	}
	if err := onnx.CheckOpset(*opset); err != nil {
		return usageErr("--opset: %v", err)
	}
	targets, err := resolveTargets(*target, *backend)
	if err != nil {
		return err
	}
	t := targets[0]
	src, err := loadProgram(files[0])
	if err != nil {
		return err
	}
	if err := ir.Verify(src); err != nil {
		return fmt.Errorf("%s: %w", files[0], err)
	}
	page := &explorer.Page{Title: files[0], Target: t.String(), Backend: t.Backend(),
		Version: provenance.Version(), Times: !*noTime, Input: ir.Print(src)}

	// The artifact goes to --artifact or a temporary directory; targets
	// that need an external compile step (CUDA, OpenVINO) write none.
	dest := *artifact
	if dest == "" && hasEmitter(t) {
		dir, err := os.MkdirTemp("", "fxport-explore-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		dest = filepath.Join(dir, strings.TrimSuffix(filepath.Base(files[0]), filepath.Ext(files[0]))+t.Ext())
	}
	var dumps []pm.Dump
	opts := fxapi.Options{
		Output:         dest,
		Pipeline:       *pipelineText,
		ExcludePatches: exclude,
		IncludePatches: include,
		ONNX:           onnx.Options{Opset: *opset},
		ExecuTorch:     etOpts,
		Run: pm.Config{PrintAfterChange: true, Time: !*noTime,
			OnDump: func(d pm.Dump) { dumps = append(dumps, d) }},
	}
	line := progressLine(stderr, opts.Run)
	opts.Run.OnPass = func(i, n int, name string) { line.Set("%s: pass %d/%d %s", t, i, n, name) }
	opts.OnWrite = func(path string, n int64) { line.Set("%s: writing %s: %s", t, filepath.Base(path), progress.Bytes(n)) }
	res, xerr := fxapi.Export(context.Background(), fxapi.Program(src), t, opts)
	line.Clear()
	xerr = nameInput(files[0], xerr)
	if res == nil || res.Report == nil {
		return xerr
	}
	fillPasses(page, res.Report, dumps)
	if xerr != nil {
		page.Error = xerr.Error()
	} else if page.Summary, err = summarize(res, dest, t); err != nil {
		return fmt.Errorf("summarizing %s: %w", dest, err)
	}
	var b bytes.Buffer
	if err := explorer.Render(&b, page); err != nil {
		return err
	}
	if err := atomicfile.WriteBytes(*out, b.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (%d passes, %d changed the IR)\n", *out, len(page.Passes), len(dumps))
	if xerr != nil {
		return fmt.Errorf("the export failed (the page shows the passes up to the failure): %w", xerr)
	}
	return nil
}

// fillPasses copies the report into the page, giving each pass the IR
// its print-after-change dump holds and the firings it made. Dumps and
// firings come in pass order.
func fillPasses(page *explorer.Page, r *pm.Report, dumps []pm.Dump) {
	page.Pipeline = r.Pipeline
	d, f := 0, 0
	for _, p := range r.Passes {
		ep := explorer.Pass{Name: p.Name, Kind: p.Kind.String(), Stage: p.Stage, Disabled: p.Disabled,
			Changed: p.Changed, Duration: p.Duration}
		for _, s := range p.Stats {
			ep.Stats = append(ep.Stats, explorer.Stat{Name: s.Name, Value: s.Value})
		}
		if d < len(dumps) && dumps[d].Pass == p.Name && dumps[d].When == "after" {
			ep.IR = dumps[d].IR
			d++
		}
		for ; f < len(r.Fired) && r.Fired[f].Pass == p.Name; f++ {
			x := r.Fired[f]
			ep.Fired = append(ep.Fired, explorer.Firing{Entry: x.Entry, Kind: x.Kind.String(), ID: x.ID, Graph: x.Graph, Node: x.Node, Detail: x.Detail})
		}
		page.Passes = append(page.Passes, ep)
	}
}

// summarize describes what the export wrote: the ONNX model's nodes, the
// .pte's instructions, delegates and memory plan, or, without a native
// artifact, the operators of the program after the pipeline.
func summarize(res *fxapi.Result, path string, t exportTarget) (explorer.Summary, error) {
	var s explorer.Summary
	if path != "" {
		st, err := os.Stat(path)
		if err != nil {
			return s, err
		}
		s.Artifact, s.Bytes = filepath.Base(path), st.Size()
	}
	switch {
	case res.ONNX != nil:
		s.Format = "ONNX"
		summarizeONNX(&s, res.ONNX)
	case path != "" && t.Kind() == pm.TargetExecuTorch:
		s.Format = "ExecuTorch .pte"
		f, err := pte.Read(path)
		if err != nil {
			return s, err
		}
		summarizePTE(&s, f)
	default:
		if path != "" {
			s.Format = strings.TrimPrefix(t.Ext(), ".") + " archive"
		}
		counts := map[string]int{}
		res.Program.ForEachGraph(func(g *ir.Graph) {
			for _, n := range g.Nodes() {
				counts[n.Op.String()]++
			}
		})
		s.Facts = append(s.Facts, explorer.Fact{Name: "operators of", Value: "the IR after the pipeline"})
		s.Ops = sortCounts(counts)
	}
	return s, nil
}

func summarizeONNX(s *explorer.Summary, m *onnx.Model) {
	p := m.Proto
	s.Facts = append(s.Facts, explorer.Fact{Name: "IR version", Value: fmt.Sprint(p.GetIrVersion())})
	var opsets []string
	for _, o := range p.GetOpsetImport() {
		d := o.GetDomain()
		if d == "" {
			d = "ai.onnx"
		}
		opsets = append(opsets, fmt.Sprintf("%s %d", d, o.GetVersion()))
	}
	s.Facts = append(s.Facts,
		explorer.Fact{Name: "opsets", Value: strings.Join(opsets, ", ")},
		explorer.Fact{Name: "inputs", Value: strings.Join(m.Inputs, ", ")},
		explorer.Fact{Name: "outputs", Value: strings.Join(m.Outputs, ", ")},
		explorer.Fact{Name: "nodes", Value: fmt.Sprint(len(p.GetGraph().GetNode()))},
		explorer.Fact{Name: "initializers", Value: fmt.Sprint(len(p.GetGraph().GetInitializer()))})
	if o := m.Optimization; o.Ran {
		s.Facts = append(s.Facts, explorer.Fact{Name: "optimizer", Value: fmt.Sprintf("on (%s): %s", o.Why, o.Stats)})
	} else {
		s.Facts = append(s.Facts, explorer.Fact{Name: "optimizer", Value: fmt.Sprintf("off (%s)", o.Why)})
	}
	counts := map[string]int{}
	for _, n := range p.GetGraph().GetNode() {
		name := n.GetOpType()
		if d := n.GetDomain(); d != "" {
			name = d + "::" + name
		}
		counts[name]++
	}
	s.Ops = sortCounts(counts)
}

func summarizePTE(s *explorer.Summary, f *pte.File) {
	s.Facts = append(s.Facts, explorer.Fact{Name: "methods", Value: fmt.Sprint(len(f.Methods))},
		explorer.Fact{Name: "segments", Value: fmt.Sprint(len(f.Segments))})
	counts := map[string]int{}
	for _, m := range f.Methods {
		pl := m.Plan
		s.Facts = append(s.Facts, explorer.Fact{Name: "method " + pl.Name,
			Value: fmt.Sprintf("%d values, %d operators, %d delegates", len(pl.Values), len(pl.Operators), len(pl.Delegates))})
		steps := 0
		first, last := map[int]int{}, map[int]int{}
		use := func(v int32, at int) {
			if _, ok := first[int(v)]; !ok {
				first[int(v)] = at
			}
			last[int(v)] = at
			// A list's tensors are used where the list is.
			if int(v) < len(pl.Values) && pl.Values[v] != nil && pl.Values[v].Val != nil {
				if l, ok := pl.Values[v].Val.Value.(*etfb.TensorListT); ok {
					for _, it := range l.Items {
						if _, ok := first[int(it)]; !ok {
							first[int(it)] = at
						}
						last[int(it)] = at
					}
				}
			}
		}
		for _, c := range pl.Chains {
			for _, in := range c.Inputs {
				use(in, steps)
			}
			for _, in := range c.Instructions {
				if in == nil || in.InstrArgs == nil {
					continue
				}
				switch x := in.InstrArgs.Value.(type) {
				case *etfb.KernelCallT:
					op := pl.Operators[x.OpIndex]
					name := op.Name
					if op.Overload != "" {
						name += "." + op.Overload
					}
					counts[name]++
					for _, a := range x.Args {
						use(a, steps)
					}
				case *etfb.DelegateCallT:
					counts["delegate "+pl.Delegates[x.DelegateIndex].Id]++
					for _, a := range x.Args {
						use(a, steps)
					}
				default:
					counts[in.InstrArgs.Type.String()]++
				}
				steps++
			}
			for _, o := range c.Outputs {
				use(o, steps-1)
			}
		}
		arenas := map[uint32]*explorer.Arena{}
		for i, v := range pl.Values {
			if v == nil || v.Val == nil {
				continue
			}
			t, ok := v.Val.Value.(*etfb.TensorT)
			if !ok || t.AllocationInfo == nil {
				continue
			}
			a := t.AllocationInfo
			ar := arenas[a.MemoryId]
			if ar == nil {
				ar = &explorer.Arena{Name: fmt.Sprintf("method %s, buffer %d", pl.Name, a.MemoryId), Steps: steps}
				if int(a.MemoryId) < len(pl.NonConstBufferSizes) {
					ar.Size = uint64(pl.NonConstBufferSizes[a.MemoryId])
				}
				arenas[a.MemoryId] = ar
			}
			n := uint64(pte.ScalarTypeSize(t.ScalarType))
			for _, d := range t.Sizes {
				n *= uint64(d)
			}
			fi, ok := first[i]
			la := last[i]
			if !ok {
				fi, la = 0, 0
			}
			ar.Tensors = append(ar.Tensors, explorer.Tensor{Value: i, Offset: uint64(a.MemoryOffsetHigh)<<32 | uint64(a.MemoryOffsetLow), Size: n, First: fi, Last: la})
		}
		ids := make([]uint32, 0, len(arenas))
		for id := range arenas {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		for _, id := range ids {
			s.Arenas = append(s.Arenas, *arenas[id])
		}
		for _, d := range m.Delegates {
			ed := explorer.Delegate{Backend: d.ID, Bytes: len(d.Data)}
			if d.XNNPACK != nil && d.XNNPACK.Graph != nil {
				ed.Nodes = len(d.XNNPACK.Graph.Xnodes)
			}
			s.Delegates = append(s.Delegates, ed)
		}
	}
	s.Ops = sortCounts(counts)
}

// sortCounts orders operator counts by count, then name.
func sortCounts(m map[string]int) []explorer.Count {
	out := make([]explorer.Count, 0, len(m))
	for k, n := range m {
		out = append(out, explorer.Count{Name: k, N: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].N != out[j].N {
			return out[i].N > out[j].N
		}
		return out[i].Name < out[j].Name
	})
	return out
}
