package ir

import "github.com/fxport/fxport/ir/sym"

// Shape rules of the dynamic and group-wise quantized_decomposed ops
// (torch.ao's _decomposed.py meta functions).

// inferChooseQparams: choose_qparams.tensor returns a one-element scale
// (float64) and zero point (int64).
func inferChooseQparams(c *InferCtx) ([]Type, error) {
	if _, err := tensorAt(c, 0); err != nil {
		return nil, err
	}
	one := []sym.Expr{sym.Const(1)}
	return []Type{&TensorType{DType: Float64, Shape: one}, &TensorType{DType: Int64, Shape: one}}, nil
}

// inferChooseQparamsPerToken: choose_qparams_per_token_asymmetric returns
// scales (float64) and zero points (int64) of shape input.shape[:-1] + [1].
func inferChooseQparamsPerToken(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	if t.Rank() == 0 {
		return nil, c.Errorf("per-token quantization needs a tensor of rank ≥ 1")
	}
	shape := append(append([]sym.Expr{}, t.Shape[:t.Rank()-1]...), sym.Const(1))
	return []Type{&TensorType{DType: Float64, Shape: shape, Device: t.Device},
		&TensorType{DType: Int64, Shape: append([]sym.Expr{}, shape...), Device: t.Device}}, nil
}

// inferDequantizeOutput: dequantize_per_token / dequantize_per_channel_group:
// the input's shape in output_dtype.
func inferDequantizeOutput(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	dt, ok, err := c.OptDType("output_dtype")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, c.Errorf("output_dtype is required")
	}
	r := cloneTensor(t)
	r.DType = dt
	return []Type{r}, nil
}
