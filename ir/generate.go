package ir

// The op table (opgen.go) is generated from gen/ops.spec and the ExecuTorch
// kernel list gen/etkernels.spec, with torch's operator tags from
// gen/torchtags.spec (PropPointwise); the shape/dtype
// rules it attaches are the infer* functions of infer_*.go. See gen/README.md.
//go:generate go run ../gen/opgen -spec ../gen/ops.spec -kernels ../gen/etkernels.spec -tags ../gen/torchtags.spec -out opgen.go
