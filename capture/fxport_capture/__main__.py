"""``python -m fxport_capture``: the command line behind ``fxport capture``."""

import argparse
import os
import sys
import traceback


def _parse_dim(text):
    # INPUT.DIM=[NAME:]MIN:MAX
    try:
        left, rng = text.split("=", 1)
        key, dim = left.rsplit(".", 1)
        parts = rng.split(":")
        name = parts.pop(0) if len(parts) == 3 else None
        lo, hi = parts
        return key, int(dim), name, int(lo), int(hi)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected INPUT.DIM=[NAME:]MIN:MAX, e.g. input_ids.1=seq:2:64"
        ) from None


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="fxport capture",
        description="Capture a PyTorch model with torch.export (capture steps applied) into a .pt2 fxport compiles.",
        epilog="examples:\n"
        "  fxport capture --model tools/fxgen/models/gpt2_block.py:gpt2_block -o out/gpt2\n"
        "  fxport capture --hf gpt2 --task causal-lm --dynamic -o out/gpt2\n"
        "  fxport export out/gpt2/program.pt2 --target onnx -o out/gpt2.onnx",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--model", metavar="FILE.py:FACTORY", help="a factory returning (module, example_inputs)")
    src.add_argument("--hf", metavar="ARCH", help="a transformers architecture (model_type), tiny random config")
    ap.add_argument("--task", default="base", help="with --hf: base, causal-lm, masked-lm, seq-cls, image-cls")
    ap.add_argument("--config", action="append", default=[], metavar="KEY=VALUE", help="with --hf: a config field")
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--seq", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dynamic", action="store_true", help="Dim.AUTO on every dim of every input (DYN-S04)")
    ap.add_argument("--dim", action="append", type=_parse_dim, default=[], metavar="INPUT.DIM=[NAME:]MIN:MAX", help="a dynamic dim with a range (and a symbol name)")
    ap.add_argument("--no-decompose", action="store_true", help="save the program as exported, before run_decompositions()")
    ap.add_argument("--ignore-skips", action="store_true", help="capture a model class EXPORT_SKIPS lists (export_skips.json) anyway")
    ap.add_argument("-o", "--out", required=True, metavar="DIR")
    # Read by the fxport command (which removes it before this runs): the
    # export that follows a successful capture.
    ap.add_argument("--target", metavar="T", help="then export DIR/program.pt2 to T (one of fxport export's targets, a comma list, or all) into DIR/model.EXT (DIR/model.TARGET.EXT where two targets share an extension)")
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    ap.add_argument("--traceback", action="store_true", help="on failure, print Python's traceback too")
    args = ap.parse_args(argv)

    from .errors import CaptureError

    if args.model and ":" in args.model:
        where = args.model.rsplit(":", 1)[0]
        if where.endswith(".py") and not os.path.isfile(where):
            print(f"fxport capture: --model: no such file {where!r}", file=sys.stderr)
            return 1
    try:
        import logging

        try:
            import torch  # noqa: F401
        except ImportError:
            raise CaptureError(
                f"this Python ({sys.executable}) has no torch: set FXPORT_PYTHON to one that has, "
                f"or run `make venv` in the fxport checkout"
            ) from None

        # transformers' imports register enums with torch's pytree and torch
        # logs a deprecation line for each: noise, not news, for a capture.
        logging.getLogger("torch.utils._pytree").setLevel(logging.ERROR)

        from . import models
        from .driver import capture

        factory_dynamic = None
        if args.model:
            model, inputs, factory_dynamic, name = models.load_factory(args.model)
        else:
            model, inputs, name = models.load_transformers(args.hf, args.task, args.config, args.batch, args.seq, args.seed)
        res = capture(
            model,
            inputs,
            args.out,
            name=name,
            auto_dynamic=args.dynamic,
            dims=args.dim,
            factory_dynamic=factory_dynamic,
            decompose=not args.no_decompose,
            ignore_skips=args.ignore_skips,
        )
    except CaptureError as e:
        if args.traceback:
            traceback.print_exc()
        print(f"fxport capture: {e}", file=sys.stderr)
        return 1
    except Exception as e:
        if args.traceback:
            traceback.print_exc()
        first = (str(e).strip().splitlines() or [""])[0]
        print(f"fxport capture: {type(e).__name__}: {first} (--traceback for details)", file=sys.stderr)
        return 1
    if args.json:
        import json

        print(json.dumps(res, indent=1, sort_keys=True))
        return 0
    print(f"captured {res['model']}")
    print(f"  -> {res['program']} ({res['nodes']} ops, torch {res['torch']}, export {res['export_seconds']} s)")
    print("capture steps:")
    for s in res["capture_steps"]:
        mark = "fired" if s["fired"] else "-"
        where = f" [{', '.join(s['modules'])}]" if s["modules"] else ""
        print(f"  {s['id']:<8} {s['name']:<24} {mark:<6} {s['detail']}{where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
