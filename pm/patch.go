package pm

import (
	"fmt"

	"github.com/fxport/fxport/ir"
)

// Patch is a revertible node rewrite: the graph form of a Python patch
// (an attribute swap on torch or model code active during capture).
// Declare one with a single line in the file that defines it:
//
//	var PatchWhere = pm.RegisterPatch(&pm.Patch{ID: "ONNX-P01", Name: "where-promote", ...})
//
// An Export installs the patches of its backend; the patch driver of the
// patch's Stage calls Rewrite for each node matching a target.
type Patch struct {
	ID      string
	Name    string
	Doc     string
	Backend string
	// Stage is a patch stage: model-patches, torch-patches, onnx-patches
	// or executorch-patches.
	Stage string
	// Ops are the op overloads the patch targets (ir.OpAtenWhereSelf).
	Ops []ir.Op
	// Targets are torch API paths ("torch.where", "torch.Tensor.where"; see
	// APIPaths) or model-method paths ("<module>.<Class>.<method>", matched
	// through the node's nn_module_stack and stack_trace / source_fn_stack
	// metadata). A patch needs Ops, Targets or both.
	Targets []string
	// OptIn patches are installed only when an export includes them.
	OptIn bool
	// Rewrite builds replacement nodes with b, which is positioned just
	// before n and records the patch in the provenance of what it builds,
	// and returns one replacement value per result of n; nil means the
	// patch does not apply to n. Rewrite must build only through b and must
	// not change other nodes: the manager replaces n's uses, erases n and
	// records the original so that Export.Revert can restore it.
	Rewrite func(n *ir.Node, b *ir.Builder, c *Ctx) ([]*ir.Value, error)

	match *matcher
}

// Info describes the patch for listings.
func (p *Patch) Info() EntryInfo {
	return EntryInfo{Kind: EntryPatch, PassKind: KindPatch, ID: p.ID, Name: p.Name, Title: Title(p.Doc),
		Backend: p.Backend, Stage: p.Stage, Targets: append(opNames(p.Ops), p.Targets...)}
}

// ValidatePatch checks a patch declaration, resolving its targets, without
// registering it. Errors name the patch and, for targets, the target.
func ValidatePatch(p *Patch) error {
	_, err := checkPatch(p)
	return err
}

func checkPatch(p *Patch) (*matcher, error) {
	if err := checkHeader(EntryPatch, p.Name, p.ID, p.Doc); err != nil {
		return nil, err
	}
	if p.Rewrite == nil {
		return nil, fmt.Errorf("patch %q: nil Rewrite", p.Name)
	}
	if err := checkBackendStage(p.Backend, p.Stage); err != nil {
		return nil, fmt.Errorf("patch %q: %w", p.Name, err)
	}
	for _, t := range targetsOf(p.Backend) {
		if s := targetStages(t)[StageIndex(t, p.Stage)]; !s.Patches {
			return nil, fmt.Errorf("patch %q: stage %s does not hold patches", p.Name, s.Qualified())
		}
	}
	m := &matcher{ops: map[ir.Op]bool{}}
	if len(p.Ops) > 0 {
		om, err := newOpMatcher(p.Ops)
		if err != nil {
			return nil, fmt.Errorf("patch %q: %w", p.Name, err)
		}
		m = om
	}
	if len(p.Targets) > 0 || len(p.Ops) == 0 {
		tm, err := newMatcher(p.Targets, false)
		if err != nil {
			return nil, fmt.Errorf("patch %q: %w", p.Name, err)
		}
		for op := range tm.ops {
			m.ops[op] = true
		}
		m.methods = tm.methods
	}
	return m, nil
}

func checkBackendStage(backend, stage string) error {
	if !ValidBackend(backend) {
		return fmt.Errorf("unknown backend %q", backend)
	}
	return checkStage(backend, stage)
}
