package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// FixEmptyLike rewrites empty_like as empty with symbolic sizes (ET-NF09).
var FixEmptyLike = pm.RegisterNodeFix(&pm.NodeFix{
	ID:      "ET-NF09",
	Name:    "fix-empty-like",
	Backend: pm.BackendExecuTorch,
	Targets: []ir.Op{ir.OpAtenEmptyLike},
	Doc: `rewrite empty_like as empty.memory_format with the input's sizes

empty_like decomposes to empty_permuted, which has no ExecuTorch kernel.
The result is empty.memory_format(sizes) with the input's sizes (sym_size
for symbolic dims) and the dtype, layout, device and pin_memory of the
original. Only contiguous results are rewritten: a dim order other than
the default cannot be asked of empty.memory_format in general.`,
	Fix: fixEmptyLike,
})

var etOpEmpty = ir.OpAtenEmptyMemoryFormat

func fixEmptyLike(n *ir.Node, c *pm.Ctx) (bool, error) {
	out := n.Result().Tensor()
	t, err := ir.ArgTensor(n.Arg("self"), "self")
	if err != nil || out == nil || !out.IsContiguous() {
		return false, nil
	}
	b := ir.NewBuilder(n.Graph)
	b.SetInsertBefore(n)
	b.Pass = "fix-empty-like"
	meta := n.Meta.Clone()
	meta.Delete(ir.MetaProvenance)
	b.Meta = &meta
	size, err := etShapeArg(b, n, t.Shape)
	if err != nil {
		return false, err
	}
	kw := map[string]ir.Arg{"dtype": ir.DTypeArg(out.DType)}
	for _, k := range []string{"layout", "device", "pin_memory"} {
		if a := n.Arg(k); !a.IsNone() {
			kw[k] = a
		}
	}
	e, err := b.CallKw(etOpEmpty, []ir.Arg{size}, kw)
	if err != nil {
		return false, err
	}
	if !ir.TypeEqual(e.Result().Type, out) {
		return false, n.Errorf("empty_like as empty: type %s differs from %s", e.Result().Type, out)
	}
	n.Result().ReplaceAllUsesWith(e.Result())
	c.Fired(n, "empty.memory_format")
	return true, n.Erase()
}
