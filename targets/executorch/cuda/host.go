package cuda

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/extcompile"
)

// CheckHost checks the boundary of the lowered program p around one of
// its CudaBackend delegate calls: every operand is a constant placeholder
// (its bytes are in the weights blob), the result of an et_copy
// host→device copy, or a result of an earlier CudaBackend call (a device
// tensor passed on directly), and every result is read only by et_copy
// device→host copies and later CudaBackend calls. The CUDA runtime passes
// device tensors only (pte-format.md §9.2), so a non-tensor operand (the
// partition recomputes or boxes SymInts, symsize.go) is an error here.
func CheckHost(p *ir.Program, call *ir.Node) error {
	if call == nil || !isCudaCall(call) || call.Graph != p.Main {
		return fmt.Errorf("cuda: no CudaBackend delegate call in graph %s", p.Main.Name)
	}
	for i, a := range call.Args[2:] {
		if a.Kind != ir.ArgValue {
			return call.Errorf("cuda: delegate operand %d is not a value", i)
		}
		v := a.Value
		switch {
		case extcompile.IsConstant(p, v):
		case v.Tensor() == nil:
			return call.Errorf("cuda: delegate operand %s is %s; the CUDA runtime passes device tensors only (run the cuda-partition pass, which computes SymInts in the region or passes them as 0-dim tensors)", v, v.Type)
		case v.Def != nil && isCudaCall(v.Def):
		case v.Def == nil || !isCopy(v.Def, "_h2d_copy"):
			return call.Errorf("cuda: delegate operand %s is not made by et_copy._h2d_copy or an earlier CudaBackend call (run the executorch.cuda pipeline: cuda-device-copies, to-out-variants, plan-memory)", v)
		}
	}
	for _, r := range call.Results {
		for _, u := range r.Uses() {
			if u.IsReturn() || !isCopy(u, "_d2h_copy") && !isCudaCall(u) {
				return call.Errorf("cuda: delegate result %s is read by %s, not by et_copy._d2h_copy or another CudaBackend call", r, useName(u))
			}
		}
	}
	return nil
}

// isCopy reports an et_copy op (any overload) with the given base name.
func isCopy(n *ir.Node, base string) bool {
	info := n.Op.Info()
	return info.Namespace == "et_copy" && info.Base == base
}

func useName(u *ir.Node) string {
	if u.IsReturn() {
		return "the graph's return"
	}
	return u.Short()
}
