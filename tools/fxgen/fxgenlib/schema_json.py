"""JSON encodings of torch.export schema 8.x values (see pt2-format.md §2, §3).

Structs are dicts with every field in declaration order; unions are
single-key dicts; enums are bare ints; +-inf floats are the strings
"Infinity" / "-Infinity".
"""

import math

SCHEMA_VERSION = (8, 20)
TREESPEC_VERSION = 1

# export ScalarType codes (not c10 codes).
_DTYPE_NAMES = [
    ("uint8", 1), ("int8", 2), ("int16", 3), ("int32", 4), ("int64", 5),
    ("float16", 6), ("float32", 7), ("float64", 8), ("complex32", 9),
    ("complex64", 10), ("complex128", 11), ("bool", 12), ("bfloat16", 13),
    ("uint16", 28), ("float8_e4m3fn", 29), ("float8_e5m2", 30),
    ("uint32", 34), ("uint64", 35),
]
LAYOUT_STRIDED = 7
_MEMORY_FORMATS = [("contiguous_format", 1), ("channels_last", 2),
                   ("channels_last_3d", 3), ("preserve_format", 4)]


class EncodeError(Exception):
    """A value that the schema cannot represent."""


def dtype_code(dtype):
    import torch
    for name, code in _DTYPE_NAMES:
        if getattr(torch, name, None) is dtype:
            return code
    raise EncodeError("dtype %s has no export ScalarType code" % dtype)


def memory_format_code(fmt):
    import torch
    for name, code in _MEMORY_FORMATS:
        if getattr(torch, name) is fmt:
            return code
    raise EncodeError("memory format %s has no export code" % fmt)


def layout_code(layout):
    import torch
    if layout is torch.strided:
        return LAYOUT_STRIDED
    raise EncodeError("layout %s is not supported (only strided)" % layout)


def device(d):
    return {"type": d.type, "index": d.index}


def float_value(x):
    """A float as torch's _dataclass_to_dict writes it."""
    x = float(x)
    if x == math.inf:
        return "Infinity"
    if x == -math.inf:
        return "-Infinity"
    if math.isnan(x):
        raise EncodeError("NaN cannot be serialized (json.dumps(allow_nan=False))")
    return x


def sym_int(value, symbols):
    """SymInt union for an int or a symbolic size.

    symbols: a SymbolTable (see symbols.py) or None when value must be concrete.
    """
    if isinstance(value, bool):
        raise EncodeError("bool where a SymInt is expected")
    if isinstance(value, int):
        return {"as_int": value}
    if symbols is None:
        raise EncodeError("symbolic value %s without a symbol table" % value)
    expr = symbols.expr_of(value)
    if expr.is_Integer:
        return {"as_int": int(expr)}
    return {"as_expr": {"expr_str": symbols.srepr(expr),
                        "hint": {"as_int": symbols.hint(expr)}}}


def tensor_meta(sizes, strides, storage_offset, dtype, requires_grad, dev, layout, symbols=None):
    return {
        "dtype": dtype_code(dtype),
        "sizes": [sym_int(s, symbols) for s in sizes],
        "requires_grad": bool(requires_grad),
        "device": device(dev),
        "strides": [sym_int(s, symbols) for s in strides],
        "storage_offset": sym_int(storage_offset, symbols),
        "layout": layout_code(layout),
    }


def tensor_meta_concrete(t):
    """TensorMeta of a real tensor (payload configs)."""
    return tensor_meta(list(t.shape), list(t.stride()), t.storage_offset(), t.dtype,
                       t.requires_grad, t.device, t.layout)


def treespec_leaf():
    return {"type": None, "context": None, "children_spec": []}


def treespec_node(type_name, context, children):
    """A TreeSpec node; context is JSON-encoded text (e.g. "null", "[]")."""
    return {"type": type_name, "context": context, "children_spec": children}
