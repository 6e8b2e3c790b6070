package passes

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// Helpers shared by the ExecuTorch lowering passes (stage
// executorch.lowering): retargeting a node to another op by argument name,
// and walking every node of every graph.

// etlEachNode calls f on a snapshot of every node of every graph of p, main
// graph first, skipping nodes erased during the walk. Delegate regions
// (executorch_call_delegate) are skipped: their nodes belong to the backend.
func etlEachNode(p *ir.Program, f func(n *ir.Node) error) error {
	inDelegate := etlDelegateGraphs(p)
	for _, g := range p.Graphs() {
		if inDelegate[g] {
			continue
		}
		for _, n := range g.Nodes() {
			if n.IsErased() {
				continue
			}
			if err := f(n); err != nil {
				return err
			}
		}
	}
	return nil
}

// etlEachNodeOf is etlEachNode for a pass that acts only on nodes whose op
// is one that ofOp accepts: a graph with none is skipped without visiting
// its nodes (most programs have no loop, narrow, …, and walking every node
// of a 100k-node graph for nothing costs a cache miss per node).
func etlEachNodeOf(p *ir.Program, ofOp func(ir.Op) bool, f func(n *ir.Node) error) error {
	inDelegate := etlDelegateGraphs(p)
	for _, g := range p.Graphs() {
		if inDelegate[g] || !g.HasOpWhere(ofOp) {
			continue
		}
		for _, n := range g.Nodes() {
			if n.IsErased() || !ofOp(n.Op) {
				continue
			}
			if err := f(n); err != nil {
				return err
			}
		}
	}
	return nil
}

// etlNamedArgs returns n's arguments keyed by schema name.
func etlNamedArgs(n *ir.Node) map[string]ir.Arg {
	s := &n.Op.Info().Schema
	kw := make(map[string]ir.Arg, len(s.Args))
	for i, a := range s.Args {
		if i < len(n.Args) {
			kw[a.Name] = n.Args[i]
		}
	}
	return kw
}

// etlRebuild replaces n by a node of op built before it from keyword
// arguments. The new node keeps n's metadata and result names, records pass
// in its provenance and takes over n's uses; types that change are
// propagated to the users. It returns the new node.
func etlRebuild(n *ir.Node, op ir.Op, kw map[string]ir.Arg, pass string) (*ir.Node, error) {
	b := ir.NewBuilder(n.Graph)
	b.SetInsertBefore(n)
	b.Pass = pass
	meta := n.Meta.Clone()
	b.Meta = &meta
	nn, err := b.CallKw(op, nil, kw)
	if err != nil {
		return nil, n.Errorf("%s: building %s: %v", pass, op, err)
	}
	if len(nn.Results) != len(n.Results) {
		return nil, n.Errorf("%s: %s has %d results, %s has %d", pass, op, len(nn.Results), n.Op, len(n.Results))
	}
	return nn, etlTakeOver(n, nn)
}

// etlTakeOver moves the uses and result names of n to nn, erases n and
// re-infers the types of users whose operand types changed.
func etlTakeOver(n, nn *ir.Node) error {
	var work []*ir.Node
	names := make([]string, len(n.Results))
	for i, r := range n.Results {
		names[i] = r.Name
		nr := nn.Results[i]
		changed := !ir.TypeEqual(r.Type, nr.Type)
		for _, u := range r.Uses() {
			if changed && !u.IsReturn() {
				work = append(work, u)
			}
		}
		r.ReplaceAllUsesWith(nr)
	}
	if err := n.Erase(); err != nil {
		return err
	}
	for i, r := range nn.Results {
		if err := r.Rename(names[i]); err != nil {
			return fmt.Errorf("renaming %s to %s: %w", r, names[i], err)
		}
	}
	return fxRetype(work)
}

// etlLowering declares a required pass of the ExecuTorch lowering stage.
// Its place in the pipeline is its row in pm/pipelines.go.
func etlLowering(p *pm.Pass) *pm.Pass {
	p.Kind = pm.KindLowering
	p.Backends = []string{pm.BackendExecuTorch}
	p.Stage = pm.StageLowering
	p.Required = true
	return pm.RegisterPass(p)
}

var etlOpCallDelegate = ir.OpHigherOrderExecutorchCallDelegate

// etlDelegateGraphs returns the graphs of p that are (inside) a delegate's
// region. Graphs lists a parent graph before its regions, so one pass with
// the parent's answer at hand is linear in the number of graphs, however
// deep the nesting (nested cond).
func etlDelegateGraphs(p *ir.Program) map[*ir.Graph]bool {
	in := map[*ir.Graph]bool{}
	for _, g := range p.Graphs() {
		if n := g.Parent; n != nil && (n.Op == etlOpCallDelegate || in[n.Graph]) {
			in[g] = true
		}
	}
	return in
}
