// Package bundle builds the test cases of an ExecuTorch bundled program
// (.bpte) for a program fxport emitted: it reads directories of inputs and
// expected outputs (input_<i>.npy, output_<i>.npy, directly or under io/,
// the layout of tests/corpus/<name>/), converts them to bundled values of
// the types the method declares, and, where a directory holds no expected
// outputs (or only the user outputs of a program whose method also returns
// mutated buffers), computes them with the reference interpreter on the
// unlowered program. pte.EncodeBundled writes the result.
package bundle
