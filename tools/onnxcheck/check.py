#!/usr/bin/python3
"""Run onnx.checker.check_model (full check) on ONNX files.

Usage: check.py MODEL [MODEL ...]
Exit status: 0 all valid, 1 a model failed (its error on stderr),
2 usage error, 3 the onnx package is not importable.
Meant for Debian's python3-onnx 1.12 (IR <= 8, opset <= 17).
"""
import sys


def main(argv):
    if len(argv) < 2:
        print("usage: check.py MODEL [MODEL ...]", file=sys.stderr)
        return 2
    try:
        import onnx
        import onnx.checker
    except ImportError as e:
        print("onnx not importable: %s" % e, file=sys.stderr)
        return 3
    failed = 0
    for path in argv[1:]:
        try:
            # A path (not a loaded proto) lets the checker follow external data.
            onnx.checker.check_model(path, full_check=True)
        except Exception as e:  # the checker raises several exception types
            print("%s: %s: %s" % (path, type(e).__name__, e), file=sys.stderr)
            failed += 1
            continue
        print("%s: ok (onnx %s)" % (path, onnx.__version__))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
