"""Print genuine FX text dumps of the project's programs in every form torch offers.

    third_party/venv/bin/python tools/fxdumps/gen.py --out frontends/fxtext/testdata/dumps

For each program (the tools/fxgen/models factories and the small modules
below) and each stage that produces a graph (torch.export, its core-ATen
decomposition, Dynamo's captured graph, make_fx, AOT forward/backward,
ExecuTorch edge / XNNPACK-lowered / memory-planned programs) it writes

    <program>.<stage>.<form>.txt   what torch printed
    <program>.<stage>.json         the main graph's placeholder types and every
                                   node's result type(s) from torch's own shape
                                   propagation (FakeTensorProp on the example
                                   inputs, else the nodes' meta["val"])

Forms: graph (print(gm.graph)), code (gm.code), readable
(gm.print_readable(): annotations and stack traces), readable_plain (no
stack traces), readable_strides (include_stride/include_device), ep
(print(ExportedProgram)). A stage that fails is reported on stderr and
skipped; the run fails only when nothing was written.
"""

import argparse
import importlib.util
import json
import os
import re
import sys
import traceback

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "fxgen", "models")

DTYPES = {
    torch.float32: "f32", torch.float64: "f64", torch.float16: "f16", torch.bfloat16: "bf16",
    torch.int64: "i64", torch.int32: "i32", torch.int16: "i16", torch.int8: "i8", torch.uint8: "u8",
    torch.bool: "b8", torch.complex64: "c64", torch.complex128: "c128",
}


# --- programs of our own ---------------------------------------------------

class Arith(nn.Module):
    def forward(self, x, y):
        z = x * y + 2
        z = z - x / 3
        return torch.sin(z).relu() @ y.t(), (z ** 2).sum(dim=-1, keepdim=True)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return F.log_softmax(self.fc2(F.gelu(self.fc1(x))), dim=-1)


class ConvBN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.pool = nn.AdaptiveAvgPool2d(1)

    def forward(self, x):
        return torch.flatten(self.pool(F.relu(self.bn(self.conv(x)))), 1)


class Cond(nn.Module):
    def forward(self, x, y):
        def t(x, y):
            return x.cos() + y

        def f(x, y):
            return x.sin() - y

        return torch.cond(x.sum() > 0, t, f, (x, y))


class ShapeCond(nn.Module):
    def forward(self, x):
        return torch.cond(x.shape[0] > 4, lambda x: x.cos(), lambda x: x.sin() * 2, (x,))


class WhileLoop(nn.Module):
    def forward(self, i, x):
        def cond_fn(i, x):
            return i < 5

        def body_fn(i, x):
            return i + 1, x * 2 + 1

        return torch._higher_order_ops.while_loop(cond_fn, body_fn, (i, x))


class Map(nn.Module):
    def forward(self, xs, y):
        def body(x, y):
            return x.exp() + y

        return torch._higher_order_ops.map(body, xs, y)


@torch.library.custom_op("fxdump::scale_shift", mutates_args=())
def scale_shift(x: torch.Tensor, scale: float, n: int) -> torch.Tensor:
    return x * scale + n


@scale_shift.register_fake
def _(x, scale, n):
    return torch.empty_like(x)


@torch.library.custom_op("fxdump::split2", mutates_args=())
def split2(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    a, b = x.chunk(2, dim=-1)
    return a.clone(), b.clone()


@split2.register_fake
def _(x):
    a, b = x.chunk(2, dim=-1)
    return torch.empty_like(a), torch.empty_like(b)


@torch.library.custom_op("fxdump::accumulate", mutates_args=("acc",))
def accumulate(acc: torch.Tensor, x: torch.Tensor) -> None:
    acc.add_(x)


class CustomOps(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("acc", torch.zeros(4, 6))

    def forward(self, x):
        a, b = torch.ops.fxdump.split2(x)
        y = torch.ops.fxdump.scale_shift(a, 0.5, 3)
        torch.ops.fxdump.accumulate(self.acc, x)
        return y + b, self.acc.clone()


class Effects(nn.Module):
    def forward(self, x):
        torch.ops.aten._print("effect")
        return x + 1


class BufferMutation(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(1))
        self.register_buffer("running", torch.zeros(3))

    def forward(self, x):
        self.count.add_(1)
        self.running.mul_(0.9).add_(x.mean(0) * 0.1)
        return x - self.running


class Dynamic(nn.Module):
    def forward(self, x, y):
        n = x.shape[0]
        z = x.reshape(n * 2, -1) + 1
        return z[: n // 2], torch.cat([x, y], dim=0).view(-1, 3).sum(0), y.new_zeros(n)


class Constants(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(5, 5))
        self.c = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0])

    def forward(self, x):
        return (x @ self.w + self.c) * torch.tensor(2.0)


class Methods(nn.Module):
    def forward(self, x):
        y = x.view(-1, 4).transpose(0, 1).contiguous()
        y = y.add_(1).clamp(min=0.1)
        s = y.size(1)
        return y.mean(dim=1) * s, x.flatten().unsqueeze(0).expand(2, -1).float()


class NoGrad(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        with torch.no_grad():
            y = self.fc(x)
        return y * 2, x.max(dim=1)


class Indexing(nn.Module):
    def forward(self, x, idx):
        a = x[idx]
        b = x[:, 1:3]
        c = x[..., None]
        return a.sum(), b * 2, c.squeeze(-1).topk(2, dim=1)


def own(cls, *inputs, dynamic=None):
    def factory():
        torch.manual_seed(0)
        return cls(), tuple(inputs)
    factory.dynamic_shapes = dynamic
    factory.__name__ = cls.__name__
    return factory


FXGEN = set()


def programs():
    torch.manual_seed(0)
    out = {
        "arith": own(Arith, torch.randn(3, 4), torch.randn(3, 4)),
        "mlp": own(MLP, torch.randn(2, 8)),
        "convbn": own(ConvBN, torch.randn(2, 3, 8, 8)),
        "cond": own(Cond, torch.randn(3), torch.randn(3)),
        "shape_cond": own(ShapeCond, torch.randn(6, 2), dynamic={0: {0: ("n", 2, 64)}}),
        "while_loop": own(WhileLoop, torch.tensor(0), torch.randn(2, 3)),
        "map": own(Map, torch.randn(4, 3), torch.randn(3)),
        "custom_ops": own(CustomOps, torch.randn(4, 6)),
        "effects": own(Effects, torch.randn(3)),
        "buffer_mutation": own(BufferMutation, torch.randn(2, 3)),
        "dynamic": own(Dynamic, torch.randn(4, 6), torch.randn(2, 6),
                       dynamic={0: {0: ("n", 2, 64)}, 1: {0: ("m", 2, 64)}}),
        "constants": own(Constants, torch.randn(2, 5)),
        "methods": own(Methods, torch.randn(2, 8)),
        "no_grad": own(NoGrad, torch.randn(3, 4)),
        "indexing": own(Indexing, torch.randn(4, 5), torch.tensor([0, 2])),
    }
    for fname, fac in [("bert_block", "bert_block"), ("gpt2_block", "gpt2_block"),
                       ("llama_block", "llama_block"), ("moe_router", "moe_router"),
                       ("selective_scan", "selective_scan"),
                       ("transformer_encoder_layer", "transformer_encoder_layer"),
                       ("whisper_frontend", "whisper_frontend"),
                       ("torchvision_cnns", "resnet18"), ("torchvision_cnns", "mobilenet_v3_small")]:
        spec = importlib.util.spec_from_file_location("fxgen_" + fname, os.path.join(MODELS, fname + ".py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        out[fac] = getattr(mod, fac)
        FXGEN.add(fac)
    return out


# --- public test suites -------------------------------------------------------
#
# --suite prints the programs that public test suites define and that ship
# inside the installed wheels: torch's ExportDB examples
# (torch._export.db.examples), its higher-order-op OpInfo database
# (torch.testing._internal.hop_db) and ExecuTorch's exir test models
# (executorch.exir.tests.{models,control_flow_models,dynamic_shape_models}).
# Their dumps are printed at test time and never committed: the programs are
# not the project's.


def case_factory(name, make, args, kwargs=None, dynamic=None):
    def factory():
        torch.manual_seed(0)
        return make(), tuple(args)
    factory.kwargs = kwargs or None
    factory.torch_dynamic_shapes = dynamic
    factory.__name__ = name
    return factory


class HopCall(nn.Module):
    """One OpInfo sample of a higher-order op as a module."""

    def __init__(self, op, args, kwargs):
        super().__init__()
        self.op, self.args, self.kwargs = op, args, kwargs

    def forward(self, x, *tensors):
        it = iter(tensors)
        args = [next(it) if isinstance(a, torch.Tensor) else a for a in self.args]
        return self.op(x, *args, **self.kwargs)


def suite_programs(which):
    import inspect
    out = {}
    if "exportdb" in which:
        from torch._export.db.case import SupportLevel
        from torch._export.db.examples import all_examples
        for name, case in sorted(all_examples().items()):
            if case.support_level != SupportLevel.SUPPORTED:
                continue
            out["exportdb_" + name] = case_factory(name, (lambda m=case.model: m), case.example_args,
                                                   case.example_kwargs, case.dynamic_shapes)
    if "hop" in which:
        from torch.testing._internal.hop_db import hop_db
        for info in hop_db:
            if "backward" in info.name:
                continue
            name = "hop_" + info.name + ("_" + info.variant_test_name if info.variant_test_name else "")
            try:
                sample = next(iter(info.sample_inputs(torch.device("cpu"), torch.float32)))
            except Exception as e:  # noqa: BLE001 - an OpInfo without a CPU sample is skipped
                print("%s: no sample (%s)" % (name, type(e).__name__), file=sys.stderr)
                continue
            tensors = [a for a in sample.args if isinstance(a, torch.Tensor)]
            out[name] = case_factory(name, (lambda op=info.op, a=sample.args, k=sample.kwargs: HopCall(op, a, k)),
                                     [sample.input] + tensors)
    if "exir" in which:
        import executorch.exir.tests.control_flow_models as cf
        import executorch.exir.tests.dynamic_shape_models as dm
        import executorch.exir.tests.models as em
        for mod in (em, cf, dm):
            for cname, cls in inspect.getmembers(mod, inspect.isclass):
                if cls.__module__ != mod.__name__ or not issubclass(cls, nn.Module):
                    continue
                if not hasattr(cls, "get_random_inputs"):
                    continue
                try:
                    torch.manual_seed(0)
                    inst = cls()
                    args = inst.get_random_inputs()
                except Exception as e:  # noqa: BLE001 - a model that needs constructor arguments is skipped
                    print("exir_%s: cannot build (%s)" % (cname, type(e).__name__), file=sys.stderr)
                    continue
                out["exir_" + cname] = case_factory(cname, (lambda i=inst: i), args)
    return out


# --- types ------------------------------------------------------------------

def expr(d):
    return str(d).replace(" ", "")


def type_of(v):
    if isinstance(v, torch.Tensor):
        dims = ", ".join(str(int(d)) if isinstance(d, int) else str(d) for d in v.shape)
        dev = "" if v.device.type in ("cpu", "meta") else "@" + str(v.device)
        return "%s[%s]%s" % (DTYPES.get(v.dtype, str(v.dtype)), dims, dev)
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, torch.SymInt):
        return "Sym(%s)" % v
    if isinstance(v, torch.SymBool):
        return "SymBool"
    if isinstance(v, torch.SymFloat):
        return "SymFloat"
    if isinstance(v, (list, tuple)):
        return [type_of(x) for x in v]
    if v is None:
        return "none"
    return "opaque<%s>" % type(v).__name__


def sidecar(gm, args, how):
    """Placeholder and node types of gm's main graph from torch's shape propagation."""
    vals = {}
    source = how
    try:
        from torch.fx.passes.fake_tensor_prop import FakeTensorProp
        from torch._subclasses.fake_tensor import FakeTensorMode
        mode = FakeTensorMode(allow_non_fake_inputs=True)
        FakeTensorProp(gm, mode).propagate(*args)
        source = "FakeTensorProp"
        for n in gm.graph.nodes:
            if "val" in n.meta and n.op != "output":
                vals[n.name] = type_of(n.meta["val"])
    except Exception as e:  # noqa: BLE001 - record what torch's meta says instead
        vals = {}
        for n in gm.graph.nodes:
            v = n.meta.get("val", n.meta.get("example_value"))
            if v is not None and n.op != "output":
                vals[n.name] = type_of(v)
        source = "meta (FakeTensorProp failed: %s)" % type(e).__name__
    inputs = {}
    for n in gm.graph.nodes:
        if n.op == "placeholder" and n.name in vals:
            inputs[n.name] = vals[n.name]
            inputs[n.target] = vals[n.name]  # the code forms name the input by target
        if n.op == "get_attr":
            try:
                attr = gm
                for part in n.target.split("."):
                    attr = getattr(attr, part)
                if isinstance(attr, torch.Tensor):
                    inputs[n.name] = type_of(attr)
            except AttributeError:
                pass
    return {"source": source, "inputs": inputs, "nodes": vals}


def ep_args(ep, inputs):
    """The flat arguments of ep.graph_module: lifted params, buffers, constants, then user inputs."""
    state = dict(ep.state_dict)
    state.update(ep.constants)
    flat_user = list(inputs)
    out = []
    ui = 0
    for spec in ep.graph_signature.input_specs:
        kind = spec.kind.name
        if kind == "USER_INPUT":
            out.append(flat_user[ui])
            ui += 1
        elif kind == "TOKEN":
            out.append(torch.tensor([]))
        else:
            out.append(state[spec.target])
    return out


SITE = os.path.dirname(os.path.dirname(torch.__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def portable(text):
    """Drops this machine's directories from stack-trace comments."""
    return text.replace(REPO + os.sep, "").replace(SITE + os.sep, "")


def forms(gm, ep=None):
    f = {}
    f["graph"] = str(gm.graph)
    f["code"] = gm.code
    f["readable"] = gm.print_readable(print_output=False)
    f["readable_strides"] = gm.print_readable(print_output=False, include_stride=True, include_device=True)
    f["readable_plain"] = re.sub(r"(?m)^\s*# (File: .*|No stacktrace found for following nodes)\n", "",
                                 f["readable"])
    if ep is not None:
        f["ep"] = str(ep)
    return {k: portable(v) for k, v in f.items() if v}


# --- stages -----------------------------------------------------------------

def dyn_shapes(factory, inputs):
    if getattr(factory, "torch_dynamic_shapes", None) is not None:
        return factory.torch_dynamic_shapes
    spec = getattr(factory, "dynamic_shapes", None)
    if not spec:
        return None
    dims = {}
    out = []
    for i, _ in enumerate(inputs):
        d = spec.get(i)
        if not d:
            out.append(None)
            continue
        m = {}
        for axis, (name, lo, hi) in d.items():
            if name not in dims:
                dims[name] = torch.export.Dim(name, min=lo, max=hi)
            m[axis] = dims[name]
        out.append(m)
    return tuple(out)


def stages(name, factory, want=frozenset()):
    mod, inputs = factory()
    mod = mod.eval()
    res = {}

    def attempt(stage, fn):
        if want and stage not in want and not (stage == "export" and want & {"core", "module"}):
            return
        try:
            res[stage] = fn()
        except Exception:  # noqa: BLE001 - a stage torch cannot do for this model is skipped
            print("%s.%s: %s" % (name, stage, traceback.format_exc(limit=2).splitlines()[-1]), file=sys.stderr)

    ep_holder = {}

    def export():
        ep = torch.export.export(mod, inputs, kwargs=getattr(factory, "kwargs", None),
                                 dynamic_shapes=dyn_shapes(factory, inputs), strict=False)
        ep_holder["ep"] = ep
        return forms(ep.graph_module, ep), sidecar(ep.graph_module, ep_args(ep, inputs), "export")

    attempt("export", export)
    if "ep" not in ep_holder:
        return res
    ep = ep_holder["ep"]

    def core():
        c = ep.run_decompositions()
        ep_holder["core"] = c
        return forms(c.graph_module, c), sidecar(c.graph_module, ep_args(c, inputs), "core")

    attempt("core", core)

    def unflat():
        m = ep.module()
        return forms(m), sidecar(m, list(inputs), "module")

    attempt("module", unflat)

    def dynamo():
        captured = []

        def backend(gm, example_inputs):
            captured.append(gm)
            return gm.forward

        torch._dynamo.reset()
        fresh, fresh_inputs = factory()
        torch.compile(fresh.eval(), backend=backend, fullgraph=False, dynamic=False)(*fresh_inputs)
        gm = captured[0]
        args = [n.meta["example_value"] for n in gm.graph.nodes if n.op == "placeholder"]
        real = []
        for a in args:
            real.append(torch.zeros(a.shape, dtype=a.dtype) if isinstance(a, torch.Tensor) else a)
        return forms(gm), sidecar(gm, real, "dynamo")

    attempt("dynamo", dynamo)

    def makefx():
        from torch.fx.experimental.proxy_tensor import make_fx
        fresh, fresh_inputs = factory()
        params = dict(fresh.named_parameters())
        buffers = dict(fresh.named_buffers())

        def f(*xs):
            return torch.func.functional_call(fresh.eval(), {**params, **buffers}, xs)

        gm = make_fx(f, tracing_mode="real")(*fresh_inputs)
        return forms(gm), sidecar(gm, list(fresh_inputs), "make_fx")

    attempt("make_fx", makefx)

    def aot():
        from functorch.compile import aot_module, make_boxed_func
        graphs = {}

        def fw(gm, ex):
            graphs["fw"] = (gm, ex)
            return make_boxed_func(gm.forward)

        def bw(gm, ex):
            graphs["bw"] = (gm, ex)
            return make_boxed_func(gm.forward)

        fresh, fresh_inputs = factory()
        fresh.train()
        grads = [x.clone().requires_grad_(x.is_floating_point()) for x in fresh_inputs]
        out = aot_module(fresh, fw_compiler=fw, bw_compiler=bw)(*grads)
        flat = [o for o in torch.utils._pytree.tree_leaves(out) if isinstance(o, torch.Tensor) and o.requires_grad]
        if flat:
            try:
                sum(o.float().sum() for o in flat).backward()
            except RuntimeError:
                pass  # an op without a derivative: the forward graph is still printed
        gm, _ = graphs["fw"]
        res["aot_backward"] = ({k: v for k, v in forms(graphs["bw"][0]).items()}, None) if "bw" in graphs else None
        return forms(gm), {"source": "aot forward graph (no shape propagation recorded)", "inputs": {}, "nodes": {}}

    attempt("aot", aot)
    if res.get("aot_backward") is None:
        res.pop("aot_backward", None)

    def edge():
        from executorch.exir import to_edge
        e = to_edge(torch.export.export(mod, inputs, strict=False))
        ep_holder["edge"] = e
        p = e.exported_program()
        return forms(p.graph_module, p), sidecar(p.graph_module, ep_args(p, inputs), "edge")

    attempt("edge", edge)

    def xnnpack():
        from executorch.exir import to_edge_transform_and_lower
        from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
        e = to_edge_transform_and_lower(torch.export.export(mod, inputs, strict=False),
                                        partitioner=[XnnpackPartitioner()])
        ep_holder["xnn"] = e
        p = e.exported_program()
        return forms(p.graph_module, p), sidecar(p.graph_module, ep_args(p, inputs), "xnnpack")

    attempt("xnnpack", xnnpack)

    def planned():
        et = ep_holder["edge"].to_executorch()
        p = et.exported_program()
        return forms(p.graph_module, p), sidecar(p.graph_module, ep_args(p, inputs), "executorch")

    if "edge" in ep_holder:
        attempt("executorch", planned)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="", help="comma-separated program names")
    ap.add_argument("--suite", default="", help="comma-separated public suites (exportdb,hop,exir) instead of the project's programs")
    ap.add_argument("--stages", default="", help="comma-separated stages to print (default: every stage)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    only = set(filter(None, args.only.split(",")))
    written = 0
    want = set(filter(None, args.stages.split(",")))
    progs = suite_programs(set(args.suite.split(","))) if args.suite else programs()
    for name, factory in progs.items():
        if only and name not in only:
            continue
        try:
            printed = stages(name, factory, want)
        except Exception:  # noqa: BLE001 - a program that cannot even be built is reported
            print("%s: %s" % (name, traceback.format_exc(limit=2).splitlines()[-1]), file=sys.stderr)
            continue
        for stage, (fs, side) in printed.items():
            for form, text in fs.items():
                if name in FXGEN and form in ("readable_plain", "readable_strides"):
                    continue  # the larger models: the four main forms keep the corpus small
                with open(os.path.join(args.out, "%s.%s.%s.txt" % (name, stage, form)), "w") as f:
                    f.write(text if text.endswith("\n") else text + "\n")
                written += 1
            if side is None:
                continue
            with open(os.path.join(args.out, "%s.%s.json" % (name, stage)), "w") as f:
                json.dump(side, f, indent=1, sort_keys=True)
                f.write("\n")
        print("%s: done" % name, file=sys.stderr)
    print("wrote %d dumps (torch %s)" % (written, torch.__version__), file=sys.stderr)
    return 0 if written else 1


if __name__ == "__main__":
    sys.exit(main())
