// Package cuda lowers a prepared program to ExecuTorch's CUDA backend
// (pte-format.md §9): the whole graph becomes one CUDA partition whose
// tensors are typed on "cuda:0" (DeviceProgram); the partition is written as
// a .pt2 and compiled by an external AOTInductor step (Compile, default
// command `python3 tools/aoti_compile.py IN.pt2 OUT.so`); the compiled shared
// library and its weights blob are packaged as named data of a .ptd under
// the keys the CUDA runtime expects, and the .pte holds host→device copies,
// one DelegateCall of "CudaBackend" and device→host copies (Package, Write).
package cuda
