package difftest

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// Snapshot is the program after one pass instance of a pipeline.
type Snapshot struct {
	// Index is the 1-based position of the instance in the pipeline.
	Index int
	Pass  string
	Stage string
	// Changed reports whether the printed program changed; Program is nil
	// when it did not (it is the same as the previous snapshot's).
	Changed bool
	Program *ir.Program
}

var dumpBanner = regexp.MustCompile(`(?m)^# IR dump after pass ("(?:[^"\\]|\\.)*") \(stage ([^)]*)\)\n`)

// Snapshots runs pl on p (which it modifies) for exp and returns the
// program after every pass instance. It asks the pass manager to dump the
// IR after each pass that changes it and parses the dumps back; weight
// sources are carried over from p, so weights are read once however many
// snapshots there are. The report and error are Run's.
func Snapshots(p *ir.Program, pl *pm.Pipeline, exp *pm.Export, cfg pm.Config) ([]Snapshot, *pm.Report, error) {
	sources := map[string]ir.WeightSource{}
	for _, w := range p.Weights {
		if w.Source != nil {
			sources[w.Source.String()] = w.Source
		}
	}
	var buf bytes.Buffer
	cfg.Out = &buf
	cfg.PrintAfter = nil
	cfg.PrintBefore = nil
	cfg.PrintAfterChange = true
	cfg.DumpDir = ""
	rep, runErr := pm.Run(p, pl, exp, cfg)
	text := buf.String()
	locs := dumpBanner.FindAllStringSubmatchIndex(text, -1)
	type dump struct {
		pass, stage, ir string
	}
	var dumps []dump
	for i, l := range locs {
		name, err := strconv.Unquote(text[l[2]:l[3]])
		if err != nil {
			return nil, rep, fmt.Errorf("difftest: reading an IR dump banner: %w", err)
		}
		end := len(text)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		dumps = append(dumps, dump{name, text[l[4]:l[5]], text[l[1]:end]})
	}
	var snaps []Snapshot
	di := 0
	for i, in := range pl.Instances() {
		if rep != nil && i >= len(rep.Passes) {
			break
		}
		s := Snapshot{Index: i + 1, Pass: in.Name, Stage: in.Stage}
		if di < len(dumps) && dumps[di].pass == in.Name {
			prog, err := parseDump(dumps[di].ir, sources, in.Name)
			if err != nil {
				return nil, rep, err
			}
			s.Changed, s.Program = true, prog
			di++
		}
		snaps = append(snaps, s)
	}
	if runErr == nil && di != len(dumps) {
		return nil, rep, fmt.Errorf("difftest: %d IR dumps for %d changed passes", len(dumps), di)
	}
	return snaps, rep, runErr
}

// parseDump parses a dump, restoring weight sources by their printed form.
func parseDump(text string, sources map[string]ir.WeightSource, pass string) (*ir.Program, error) {
	restore := map[string]ir.WeightSource{}
	lines := strings.SplitAfter(text, "\n")
	for i, line := range lines {
		if !strings.HasPrefix(line, "weight \"") {
			continue
		}
		q, err := strconv.QuotedPrefix(strings.TrimPrefix(line, "weight "))
		if err != nil {
			continue
		}
		name, _ := strconv.Unquote(q)
		body := strings.TrimSuffix(line, "\n")
		for s, src := range sources {
			if strings.HasSuffix(body, " = "+s) {
				lines[i] = strings.TrimSuffix(body, s) + `inline("")` + "\n"
				restore[name] = src
				break
			}
		}
	}
	prog, err := ir.Parse([]byte(strings.Join(lines, "")), "after pass "+strconv.Quote(pass))
	if err != nil {
		return nil, fmt.Errorf("difftest: the IR dump after pass %q does not parse: %w", pass, err)
	}
	for name, src := range restore {
		if w := prog.Weight(name); w != nil {
			w.Source = src
		}
	}
	return prog, nil
}
