package ir

// inferDequantize: quantized_decomposed.dequantize_per_*: the input's
// shape in out_dtype (float32 when absent).
func inferDequantize(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	r := cloneTensor(t)
	r.DType = Float32
	if dt, ok, err := c.OptDType("out_dtype"); err != nil {
		return nil, err
	} else if ok {
		r.DType = dt
	}
	return one(r), nil
}
