package passes

import (
	"fmt"
	"slices"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/targets/executorch/plan"
)

// LoopCarryCopies makes every tensor a loop writes into a carried slot
// copyable by the emitter's carry kernel (aten::clone.out, which keeps
// the dim order: the runtime's portable kernel rejects a source and
// destination whose dim orders differ).
var LoopCarryCopies = etlLowering(&pm.Pass{
	Name: etlLoopCarriesName,
	Doc: `copy loop-carried and stacked values whose dim order or position the loop copies cannot take

The emitter writes a while_loop's or scan's carried values into the loop's
carried slots (its results) with aten::clone.out, once before the loop from
the carried inputs and once per iteration from the body's outputs, in
order. Two cases need a copy first, made here with
dim_order_ops._clone_dim_order:

* a carried tensor (an initial carried input or a body output) whose dim
  order differs from its slot's: clone.out copies bytes and requires equal
  dim orders, so the value is first copied into the slot's dim order
  (before the loop for an initial value, at the end of the body for an
  output);
* a scan step output whose dim order differs from its stacked output's
  rows: et_copy_index copies its bytes as one row, so it is first copied
  into the rows' order (a stacked output whose rows are not contiguous
  blocks, its dim order not starting with dim 0, is an error);
* a permuted carry: a body output that is the body's carried input j,
  returned as carried value i > j, while carried value j changes. The
  in-order copies would overwrite slot j before carry i reads it, so the
  body copies it at its end, before any carry copy runs.

Permuted non-tensor carries (SymInts, scalars) need no node: the emitter
saves the slot into a fresh value first. Delegated regions are left alone.
Statistics "dim-order-copies", "permuted-carry-copies".`,
	Run: runLoopCarryCopies,
})

const etlLoopCarriesName = "loop-carry-copies"

var (
	etlOpWhileLoop = ir.OpHigherOrderWhileLoop
	etlOpScan      = ir.OpHigherOrderScan
)

func runLoopCarryCopies(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
	changed := false
	err := etlEachNodeOf(p, func(op ir.Op) bool { return op == etlOpWhileLoop || op == etlOpScan }, func(n *ir.Node) error {
		var body *ir.Graph
		var init []ir.Arg
		initArg := -1
		switch n.Op {
		case etlOpWhileLoop:
			if len(n.Args) != 4 || n.Args[1].Kind != ir.ArgGraph || n.Args[1].Graph == nil || n.Args[2].Kind != ir.ArgList {
				return n.Errorf("%s: want while_loop(cond_fn, body_fn, [carried], [additional])", etlLoopCarriesName)
			}
			body, init, initArg = n.Args[1].Graph, n.Args[2].List, 2
		case etlOpScan:
			parts, ok := plan.ScanParts(n)
			if !ok {
				return n.Errorf("%s: want scan(combine_fn, [init], [xs], [additional])", etlLoopCarriesName)
			}
			body, init, initArg = parts.Body, parts.Init, 1
		default:
			return nil
		}
		if len(n.Results) < len(init) || len(body.Inputs) < len(init) || len(body.Outputs()) < len(init) {
			return n.Errorf("%s: %d carried values, %d results, %d body inputs, %d body outputs", etlLoopCarriesName, len(init), len(n.Results), len(body.Inputs), len(body.Outputs()))
		}
		did, err := etlCarryInits(n, init, initArg, c)
		if err != nil {
			return err
		}
		didBody, err := etlCarryOutputs(n, body, len(init), c)
		if err != nil {
			return err
		}
		didRows := false
		if n.Op == etlOpScan {
			if didRows, err = etlStackedRows(n, body, len(init), c); err != nil {
				return err
			}
		}
		changed = changed || did || didBody || didRows
		return nil
	})
	return pm.Result{Changed: changed}, err
}

// etlCarryInits copies each initial carried tensor of loop n whose dim
// order differs from its slot's into the slot's order, before the loop.
func etlCarryInits(n *ir.Node, init []ir.Arg, initArg int, c *pm.Ctx) (bool, error) {
	b := ir.NewBuilder(n.Graph)
	b.Pass = etlLoopCarriesName
	b.SetInsertBefore(n)
	list := append([]ir.Arg(nil), init...)
	changed := false
	for i, a := range init {
		slot := n.Results[i].Tensor()
		if a.Kind != ir.ArgValue || slot == nil || a.Value.Tensor() == nil || etlSameDimOrder(a.Value.Tensor(), slot) {
			continue
		}
		cp, err := etlCloneInto(b, a.Value, slot)
		if err != nil {
			return false, n.Errorf("%s: carried input %d (%s): %v", etlLoopCarriesName, i, a.Value, err)
		}
		list[i] = ir.ValueArg(cp.Result())
		c.Fired(cp, fmt.Sprintf("initial carried value %d of %s copied to dim order %v", i, n.Results[i], EtCanonicalDimOrder(slot)))
		c.Stat("dim-order-copies", 1)
		changed = true
	}
	if changed {
		n.SetArg(initArg, ir.ListArg(list...))
	}
	return changed, nil
}

// etlCarryOutputs copies, at the end of body, each carried output of loop
// n that the emitter's in-order carry copies could not take: a dim order
// other than the slot's, or a carried input j returned as carried value
// i > j while carried value j changes.
func etlCarryOutputs(n *ir.Node, body *ir.Graph, ncarry int, c *pm.Ctx) (bool, error) {
	b := ir.NewBuilder(body)
	b.Pass = etlLoopCarriesName
	b.SetInsertAtEnd()
	outs := append([]ir.Arg(nil), body.Outputs()...)
	carried := func(a ir.Arg) int { // the carried input a is, or -1
		if a.Kind != ir.ArgValue {
			return -1
		}
		for j := 0; j < ncarry; j++ {
			if body.Inputs[j] == a.Value {
				return j
			}
		}
		return -1
	}
	changed := false
	for i := 0; i < ncarry; i++ {
		a := outs[i]
		slot := n.Results[i].Tensor()
		if a.Kind != ir.ArgValue || slot == nil || a.Value.Tensor() == nil {
			continue
		}
		why := ""
		stat := ""
		if !etlSameDimOrder(a.Value.Tensor(), slot) {
			why = fmt.Sprintf("carried output %d of %s copied to dim order %v", i, n.Results[i], EtCanonicalDimOrder(slot))
			stat = "dim-order-copies"
		} else if j := carried(a); j >= 0 && j < i && carried(outs[j]) != j {
			why = fmt.Sprintf("carried input %d returned as carried value %d of %s copied before the carry copies", j, i, n.Results[i])
			stat = "permuted-carry-copies"
		}
		if why == "" {
			continue
		}
		cp, err := etlCloneInto(b, a.Value, slot)
		if err != nil {
			return false, n.Errorf("%s: %s output %d (%s): %v", etlLoopCarriesName, body.Name, i, a.Value, err)
		}
		outs[i] = ir.ValueArg(cp.Result())
		body.SetOutput(i, outs[i])
		c.Fired(cp, why)
		c.Stat(stat, 1)
		changed = true
	}
	return changed, nil
}

// etlStackedRows copies, at the end of body, each step output of scan n
// whose dim order differs from its stacked output's rows:
// et_copy_index copies the step output's bytes as row i of the stacked
// output, so the rows must be contiguous blocks (the stacked output's dim
// order starts with its leading dim; otherwise an error naming the node)
// laid out in the step output's order.
func etlStackedRows(n *ir.Node, body *ir.Graph, ncarry int, c *pm.Ctx) (bool, error) {
	b := ir.NewBuilder(body)
	b.Pass = etlLoopCarriesName
	b.SetInsertAtEnd()
	outs := body.Outputs()
	changed := false
	for i := ncarry; i < len(outs) && i < len(n.Results); i++ {
		a := outs[i]
		ys := n.Results[i].Tensor()
		if a.Kind != ir.ArgValue || ys == nil || a.Value.Tensor() == nil || ys.Rank() != a.Value.Tensor().Rank()+1 {
			continue
		}
		order := EtCanonicalDimOrder(ys)
		if order[0] != 0 {
			return false, n.Errorf("%s: stacked output %s has dim order %v: its rows are not contiguous blocks, which et_copy_index writes", etlLoopCarriesName, n.Results[i], order)
		}
		row := *a.Value.Tensor()
		row.DimOrder = nil
		for _, d := range order[1:] {
			row.DimOrder = append(row.DimOrder, d-1)
		}
		if etlSameDimOrder(a.Value.Tensor(), &row) {
			continue
		}
		cp, err := etlCloneInto(b, a.Value, &row)
		if err != nil {
			return false, n.Errorf("%s: %s output %d (%s): %v", etlLoopCarriesName, body.Name, i, a.Value, err)
		}
		body.SetOutput(i, ir.ValueArg(cp.Result()))
		c.Fired(cp, fmt.Sprintf("step output %d copied to the dim order %v of %s's rows", i, EtCanonicalDimOrder(&row), n.Results[i]))
		c.Stat("dim-order-copies", 1)
		changed = true
	}
	return changed, nil
}

// etlSameDimOrder reports whether a and b have the same canonical dim order.
func etlSameDimOrder(a, b *ir.TensorType) bool {
	return slices.Equal(EtCanonicalDimOrder(a), EtCanonicalDimOrder(b))
}

// etlCloneInto builds _clone_dim_order(v) with slot's dim order.
func etlCloneInto(b *ir.Builder, v *ir.Value, slot *ir.TensorType) (*ir.Node, error) {
	order := EtCanonicalDimOrder(slot)
	ints := make([]int64, len(order))
	for i, d := range order {
		ints[i] = int64(d)
	}
	return b.CallKw(etlOpCloneDimOrder, []ir.Arg{ir.ValueArg(v)}, map[string]ir.Arg{"dim_order": ir.IntsArg(ints...)})
}
