package onnx

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/fxport/fxport/ir"
)

// MissingOpsError lists, at once, every node of a program the ONNX target
// cannot lower at the chosen opset: ops without a lowering (Ops) and nodes
// whose lowering refused their arguments (Failed), each with where it came
// from in the user's model and what to do.
type MissingOpsError struct {
	Opset int
	// Ops maps each op without a lowering to its first few node names.
	Ops map[string][]string
	// Why is the reason of each op (its Unsupported entry or the opset it needs).
	Why map[string]string
	// Count is the number of nodes of each op.
	Count map[string]int
	// Origin is where the op's first node came from (file:line, module).
	Origin map[string]string
	// Failed lists nodes whose op has a lowering that refused these arguments.
	Failed []LoweringFailure
}

// LoweringFailure is one node whose lowering refused it.
type LoweringFailure struct {
	Op, Node, Origin, Reason string
}

func newMissingOps(opset int) *MissingOpsError {
	return &MissingOpsError{Opset: opset, Ops: map[string][]string{}, Why: map[string]string{},
		Count: map[string]int{}, Origin: map[string]string{}}
}

func (e *MissingOpsError) empty() bool { return len(e.Ops) == 0 && len(e.Failed) == 0 }

// addOp records a node whose op has no lowering at e.Opset.
func (e *MissingOpsError) addOp(n *ir.Node, why string) {
	k := n.OpLabel()
	e.Count[k]++
	if len(e.Ops[k]) < 3 {
		e.Ops[k] = append(e.Ops[k], "%"+firstResult(n))
	}
	if _, ok := e.Origin[k]; !ok {
		e.Origin[k] = nodeOrigin(n)
	}
	if why != "" {
		e.Why[k] = why
	}
}

func (e *MissingOpsError) Error() string {
	var b strings.Builder
	total := len(e.Ops) + len(e.Failed)
	fmt.Fprintf(&b, "cannot export to ONNX opset %d: %d problem(s), all listed:", e.Opset, total)
	for _, op := range sortedKeys(e.Ops) {
		nodes := strings.Join(e.Ops[op], ", ")
		if c := e.Count[op]; c > len(e.Ops[op]) {
			nodes += fmt.Sprintf(" and %d more", c-len(e.Ops[op]))
		}
		fmt.Fprintf(&b, "\n  %s (%s)", op, nodes)
		if o := e.Origin[op]; o != "" {
			fmt.Fprintf(&b, ", from %s", o)
		}
		fmt.Fprintf(&b, ":\n    %s", e.advice(op))
	}
	for _, f := range e.Failed {
		fmt.Fprintf(&b, "\n  %s (%s)", f.Op, f.Node)
		if f.Origin != "" {
			fmt.Fprintf(&b, ", from %s", f.Origin)
		}
		fmt.Fprintf(&b, ":\n    the ONNX lowering of this op does not support this use: %s", f.Reason)
	}
	return b.String()
}

// advice says why op cannot be lowered and what the user can do.
func (e *MissingOpsError) advice(op string) string {
	if o, ok := ir.LookupOp(op); ok {
		if vs := versions(o); len(vs) > 0 && vs[0].MinOpset > e.Opset {
			return fmt.Sprintf("ONNX can express it from opset %d on: export with --opset %d (or newer, up to %d).", vs[0].MinOpset, vs[0].MinOpset, MaxSupportedOpset)
		}
		if why, ok := unsupported.Lookup(o); ok {
			return why
		}
	}
	if w := e.Why[op]; w != "" {
		return w
	}
	return "fxport has no ONNX lowering for this op. Let torch decompose it before saving the program " +
		"(ep = ep.run_decompositions() on the torch.export ExportedProgram), or report the op to fxport."
}

var stackFrame = regexp.MustCompile(`File "([^"]+)", line (\d+), in (\S+)`)

// nodeOrigin says where a node came from in the user's model: the last
// frame of its stack trace (file:line in function), the innermost module,
// and the torch function — whatever its metadata has.
func nodeOrigin(n *ir.Node) string {
	var parts []string
	if trace, ok := n.Meta.Get(ir.MetaStackTrace); ok {
		if ms := stackFrame.FindAllStringSubmatch(trace, -1); len(ms) > 0 {
			m := ms[len(ms)-1]
			parts = append(parts, fmt.Sprintf("%s:%s in %s", m[1], m[2], m[3]))
		}
	}
	if stack, ok := n.Meta.Get(ir.MetaNNModuleStack); ok && stack != "" {
		entries := strings.Split(stack, ";")
		f := strings.Split(entries[len(entries)-1], ",")
		if len(f) >= 3 {
			mod := f[1]
			if mod == "" {
				mod = "the top module"
			}
			parts = append(parts, fmt.Sprintf("module %s (%s)", mod, f[len(f)-1]))
		}
	}
	if fn, ok := n.Meta.Get(ir.MetaTorchFn); ok && fn != "" {
		if i := strings.LastIndex(fn, ";"); i >= 0 {
			fn = fn[i+1:]
		}
		parts = append(parts, "torch "+fn)
	}
	return strings.Join(parts, ", ")
}

// sortFailures orders lowering failures by op, then node.
func sortFailures(fs []LoweringFailure) {
	sort.SliceStable(fs, func(i, j int) bool {
		if fs[i].Op != fs[j].Op {
			return fs[i].Op < fs[j].Op
		}
		return false
	})
}
