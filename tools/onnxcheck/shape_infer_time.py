"""Time onnx.shape_inference.infer_shapes on one ONNX file.

Usage: shape_infer_time.py MODEL
Prints one line: "load_s=<seconds> infer_s=<seconds> nodes=<n> value_info=<n>".
infer_s covers infer_shapes alone (strict mode off, data propagation off,
onnx's defaults), on the proto already loaded. Exit status: 0 ok, 1 shape
inference failed, 2 usage error, 3 the onnx package is not importable.
"""
import sys
import time


def main(argv):
    if len(argv) != 2:
        print("usage: shape_infer_time.py MODEL", file=sys.stderr)
        return 2
    try:
        import onnx
        import onnx.shape_inference
    except ImportError as e:
        print("onnx not importable: %s" % e, file=sys.stderr)
        return 3
    t0 = time.perf_counter()
    model = onnx.load(argv[1])
    t1 = time.perf_counter()
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception as e:
        print("%s: %s: %s" % (argv[1], type(e).__name__, e), file=sys.stderr)
        return 1
    t2 = time.perf_counter()
    print("load_s=%.6f infer_s=%.6f nodes=%d value_info=%d" % (
        t1 - t0, t2 - t1, len(model.graph.node), len(inferred.graph.value_info)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
