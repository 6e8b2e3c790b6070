package ir

// inferHostToDevice: et_copy._h2d_copy: the same tensor on the CUDA device.
func inferHostToDevice(c *InferCtx) ([]Type, error) {
	t, err := c.Tensor("self")
	if err != nil {
		return nil, err
	}
	r := *t
	r.Device = "cuda:0"
	return []Type{&r}, nil
}

// inferDeviceToHost: et_copy._d2h_copy: the same tensor on the host (the
// default device).
func inferDeviceToHost(c *InferCtx) ([]Type, error) {
	t, err := c.Tensor("self")
	if err != nil {
		return nil, err
	}
	r := *t
	r.Device = ""
	return []Type{&r}, nil
}
