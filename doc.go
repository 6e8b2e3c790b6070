// Package fxport exports the programs torch.export produces to ONNX,
// ExecuTorch (.pte) and .pt2, for programs that embed the compiler:
//
//	res, err := fxport.Export(ctx, fxport.File("model.pt2"), fxport.ONNX,
//		fxport.Options{Output: "model.onnx"})
//
// Targets are typed values (ONNX, ExecuTorchXNNPACK, …); the workaround
// passes every pipeline runs are linked by this package, so a caller needs
// no blank import. The Result holds the lowered program, the report of what
// ran and fired, and the paths written. The command line (cmd/fxport) is a
// thin layer over Export.
package fxport
