package difftest

import (
	"fmt"
	"strings"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// BisectOptions configure Bisect.
type BisectOptions struct {
	// Inputs are the user inputs, one list per sample; nil draws Samples
	// samples seeded by Seed.
	Inputs [][]interp.Value
	// Reference are the expected user outputs per sample (torch's); nil
	// uses the interpreted input program.
	Reference [][]interp.Value
	// ReferenceName describes the reference in the report.
	ReferenceName string
	Seed          uint64
	Samples       int
	ExportOptions []pm.ExportOption
	Tolerances    map[ir.DType]Tolerance
	Config        pm.Config
}

// BisectReport is what Bisect found.
type BisectReport struct {
	Target, Backend string
	Reference       string
	Samples         int
	// InputDisagrees is set when the input program itself disagrees with
	// the reference (no pass is to blame).
	InputDisagrees string
	// Pass is the first pass after which the program disagrees (nil: none).
	Pass *Snapshot
	// Disagreement describes the first differing output.
	Disagreement string
	// Node is the first node of the program after Pass whose value differs
	// from the same-named node before it ("" when none could be matched).
	Node string
	// NodeDetail is how its value differs; Provenance lists the passes
	// recorded on it; NewNodes are nodes the pass created that feed it.
	NodeDetail string
	Provenance []string
	NewNodes   []string
	// Patches lists each patch applied during the export and whether
	// reverting it restores agreement of the final program.
	Patches []PatchRevert
	// Allowance is the reason of the intended difference Pass declares, if any.
	Allowance string
	// PipelineErr is the pipeline's own failure, if any.
	PipelineErr error
}

// PatchRevert is the outcome of reverting one patch.
type PatchRevert struct {
	Name, ID     string
	Applications int
	Restores     bool
	Err          string
}

// Bisect finds the first pass of pl after which the interpreted program
// disagrees with the reference outputs, the node where the values first
// diverge, and which patch, reverted, restores agreement. p is not modified.
func Bisect(p *ir.Program, pl *pm.Pipeline, o BisectOptions) (*BisectReport, error) {
	cfg := newConfig(nil)
	if o.Seed != 0 {
		cfg.seed = o.Seed
	}
	if o.Samples > 0 {
		cfg.samples = o.Samples
	}
	cfg.inputs = o.Inputs
	if o.Tolerances != nil {
		cfg.tols = o.Tolerances
	}
	cfg.base = o.Config
	rep := &BisectReport{Target: pl.Target, Backend: pl.Backend, Reference: o.ReferenceName}
	samples, refs, err := cfg.prepare(p)
	if err != nil {
		return nil, err
	}
	rep.Samples = len(samples)
	want := make([][]interp.Value, len(samples))
	for i, r := range refs {
		got := UserOutputs(p, r.Outputs)
		if o.Reference == nil {
			want[i] = got
			continue
		}
		if i >= len(o.Reference) {
			return nil, fmt.Errorf("difftest: no reference outputs for sample %d", i)
		}
		want[i] = o.Reference[i]
		if err := compareUser(got, want[i], cfg.tols); err != nil {
			rep.InputDisagrees = fmt.Sprintf("sample %d: %v", i, err)
			return rep, nil
		}
	}
	if rep.Reference == "" {
		rep.Reference = "the interpreted input program"
	}
	exp, err := newExport(pl, o.ExportOptions)
	if err != nil {
		return nil, err
	}
	snaps, _, runErr := Snapshots(p.Clone(), pl, exp, cfg.base)
	rep.PipelineErr = runErr
	prev := p
	for si := range snaps {
		s := &snaps[si]
		if !s.Changed {
			continue
		}
		for i, smp := range samples {
			r, err := cfg.run(s.Program, smp)
			if err != nil {
				rep.Pass, rep.Disagreement = s, fmt.Sprintf("the program cannot be interpreted on sample %d: %v", i, err)
				break
			}
			if err := compareUser(UserOutputs(s.Program, r.Outputs), want[i], cfg.tols); err != nil {
				rep.Pass = s
				rep.Disagreement = fmt.Sprintf("sample %d (%s): %v", i, describeBindings(smp.bind), err)
				cfg.locate(rep, prev, s.Program, smp)
				break
			}
		}
		if rep.Pass != nil {
			break
		}
		prev = s.Program
	}
	if rep.Pass != nil {
		if a, ok := Declared(rep.Pass.Pass); ok {
			rep.Allowance = a.Reason
		}
		rep.Patches = cfg.tryReverts(p, pl, o.ExportOptions, exp, samples, want)
	}
	return rep, nil
}

// compareUser compares user outputs position by position.
func compareUser(got, want []interp.Value, tols map[ir.DType]Tolerance) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d user outputs, want %d", len(got), len(want))
	}
	for i := range want {
		if err := Compare(got[i], want[i], tols); err != nil {
			return fmt.Errorf("user output %d: %w", i, err)
		}
	}
	return nil
}

// values interprets p and records the values of its main graph's results by name.
func (c *config) values(p *ir.Program, s sample) (map[string]interp.Value, error) {
	vals := map[string]interp.Value{}
	_, err := interp.Run(p, s.inputs, interp.Options{Seed: c.seed, Weights: c.weights, MissingWeight: FakeWeights(c.seed), Observe: func(n *ir.Node, outs []interp.Value) {
		if n.Graph != p.Main {
			return
		}
		for i, r := range n.Results {
			if i < len(outs) {
				if t, ok := outs[i].(*interp.Tensor); ok {
					outs[i] = t.Clone() // later in-place ops must not change what was seen
				}
				vals[r.Name] = outs[i]
			}
		}
	}})
	return vals, err
}

// locate finds the first node of after whose value differs from the
// same-named node of before, and the new nodes feeding it.
func (c *config) locate(rep *BisectReport, before, after *ir.Program, s sample) {
	bv, err := c.values(before, s)
	if err != nil {
		return
	}
	av, _ := c.values(after, s)
	for _, n := range after.Main.Nodes() {
		for _, r := range n.Results {
			b, okB := bv[r.Name]
			a, okA := av[r.Name]
			if !okB || !okA {
				continue
			}
			if err := Compare(a, b, c.tols); err != nil {
				rep.Node, rep.NodeDetail, rep.Provenance = n.Short(), err.Error(), n.Provenance()
				rep.NewNodes = newNodesFeeding(n, bv)
				return
			}
		}
	}
	// No matched node differs: blame the defining node of a differing
	// output, which the pass must have created.
	for _, o := range after.Main.Outputs() {
		if o.Kind == ir.ArgValue && o.Value.Def != nil {
			if _, ok := bv[o.Value.Name]; !ok {
				n := o.Value.Def
				rep.Node, rep.NodeDetail, rep.Provenance = n.Short(), "new node computing an output", n.Provenance()
				rep.NewNodes = newNodesFeeding(n, bv)
				return
			}
		}
	}
}

// newNodesFeeding lists the nodes in n's operand cone (n included) whose
// results have no counterpart in the program before the pass.
func newNodesFeeding(n *ir.Node, before map[string]interp.Value) []string {
	var out []string
	seen := map[*ir.Node]bool{}
	var walk func(m *ir.Node)
	walk = func(m *ir.Node) {
		if m == nil || seen[m] {
			return
		}
		seen[m] = true
		isNew := len(m.Results) > 0
		for _, r := range m.Results {
			if _, ok := before[r.Name]; ok {
				isNew = false
			}
		}
		if isNew {
			out = append(out, m.Short())
		}
		for _, v := range m.Operands() {
			if isNew || m == n {
				walk(v.Def)
			}
		}
	}
	walk(n)
	return out
}

// tryReverts re-runs the pipeline for each patch that fired, reverts it and
// reports whether the final program then agrees with the reference.
func (c *config) tryReverts(p *ir.Program, pl *pm.Pipeline, opts []pm.ExportOption, exp *pm.Export, samples []sample, want [][]interp.Value) []PatchRevert {
	var out []PatchRevert
	seen := map[string]int{}
	var order []pm.Application
	for _, a := range exp.Applications() {
		if _, ok := seen[a.Patch]; !ok {
			order = append(order, a)
		}
		seen[a.Patch]++
	}
	for _, a := range order {
		pr := PatchRevert{Name: a.Patch, ID: a.ID, Applications: seen[a.Patch]}
		work := p.Clone()
		e2, err := newExport(pl, opts)
		if err == nil {
			_, err = pm.Run(work, pl, e2, c.base)
		}
		if err == nil {
			err = e2.Revert(a.Patch)
		}
		if err != nil {
			pr.Err = err.Error()
			out = append(out, pr)
			continue
		}
		pr.Restores = true
		for i, s := range samples {
			r, err := c.run(work, s)
			if err != nil || compareUser(UserOutputs(work, r.Outputs), want[i], c.tols) != nil {
				pr.Restores = false
				break
			}
		}
		out = append(out, pr)
	}
	return out
}

// String renders the report in a few lines.
func (r *BisectReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "bisect: target %s (backend %s), reference: %s, %d sample(s)\n", r.Target, r.Backend, r.Reference, r.Samples)
	if r.InputDisagrees != "" {
		fmt.Fprintf(&b, "the input program already disagrees with the reference (no pass to blame): %s\n", r.InputDisagrees)
		return b.String()
	}
	if r.Pass == nil {
		b.WriteString("no disagreement: the interpreted program agrees with the reference after every pass\n")
		if r.PipelineErr != nil {
			fmt.Fprintf(&b, "the pipeline failed: %v\n", r.PipelineErr)
		}
		return b.String()
	}
	fmt.Fprintf(&b, "first disagreeing pass: #%d %q (stage %s)\n", r.Pass.Index, r.Pass.Pass, r.Pass.Stage)
	fmt.Fprintf(&b, "  %s\n", r.Disagreement)
	if r.Allowance != "" {
		fmt.Fprintf(&b, "  the pass declares an intended difference: %s\n", r.Allowance)
	}
	if r.Node != "" {
		fmt.Fprintf(&b, "  diverging node: %s: %s\n", r.Node, r.NodeDetail)
		if len(r.Provenance) > 0 {
			fmt.Fprintf(&b, "  changed by: %s\n", strings.Join(r.Provenance, ", "))
		}
		if len(r.NewNodes) > 0 {
			fmt.Fprintf(&b, "  new nodes feeding it: %s\n", strings.Join(r.NewNodes, ", "))
		}
	}
	if len(r.Patches) == 0 {
		b.WriteString("patches: none applied\n")
	}
	for _, p := range r.Patches {
		id := ""
		if p.ID != "" {
			id = " (" + p.ID + ")"
		}
		switch {
		case p.Err != "":
			fmt.Fprintf(&b, "patch %s%s: cannot revert: %s\n", p.Name, id, p.Err)
		case p.Restores:
			fmt.Fprintf(&b, "patch %s%s: reverting it restores agreement\n", p.Name, id)
		default:
			fmt.Fprintf(&b, "patch %s%s: reverting it does not restore agreement\n", p.Name, id)
		}
	}
	if r.PipelineErr != nil {
		fmt.Fprintf(&b, "the pipeline failed: %v\n", r.PipelineErr)
	}
	return b.String()
}
