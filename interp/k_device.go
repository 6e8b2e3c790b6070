package interp

// Host/device copies around a CUDA partition (et_copy, cuda-device-copies):
// the interpreter has one device, so a copy is a plain copy; the out
// variants write into their out tensor.
func init() {
	register(kIdentityCopy, "et_copy._h2d_copy.default", "et_copy._d2h_copy.default")
	register(kCastIntoOut, "et_copy._h2d_copy.out", "et_copy._d2h_copy.out")
}
