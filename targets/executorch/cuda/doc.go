// Package cuda lowers a prepared program to ExecuTorch's CUDA backend
// (pte-format.md §9): Partition (run by the cuda-partition pass, before the
// edge lowering) moves the program's ATen part into one CudaBackend
// executorch_call_delegate region typed on "cuda:0" with host/device copies
// around it, and LowerCopies turns those copies into et_copy ops;
// RegionProgram writes the region as a standalone ATen program, which Compile
// hands as a .pt2 to an external AOTInductor step (default command
// `python3 tools/aoti_compile.py IN.pt2 OUT.so`); the compiled shared library
// and its weights blob are packaged as named data of a .ptd under the keys
// the CUDA runtime expects, and the .pte holds host→device copies, one
// DelegateCall of "CudaBackend" and device→host copies (Package, Write).
package cuda
