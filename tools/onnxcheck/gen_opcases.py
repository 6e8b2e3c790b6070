"""Write the ONNX target's one-op conformance programs with genuine torch.export.

Usage: gen_opcases.py OUTDIR [NAME ...]

Each case is a tiny module applying one ATen op (several shapes, dtypes and
edge cases as several inputs/outputs). It is captured with torch.export,
decomposed with torch's default (core ATen) table minus the ops the case is
about, so those stay in the graph, and saved as OUTDIR/<case>/program.pt2 with
the inputs and torch eager's outputs as io/input_<i>.npy / io/output_<i>.npy,
and the ATen ops of the saved graph in ops.txt. A case whose kept op does not
reach the graph is an error: every case really holds the op it is named for.
Run with the project's venv (third_party/venv/bin/python); the Go test
TestOpCasesGenuine (targets/onnx) exports each program at every offered opset
and judges it with onnx.checker and ONNX Runtime against these outputs.
"""
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

aten = torch.ops.aten
CASES = []


RANDOM = {}


def case(name, keep, *inputs, random=None):
    """Register fn(*inputs) -> tuple as case name, keeping the ops in keep.
    random maps output indices drawn by random ops to their bounds (None:
    any finite value); they are judged by shape, dtype and range only."""
    def deco(fn):
        CASES.append((name, keep, fn, inputs))
        if random:
            RANDOM[name] = random
        return fn
    return deco


def seeded(*shape, dtype=torch.float32, lo=-2.0, hi=2.0, seed=0):
    g = torch.Generator().manual_seed(seed + 7 * len(CASES))
    return (torch.rand(*shape, generator=g) * (hi - lo) + lo).to(dtype)


def ints(*shape, lo=-5, hi=6, seed=0):
    g = torch.Generator().manual_seed(seed + 11 * len(CASES))
    return torch.randint(lo, hi, shape, generator=g, dtype=torch.int64)


# --- padding -----------------------------------------------------------------
@case("constant_pad_nd", ["aten.constant_pad_nd.default"], seeded(2, 3, 4, 5), ints(3, 4))
def _(x, i):
    return (F.pad(x, (1, 2, 0, 1), value=0.5), F.pad(x, (-1, 1, 2, -1)), F.pad(x, (1, 1, 1, 1, 1, 0), value=-3.0),
            F.pad(i, (2, 0), value=7))


@case("reflection_pad", ["aten.reflection_pad1d.default", "aten.reflection_pad2d.default", "aten.reflection_pad3d.default"],
      seeded(2, 3, 6), seeded(1, 2, 5, 6), seeded(1, 2, 3, 4, 5))
def _(a, b, c):
    return (F.pad(a, (2, 3), mode="reflect"), F.pad(b, (1, 2, 3, 0), mode="reflect"), F.pad(c, (1, 1, 2, 0, 1, 2), mode="reflect"))


@case("replication_pad", ["aten.replication_pad1d.default", "aten.replication_pad2d.default", "aten.replication_pad3d.default"],
      seeded(2, 3, 6), seeded(1, 2, 5, 6), seeded(1, 2, 3, 4, 5))
def _(a, b, c):
    return (F.pad(a, (2, 3), mode="replicate"), F.pad(b, (1, 2, 3, 0), mode="replicate"), F.pad(c, (1, 1, 2, 0, 1, 2), mode="replicate"))


@case("circular_pad", ["aten._pad_circular.default", "aten.pad.default"], seeded(1, 2, 5, 6))
def _(b):
    return (F.pad(b, (1, 2, 3, 0), mode="circular"),)


# --- resampling --------------------------------------------------------------
def interp_all(x, mode, corners):
    outs = []
    for ac in corners:
        kw = {} if ac is None else {"align_corners": ac}
        outs += [F.interpolate(x, scale_factor=2, mode=mode, **kw), F.interpolate(x, size=(7, 9), mode=mode, **kw),
                 F.interpolate(x, scale_factor=1.5, mode=mode, **kw), F.interpolate(x, size=(3, 2), mode=mode, **kw)]
    return tuple(outs)


@case("upsample_bilinear2d", ["aten.upsample_bilinear2d.vec", "aten.upsample_bilinear2d.default"], seeded(2, 3, 5, 4))
def _(x):
    return interp_all(x, "bilinear", [False, True])


@case("upsample_bicubic2d", ["aten.upsample_bicubic2d.vec", "aten.upsample_bicubic2d.default"], seeded(2, 3, 5, 4))
def _(x):
    return interp_all(x, "bicubic", [False, True])


@case("upsample_nearest2d", ["aten.upsample_nearest2d.vec", "aten.upsample_nearest2d.default"], seeded(2, 3, 5, 4))
def _(x):
    return interp_all(x, "nearest", [None])


@case("upsample_nearest_exact2d", ["aten._upsample_nearest_exact2d.vec", "aten._upsample_nearest_exact2d.default"], seeded(2, 3, 5, 4))
def _(x):
    return interp_all(x, "nearest-exact", [None])


@case("upsample_1d_3d", ["aten.upsample_linear1d.vec", "aten.upsample_nearest1d.vec", "aten.upsample_trilinear3d.vec",
                         "aten.upsample_nearest3d.vec", "aten.upsample_linear1d.default", "aten.upsample_nearest1d.default",
                         "aten.upsample_trilinear3d.default", "aten.upsample_nearest3d.default"],
      seeded(2, 3, 5), seeded(1, 2, 3, 4, 5))
def _(a, c):
    return (F.interpolate(a, scale_factor=2, mode="linear"), F.interpolate(a, size=8, mode="linear", align_corners=True),
            F.interpolate(a, scale_factor=1.5, mode="nearest"), F.interpolate(c, scale_factor=2, mode="trilinear"),
            F.interpolate(c, size=(4, 3, 7), mode="trilinear", align_corners=True), F.interpolate(c, size=(5, 6, 3), mode="nearest"))


@case("grid_sampler_2d", ["aten.grid_sampler_2d.default"], seeded(2, 3, 5, 6), seeded(2, 4, 7, 2, lo=-1.2, hi=1.2))
def _(x, g):
    outs = []
    for mode in ("bilinear", "nearest", "bicubic"):
        for pad in ("zeros", "border", "reflection"):
            for ac in (False, True):
                outs.append(F.grid_sample(x, g, mode=mode, padding_mode=pad, align_corners=ac))
    return tuple(outs)


# --- reductions --------------------------------------------------------------
@case("max_min_dim", ["aten.max.dim", "aten.min.dim"], seeded(3, 4, 5), ints(4, 6))
def _(x, i):
    a, ai = torch.max(x, 1)
    b, bi = torch.max(x, -1, keepdim=True)
    c, ci = torch.min(x, 0)
    d, di = torch.min(i, 1, keepdim=True)
    e, ei = torch.max(i, 0)
    return (a, ai, b, bi, c, ci, d, di, e, ei)


@case("var_std", ["aten.var.correction", "aten.var.dim", "aten.var_mean.correction", "aten.std.correction"], seeded(3, 4, 5))
def _(x):
    vm = torch.var_mean(x, dim=(0, 2), correction=0)
    return (torch.var(x, dim=1), torch.var(x, dim=(0, 2), keepdim=True, correction=0), torch.var(x),
            torch.var(x, dim=-1, correction=2), torch.std(x, dim=1, keepdim=True), vm[0], vm[1])


@case("prod", ["aten.prod.default", "aten.prod.dim_int"], seeded(3, 4, lo=0.5, hi=1.5), ints(3, 4, lo=-3, hi=4))
def _(x, i):
    return (torch.prod(x), torch.prod(x, 1), torch.prod(x, 0, keepdim=True), torch.prod(i, 1), torch.prod(i))


@case("any_all", ["aten.any.default", "aten.any.dim", "aten.any.dims", "aten.all.default", "aten.all.dim", "aten.all.dims"],
      seeded(3, 4, 5) > 1.2, ints(3, 4, lo=0, hi=2))
def _(m, i):
    return (torch.any(m), torch.any(m, 1), torch.any(m, dim=(0, 2), keepdim=True), torch.any(i, 0), torch.all(m),
            torch.all(i, 1), torch.all(m, dim=(1, 2)))


# --- elementwise -------------------------------------------------------------
@case("elementwise_math", ["aten.atan2.default", "aten.log10.default", "aten.isinf.default", "aten.div.Scalar_mode"],
      torch.tensor([[1.0, -1.0, 0.0, 0.0, -2.0, 3.0], [0.5, -0.5, 2.0, -3.0, 0.0, 1e-3]]),
      torch.tensor([[1.0, 1.0, 1.0, -1.0, -2.0, 0.0], [-0.5, -0.5, 0.0, 4.0, 0.0, -1e-3]]),
      torch.tensor([1.0, float("inf"), -float("inf"), float("nan"), 0.0]), ints(7))
def _(y, x, s, i):
    return (torch.atan2(y, x), torch.log10(x.abs() + 0.5), torch.isinf(s), torch.div(i, 2, rounding_mode="floor"),
            torch.div(x, 0.3, rounding_mode="trunc"))


@case("bitwise", ["aten.bitwise_and.Scalar", "aten.bitwise_or.Scalar", "aten.bitwise_xor.Tensor", "aten.bitwise_xor.Scalar"],
      ints(3, 4, lo=0, hi=64), ints(3, 4, lo=0, hi=64), seeded(3, 4) > 0, seeded(3, 4) > 0.5)
def _(a, b, p, q):
    return (a & 5, a | 9, a ^ b, a ^ 3, p ^ q)


@case("elementwise_extra", ["aten.exp2.default", "aten.square.default", "aten.frac.default", "aten.sgn.default",
                            "aten.relu6.default", "aten.isfinite.default", "aten.hypot.default", "aten.max.other",
                            "aten.min.other", "aten.clamp_min.default", "aten.clamp_max.default"],
      seeded(3, 4, lo=-8, hi=8), seeded(3, 4), torch.tensor([1.0, float("inf"), float("nan"), -2.0]))
def _(x, y, s):
    return (torch.exp2(y), torch.square(x), torch.frac(x), torch.sgn(x), F.relu6(x), torch.isfinite(s),
            torch.hypot(x, y), torch.max(x, y), torch.min(x, y), torch.clamp_min(x, -1.5), torch.clamp_max(x, 2.5))


@case("reduce_extra", ["aten.max.default", "aten.min.default", "aten.logsumexp.default", "aten.std.dim", "aten.var.default",
                       "aten.std.default", "aten.mv.default", "aten.dot.default"],
      seeded(3, 4, 5), ints(4, 3), seeded(5), seeded(4, 5))
def _(x, i, v, m):
    return (torch.max(x), torch.min(i), torch.logsumexp(x, dim=(0, 2), keepdim=True), torch.std(x, 1, unbiased=False),
            torch.var(x, unbiased=True), torch.std(x), torch.mv(m, v), torch.dot(v, v))


# --- shape and indexing ------------------------------------------------------
@case("index_multi", ["aten.index.Tensor"], seeded(4, 5, 6), torch.tensor([0, 3, -1]), torch.tensor([[1], [4], [-2]]), torch.tensor([2, 0, 5]))
def _(x, i, j, k):
    return (x[i, :, k], x[:, j, k], x[i, j], x[i, j % 4], x[:, :, k][:, i], x[i, j, k])


@case("repeat", ["aten.repeat.default"], seeded(2, 3), ints(3))
def _(x, i):
    return (x.repeat(2, 1), x.repeat(2, 2, 3), i.repeat(1, 2))


@case("unbind", ["aten.unbind.int"], seeded(3, 4, 2))
def _(x):
    a = torch.unbind(x, 1)
    b = torch.unbind(x, -1)
    return tuple(a) + tuple(b)


@case("diagonal", ["aten.diagonal.default"], seeded(3, 4, 5))
def _(x):
    return (torch.diagonal(x, 0, 1, 2).contiguous(), torch.diagonal(x, 1, 0, 2).contiguous(),
            torch.diagonal(x, -2, -1, -2).contiguous())


@case("scatter_family", ["aten.select_scatter.default", "aten.slice_scatter.default", "aten.scatter_add.default"],
      seeded(4, 6), seeded(6), seeded(4, 2), ints(3, 6, lo=0, hi=4), seeded(3, 6))
def _(x, row, cols, idx, src):
    return (torch.select_scatter(x, row, 0, 2), torch.select_scatter(x, row[:4], 1, -1),
            torch.slice_scatter(x, cols, 1, 1, 3), torch.slice_scatter(x, cols, 1, 0, 4, 2),
            torch.scatter_add(x, 0, idx, src))


@case("scatter_reduce", ["aten.scatter_reduce.two"], seeded(4, 6, lo=0.5, hi=2), ints(3, 6, lo=0, hi=4), seeded(3, 6, lo=0.5, hi=2))
def _(x, idx, src):
    outs = []
    for red in ("sum", "prod", "mean", "amax", "amin"):
        for inc in (True, False):
            outs.append(torch.scatter_reduce(x, 0, idx, src, red, include_self=inc))
    return tuple(outs)


@case("nonzero", ["aten.nonzero.default"], torch.tensor([[0.0, 1.0, 0.0], [2.0, 0.0, -1.0]]))
def _(x):
    return (torch.nonzero(x),)


# --- linear algebra ----------------------------------------------------------
@case("baddbmm", ["aten.baddbmm.default"], seeded(2, 3, 5), seeded(2, 3, 4), seeded(2, 4, 5), seeded(5))
def _(c, a, b, bias):
    return (torch.baddbmm(c, a, b), torch.baddbmm(c, a, b, beta=0.5, alpha=2.0), torch.baddbmm(bias, a, b, beta=0.0))


@case("cdist_pdist", ["aten._cdist_forward.default", "aten._pdist_forward.default"], seeded(2, 5, 3), seeded(2, 4, 3), seeded(6, 3))
def _(a, b, p):
    return (torch.cdist(a, b), torch.cdist(a, b, p=1.0), torch.cdist(a, b, p=float("inf")), F.pdist(p), F.pdist(p, p=3.0))


# --- neural-network ops ------------------------------------------------------
@case("group_norm", ["aten.native_group_norm.default"], seeded(2, 6, 4, 4), seeded(6), seeded(6), seeded(3, 4, 5))
def _(x, w, b, y):
    o, mean, rstd = aten.native_group_norm(x, w, b, 2, 6, 16, 3, 1e-5)
    o2, m2, r2 = aten.native_group_norm(y, None, None, 3, 4, 5, 2, 1e-3)
    return (o, mean, rstd, o2, m2, r2)


@case("batch_norm_training", ["aten._native_batch_norm_legit.no_stats", "aten._native_batch_norm_legit_functional.default",
                              "aten._native_batch_norm_legit.default"],
      seeded(4, 3, 5, 5), seeded(3), seeded(3), seeded(4, 3, 7))
def _(x, w, b, y):
    o, m, r = aten._native_batch_norm_legit.no_stats(x, w, b, True, 0.1, 1e-5)
    rm, rv = torch.zeros(3), torch.ones(3)
    o2, m2, r2 = aten._native_batch_norm_legit(y, None, None, rm, rv, True, 0.1, 1e-3)
    return (o, m, r, o2, m2, r2, rm, rv)


@case("pool_1d_3d", ["aten.avg_pool1d.default", "aten.avg_pool3d.default", "aten.max_pool3d_with_indices.default",
                     "aten.max_pool1d.default", "aten.max_pool1d_with_indices.default"],
      seeded(2, 3, 9), seeded(1, 2, 6, 7, 5))
def _(a, c):
    mv, mi = F.max_pool3d(c, 2, stride=2, return_indices=True)
    mv2, mi2 = F.max_pool3d(c, 3, stride=2, padding=1, ceil_mode=True, return_indices=True)
    return (F.avg_pool1d(a, 3, stride=2), F.avg_pool1d(a, 4, stride=2, padding=2, ceil_mode=True, count_include_pad=False),
            F.avg_pool3d(c, 2), F.avg_pool3d(c, 3, stride=2, padding=1, count_include_pad=True),
            F.avg_pool3d(c, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
            F.avg_pool3d(c, 2, divisor_override=3), mv, mi, mv2, mi2, F.max_pool1d(a, 3, stride=2, padding=1))


@case("pool_2d_edges", ["aten.avg_pool2d.default", "aten.max_pool2d_with_indices.default"], seeded(2, 3, 9, 8))
def _(x):
    mv, mi = F.max_pool2d(x, 3, stride=2, padding=1, return_indices=True)
    mv2, mi2 = F.max_pool2d(x, 2, stride=2, ceil_mode=True, dilation=1, return_indices=True)
    return (F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=True),
            F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
            F.avg_pool2d(x, 2, divisor_override=5), mv, mi, mv2, mi2)


@case("adaptive_pool_uneven", ["aten._adaptive_avg_pool2d.default", "aten.adaptive_avg_pool1d.default",
                               "aten._adaptive_avg_pool3d.default", "aten.adaptive_avg_pool2d.default"],
      seeded(2, 3, 5, 7), seeded(2, 3, 10), seeded(1, 2, 5, 4, 6))
def _(x, a, c):
    return (F.adaptive_avg_pool2d(x, (3, 4)), F.adaptive_avg_pool2d(x, (2, 7)), F.adaptive_avg_pool1d(a, 4),
            F.adaptive_avg_pool3d(c, (2, 3, 4)), F.adaptive_avg_pool2d(x, 1))


@case("col2im", ["aten.col2im.default"], seeded(2, 12, 12), seeded(1, 8, 32))
def _(x, y):
    return (F.fold(x, (4, 5), (2, 2)), F.fold(y, (6, 7), (2, 2), dilation=1, padding=1, stride=(2, 1)))


@case("embedding_bag", ["aten._embedding_bag.default", "aten._embedding_bag_forward_only.default"],
      seeded(10, 4), torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]), torch.tensor([0, 2, 2, 5]), seeded(8, lo=0.1, hi=1.0))
def _(w, idx, off, psw):
    return (F.embedding_bag(idx, w, off, mode="sum"), F.embedding_bag(idx, w, off, mode="mean"),
            F.embedding_bag(idx, w, off, mode="max"), F.embedding_bag(idx, w, off, mode="sum", per_sample_weights=psw),
            F.embedding_bag(idx, w, torch.tensor([0, 2, 5, 8]), mode="mean", include_last_offset=True),
            F.embedding_bag(idx, w, off, mode="mean", padding_idx=4))


@case("direct_overloads", ["aten.upsample_bilinear2d.default", "aten.upsample_nearest2d.default", "aten.fill.Tensor",
                           "aten.diagonal_copy.default", "aten.unbind_copy.int", "aten.div.Scalar_mode", "aten.std.default",
                           "aten.max_pool3d.default", "aten._native_batch_norm_legit.default", "aten._embedding_bag.default"],
      seeded(2, 3, 5, 4), seeded(3, 4, 5), ints(6), seeded(1, 2, 4, 4, 4), seeded(10, 4),
      torch.tensor([1, 2, 4, 5, 4, 3]), torch.tensor([0, 2, 2]))
def _(x, y, i, c, w, idx, off):
    u = aten.unbind_copy.int(y, 1)
    bn = aten._native_batch_norm_legit.default(x, None, None, torch.zeros(3), torch.ones(3), False, 0.1, 1e-5)
    return (aten.upsample_bilinear2d.default(x, [7, 9], True), aten.upsample_bilinear2d.default(x, [10, 8], False, 2.0, 2.0),
            aten.upsample_nearest2d.default(x, [7, 9]), aten.fill.Tensor(y, torch.tensor(2.5)),
            aten.diagonal_copy.default(y, 1, 1, 2), u[0], u[3], aten.div.Scalar_mode(i, 4, rounding_mode="floor"),
            aten.std.default(y), aten.max_pool3d.default(c, [2, 2, 2], [2, 2, 2]), bn[0],
            aten._embedding_bag.default(w, idx, off, False, 1)[0])


@case("random", ["aten.rand.default", "aten.randn.default", "aten.rand_like.default", "aten.randn_like.default",
                 "aten.bernoulli.default", "aten.bernoulli.p", "aten.native_dropout.default"],
      seeded(3, 4, lo=0, hi=1), seeded(64, 32),
      random={0: [0, 1], 1: None, 2: [0, 1], 3: None, 4: [0, 1], 5: [0, 1], 6: None, 7: [0, 1]})
def _(p, x):
    d, m = aten.native_dropout(x, 0.25, True)
    e, em = aten.native_dropout(x, 0.25, False)
    return (torch.rand(2, 5), torch.randn(3, 2), torch.rand_like(p), torch.randn_like(p), torch.bernoulli(p),
            aten.bernoulli.p(p, 0.3), d, m, e, em)


@case("direct_overloads_1d_3d", ["aten.upsample_bicubic2d.default", "aten._upsample_nearest_exact2d.default",
                                 "aten.upsample_linear1d.default", "aten.upsample_nearest1d.default",
                                 "aten.upsample_trilinear3d.default", "aten.upsample_nearest3d.default",
                                 "aten.max_pool1d_with_indices.default"],
      seeded(2, 3, 5, 4), seeded(2, 3, 7), seeded(1, 2, 3, 4, 5))
def _(x, a, c):
    mv, mi = aten.max_pool1d_with_indices(a, [3], [2], [1])
    return (aten.upsample_bicubic2d.default(x, [7, 9], False), aten.upsample_bicubic2d.default(x, [8, 6], True),
            aten._upsample_nearest_exact2d.default(x, [7, 9]), aten.upsample_linear1d.default(a, [11], False),
            aten.upsample_linear1d.default(a, [14], True, 2.0), aten.upsample_nearest1d.default(a, [12]),
            aten.upsample_trilinear3d.default(c, [4, 6, 9], False), aten.upsample_nearest3d.default(c, [5, 7, 8]), mv, mi)


def op_name(t):
    ns, rest = t.name().split("::")
    if "." not in rest:
        rest += ".default"
    return ns + "." + rest


class Wrap(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


def resolve(name):
    ns, op, overload = name.split(".")
    packet = getattr(getattr(torch.ops, ns), op, None)
    return getattr(packet, overload, None) if packet is not None else None


def save_npy(path, t):
    np.save(path, t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t))


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    outdir, only = argv[1], set(argv[2:])
    failed = 0
    for name, keep, fn, inputs in CASES:
        if only and name not in only:
            continue
        torch.manual_seed(0)
        table = torch.export.default_decompositions()
        for k in keep:
            op = resolve(k)
            if op is not None:
                table.pop(op, None)
        try:
            ep = torch.export.export(Wrap(fn), tuple(inputs))
            ep = ep.run_decompositions(table)
        except Exception as e:
            print("FAIL %s: torch.export: %s" % (name, e), file=sys.stderr)
            failed += 1
            continue
        ops = sorted({op_name(n.target) for n in ep.graph.nodes if n.op == "call_function" and hasattr(n.target, "name")})
        held = [k for k in keep if k in ops]
        if not held:
            print("FAIL %s: none of %s reached the graph (ops: %s)" % (name, keep, ops), file=sys.stderr)
            failed += 1
            continue
        with torch.no_grad():
            outs = fn(*inputs)
        d = os.path.join(outdir, name)
        os.makedirs(os.path.join(d, "io"), exist_ok=True)
        torch.export.save(ep, os.path.join(d, "program.pt2"))
        for i, x in enumerate(inputs):
            save_npy(os.path.join(d, "io", "input_%d.npy" % i), x)
        for i, y in enumerate(outs):
            save_npy(os.path.join(d, "io", "output_%d.npy" % i), y)
        if name in RANDOM:
            with open(os.path.join(d, "random.json"), "w") as f:
                json.dump({str(k): v for k, v in sorted(RANDOM[name].items())}, f, sort_keys=True)
                f.write("\n")
        with open(os.path.join(d, "ops.txt"), "w") as f:
            f.write("# ATen ops of program.pt2 (torch %s); kept from decomposition: %s\n" % (torch.__version__.split("+")[0], " ".join(held)))
            f.write("\n".join(ops) + "\n")
        print("ok %s: %s" % (name, " ".join(held)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
