package emit

import (
	"fmt"

	"github.com/fxport/fxport/ir"
)

// The portable runtime registers out variants (those of the kernel list
// gen/etkernels.spec, OpInfo.Kernel), a few prim ops for symbolic sizes and scalar arithmetic, and the
// in-place copy_ the write-back of mutated buffers uses. A kernel call to
// anything else — a functional overload, an in-place op — names an
// operator the runtime cannot resolve, so the file would not load: the
// emitter refuses it instead.

// primKernels are the non-out ops ExecuTorch registers as prim ops
// (register_prim_ops.cpp), besides the executorch_prim namespace.
var primKernels = map[ir.Op]bool{
	ir.OpAtenSymSizeInt:        true,
	ir.OpAtenSymNumel:          true,
	ir.OpAten_LocalScalarDense: true,
}

// inplaceKernels are in-place ops the portable library registers.
var inplaceKernels = map[ir.Op]bool{
	ir.OpAtenCopy_: true,
}

// checkKernel returns an error when no ExecuTorch kernel can serve op.
func checkKernel(op ir.Op) error {
	info := op.Info()
	switch {
	case info.Props&ir.PropOutVariant != 0 && info.Kernel != "":
		return nil
	case info.Props&ir.PropOutVariant != 0:
		return fmt.Errorf("out variant %s is registered by no ExecuTorch kernel library (gen/etkernels.spec), so the runtime could not load the program", info.Name)
	case info.Namespace == "executorch_prim", primKernels[op]:
		return nil
	case info.Props&ir.PropInplace != 0:
		if inplaceKernels[op] {
			return nil
		}
		return fmt.Errorf("in-place op %s has no portable kernel (functionalize it before lowering: functionalize-inplace)", info.Name)
	case info.Out != "":
		return fmt.Errorf("functional op %s was not converted to its out variant %s (to-out-variants)", info.Name, info.Out)
	default:
		return fmt.Errorf("op %s has no kernel in ExecuTorch's portable library and was not decomposed (legalize-kernels)", info.Name)
	}
}

// opConvolutionOut is the portable convolution kernel.
var opConvolutionOut = ir.OpAtenConvolutionOut

// checkKernelArgs refuses calls the kernel refuses at run time for their
// operands: the portable convolution.out takes 3-D and 4-D inputs only
// (Conv1d, Conv2d); a Conv3d that no delegate took would load and then
// fail in the kernel.
func checkKernelArgs(n *ir.Node) error {
	if n.Op != opConvolutionOut {
		return nil
	}
	in := n.Arg("input")
	if in.Kind != ir.ArgValue {
		return nil
	}
	t := in.Value.Tensor()
	if t == nil || t.Rank() == 3 || t.Rank() == 4 {
		return nil
	}
	return fmt.Errorf("a %d-D convolution (input %s): ExecuTorch's portable convolution.out takes 3-D and 4-D inputs only (1-d and 2-d convolutions), and no delegate took this one; a 3-d convolution cannot run on ExecuTorch's portable kernels", t.Rank(), t)
}
