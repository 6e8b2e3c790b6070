package passes

import (
	"sort"
	"strings"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// List-out variants for to-out-variants: ops such as split_copy.Tensor
// return a Tensor[] whose out variant writes a Tensor(a!)[] argument and
// returns nothing (split_copy.Tensor_out, split_with_sizes_copy.out).

// etlListOut reports whether out's only out argument is a tensor list and
// it returns nothing.
func etlListOut(os *ir.Schema, outNames []string) bool {
	if len(outNames) != 1 || len(os.Returns) != 0 {
		return false
	}
	for _, a := range os.Args {
		if a.Name == outNames[0] {
			return a.Type.List
		}
	}
	return false
}

// etlToListOut rewrites n, whose results are the list's elements, into the
// list-out variant out: one memory.alloc per result, passed as the list;
// the users of each result read its alloc.
func etlToListOut(n *ir.Node, out ir.Op, outName string, kw map[string]ir.Arg, c *pm.Ctx) (bool, error) {
	b := ir.NewBuilder(n.Graph)
	b.SetInsertBefore(n)
	b.Pass = etlOutVariantsName
	meta := n.Meta.Clone()
	b.Meta = &meta
	allocs := make([]*ir.Value, len(n.Results))
	for i, r := range n.Results {
		t := r.Tensor()
		if t == nil {
			return false, nil
		}
		a, err := etlAlloc(b, n, t)
		if err != nil {
			return false, n.Errorf("%s: allocating result %d: %v", etlOutVariantsName, i, err)
		}
		allocs[i] = a
	}
	kw[outName] = ir.ValuesArg(allocs...)
	nn, err := b.CallKw(out, nil, kw)
	if err != nil {
		return false, n.Errorf("%s: building %s: %v", etlOutVariantsName, out, err)
	}
	names := make([]string, len(n.Results))
	for i, r := range n.Results {
		names[i] = r.Name
		r.ReplaceAllUsesWith(allocs[i])
	}
	from := n.Op.String()
	if err := n.Erase(); err != nil {
		return false, err
	}
	for i, a := range allocs {
		if err := a.Rename(names[i]); err != nil {
			return false, n.Errorf("%s: renaming %s to %s: %v", etlOutVariantsName, a, names[i], err)
		}
	}
	c.Fired(nn, from+" → "+out.String())
	return true, nil
}

// etlIsCPUDevice reports whether a device literal names the CPU ("cpu",
// "cpu:0").
func etlIsCPUDevice(d string) bool {
	return d == "" || d == "cpu" || strings.HasPrefix(d, "cpu:")
}

// etlSortedKeys returns m's keys in order (deterministic errors).
func etlSortedKeys(m map[string]ir.Arg) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
