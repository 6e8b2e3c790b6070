package onnxfix

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
	"github.com/fxport/fxport/pm"
)

// FixAssertions erases runtime assertions before ONNX translation (ONNX-FX05).
var FixAssertions = pm.RegisterNodeFix(&pm.NodeFix{
	ID:      "ONNX-FX05",
	Name:    fixAssertionsName,
	Backend: pm.BackendONNX,
	Targets: []ir.Op{
		ir.OpAten_AssertAsync, ir.OpAten_AssertAsyncMsg, ir.OpAten_AssertScalar,
		ir.OpAten_AssertTensorMetadata, ir.OpAtenSymConstrainRangeForSize,
		ir.OpAtenSymConstrainRange,
	},
	Doc: `erase runtime assertions and range constraints

ONNX has no assertion op, so the exported model does not check its inputs:
the runtime guards torch.export deferred (_assert_async, _assert_scalar,
_assert_tensor_metadata) are lost, as in Python. The range facts are kept
where they live: the program's symbol environment (Env) already holds the
ranges torch.export recorded, and sym_constrain_range(_for_size) on a
symbol intersects its Env range with [min, max] (min defaulting to 0 for
_for_size) before the node is erased. sym_constrain_range.default is
handled too (not in the Python row). Each firing names what was dropped.
There is no option to keep the checks: ONNX cannot express them.`,
	Fix: fixAssertions,
})

const fixAssertionsName = "fix-assertions"

var (
	fxOpConstrainForSize = ir.OpAtenSymConstrainRangeForSize
	fxOpConstrain        = ir.OpAtenSymConstrainRange
)

func fixAssertions(n *ir.Node, c *pm.Ctx) (bool, error) {
	detail := "runtime check dropped"
	if n.Op == fxOpConstrainForSize || n.Op == fxOpConstrain {
		d, err := fxRecordConstraint(n)
		if err != nil {
			return false, err
		}
		detail = d
	} else if i := n.Op.ArgIndex("assert_msg"); i >= 0 && n.Args[i].Kind == ir.ArgString {
		detail = fmt.Sprintf("runtime check dropped: %q", n.Args[i].Str)
	}
	for _, r := range n.Results {
		if r.NumUses() > 0 {
			return false, nil
		}
	}
	c.Fired(n, detail)
	return true, n.Erase()
}

// fxRecordConstraint moves the range of a sym_constrain_range(_for_size)
// node on a symbol into the program's Env and describes what it did.
func fxRecordConstraint(n *ir.Node) (string, error) {
	size := n.Arg("size")
	if size.Kind != ir.ArgValue {
		return "constraint on a literal dropped", nil
	}
	e, err := ir.SymIntOf(size)
	if err != nil {
		return "", fmt.Errorf("%s: %w", n.Short(), err)
	}
	name, ok := e.Name()
	if !ok {
		return "constraint on " + e.String() + " dropped (not a symbol)", nil
	}
	r := sym.Unbounded()
	if n.Op == fxOpConstrainForSize {
		r.Lo = sym.Finite(0)
	}
	if a := n.Arg("min"); a.Kind == ir.ArgInt {
		r.Lo = sym.Finite(a.Int)
	}
	if a := n.Arg("max"); a.Kind == ir.ArgInt {
		r.Hi = sym.Finite(a.Int)
	}
	p := n.Graph.Program
	if p == nil {
		return "", n.Errorf("node is not in a program")
	}
	if p.Env == nil {
		p.Env = sym.NewEnv()
	}
	p.Env.Refine(name, r)
	got, _ := p.Env.Range(name)
	return fmt.Sprintf("range %s of %s kept in the Env as %s", r, name, got), nil
}
