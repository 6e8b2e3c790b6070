package pm

import (
	"fmt"

	"github.com/fxport/fxport/ir"
)

// Built-in pass names.
const (
	// PassBackendPrepare runs the backend prepares of the export's backend.
	PassBackendPrepare = "backend-prepare"
	// PassDCE removes unused side-effect-free nodes.
	PassDCE = "dce"
)

// nodeFixDriverSpecs are the node-fix driver instances: one function, run
// under several names. ONNX runs node fixes twice, before and after
// decomposition (the Python system's second run hid inside ONNX-P18).
var nodeFixDriverSpecs = []struct {
	name, stage, backend, doc string
}{
	{"onnx-node-fixes", StageFXNodeFixes, BackendONNX,
		"run the ONNX node fixes\n\nWalks every node once (regions included), tries the node fixes of the backend whose targets include the node's op in catalog-ID order (the first that returns true consumes the node), then runs DCE."},
	{"onnx-node-fixes-after-decompose", StageONNXPatches, BackendONNX,
		"run the ONNX node fixes again, after decomposition\n\nThe second instance of onnx-node-fixes (ONNX-P18): decomposition re-creates patterns the fixes remove."},
	{"executorch-node-fixes", StageFXNodeFixes, BackendExecuTorch,
		"run the ExecuTorch node fixes\n\nWalks every node once (regions included), first matching fix wins, then DCE."},
}

// nodeFixDrivers names the drivers that run node fixes of backend b.
func nodeFixDrivers(b string) []string {
	var out []string
	for _, d := range nodeFixDriverSpecs {
		if contains(targetsOf(b), d.backend) {
			out = append(out, d.name)
		}
	}
	return out
}

// PatchDriverName is the name of the pass that applies the patches of a stage.
func PatchDriverName(stage string) string { return "apply-" + localStage(stage) }

// builtinPasses are the passes every catalog starts with.
func builtinPasses() []*Pass {
	var out []*Pass
	out = append(out, &Pass{
		Name: PassBackendPrepare, Kind: KindTransform, Backends: []string{BackendExecuTorch}, Stage: StageBackendPrepare,
		Required: true, driver: true, Run: runPrepares, idle: noPrepare,
		Doc: "run the backend prepares of the export's backend\n\nRuns every registered backend prepare that applies to the export's backend, in catalog-ID order.",
	})
	// One patch driver per patch stage, for the backends whose targets have it.
	seen := map[string]bool{}
	for _, t := range Targets() {
		for _, s := range targetStages(t) {
			if !s.Patches || seen[s.Name] {
				continue
			}
			seen[s.Name] = true
			out = append(out, &Pass{
				Name: PatchDriverName(s.Name), Kind: KindPatch, Backends: stageBackends(s.Name), Stage: s.Name,
				Required: true, driver: true, Run: patchDriver(s.Name), idle: noPatches(s.Name),
				Doc: fmt.Sprintf("apply the export's %s\n\nCalls each installed patch of stage %s, in PatchOrder (pm/pipelines.go), on every node it targets that exists when the patch starts; each application is recorded for Export.Revert.", s.Name, s.Name),
			})
		}
	}
	for _, d := range nodeFixDriverSpecs {
		out = append(out, &Pass{
			Name: d.name, Doc: d.doc, Kind: KindFix, Backends: []string{d.backend}, Stage: d.stage,
			Required: true, driver: true, Run: nodeFixDriver, idle: noNodeFixes,
		})
	}
	out = append(out, &Pass{
		Name: PassDCE, Kind: KindTransform, Repeatable: true, Run: runDCE,
		Doc: "remove unused side-effect-free nodes\n\nRuns ir.DCE on the main graph and, recursively, its regions. It belongs to no stage and may appear several times.",
	})
	return out
}

// noPrepare: no backend prepare with a Prepare func applies to b.
func noPrepare(c *Catalog, b string) bool {
	for _, bp := range c.Prepares.All() {
		if Applies(bp.Backend, b) && bp.Prepare != nil {
			return false
		}
	}
	return true
}

// noPatches: no patch of stage (opt-in ones included) applies to b.
func noPatches(stage string) func(c *Catalog, b string) bool {
	return func(c *Catalog, b string) bool {
		for _, p := range c.Patches.All() {
			if p.Stage == stage && Applies(p.Backend, b) {
				return false
			}
		}
		return true
	}
}

// noNodeFixes: no node fix applies to b.
func noNodeFixes(c *Catalog, b string) bool {
	for _, f := range c.NodeFixes.All() {
		if Applies(f.Backend, b) {
			return false
		}
	}
	return true
}

// stageBackends are the backends under which a stage exists: "all" when
// every target has it, else the targets that do.
func stageBackends(stage string) []string {
	var out []string
	for _, t := range Targets() {
		if StageIndex(t, stage) >= 0 {
			out = append(out, t)
		}
	}
	if len(out) == len(Targets()) {
		return []string{BackendAll}
	}
	return out
}

// snapshot lists every node of every graph, regions included, as they are now.
// It walks the program once (counting each graph's nodes is free) and
// allocates one slice.
func snapshot(p *ir.Program) []*ir.Node {
	var graphs [8]*ir.Graph
	gs := graphs[:0]
	total := 0
	p.ForEachGraph(func(g *ir.Graph) {
		gs = append(gs, g)
		total += g.Len()
	})
	out := make([]*ir.Node, 0, total)
	for _, g := range gs {
		for n := g.First(); n != nil; n = n.Next() {
			out = append(out, n)
		}
	}
	return out
}

func patchDriver(stage string) func(p *ir.Program, c *Ctx) (Result, error) {
	return func(p *ir.Program, c *Ctx) (Result, error) {
		changed := false
		// Each patch sees the nodes that exist when it starts. The snapshot is
		// taken again only after a patch changed the program, so a stage of
		// many patches that mostly do not fire costs one walk, not one per patch.
		var nodes []*ir.Node
		for _, pt := range c.export.patchesFor(stage) {
			if nodes == nil {
				nodes = snapshot(p)
			}
			applied := false
			for _, n := range nodes {
				if n.IsErased() || !pt.match.matches(n) {
					continue
				}
				ok, err := applyPatch(c, pt, n)
				if err != nil {
					return Result{}, err
				}
				if ok {
					c.Stat(pt.Name, 1)
					changed, applied = true, true
				}
			}
			if applied {
				nodes = nil
			}
		}
		return Result{Changed: changed}, nil
	}
}

// nodeFixesFor lists, per op, the node fixes of the export's backend, in
// catalog-ID order.
func nodeFixesFor(cat *Catalog, backend string) map[ir.Op][]*NodeFix {
	byOp := map[ir.Op][]*NodeFix{}
	for _, f := range cat.NodeFixes.All() {
		if !Applies(f.Backend, backend) {
			continue
		}
		for _, op := range f.match.sortedOps() {
			byOp[op] = append(byOp[op], f)
		}
	}
	return byOp
}

func nodeFixDriver(p *ir.Program, c *Ctx) (Result, error) {
	byOp := nodeFixesFor(c.export.catalog, c.export.backend)
	changed := false
	for _, n := range snapshot(p) {
		if n.IsErased() {
			continue
		}
		for _, f := range byOp[n.Op] {
			c.enter(EntryNodeFix, f.Name, f.ID, n)
			ok, err := f.Fix(n, c)
			if err != nil {
				return Result{}, err
			}
			if ok {
				c.fireEntry(n)
				c.Stat(f.Name, 1)
				changed = true
				c.leave()
				break
			}
			c.leave()
		}
	}
	removed := ir.DCE(p.Main)
	c.Stat("dce-removed", int64(removed))
	return Result{Changed: changed || removed > 0 || c.changed}, nil
}

func runPrepares(p *ir.Program, c *Ctx) (Result, error) {
	for _, b := range c.export.catalog.Prepares.All() {
		if !Applies(b.Backend, c.export.backend) || b.Prepare == nil {
			continue
		}
		c.enter(EntryPrepare, b.Name, b.ID, nil)
		if err := b.Prepare(p, c); err != nil {
			return Result{}, err
		}
		c.fireEntry(nil)
		c.leave()
	}
	return Result{Changed: c.changed}, nil
}

func runDCE(p *ir.Program, c *Ctx) (Result, error) {
	removed := ir.DCE(p.Main)
	c.Stat("removed", int64(removed))
	return Result{Changed: removed > 0}, nil
}

// Partitioners lists the partitioners the backend prepares of the export's
// backend name, in catalog-ID order of the prepares, without duplicates.
func (e *Export) Partitioners() []string {
	var out []string
	for _, b := range e.catalog.Prepares.All() {
		if Applies(b.Backend, e.backend) {
			for _, p := range b.Partitioners {
				if !contains(out, p) {
					out = append(out, p)
				}
			}
		}
	}
	return out
}
