// Package torchtags holds the generator of gen/torchtags.spec, the ATen
// overloads torch's operator registry tags pointwise. The generator is a
// Python script (torchtags.py, run in the project's environment, make
// venv); gen/opgen reads its output into the op table (ir.PropPointwise).
// The package's test regenerates the file and compares.
package torchtags
