// Package onnxfix holds the ONNX exporter's workarounds: the torch patches
// (ONNX-P*), FX node fixes (ONNX-FX*), capture steps and declined rows of
// the ONNX target, one small file per catalog ID (onnx_fx03_detach_inplace.go
// for ONNX-FX03), each registering itself with one line into pm.Default.
// Their places in the ONNX pipeline are rows of pm/pipelines.go.
//
// It depends on ir, pm and passes/edit only: linking it (with
// passes/dynamo and targets/onnx) links no ExecuTorch package.
package onnxfix
