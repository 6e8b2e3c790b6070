package pm

import (
	"fmt"

	"github.com/fxport/fxport/ir"
)

// NodeFix repairs single nodes a backend cannot handle (ONNX-FX*, ET-NF*).
// Declare one with a single line:
//
//	var FixDetachInplace = pm.RegisterNodeFix(&pm.NodeFix{ID: "ONNX-FX03", ...})
//
// The node-fix driver of a backend walks a snapshot of every node (regions
// included; nodes inserted during the walk are not revisited) and tries the
// fixes whose targets include the node's op, in catalog-ID order; the
// first that returns true consumes the node. Then it runs DCE.
type NodeFix struct {
	ID      string
	Name    string
	Doc     string
	Backend string
	// Targets are op overloads. Within one backend, target sets must not overlap.
	Targets []ir.Op
	// Fix rewrites n and reports whether it consumed it; false means "not
	// mine". A fix that changes the program without consuming the node
	// calls c.MarkChanged.
	Fix func(n *ir.Node, c *Ctx) (bool, error)

	match *matcher
}

// Info describes the fix for listings.
func (f *NodeFix) Info() EntryInfo {
	return EntryInfo{Kind: EntryNodeFix, PassKind: KindFix, ID: f.ID, Name: f.Name, Title: Title(f.Doc),
		Backend: f.Backend, Stage: StageFXNodeFixes, Targets: opNames(f.Targets)}
}

// ValidateNodeFix checks a node-fix declaration without registering it
// (overlaps with registered fixes are checked by Catalog.AddNodeFix).
func ValidateNodeFix(f *NodeFix) error {
	_, err := checkNodeFix(f)
	return err
}

func checkNodeFix(f *NodeFix) (*matcher, error) {
	if err := checkHeader(EntryNodeFix, f.Name, f.ID, f.Doc); err != nil {
		return nil, err
	}
	if f.Fix == nil {
		return nil, fmt.Errorf("node-fix %q: nil Fix", f.Name)
	}
	if !ValidBackend(f.Backend) {
		return nil, fmt.Errorf("node-fix %q: unknown backend %q", f.Name, f.Backend)
	}
	if len(nodeFixDrivers(f.Backend)) == 0 {
		return nil, fmt.Errorf("node-fix %q: no node-fix driver runs for backend %q", f.Name, f.Backend)
	}
	m, err := newOpMatcher(f.Targets)
	if err != nil {
		return nil, fmt.Errorf("node-fix %q: %w", f.Name, err)
	}
	return m, nil
}

// overlap returns an op two node fixes both target, if any.
func (f *NodeFix) overlap(g *NodeFix) (ir.Op, bool) {
	for _, op := range f.match.sortedOps() {
		if g.match.ops[op] {
			return op, true
		}
	}
	return ir.OpInvalid, false
}
