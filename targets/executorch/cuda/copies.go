package cuda

import (
	"github.com/fxport/fxport/ir"
)

var (
	// OpH2DCopy and OpD2HCopy are ExecuTorch's et_copy kernels.
	OpH2DCopy = ir.OpEtCopy_H2dCopy
	OpD2HCopy = ir.OpEtCopy_D2hCopy
)

// LowerCopies rewrites the boundary copies of p's main graph,
// _to_copy(device=cuda:0) and _to_copy(device=cpu) of a device tensor, into
// et_copy._h2d_copy / et_copy._d2h_copy (whose out variants the portable
// lowering plans like any other op). It returns the number rewritten.
func LowerCopies(p *ir.Program) (int, error) {
	count := 0
	for _, n := range p.Main.Nodes() {
		if !isDeviceCopy(n) || len(n.Results) != 1 {
			continue
		}
		src := n.Args[0]
		if src.Kind != ir.ArgValue || src.Value.Tensor() == nil {
			continue
		}
		in, out := src.Value.Tensor(), n.Results[0].Tensor()
		if out == nil || in.DType != out.DType {
			continue // a dtype change is not a plain device copy
		}
		var op ir.Op
		switch {
		case in.Device == "" && out.Device == Device:
			op = OpH2DCopy
		case in.Device == Device && out.Device == "":
			op = OpD2HCopy
		default:
			continue
		}
		b := ir.NewBuilder(p.Main)
		b.SetInsertBefore(n)
		b.Pass = "cuda-device-copies"
		nn, err := b.Raw(op, []ir.Arg{src}, []ir.Type{n.Results[0].Type}, nil)
		if err != nil {
			return count, n.Errorf("cuda-device-copies: %v", err)
		}
		nn.Meta = n.Meta.Clone()
		nn.AddProvenance("cuda-device-copies")
		name := n.Results[0].Name
		n.Results[0].ReplaceAllUsesWith(nn.Results[0])
		if err := n.Erase(); err != nil {
			return count, err
		}
		if err := nn.Results[0].Rename(name); err != nil {
			return count, err
		}
		count++
	}
	return count, nil
}
