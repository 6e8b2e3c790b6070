package ir

// The op table (opgen.go) is generated from gen/ops.spec and the ExecuTorch
// kernel list gen/etkernels.spec; the shape/dtype
// rules it attaches are the infer* functions of infer_*.go. See gen/README.md.
//go:generate go run ../gen/opgen -spec ../gen/ops.spec -kernels ../gen/etkernels.spec -out opgen.go
