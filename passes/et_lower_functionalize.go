package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// FunctionalizeInplace removes in-place ops the portable runtime has no
// kernel for: detach/detach_ become identities and an in-place op whose
// mutation no other value can observe becomes its functional twin.
var FunctionalizeInplace = etlLowering(&pm.Pass{
	Name: etlFunctionalizeName,
	Doc: `functionalize in-place ops whose mutation is not graph-visible; detach becomes an identity

The portable runtime registers out variants, not in-place overloads, so an
in-place op that survives export (e.g. a detach_ on an intermediate) would
be an unloadable kernel call. For ExecuTorch inference:

  detach(x), detach_(x)   → x (no autograd; detach_ only clears a flag)
  op_(x, …)               → y = op(x, …); later readers of x and the
                            in-place result read y

The second rewrite applies only when the mutation of x is not observable
elsewhere: x is no graph input (a mutated input or buffer is graph-visible
state, handled by write-back), x is no view result and has no view users
(an alias would see the write), and every reader of x lives in the same
graph. Other in-place ops stay and are counted ("inplace-kept"); the
emitter refuses them with an error naming the node.`,
	Run: runFunctionalizeInplace,
})

const etlFunctionalizeName = "functionalize-inplace"

var (
	etlOpDetach  = ir.OpAtenDetach
	etlOpDetach_ = ir.OpAtenDetach_
)

func runFunctionalizeInplace(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
	changed := false
	for _, g := range p.Graphs() {
		if !g.HasOpWhere(etlFunctionalizable) {
			continue
		}
		nodes := g.Nodes()
		// The nodes' positions in this snapshot, built when the first
		// in-place op is rewritten: most graphs have none, and a map of
		// every node cost a hash insert per node.
		var order map[*ir.Node]int
		positions := func() map[*ir.Node]int {
			if order == nil {
				order = make(map[*ir.Node]int, len(nodes))
				for i, n := range nodes {
					order[n] = i
				}
			}
			return order
		}
		for _, n := range nodes {
			if n.IsErased() {
				continue
			}
			done, err := etlFunctionalizeNode(n, positions, c)
			if err != nil {
				return pm.Result{}, err
			}
			changed = changed || done
		}
	}
	return pm.Result{Changed: changed}, nil
}

// etlFunctionalizable reports whether the pass rewrites nodes of op.
func etlFunctionalizable(op ir.Op) bool {
	return op == etlOpDetach || op == etlOpDetach_ || op.Has(ir.PropInplace)
}

func etlFunctionalizeNode(n *ir.Node, positions func() map[*ir.Node]int, c *pm.Ctx) (bool, error) {
	if n.Op == etlOpDetach || n.Op == etlOpDetach_ {
		x := n.Args[0]
		if x.Kind != ir.ArgValue || len(n.Results) != 1 {
			return false, nil
		}
		n.Results[0].ReplaceAllUsesWith(x.Value)
		if err := n.Erase(); err != nil {
			return false, err
		}
		c.Stat("detach-removed", 1)
		c.Fired(x.Value.Def, n.Op.String()+" → identity")
		return true, nil
	}
	if !n.Op.Has(ir.PropInplace) || len(n.Args) == 0 || n.Args[0].Kind != ir.ArgValue || len(n.Results) != 1 {
		return false, nil
	}
	x := n.Args[0].Value
	fop := n.Op.FunctionalTwin()
	if why := etlMutationVisible(n, x); why != "" || !fop.Valid() {
		if why == "" {
			why = "no functional twin in the op table"
		}
		c.Stat("inplace-kept", 1)
		c.Debugf(n, "in-place op kept: %s", why)
		return false, nil
	}
	kw := etlNamedArgs(n)
	b := ir.NewBuilder(n.Graph)
	b.SetInsertBefore(n)
	b.Pass = etlFunctionalizeName
	meta := n.Meta.Clone()
	b.Meta = &meta
	nn, err := b.CallKw(fop, nil, kw)
	if err != nil {
		return false, n.Errorf("%s: building %s: %v", etlFunctionalizeName, fop, err)
	}
	if len(nn.Results) != 1 {
		return false, n.Errorf("%s: %s has %d results", etlFunctionalizeName, fop, len(nn.Results))
	}
	y := nn.Results[0]
	// Readers of x after n see the mutated value: y.
	order := positions()
	at := order[n]
	for _, u := range append([]*ir.Node(nil), x.Uses()...) {
		if u == n || u == nn || (!u.IsReturn() && order[u] <= at) {
			continue
		}
		for i, a := range u.Args {
			if r, ok := etlReplaceValueArg(a, x, y); ok {
				u.SetArg(i, r)
			}
		}
	}
	from := n.Op.String()
	if err := etlTakeOver(n, nn); err != nil {
		return false, err
	}
	c.Fired(nn, from+" → "+fop.String())
	return true, nil
}

// etlMutationVisible says why writing x in place could be observed other
// than through the in-place op's result ("" when it cannot).
func etlMutationVisible(n *ir.Node, x *ir.Value) string {
	if x.IsInput() {
		return "mutates a graph input (graph-visible state)"
	}
	if x.Def.Op.Has(ir.PropView) {
		return "mutates a view (its base would see the write)"
	}
	for _, u := range x.Uses() {
		if u.IsReturn() {
			continue
		}
		if u.Graph != n.Graph {
			return "read inside a region"
		}
		if u != n && u.Op.Has(ir.PropView) {
			return "has a view user (the alias would see the write)"
		}
	}
	return ""
}

// etlReplaceValueArg returns a with every reference to x replaced by y, and
// whether it referred to x.
func etlReplaceValueArg(a ir.Arg, x, y *ir.Value) (ir.Arg, bool) {
	switch a.Kind {
	case ir.ArgValue:
		if a.Value == x {
			return ir.ValueArg(y), true
		}
	case ir.ArgList:
		found := false
		out := make([]ir.Arg, len(a.List))
		for i, e := range a.List {
			r, ok := etlReplaceValueArg(e, x, y)
			out[i], found = r, found || ok
		}
		if found {
			a.List = out
			return a, true
		}
	}
	return a, false
}
