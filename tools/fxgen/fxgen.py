#!/usr/bin/env python3
"""fxgen: real torch.export programs (.pt2) from real PyTorch modules.

    python3 tools/fxgen/fxgen.py --module FILE.py --factory NAME --out DIR

NAME() returns (module, example_inputs_tuple); the factory may carry a
dynamic_shapes attribute ({input_index: {dim: (name, min, max)}}). Writes
DIR/program.pt2, DIR/io/input_<i>.npy (the example inputs) and
DIR/io/output_<i>.npy (eager outputs of the original module).

With torch >= 2.6 the program comes from torch.export.export +
torch.export.save. With older torch (Debian's 1.13) fxgen traces with
make_fx and writes the PT2 archive (torch >= 2.9 layout, schema 8.20)
itself; see README.md.
"""

import sys

sys.dont_write_bytecode = True

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)


def _torch_at_least(torch, major, minor):
    parts = torch.__version__.split("+")[0].split(".")
    try:
        return (int(parts[0]), int(parts[1])) >= (major, minor)
    except (ValueError, IndexError):
        return False


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--module", required=True, help="model source file defining the factory")
    ap.add_argument("--factory", required=True, help="factory function: NAME() -> (module, inputs)")
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--summary", help="write a JSON summary of the program to this file")
    args = ap.parse_args(argv)

    import torch
    from fxgenlib import factory, metadata, npyio
    from fxgenlib.summary import summarize

    torch.manual_seed(0)
    torch.set_num_threads(1)
    try:
        module, inputs, dynamic_spec, model_mod = factory.load(args.module, args.factory)
    except factory.FactoryError as e:
        print("fxgen: %s" % e, file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    out_path = os.path.join(args.out, "program.pt2")

    from fxgenlib.eager import MismatchError, eager
    eager_outputs = eager(module, inputs)
    doc = (getattr(model_mod, args.factory).__doc__ or "").strip().split("\n")[0]
    summary = {"module": os.path.relpath(os.path.abspath(args.module), REPO), "factory": args.factory,
               "torch": torch.__version__, "doc": doc,
               "inputs": [[str(x.dtype).replace("torch.", ""), list(x.shape)] for x in inputs],
               "outputs": [[str(x.dtype).replace("torch.", ""), list(x.shape)] for x in eager_outputs]}
    if _torch_at_least(torch, 2, 6):
        from fxgenlib import export_new
        try:
            _, size = export_new.export(module, inputs, dynamic_spec, out_path, eager_outputs)
        except MismatchError as e:
            print("fxgen: %s:%s: %s" % (args.module, args.factory, e), file=sys.stderr)
            return 1
        except Exception as e:  # noqa: BLE001 - torch.export raises many types; report and fail
            print("fxgen: %s:%s: torch.export failed: %s: %s" % (args.module, args.factory, type(e).__name__, e),
                  file=sys.stderr)
            return 1
        summary["path"] = "torch.export"
    elif _torch_at_least(torch, 1, 13) and not _torch_at_least(torch, 2, 0):
        from fxgenlib import pipeline113, symbols, verify113
        from fxgenlib.schema_json import EncodeError
        from fxgenlib.serialize113 import SerializeError
        from fxgenlib.trace113 import TraceError
        where = "%s:%s" % (args.module, args.factory)
        try:
            dims = symbols.parse_dynamic_shapes(dynamic_spec, inputs)
            frame_filter = metadata.FrameFilter(REPO, [args.module])
            prog, records = pipeline113.build(module, inputs, dims, frame_filter)
            verify113.verify(prog, module, inputs, dims, eager_outputs)
        except (ValueError, TraceError, SerializeError, EncodeError, MismatchError) as e:
            print("fxgen: %s: %s" % (where, e), file=sys.stderr)
            return 1
        size = pipeline113.write(out_path, records)
        summary["path"] = "make_fx"
    else:
        print("fxgen: torch %s is not supported: use torch 1.13 (make_fx path) or >= 2.6 (torch.export)"
              % torch.__version__, file=sys.stderr)
        return 2
    npyio.write_io(args.out, list(inputs), eager_outputs)
    summary["size"] = size
    summary.update(summarize(out_path))
    if args.summary:
        with open(args.summary, "w") as f:
            json.dump(summary, f, indent=1, sort_keys=True)
            f.write("\n")
    print("fxgen: wrote %s (%d bytes)" % (out_path, size))
    return 0


if __name__ == "__main__":
    sys.exit(main())
