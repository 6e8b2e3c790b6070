package interp

import "github.com/fxport/fxport/ir"

// Host/device copies around a CUDA partition (et_copy, cuda-device-copies):
// the interpreter has one device, so a copy is a plain copy; the out
// variants write into their out tensor.
func init() {
	register(kIdentityCopy, ir.OpEtCopy_H2dCopy, ir.OpEtCopy_D2hCopy)
	register(kCastIntoOut, ir.OpEtCopy_H2dCopyOut, ir.OpEtCopy_D2hCopyOut)
}
