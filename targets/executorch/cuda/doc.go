// Package cuda lowers a prepared program to ExecuTorch's CUDA backend
// (pte-format.md §9): Partition (run by the cuda-partition pass, before the
// edge lowering) moves the program's ATen part into CudaBackend
// executorch_call_delegate regions typed on "cuda:0" — several when host
// nodes in the middle of the graph (an item(), a cond) split the device
// work, with device tensors passed from one partition to the next directly
// — with host/device copies around them, and LowerCopies turns those copies
// into et_copy ops. RegionProgram writes each region as a standalone ATen
// program, which Compile hands as a .pt2 to an external AOTInductor step
// (default command `python3 tools/aoti_compile.py IN.pt2 OUT.so`); each
// partition's compiled shared library and weights blob are streamed from
// the step's files into named data of a .ptd under the keys the CUDA
// runtime reads from the delegate's processed bytes, and the .pte holds
// host→device copies, one DelegateCall of "CudaBackend" per partition,
// device→host copies and the host nodes as portable kernels, with host and
// device tensors planned in arenas of their own (Package, Write,
// DeviceArenas).
package cuda
