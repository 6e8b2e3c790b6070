package ir_test

import "testing"

// xnnpack.argmax_pool2d: [N, H, W, C] pooled at stride = kernel over the
// symmetrically padded input; int32 indices.
func TestInferXNNPACKArgmaxPool2d(t *testing.T) {
	runInferCases(t, []inferCase{
		{name: "square", op: "xnnpack.argmax_pool2d.default", in: []string{"f32[2, 6, 8, 3]"},
			args: []any{"%0", []any{2, 2}}, want: []string{"f32[2, 3, 4, 3]", "i32[2, 3, 4, 3]"}},
		{name: "padded-ragged", op: "xnnpack.argmax_pool2d.default", in: []string{"f32[1, 7, 5, 2]"},
			args: []any{"%0", []any{3, 2}, []any{1, 1}}, want: []string{"f32[1, 3, 3, 2]", "i32[1, 3, 3, 2]"}},
		{name: "rank-3", op: "xnnpack.argmax_pool2d.default", in: []string{"f32[6, 8, 3]"},
			args: []any{"%0", []any{2, 2}}, err: "4-D"},
		{name: "1x1", op: "xnnpack.argmax_pool2d.default", in: []string{"f32[1, 6, 8, 3]"},
			args: []any{"%0", []any{1, 1}}, err: "at least 2"},
	})
}
