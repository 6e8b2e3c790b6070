// Package run executes ExecuTorch programs (.pte) on the CPU, in Go, with
// the memory plan as written: every planned tensor value is a view of its
// (memory_id, offset) window in one byte arena per planned buffer, so a plan
// that lets two live tensors overlap computes wrong numbers, as the real
// runtime would, instead of passing silently.
//
// Kernel calls are mapped back to the IR op table (`aten::add` + `out` →
// aten.add.out) and run through the reference interpreter (interp.RunOp);
// inputs are decoded from the arena before the kernel runs and results are
// encoded into the out tensors' planned memory after it. XNNPACK delegate
// calls walk the delegate's XN01 graph, mapping each node to its ATen
// equivalent (NHWC convolutions and poolings are transposed to NCHW around
// the ATen op, fused output_min_max clamps applied, quantized values
// dequantized for the computation and requantized after it). Constants come
// from the constant segment, the deprecated inline constant buffer, a .ptd
// data file or the program's named data. Dynamic-bound tensors resize within
// their planned upper bound.
package run
