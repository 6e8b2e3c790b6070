"""fxgen's library: genuine torch.export programs (export, core-ATen
decomposition, save, load-back check), sample I/O as .npy, and a
PyTorchStreamWriter-layout zip writer used by the tests to rewrite archives.
See tools/fxgen/README.md."""
