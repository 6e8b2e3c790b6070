// Package ettest holds what the ExecuTorch target's tests share across
// packages (run, emit, xnnpack): deterministic weights written as IR
// inline hex and deterministic inputs, the quantized test program more
// than one package exports, XNNPACK pipeline text with a partitioner
// exclusion, and the steps of an export (lowering a program with a named
// pipeline, emitting, encoding and decoding the .pte and its .ptd) each in
// one call that fails the test with context. Tests import it; nothing else
// does.
package ettest
