// Package xnnpack partitions lowered ExecuTorch programs for the XNNPACK
// delegate and serializes each partition as the delegate's payload.
//
// Partition (partition.go) claims maximal convex groups of nodes that the
// XNNPACK support rules accept (support.go: ops, dtypes, ranks and per-op
// constraints, grouped by exir's partitioner config names so that
// partition_exclude can drop a config, ET-B02) and replaces each group by one
// higher_order.executorch_call_delegate node whose region holds the claimed
// nodes. The rest of the pipeline treats that node as one op whose operands
// and results are planned tensors.
//
// Serialize (serialize.go) turns one such node into the XH00-wrapped XN01
// graph the XNNPACK runtime loads: values with datatype, dims, external ids in
// DelegateCall argument order and flags; NCHW ops lowered in NHWC between
// static transposes; clamps fused into the producer's output_min/max; constant
// weights (pre-permuted like exir's) as named data keyed by their sha256.
package xnnpack
