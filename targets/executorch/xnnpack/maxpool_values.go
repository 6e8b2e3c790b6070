package xnnpack

import "github.com/fxport/fxport/ir"

// Max pooling whose indices nothing reads. Edge programs spell every
// max_pool2d as max_pool2d_with_indices (the portable kernel library has
// only that one); when its indices are unused, exir's MaxPool2dConfig
// claims it like max_pool2d and the serializer writes an
// XNNMaxPooling2d of its values (NHWC, like max_pool2d.default). With
// used indices the argmax-pooling rewrite applies instead (argmax_pool.go).

// valuesOnlyMaxPool reports a max_pool2d_with_indices whose indices are
// unused.
func valuesOnlyMaxPool(n *ir.Node) bool {
	return n.Op == opMaxPoolIdx && len(n.Results) == 2 && n.Results[1].NumUses() == 0
}
