package pm

import (
	"fmt"
	"sort"
	"strings"
)

// PipelineError lists every problem Validate found; each names the
// offending passes.
type PipelineError struct {
	Pipeline string
	Problems []error
}

func (e *PipelineError) Error() string {
	if len(e.Problems) == 1 {
		return fmt.Sprintf("pm: invalid pipeline: %v", e.Problems[0])
	}
	var b strings.Builder
	fmt.Fprintf(&b, "pm: invalid pipeline: %d problems:", len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n\t" + p.Error())
	}
	return b.String()
}

// Unwrap exposes the problems to errors.As and errors.Is.
func (e *PipelineError) Unwrap() []error { return e.Problems }

// CycleError is a cycle in the requirement edges among passes.
type CycleError struct {
	// Members are the passes on the cycle, sorted.
	Members []string
}

func (e *CycleError) Error() string {
	return fmt.Sprintf("requirement cycle among passes %s", strings.Join(e.Members, ", "))
}

// Validate checks pl against Default (or pl.Catalog).
func (pl *Pipeline) Validate() error { return pl.catalog().Validate(pl) }

// Validate checks a pipeline without modifying it: known target and
// backend; every stage a stage of the target, in stage order; every pass
// known, in its own stage, for the backend, with declared options; no pass
// twice unless Repeatable; every requirement edge met and respected, and
// no cycles among them. The error is a *PipelineError listing every problem.
func (c *Catalog) Validate(pl *Pipeline) error {
	_, err := c.resolve(pl)
	return err
}

// resolve validates a copy of pl whose stage names are qualified and whose
// instances point at their passes, and returns the copy.
func (c *Catalog) resolve(orig *Pipeline) (*Pipeline, error) {
	pl := &Pipeline{Target: orig.Target, Backend: orig.Backend, Catalog: orig.Catalog, Groups: make([]Group, len(orig.Groups))}
	for i, g := range orig.Groups {
		pl.Groups[i] = Group{Stage: g.Stage, Instances: append([]Instance(nil), g.Instances...)}
	}
	var problems []error
	add := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }

	if b, err := resolveExport(pl.Target, pl.Backend); err != nil || b != pl.Backend {
		if err == nil {
			err = fmt.Errorf("no backend")
		}
		return nil, &PipelineError{Pipeline: pl.String(), Problems: []error{err}}
	}
	stages := targetStages(pl.Target)

	// Stages and per-instance checks.
	var seq []placedPass
	lastStage, lastPass, lastStageName := -1, "(none)", ""
	for gi := range pl.Groups {
		g := &pl.Groups[gi]
		si := StageIndex(pl.Target, g.Stage)
		if si < 0 || strings.Contains(g.Stage, ".") && stages[si].Qualified() != g.Stage {
			add("stage %q is not a stage of target %s", g.Stage, pl.Target)
			continue
		}
		g.Stage = stages[si].Qualified()
		if si < lastStage {
			first := "(none)"
			if len(g.Instances) > 0 {
				first = g.Instances[0].Name
			}
			add("stage order: pass %q (stage %s) comes after pass %q (stage %s)", first, g.Stage, lastPass, lastStageName)
		} else {
			lastStage, lastStageName = si, g.Stage
			if len(g.Instances) > 0 {
				lastPass = g.Instances[len(g.Instances)-1].Name
			}
		}
		for ii := range g.Instances {
			in := &g.Instances[ii]
			p, ok := c.Passes.Lookup(in.Name)
			switch {
			case !ok:
				add("unknown pass %q in stage %s", in.Name, g.Stage)
				in.Pass = nil
			case in.Pass != nil && in.Pass != p:
				add("pass %q is not the one registered under that name", in.Name)
			default:
				in.Pass = p
			}
			if in.Pass == nil {
				continue
			}
			if p.Stage != "" && localStage(g.Stage) != p.Stage {
				add("pass %q belongs to stage %s, not %s", p.Name, p.Stage, g.Stage)
			}
			if !p.RunsFor(pl.Backend) {
				add("pass %q runs for backends %s, not %s", p.Name, strings.Join(backendsOrAll(p.Backends), ", "), pl.Backend)
			}
			for _, o := range in.Options {
				spec, ok := p.option(o.Key)
				if !ok {
					add("pass %q has no option %q", p.Name, o.Key)
				} else if spec.Check != nil {
					if err := spec.Check(o.Value); err != nil {
						add("pass %q: option %s: %v", p.Name, o.Key, err)
					}
				}
			}
			seq = append(seq, placedPass{in.Name, p})
		}
	}

	// Duplicates.
	positions := map[string][]int{}
	for i, x := range seq {
		positions[x.name] = append(positions[x.name], i)
	}
	for _, name := range sortedKeys(positions) {
		if ps := positions[name]; len(ps) > 1 && !seq[ps[0]].pass.Repeatable {
			add("pass %q appears %d times and is not Repeatable", name, len(ps))
		}
	}

	// Requirement edges: cycles first, then each edge outside a cycle.
	cycles := requirementCycles(c, seq2passes(seq))
	inCycle := map[string]bool{}
	for _, cy := range cycles {
		problems = append(problems, cy)
		for _, m := range cy.Members {
			inCycle[m] = true
		}
	}
	for i, x := range seq {
		for _, r := range x.pass.Requires {
			other := r.After + r.Before
			if _, known := c.Passes.Lookup(other); !known {
				add("pass %q: requirement names unknown pass %q", x.name, other)
				continue
			}
			if inCycle[x.name] && inCycle[other] {
				continue
			}
			ps := positions[other]
			if len(ps) == 0 {
				add("pass %q must run %s %q (%s), but %q is not in the pipeline", x.name, r.dir(), other, r.Why, other)
				continue
			}
			if r.After != "" && ps[0] > i {
				add("pass %q must run after %q (%s), but runs before it", x.name, other, r.Why)
			}
			if r.Before != "" && ps[len(ps)-1] < i {
				add("pass %q must run before %q (%s), but runs after it", x.name, other, r.Why)
			}
		}
	}
	if len(problems) > 0 {
		return nil, &PipelineError{Pipeline: pl.String(), Problems: problems}
	}
	return pl, nil
}

// placedPass is a resolved instance at its position in the pipeline.
type placedPass struct {
	name string
	pass *Pass
}

func seq2passes(seq []placedPass) []*Pass {
	out := make([]*Pass, len(seq))
	for i, x := range seq {
		out[i] = x.pass
	}
	return out
}

// requirementCycles finds the cycles (strongly connected components with
// more than one member) of the requirement graph reachable from passes,
// where an edge a→b means a must run before b.
func requirementCycles(c *Catalog, passes []*Pass) []*CycleError {
	succ := map[string][]string{}
	var visit func(p *Pass)
	visited := map[string]bool{}
	visit = func(p *Pass) {
		if visited[p.Name] {
			return
		}
		visited[p.Name] = true
		for _, r := range p.Requires {
			if r.After != "" {
				succ[r.After] = append(succ[r.After], p.Name)
			} else {
				succ[p.Name] = append(succ[p.Name], r.Before)
			}
			if q, ok := c.Passes.Lookup(r.After + r.Before); ok {
				visit(q)
			}
		}
	}
	for _, p := range passes {
		visit(p)
	}
	nodes := map[string]bool{}
	for a, bs := range succ {
		nodes[a] = true
		for _, b := range bs {
			nodes[b] = true
		}
	}
	for a := range succ {
		sort.Strings(succ[a])
	}

	// Tarjan's algorithm over sorted names, for deterministic output.
	index, low := map[string]int{}, map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	var out []*CycleError
	next := 0
	var strong func(v string)
	strong = func(v string) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range succ[v] {
			if _, seen := index[w]; !seen {
				strong(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var comp []string
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp = append(comp, w)
				if w == v {
					break
				}
			}
			if len(comp) > 1 {
				sort.Strings(comp)
				out = append(out, &CycleError{Members: comp})
			}
		}
	}
	for _, v := range sortedKeys(nodes) {
		if _, seen := index[v]; !seen {
			strong(v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Members[0] < out[j].Members[0] })
	return out
}

// Check validates the catalog as a whole: every requirement of every pass
// names a registered pass, and the requirement graph has no cycles.
func (c *Catalog) Check() error {
	var problems []error
	passes := c.Passes.All()
	for _, p := range passes {
		for _, r := range p.Requires {
			if _, ok := c.Passes.Lookup(r.After + r.Before); !ok {
				problems = append(problems, fmt.Errorf("pass %q: requirement names unknown pass %q", p.Name, r.After+r.Before))
			}
		}
	}
	for _, cy := range requirementCycles(c, passes) {
		problems = append(problems, cy)
	}
	if len(problems) > 0 {
		return &PipelineError{Pipeline: "(catalog)", Problems: problems}
	}
	return nil
}
