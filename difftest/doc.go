// Package difftest checks that passes keep the meaning of programs: it
// interprets a program (package interp) before and after every pass of a
// pipeline on seeded inputs drawn to match the program's dtypes, shapes and
// symbol ranges, and compares the outputs with tolerances by dtype.
//
// Check reports the first pass after which an output differs, naming the
// pass, the sample and the output. A pass that changes meaning on purpose
// (one of the catalog's documented approximations) declares it with an
// Allowance (Declare, or WithAllowance in tests): the harness then checks
// the declared difference instead of equality and compares later passes
// against the program after it.
//
// Outputs that depend on random ops (interp.Result.Random) are not
// compared. Bisect (used by `fxport bisect`) compares each pass against
// reference outputs (torch's, from .npy files, or the interpreted input
// program), finds the first disagreeing pass, the node where the values
// first diverge, and which installed patch, reverted, restores agreement.
package difftest
