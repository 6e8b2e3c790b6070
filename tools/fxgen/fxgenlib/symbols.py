"""Symbolic sizes for torch 1.13 tracing: which dims are dynamic, and their names.

make_fx(tracing_mode="symbolic") in torch 1.13 makes every size of every
non-Parameter input symbolic and shares symbols between equal sizes ("duck
shaping"). torch.export instead makes only the requested dims dynamic.
PolicyShapeEnv reproduces that: it returns plain ints for every static size,
creates a symbol s<k> only for the requested (input, dim) pairs, and gives
each tensor contiguous strides expressed in its (possibly symbolic) sizes.
"""

import re

import sympy
import torch
from torch.fx.experimental.symbolic_shapes import PySymInt, ShapeEnv

_NAME = re.compile(r"^t(\d+)\.(size|stride|storage_offset)\((\d*)\)$")


class DynamicDim:
    """One dynamic dimension of a user input: torch.export's Dim."""

    def __init__(self, input_index, dim, name, min_val, max_val):
        self.input_index = input_index
        self.dim = dim
        self.name = name
        self.min_val = min_val
        self.max_val = max_val
        self.symbol = None  # "s0", "s1", ... assigned in input order

    def __repr__(self):
        return "DynamicDim(input=%d, dim=%d, %s in [%s, %s])" % (
            self.input_index, self.dim, self.name, self.min_val, self.max_val)


def parse_dynamic_shapes(spec, example_inputs):
    """Normalise a factory's dynamic_shapes into a list of DynamicDim.

    spec: {input_index: {dim: (name, min, max)}}; dims sharing a name share
    one symbol. Symbols are numbered s0, s1, ... in (input, dim) order.
    """
    dims = []
    if not spec:
        return dims
    for idx in sorted(spec):
        if not isinstance(idx, int) or idx < 0 or idx >= len(example_inputs):
            raise ValueError("dynamic_shapes: input index %r out of range (have %d inputs)"
                             % (idx, len(example_inputs)))
        t = example_inputs[idx]
        for dim in sorted(spec[idx]):
            name, lo, hi = spec[idx][dim]
            if dim < 0 or dim >= t.dim():
                raise ValueError("dynamic_shapes: input %d has no dim %d" % (idx, dim))
            size = t.shape[dim]
            if size < 2:
                raise ValueError("dynamic_shapes: input %d dim %d has example size %d; "
                                 "dynamic dims need an example size >= 2" % (idx, dim, size))
            if lo is not None and size < lo or hi is not None and size > hi:
                raise ValueError("dynamic_shapes: input %d dim %d example size %d outside [%s, %s]"
                                 % (idx, dim, size, lo, hi))
            dims.append(DynamicDim(idx, dim, name, lo, hi))
    by_name = {}
    for d in dims:
        if d.name not in by_name:
            by_name[d.name] = "s%d" % len(by_name)
        d.symbol = by_name[d.name]
    return dims


class PolicyShapeEnv(ShapeEnv):
    """A ShapeEnv that makes only the policy's (tensor index, dim) pairs symbolic.

    policy: {(tensor_arg_index, dim): symbol name}. Set as a class attribute
    before make_fx runs (make_fx constructs the env itself).
    """

    policy = {}

    def __init__(self):
        super().__init__()
        self._sizes = {}
        self._symbols = {}

    def _wrap(self, expr):
        return torch.SymIntNode.new_symint(PySymInt(expr, self))

    def create_symint(self, name, val):
        m = _NAME.match(name)
        if m is None:
            raise RuntimeError("unexpected symbolic size name %r" % name)
        k, kind, i = int(m.group(1)), m.group(2), m.group(3)
        if kind == "size":
            sym = self.policy.get((k, int(i)))
            if sym is None:
                self._sizes.setdefault(k, []).append(sympy.Integer(val))
                return val
            expr = self._symbols.get(sym)
            if expr is None:
                expr = sympy.Symbol(sym, integer=True, positive=True)
                self._symbols[sym] = expr
                self.var_to_val[expr] = sympy.Integer(val)
            elif self.var_to_val[expr] != val:
                raise RuntimeError("dynamic dim %s has example sizes %s and %d"
                                   % (sym, self.var_to_val[expr], val))
            self._sizes.setdefault(k, []).append(expr)
            return self._wrap(expr)
        symbolic = any(not e.is_Integer for e in self._sizes.get(k, []))
        if kind == "stride":
            if not symbolic:
                return val
            sizes = self._sizes[k]
            expr = sympy.Integer(1)
            for s in sizes[int(i) + 1:]:
                expr = expr * s
            if self.size_hint(expr) != val:
                raise RuntimeError("input %d is not contiguous (stride %s = %d, expected %s)"
                                   % (k, i, val, expr))
            return int(expr) if expr.is_Integer else self._wrap(expr)
        if symbolic and val != 0:
            raise RuntimeError("input %d has storage offset %d; dynamic inputs must be contiguous" % (k, val))
        return val


class SymbolTable:
    """Turns 1.13 SymIntNodes into canonical sympy expressions, reprs and hints."""

    def __init__(self, shape_env, dims):
        self.shape_env = shape_env
        self.dims = dims

    def expr_of(self, value):
        if isinstance(value, int):
            return sympy.Integer(value)
        if isinstance(value, sympy.Expr):
            expr = value
        else:
            expr = value.get_pyobj().expr
        if self.shape_env is not None:
            expr = self.shape_env.replace(expr)
        return sympy.expand(expr)

    def hint(self, expr):
        return int(self.shape_env.size_hint(expr))

    @staticmethod
    def srepr(expr):
        return sympy.srepr(expr)

    def range_constraints(self):
        """{symbol: {"min_val", "max_val"}} for every symbol, sorted by name index."""
        out = {}
        for d in self.dims:
            if d.symbol in out:
                continue
            lo = 2 if d.min_val is None else max(2, d.min_val)
            out[d.symbol] = {"min_val": lo, "max_val": d.max_val}
        return dict(sorted(out.items(), key=lambda kv: int(kv[0][1:])))
