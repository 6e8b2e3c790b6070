// Package interp is fxport's reference interpreter: it runs an ir.Program on
// the CPU, in Go, with torch's eager semantics, so that the meaning of a
// program can be checked before and after a pass (package difftest) and
// against the outputs torch itself produced.
//
// # Values
//
// A run works on Values: *Tensor for tensors, int64 for ints and SymInts,
// float64 for floats and SymFloats, bool for bools and SymBools, string,
// nil for None, []Value for lists and tuples, ir.DType, ir.Layout,
// ir.MemoryFormat, Device, Token for effect tokens and *ir.Graph for regions.
//
// A Tensor has a dtype, a shape, strides and an offset into a shared
// storage, so view ops (view, permute, select, slice, expand, …) alias
// their input and in-place ops write through them. Storage holds float
// dtypes as float64 values rounded to their dtype on every write (float16
// and bfloat16 round through float32, as torch's CPU kernels do), integer
// dtypes and bool as int64 values wrapped to their width on every write,
// and complex dtypes as complex128.
//
// # Running
//
// Run interprets the main graph on the user inputs of the signature;
// parameters, buffers and constants are read from the program's weights
// (lazily, through their WeightSource, honouring strides and storage
// offset). Symbols are bound from the shapes of the inputs and, for
// unbacked symbols, from the results that define them; every result is
// checked against the type its node declares. Higher-order ops (cond,
// while_loop, map_impl, scan, associative_scan, wrappers, with_effects,
// auto_functionalized) run their regions.
//
// Every op of the op table either has a kernel (Supported) or is listed by
// Unsupported; running an unsupported op is an error naming the node and
// the op. In-place and out= variants run their functional twin and write
// the result back. Random ops draw from a generator seeded by
// Options.Seed and mark the outputs that depend on them (Result.Random).
//
// docs/interpreter.md lists the coverage and the semantics choices.
package interp
