package pm

import (
	"fmt"
	"sort"
	"strings"
)

// Build assembles the default pipeline for target and backend from Default.
func Build(target, backend string) (*Pipeline, error) { return Default.Build(target, backend) }

// Build assembles the default pipeline for target and backend ("" picks the
// target's default backend) from the target's table (c.Tables): every row
// whose backend condition admits the backend and whose pass runs for it, in
// table order, grouped by stage. A registry driver (backend-prepare,
// apply-<stage>, the node-fix drivers) is left out when it has nothing to
// run for the backend. Nothing is reordered; the result is validated, so a
// table that breaks an ordering requirement fails here, and so does a
// registered pass that no table names.
func (c *Catalog) Build(target, backend string) (*Pipeline, error) {
	b, err := resolveExport(target, backend)
	if err != nil {
		return nil, fmt.Errorf("pm: build: %w", err)
	}
	if err := c.CheckTables(); err != nil {
		return nil, fmt.Errorf("pm: build %s: %w", header(target, b), err)
	}
	t, ok := tableFor(c.Tables, target)
	if !ok {
		return nil, fmt.Errorf("pm: build %s: no pipeline table for target %s", header(target, b), target)
	}
	pl := &Pipeline{Target: target, Backend: b, Catalog: c}
	for _, r := range t.Rows {
		if !r.applies(b) {
			continue
		}
		p, ok := c.Passes.Lookup(r.Pass)
		if !ok {
			return nil, fmt.Errorf("pm: build %s: pass %q of the %s pipeline table is not registered (is the package defining it linked in?)", header(target, b), r.Pass, target)
		}
		if !p.RunsFor(b) || p.idle != nil && p.idle(c, b) {
			continue
		}
		stage := targetStages(target)[StageIndex(target, r.Stage)].Qualified()
		if n := len(pl.Groups); n == 0 || pl.Groups[n-1].Stage != stage {
			pl.Groups = append(pl.Groups, Group{Stage: stage})
		}
		g := &pl.Groups[len(pl.Groups)-1]
		g.Instances = append(g.Instances, Instance{Name: r.Pass})
	}
	out, err := c.resolve(pl)
	if err != nil {
		return nil, fmt.Errorf("pm: build %s: %w", header(target, b), err)
	}
	return out, nil
}

// CheckTables checks the catalog's tables against its registries: every
// registered pass that has a Stage (pm's own drivers aside) appears in
// some table row, and every registered patch in PatchOrder. (Rows naming
// unregistered passes fail Build of the pipelines holding them.)
func (c *Catalog) CheckTables() error {
	if err := checkTables(c.Tables, c.Order, c.PatchOrder); err != nil {
		return err
	}
	inTable := map[string]bool{}
	for _, t := range c.Tables {
		for _, r := range t.Rows {
			inTable[r.Pass] = true
		}
	}
	var missing []string
	for _, p := range c.Passes.All() {
		if p.Stage != "" && !p.driver && !inTable[p.Name] {
			missing = append(missing, fmt.Sprintf("pass %q (stage %s) is registered but in no pipeline table: add a row to pm/pipelines.go", p.Name, p.Stage))
		}
	}
	ordered := map[string]bool{}
	for _, r := range c.PatchOrder {
		ordered[r.Patch] = true
	}
	for _, p := range c.Patches.All() {
		if !ordered[p.Name] {
			missing = append(missing, fmt.Sprintf("patch %q is registered but not in PatchOrder: add a row to pm/pipelines.go", p.Name))
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return fmt.Errorf("pm: pipeline tables:\n\t%s", strings.Join(missing, "\n\t"))
	}
	return nil
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

// CheckBuiltins validates Default as a whole against its tables and builds
// (hence validates) every built-in pipeline. Programs call it once all
// workaround packages are linked in; it fails when a table row names a pass
// nothing registered, or a registered pass or patch is in no table.
func CheckBuiltins() error {
	if err := Default.Check(); err != nil {
		return err
	}
	_, err := Default.BuildAll()
	return err
}
