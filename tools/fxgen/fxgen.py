#!/usr/bin/env python3
"""fxgen: genuine torch.export programs (.pt2) from PyTorch modules.

    third_party/venv/bin/python tools/fxgen/fxgen.py --module FILE.py --factory NAME --out DIR [--exported]

NAME() returns (module, example_inputs_tuple); the factory may carry a
dynamic_shapes attribute ({input_index: {dim: (name, min, max)}}). fxgen runs
torch.export.export, decomposes the program to core ATen with
run_decompositions(), saves it with torch.export.save as DIR/program.pt2
(with --exported, the un-decomposed export too, as DIR/exported.pt2), loads
each archive back with torch.export.load and checks it against eager on the
example inputs. Writes DIR/io/input_<i>.npy, DIR/io/output_<i>.npy (eager
outputs of the original module) and DIR/producer.json (the torch release and
form of each archive). See README.md.
"""

import sys

sys.dont_write_bytecode = True

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

FORMS = {
    "program.pt2": ("core ATen", "torch.export.export(module, inputs, dynamic_shapes=...).run_decompositions()"),
    "exported.pt2": ("export IR", "torch.export.export(module, inputs, dynamic_shapes=...)"),
}


def _versions():
    import numpy
    import torch
    v = {"torch": torch.__version__, "python": platform.python_version(), "numpy": numpy.__version__}
    try:
        import torchvision
        v["torchvision"] = torchvision.__version__
    except ImportError:
        pass
    return v


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--module", required=True, help="model source file defining the factory")
    ap.add_argument("--factory", required=True, help="factory function: NAME() -> (module, inputs)")
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--exported", action="store_true",
                    help="also save the un-decomposed torch.export.export program as exported.pt2")
    ap.add_argument("--summary", help="write a JSON summary of the program to this file")
    args = ap.parse_args(argv)

    import torch
    from fxgenlib import export, factory, npyio
    from fxgenlib.eager import MismatchError, compare, degenerate, eager
    from fxgenlib.summary import summarize

    major_minor = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
    if major_minor < (2, 9):
        print("fxgen: torch %s is too old: fxgen needs torch >= 2.9 (make venv installs it)" % torch.__version__,
              file=sys.stderr)
        return 2
    torch.manual_seed(0)
    torch.set_num_threads(1)
    where = "%s:%s" % (os.path.relpath(os.path.abspath(args.module), REPO), args.factory)
    try:
        module, inputs, dynamic_spec, model_mod = factory.load(args.module, args.factory)
    except factory.FactoryError as e:
        print("fxgen: %s" % e, file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)

    eager_outputs = eager(module, inputs)
    for i, t in enumerate(eager_outputs):
        why = degenerate(t)
        if why:
            print("fxgen: %s: eager output %d is %s: a fixture must be able to catch errors" % (where, i, why),
                  file=sys.stderr)
            return 1
    names = ["program.pt2"] + (["exported.pt2"] if args.exported else [])
    try:
        ep, core = export.export(module, inputs, dynamic_spec)
        programs = {"program.pt2": core, "exported.pt2": ep}
        sizes = {}
        for name in names:
            export.relative_stack_traces(programs[name], REPO)
            # Saved before anything runs: running ep.module() would update
            # mutated buffers (a KV cache) in the state the archive holds.
            sizes[name] = export.save(programs[name], os.path.join(args.out, name))
        for name in names:
            loaded = export.load(os.path.join(args.out, name))
            compare(export.run(loaded, inputs), eager_outputs, "%s loaded with torch.export.load" % name)
    except (export.ExportError, MismatchError) as e:
        print("fxgen: %s: %s" % (where, e), file=sys.stderr)
        return 1
    npyio.write_io(args.out, list(inputs), eager_outputs)

    versions = _versions()
    producer = {"program": os.path.basename(os.path.normpath(args.out)), "model": where, "archives": {}}
    producer.update(versions)
    for name in names:
        s = summarize(os.path.join(args.out, name))
        form, how = FORMS[name]
        producer["archives"][name] = {"form": form, "made_by": how + " + torch.export.save",
                                      "torch_version": s["torch_version"], "schema_version": s["schema_version"],
                                      "nodes": s["nodes"], "ops": s["ops"]}
    with open(os.path.join(args.out, "producer.json.tmp"), "w") as f:
        json.dump(producer, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(os.path.join(args.out, "producer.json.tmp"), os.path.join(args.out, "producer.json"))

    if args.summary:
        doc = (getattr(model_mod, args.factory).__doc__ or "").strip().split("\n")[0]
        summary = {"module": os.path.relpath(os.path.abspath(args.module), REPO), "factory": args.factory,
                   "doc": doc, "size": sizes["program.pt2"],
                   "inputs": [[str(x.dtype).replace("torch.", ""), list(x.shape)] for x in inputs],
                   "outputs": [[str(x.dtype).replace("torch.", ""), list(x.shape)] for x in eager_outputs],
                   "exported": ({"size": sizes["exported.pt2"], **summarize(os.path.join(args.out, "exported.pt2"))}
                                if args.exported else None)}
        summary.update(versions)
        summary.update(summarize(os.path.join(args.out, "program.pt2")))
        with open(args.summary, "w") as f:
            json.dump(summary, f, indent=1, sort_keys=True)
            f.write("\n")
    for name in names:
        print("fxgen: wrote %s (%d bytes, %s, torch %s)" % (os.path.join(args.out, name), sizes[name],
                                                            FORMS[name][0], versions["torch"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
