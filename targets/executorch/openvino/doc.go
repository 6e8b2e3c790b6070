// Package openvino lowers a prepared program to ExecuTorch's OpenVINO
// backend (catalog ET-B06: prepare_for_openvino, OpenvinoPartitioner with
// the compile spec device = CPU). Partition (run by the openvino-partition
// pass, before the edge lowering) claims the nodes OpenVINO's PyTorch
// frontend converts (SupportedOps, on static, contiguous tensors of the
// dtypes in SupportedDTypes) and moves each maximal convex group into an
// OpenvinoBackend executorch_call_delegate region; the rest stays on
// portable kernels. Write hands each region, written as a standalone ATen
// .pt2 (extcompile.Region), to an external compile step (default command
// `python3 tools/openvino_compile.py IN.pt2 OUT`: openvino.convert_model,
// Core.compile_model on the CPU, export_model), emits the program with each
// exported compiled model as the processed bytes (a segment) of an
// OpenvinoBackend delegate and checks the compile specs (CheckCompileSpecs)
// before anything is written.
package openvino
