package pm

import "fmt"

// Build assembles the default pipeline for target and backend from Default.
func Build(target, backend string) (*Pipeline, error) { return Default.Build(target, backend) }

// Build assembles the default pipeline for target and backend ("" picks the
// target's default backend): for each stage of the target, in order,
//
//  1. backend-prepare, when a backend prepare with a Prepare func applies;
//  2. the stage's patch driver (apply-<stage>), when any patch of the
//     backend (opt-in ones included) belongs to the stage;
//  3. the program fixes of the stage, in registration order;
//  4. the generic passes of the stage, in registration order;
//  5. the stage's node-fix drivers, when any node fix applies to the backend.
//
// Nothing is reordered to satisfy requirements; the result is validated,
// so a registration that breaks an ordering requirement fails here.
func (c *Catalog) Build(target, backend string) (*Pipeline, error) {
	b, err := resolveExport(target, backend)
	if err != nil {
		return nil, fmt.Errorf("pm: build: %w", err)
	}
	pl := &Pipeline{Target: target, Backend: b, Catalog: c}
	passes := c.Passes.All()
	hasPrepare := false
	for _, bp := range c.Prepares.All() {
		hasPrepare = hasPrepare || Applies(bp.Backend, b) && bp.Prepare != nil
	}
	hasNodeFixes := false
	for _, f := range c.NodeFixes.All() {
		hasNodeFixes = hasNodeFixes || Applies(f.Backend, b)
	}
	for _, s := range targetStages(target) {
		var names []string
		if s.Name == StageBackendPrepare && hasPrepare {
			names = append(names, PassBackendPrepare)
		}
		if s.Patches {
			for _, p := range c.Patches.All() {
				if p.Stage == s.Name && Applies(p.Backend, b) {
					names = append(names, PatchDriverName(s.Name))
					break
				}
			}
		}
		for _, p := range passes {
			if p.synthetic && p.Stage == s.Name && p.RunsFor(b) {
				names = append(names, p.Name)
			}
		}
		for _, p := range passes {
			if !p.synthetic && !p.driver && p.Stage == s.Name && p.RunsFor(b) {
				names = append(names, p.Name)
			}
		}
		if hasNodeFixes {
			for _, d := range nodeFixDriverSpecs {
				if d.stage == s.Name && Applies(d.backend, b) {
					names = append(names, d.name)
				}
			}
		}
		if len(names) == 0 {
			continue
		}
		g := Group{Stage: s.Qualified()}
		for _, n := range names {
			g.Instances = append(g.Instances, Instance{Name: n})
		}
		pl.Groups = append(pl.Groups, g)
	}
	out, err := c.resolve(pl)
	if err != nil {
		return nil, fmt.Errorf("pm: build %s: %w", header(target, b), err)
	}
	return out, nil
}

// BuildAll builds the default pipeline of every target and export backend,
// in table order.
func (c *Catalog) BuildAll() ([]*Pipeline, error) {
	var out []*Pipeline
	for _, t := range Targets() {
		for _, b := range exportBackends(t) {
			pl, err := c.Build(t, b)
			if err != nil {
				return nil, err
			}
			out = append(out, pl)
		}
	}
	return out, nil
}

// CheckBuiltins validates Default as a whole and builds (hence validates)
// every built-in pipeline. Programs call it once all workaround packages
// are linked in, the way Go's compiler checks passOrder in init.
func CheckBuiltins() error {
	if err := Default.Check(); err != nil {
		return err
	}
	_, err := Default.BuildAll()
	return err
}

func init() {
	// Like Go's passOrder check: an edit of the stage table or of pm's
	// built-in passes that breaks a default pipeline fails every binary
	// linking pm, at once. CheckBuiltins repeats the check once the
	// workaround packages have registered their entries.
	if _, err := Default.BuildAll(); err != nil {
		panic(err)
	}
}
