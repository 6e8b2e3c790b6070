package passes

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
	"github.com/fxport/fxport/pm"
)

// ToExecuTorchPrim retargets symbolic scalar arithmetic to executorch_prim
// ops (ET-NF02, ET-NF04, ET-P15 and ET-P42 invariants).
var ToExecuTorchPrim = etlLowering(&pm.Pass{
	Name: etlPrimName,
	ID:   "ET-NF02",
	Doc: `retarget operator.*, torch.sym_* and math.* on SymInts to executorch_prim ops

Scalar arithmetic of the graph runs on ExecuTorch's prim kernels
(executorch_prim::add.Scalar, …). Each Python-level symbolic op whose
operands are not tensors becomes its prim twin from a named table
(EtPrimTwins); the twin has the same shape rule, so the result keeps its
symbolic expression and no symbol is ever replaced by its hint or a
constant (ET-NF02, ET-P42: the lowering never specializes). operator.pow
with a literal integer exponent n ≥ 1 becomes a chain of n−1
executorch_prim::mul.Scalar (ET-NF04; there is no pow prim). torch.sym_sum
becomes a chain of add.Scalar. operator.mod becomes mod.Scalar only when C's
truncated % agrees with Python's floored %: the divisor is a positive
literal (ET-NF06 has already made the dividend's sign irrelevant) or both
operands are provably non-negative.

Ops without a prim kernel (operator.ne, and_, or_, not_, torch.sym_not,
sym_ite, sym_sqrt, math.floor, math.sqrt, pow with a non-literal or
non-positive exponent, mod of possibly negative operands) fail the pass
with one error listing every such node (ET-P15: an op outside the prim
registry would pass a verifier and then fail at load; runtimes up to 1.3
lack sym_int, sym_ite and sym_not, none has sym_sum).`,
	Run: runToExecuTorchPrim,
})

const etlPrimName = "to-executorch-prim"

// etlPrimTwins maps Python-level symbolic ops to their executorch_prim twin.
var etlPrimTwins = map[ir.Op]ir.Op{
	ir.OpOperatorAdd:      ir.OpExecutorchPrimAddScalar,
	ir.OpOperatorSub:      ir.OpExecutorchPrimSubScalar,
	ir.OpOperatorMul:      ir.OpExecutorchPrimMulScalar,
	ir.OpOperatorFloordiv: ir.OpExecutorchPrimFloordivScalar,
	ir.OpOperatorTruediv:  ir.OpExecutorchPrimTruedivScalar,
	ir.OpOperatorNeg:      ir.OpExecutorchPrimNegScalar,
	ir.OpOperatorEq:       ir.OpExecutorchPrimEqScalar,
	ir.OpOperatorGt:       ir.OpExecutorchPrimGtScalar,
	ir.OpOperatorLt:       ir.OpExecutorchPrimLtScalar,
	ir.OpOperatorGe:       ir.OpExecutorchPrimGeScalar,
	ir.OpOperatorLe:       ir.OpExecutorchPrimLeScalar,
	ir.OpTorchSymMax:      ir.OpExecutorchPrimSymMaxScalar,
	ir.OpTorchSymMin:      ir.OpExecutorchPrimSymMinScalar,
	ir.OpTorchSymFloat:    ir.OpExecutorchPrimSymFloatScalar,
	ir.OpTorchSymInt:      ir.OpExecutorchPrimTruncScalar,
	ir.OpMathCeil:         ir.OpExecutorchPrimCeilScalar,
	ir.OpMathTrunc:        ir.OpExecutorchPrimTruncScalar,
	ir.OpBuiltinsRound:    ir.OpExecutorchPrimRoundScalar,
}

// EtPrimTwins lists the op → executorch_prim op table, sorted.
func EtPrimTwins() [][2]string {
	var out [][2]string
	for k, v := range etlPrimTwins {
		out = append(out, [2]string{k.String(), v.String()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

var (
	etlOpPrimMul = ir.OpExecutorchPrimMulScalar
	etlOpPrimAdd = ir.OpExecutorchPrimAddScalar
	etlOpPrimMod = ir.OpExecutorchPrimModScalar
	etlOpPyPow   = ir.OpOperatorPow
	etlOpPyMod   = ir.OpOperatorMod
	etlOpSymSum  = ir.OpTorchSymSum
	etlOpRound   = ir.OpBuiltinsRound
)

// etlPySymOp reports whether op is a Python-level symbolic op (what
// etlIsPySymOp asks of the op, before its operands).
func etlPySymOp(op ir.Op) bool {
	switch op.Info().Namespace {
	case "operator", "torch", "math", "builtins":
		return op.Has(ir.PropSymbolic)
	}
	return false
}

// etlIsPySymOp reports whether n is Python-level symbolic arithmetic on
// non-tensor operands.
func etlIsPySymOp(n *ir.Node) bool {
	if !etlPySymOp(n.Op) {
		return false
	}
	for _, v := range n.Operands() {
		if v.Tensor() != nil {
			return false
		}
	}
	return true
}

func runToExecuTorchPrim(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
	changed := false
	var bad []string
	err := etlEachNodeOf(p, etlPySymOp, func(n *ir.Node) error {
		if !etlIsPySymOp(n) {
			return nil
		}
		done, why, err := etlLowerSymOp(n, c)
		if err != nil {
			return err
		}
		if !done {
			bad = append(bad, fmt.Sprintf("%s in graph %s (%s)", n.Short(), n.Graph.Name, why))
			return nil
		}
		changed = true
		return nil
	})
	if err != nil {
		return pm.Result{}, err
	}
	if len(bad) > 0 {
		return pm.Result{}, fmt.Errorf("no executorch_prim kernel for %d symbolic op(s): %s", len(bad), strings.Join(bad, "; "))
	}
	return pm.Result{Changed: changed}, nil
}

// etlLowerSymOp rewrites one symbolic op; it returns false and the reason
// when no prim can express it.
func etlLowerSymOp(n *ir.Node, c *pm.Ctx) (bool, string, error) {
	name := n.Op.String()
	b := ir.NewBuilder(n.Graph)
	b.SetInsertBefore(n)
	b.Pass = etlPrimName
	meta := n.Meta.Clone()
	b.Meta = &meta
	switch n.Op {
	case etlOpPyPow:
		e := n.Args[1]
		if e.Kind != ir.ArgInt || e.Int < 1 {
			return false, "pow needs a literal integer exponent >= 1", nil
		}
		if e.Int == 1 {
			if n.Args[0].Kind != ir.ArgValue {
				return false, "pow of a literal", nil
			}
			return true, "", etlReplaceWith(n, n.Args[0].Value, c, "x**1 → x")
		}
		acc := n.Args[0]
		var last *ir.Node
		for i := int64(1); i < e.Int; i++ {
			m, err := b.Call(etlOpPrimMul, acc, n.Args[0])
			if err != nil {
				return false, "", n.Errorf("%s: %v", etlPrimName, err)
			}
			acc, last = ir.ValueArg(m.Result()), m
		}
		return true, "", etlFinishChain(n, last, c, fmt.Sprintf("x**%d → %d mul.Scalar", e.Int, e.Int-1))
	case etlOpSymSum:
		terms := n.Args[0].List
		if len(terms) < 2 {
			return false, "sym_sum of fewer than two terms", nil
		}
		acc := terms[0]
		var last *ir.Node
		for _, t := range terms[1:] {
			m, err := b.Call(etlOpPrimAdd, acc, t)
			if err != nil {
				return false, "", n.Errorf("%s: %v", etlPrimName, err)
			}
			acc, last = ir.ValueArg(m.Result()), m
		}
		return true, "", etlFinishChain(n, last, c, fmt.Sprintf("sym_sum → %d add.Scalar", len(terms)-1))
	case etlOpPyMod:
		if !etlTruncModAgrees(n) {
			return false, "C's truncated % may differ from Python's floored % here", nil
		}
		nn, err := etlRebuildPos(n, etlOpPrimMod, n.Args[:2])
		if err != nil {
			return false, "", err
		}
		c.Fired(nn, name+" → "+etlOpPrimMod.String())
		return true, "", nil
	case etlOpRound:
		if len(n.Args) > 1 && !n.Args[1].IsNone() {
			return false, "round with ndigits", nil
		}
	}
	op, ok := etlPrimTwins[n.Op]
	if !ok {
		return false, "no executorch_prim twin", nil
	}
	args := n.Args
	if n.Op == etlOpRound {
		args = args[:1]
	}
	nn, err := etlRebuildPos(n, op, args)
	if err != nil {
		return false, "", err
	}
	c.Fired(nn, name+" → "+op.String())
	return true, "", nil
}

// etlTruncModAgrees: a % b computes the same under C and Python semantics.
func etlTruncModAgrees(n *ir.Node) bool {
	if n.Args[1].Kind == ir.ArgInt && n.Args[1].Int > 0 {
		return true
	}
	env := n.Graph.Program.Env
	for _, a := range n.Args[:2] {
		e, err := ir.SymIntOf(a)
		if err != nil || !env.StaticallyKnownTrue(sym.Ge(e, sym.Const(0))) {
			return false
		}
	}
	return true
}

// etlRebuildPos replaces n by op applied to positional arguments.
func etlRebuildPos(n *ir.Node, op ir.Op, args []ir.Arg) (*ir.Node, error) {
	b := ir.NewBuilder(n.Graph)
	b.SetInsertBefore(n)
	b.Pass = etlPrimName
	meta := n.Meta.Clone()
	b.Meta = &meta
	nn, err := b.Call(op, args...)
	if err != nil {
		return nil, n.Errorf("%s: building %s: %v", etlPrimName, op, err)
	}
	return nn, etlTakeOver(n, nn)
}

// etlFinishChain makes the last node of a chain take over n.
func etlFinishChain(n, last *ir.Node, c *pm.Ctx, detail string) error {
	if err := etlTakeOver(n, last); err != nil {
		return err
	}
	c.Fired(last, detail)
	return nil
}

// etlReplaceWith replaces n's single result by v and erases n.
func etlReplaceWith(n *ir.Node, v *ir.Value, c *pm.Ctx, detail string) error {
	c.Fired(n, detail)
	n.Result().ReplaceAllUsesWith(v)
	return n.Erase()
}
