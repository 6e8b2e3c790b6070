// Package anchors holds the tests of the anchors scripts: anchors.py (make
// anchors: torch.onnx and exir beside fxport on every corpus program and
// on scaling.py's 10k-node stacks, docs/benchmarks.md) and scaling.py (the genuine torch.export stacks of
// BenchmarkGenuineScaling in cmd/fxport).
package anchors
