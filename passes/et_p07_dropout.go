package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// PatchDropoutIdentity makes dropout an identity (ET-P07).
var PatchDropoutIdentity = pm.RegisterPatch(&pm.Patch{
	ID:      "ET-P07",
	Name:    "dropout-identity",
	Backend: pm.BackendExecuTorch,
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.nn.functional.dropout"},
	Doc: `replace dropout by its input

ExecuTorch programs are inference programs: dropout is the identity,
whatever its train flag (the Python patch did the same). For
native_dropout the mask result, when used, becomes an all-true bool tensor
of the input's shape (full_like(input, True, dtype=bool)), which is what
dropout in evaluation keeps.`,
	Rewrite: etRewriteDropoutIdentity,
})

var etOpFullLike = ir.OpAtenFullLike

func etRewriteDropoutIdentity(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
	in := n.Arg("input")
	if in.Kind != ir.ArgValue || in.Value.Tensor() == nil {
		return nil, nil
	}
	out := []*ir.Value{in.Value}
	if len(n.Results) == 2 {
		var mask *ir.Value
		if n.Results[1].NumUses() > 0 {
			m, err := b.CallKw(etOpFullLike, []ir.Arg{in, ir.BoolArg(true)}, map[string]ir.Arg{"dtype": ir.DTypeArg(ir.Bool)})
			if err != nil {
				return nil, err
			}
			mask = m.Result()
		}
		out = append(out, mask)
	}
	if !etSameTypes(n, out) {
		return nil, nil
	}
	c.Fired(n, "identity")
	return out, nil
}
