// Package etkernels holds the generator of gen/etkernels.spec, the list of
// kernels ExecuTorch's portable and quantized kernel libraries register,
// with the schema of each and the functional op each out variant computes.
// The generator is a Python script (etkernels.py: it reads executorch's
// kernel yaml files and torch's operator registry from the project's
// environment, make venv); gen/opgen reads its output into the op table.
// The package's test regenerates the file and compares.
package etkernels
