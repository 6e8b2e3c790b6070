#!/usr/bin/env python3
"""Writes the hand-made .pt2 test files of frontends/pt2 (no torch needed).

One small program ("block") is written in every container torch.export.save
has used, following docs/frontends.md and the format reference:

  archive_2_9.pt2   PT2 archive, raw payloads + payload configs (torch >= 2.9, schema 8.14)
  archive_2_8.pt2   PT2 archive, torch.save-pickled weights and constants (torch 2.8, schema 8.8)
  legacy_2_7.pt2    flat zip: serialized_exported_program.json + pickles (torch 2.7, schema 8.7)
  block_8_20.json   bare program JSON, schema 8.20, with fields this reader has
                    never seen, str()-form expressions, an enum by name and the
                    all-members union form of old files
  two_models.pt2    PT2 archive holding two programs
  state.pkl         the pickle of a two-tensor state dict (for broken-archive tests)

torch.save pickles are made with Python's own pickler (protocol 2) and
stand-in classes whose module and names are torch's (torch.FloatStorage,
torch._utils._rebuild_tensor_v2, torch._utils._rebuild_parameter), so the
opcodes are the ones torch.save emits.

Run from this directory: python3 gen.py
"""

import collections
import copy
import io
import json
import pickle
import struct
import sys
import types
import zipfile

def writestr(z, name, data):
    """Writes a stored record with a fixed timestamp (so reruns give the same bytes)."""
    z.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data)


# ---------------------------------------------------------------------------
# Stand-ins for the torch objects torch.save pickles.

torch_mod = types.ModuleType("torch")
utils_mod = types.ModuleType("torch._utils")
sys.modules["torch"] = torch_mod
sys.modules["torch._utils"] = utils_mod
torch_mod._utils = utils_mod


def _storage_class(name, elem):
    cls = type(name, (), {"elem": elem})
    cls.__module__ = "torch"
    cls.__qualname__ = name
    setattr(torch_mod, name, cls)
    return cls


FloatStorage = _storage_class("FloatStorage", "<f")
LongStorage = _storage_class("LongStorage", "<q")


def _rebuild_tensor_v2(*args):
    raise RuntimeError("never called")


def _rebuild_parameter(*args):
    raise RuntimeError("never called")


for fn in (_rebuild_tensor_v2, _rebuild_parameter):
    fn.__module__ = "torch._utils"
    fn.__qualname__ = fn.__name__
    setattr(utils_mod, fn.__name__, fn)


class Storage:
    def __init__(self, cls, key, values):
        self.cls, self.key, self.values = cls, key, values

    def data(self):
        return b"".join(struct.pack(self.cls.elem, v) for v in self.values)


class Tensor:
    def __init__(self, storage, offset, size, stride, param=False):
        self.storage, self.offset, self.size, self.stride, self.param = storage, offset, size, stride, param

    def __reduce_ex__(self, proto):
        t = (_rebuild_tensor_v2, (self.storage, self.offset, tuple(self.size), tuple(self.stride), False, collections.OrderedDict()))
        if self.param:
            inner = Tensor(self.storage, self.offset, self.size, self.stride)
            return (_rebuild_parameter, (inner, True, collections.OrderedDict()))
        return t


class TorchPickler(pickle.Pickler):
    def persistent_id(self, obj):
        if isinstance(obj, Storage):
            return ("storage", obj.cls, obj.key, "cpu", len(obj.values))
        return None


def torch_save(tensors, prefix="archive"):
    """The bytes torch.save writes for a dict of tensors."""
    pkl = io.BytesIO()
    od = collections.OrderedDict(tensors)
    TorchPickler(pkl, protocol=2).dump(od)
    storages = {}
    for t in tensors.values():
        storages[t.storage.key] = t.storage
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        writestr(z, prefix + "/data.pkl", pkl.getvalue())
        writestr(z, prefix + "/byteorder", "little")
        for key in sorted(storages):
            writestr(z, prefix + "/data/" + key, storages[key].data())
        writestr(z, prefix + "/version", "3\n")
    return buf.getvalue()


# ---------------------------------------------------------------------------
# The program.

def sym(name, positive=True):
    if positive:
        return "Symbol('%s', integer=True, positive=True)" % name
    return "Symbol('%s', integer=True)" % name


class Exprs:
    """Spellings of the expressions the program uses: sympy srepr or str()."""

    def __init__(self, plain):
        self.plain = plain

    def s0(self):
        return "s0" if self.plain else sym("s0")

    def two_s0(self):
        return "2*s0" if self.plain else "Mul(Integer(2), %s)" % sym("s0")

    def u0(self):
        return "u0" if self.plain else sym("u0", False)

    def gt(self):
        return "s0 > 4" if self.plain else "StrictGreaterThan(%s, Integer(4))" % sym("s0")


def si(v, ex=None, hint=None):
    if ex is None:
        return {"as_int": v}
    return {"as_expr": {"expr_str": ex, "hint": None if hint is None else {"as_int": hint}}}


def tmeta(dtype, sizes, strides, requires_grad=False, offset=0):
    return {"dtype": dtype, "sizes": sizes, "requires_grad": requires_grad,
            "device": {"type": "cpu", "index": None}, "strides": strides,
            "storage_offset": {"as_int": offset}, "layout": 7}


def T(name):
    return {"as_tensor": {"name": name}}


def node(target, inputs, outputs, metadata=None, name=None):
    n = {"target": target, "inputs": [{"name": a, "arg": v, "kind": k} for a, v, k in inputs],
         "outputs": outputs, "metadata": metadata or {}, "is_hop_single_tensor_return": None}
    if name is not None:
        n["name"] = name
    return n


def branch(op):
    """A cond branch: op(arg0_1) combined with arg1_1."""
    combine = "torch.ops.aten.add.Tensor" if op == "cos" else "torch.ops.aten.mul.Tensor"
    f4 = tmeta(7, [si(4)], [si(1)])
    return {
        "inputs": [T("arg0_1"), T("arg1_1")],
        "outputs": [T("out")],
        "nodes": [
            node("torch.ops.aten.%s.default" % op, [("self", T("arg0_1"), 1)], [T(op)]),
            node(combine, [("self", T(op), 1), ("other", T("arg1_1"), 1)], [T("out")]),
        ],
        "tensor_values": {"arg0_1": f4, "arg1_1": f4, op: f4, "out": f4},
        "sym_int_values": {}, "sym_bool_values": {}, "is_single_tensor_return": False,
        "custom_obj_values": {}, "sym_float_values": {},
    }


def program(minor, torch_version, plain=False):
    e = Exprs(plain)
    s0 = si(0, e.s0(), 3)
    two_s0 = si(0, e.two_s0(), 6)
    f = 7  # FLOAT
    tv = {
        "p_fc_weight": tmeta(f, [si(8), si(4)], [si(1), si(8)], True),
        "p_fc_bias": tmeta(f, [si(8)], [si(1)], True),
        "b_running": tmeta(f, [si(8)], [si(1)]),
        "b_running_tail": tmeta(f, [si(4)], [si(1)], offset=4),
        "b_window": tmeta(f, [si(4)], [si(1)]),
        "c_lifted_tensor_0": tmeta(5, [], []),
        "x": tmeta(f, [s0, si(4)], [si(4), si(1)]),
        "linear": tmeta(f, [s0, si(8)], [si(8), si(1)]),
        "gelu": tmeta(f, [s0, si(8)], [si(8), si(1)]),
        "view": tmeta(f, [two_s0, si(4)], [si(4), si(1)]),
        "getitem": tmeta(f, [two_s0], [si(1)]),
        "getitem_1": tmeta(5, [two_s0], [si(1)]),
        "getitem_2": tmeta(f, [s0, si(4)], [si(8), si(1)]),
        "getitem_3": tmeta(f, [s0, si(4)], [si(8), si(1)]),
        "add": tmeta(f, [s0, si(4)], [si(4), si(1)]),
        "mean": tmeta(f, [si(4)], [si(1)]),
        "add_1": tmeta(f, [si(4)], [si(1)]),
        "getitem_4": tmeta(f, [si(4)], [si(1)]),
        "full": tmeta(f, [si(2), si(3)], [si(3), si(1)]),
        "to": tmeta(6, [si(2), si(3)], [si(3), si(1)]),
        "nonzero": tmeta(5, [si(0, e.u0(), None), si(2)], [si(2), si(1)]),
    }
    nodes = [
        node("torch.ops.aten.linear.default",
             [("input", T("x"), 1), ("weight", T("p_fc_weight"), 1), ("bias", T("p_fc_bias"), 1)],
             [T("linear")],
             {"stack_trace": '  File "block.py", line 12, in forward\n    h = self.fc(x)\n',
              "nn_module_stack": "L__self___fc,L['self'].fc,torch.nn.modules.linear.Linear",
              "source_fn_stack": "fc,torch.nn.modules.linear.Linear",
              "torch_fn": "linear_1;builtin_function_or_method.linear"}),
        node("torch.ops.aten.gelu.default", [("self", T("linear"), 1), ("approximate", {"as_string": "tanh"}, 2)], [T("gelu")]),
        node("torch.ops.aten.sym_size.int", [("self", T("x"), 1), ("dim", {"as_int": 0}, 1)],
             [{"as_sym_int": {"as_name": "sym_size_int"}}]),
        node("_operator.mul", [("a", {"as_sym_int": {"as_name": "sym_size_int"}}, 1), ("b", {"as_int": 2}, 1)],
             [{"as_sym_int": {"as_name": "mul"}}]),
        node("torch.ops.aten.view.default",
             [("self", T("gelu"), 1), ("size", {"as_sym_ints": [{"as_name": "mul"}, {"as_int": 4}]}, 1)],
             [T("view")]),
        node("torch.ops.aten.max.dim", [("self", T("view"), 1), ("dim", {"as_int": 1}, 1)],
             [T("getitem"), T("getitem_1")]),
        node("torch.ops.aten.split_with_sizes.default",
             [("self", T("gelu"), 1), ("split_sizes", {"as_ints": [4, 4]}, 1), ("dim", {"as_int": 1}, 1)],
             [{"as_tensors": [{"name": "getitem_2"}, {"name": "getitem_3"}]}]),
        node("torch.ops.aten.add.Tensor", [("self", T("getitem_2"), 1), ("other", T("b_running_tail"), 1)], [T("add")]),
        node("torch.ops.aten.mean.dim", [("self", T("add"), 1), ("dim", {"as_ints": [0]}, 1)], [T("mean")]),
        node("torch.ops.aten.add.Tensor", [("self", T("b_running_tail"), 1), ("other", T("mean"), 1)], [T("add_1")]),
        node("_operator.gt", [("a", {"as_sym_int": {"as_name": "sym_size_int"}}, 1), ("b", {"as_int": 4}, 1)],
             [{"as_sym_bool": {"as_name": "gt"}}]),
        node("torch.ops.higher_order.cond",
             [("", {"as_sym_bool": {"as_name": "gt"}}, 1),
              ("", {"as_graph": {"name": "true_graph_0", "graph": branch("cos")}}, 1),
              ("", {"as_graph": {"name": "false_graph_0", "graph": branch("sin")}}, 1),
              ("", {"as_tensors": [{"name": "mean"}, {"name": "b_window"}]}, 1)],
             [T("getitem_4")]),
        node("torch.ops.aten.full.default",
             [("size", {"as_ints": [2, 3]}, 1), ("fill_value", {"as_float": 1.5}, 1),
              ("dtype", {"as_scalar_type": 7}, 2), ("device", {"as_device": {"type": "cpu", "index": None}}, 2),
              ("pin_memory", {"as_bool": False}, 2)],
             [T("full")]),
        node("torch.ops.aten._to_copy.default", [("self", T("full"), 1), ("dtype", {"as_scalar_type": 6}, 2)], [T("to")]),
        node("torch.ops.aten.nonzero.default", [("self", T("full"), 1)], [T("nonzero")]),
    ]
    if minor >= 17:
        for n in nodes:
            n["name"] = n["outputs"][0].get("as_tensor", {}).get("name")
    graph = {
        "inputs": [T("p_fc_weight"), T("p_fc_bias"), T("b_running"), T("b_running_tail"), T("b_window"),
                   T("c_lifted_tensor_0"), T("x"), {"as_int": 2}],
        "outputs": [T("add_1"), T("getitem_4"), T("getitem"), T("to"), {"as_sym_int": {"as_name": "mul"}}, T("nonzero")],
        "nodes": nodes,
        "tensor_values": tv,
        "sym_int_values": {"sym_size_int": s0, "mul": two_s0},
        "sym_bool_values": {"gt": {"as_expr": {"expr_str": e.gt(), "hint": {"as_bool": False}}}},
        "is_single_tensor_return": False,
        "custom_obj_values": {},
        "sym_float_values": {},
    }
    sig = {
        "input_specs": [
            {"parameter": {"arg": {"name": "p_fc_weight"}, "parameter_name": "fc.weight"}},
            {"parameter": {"arg": {"name": "p_fc_bias"}, "parameter_name": "fc.bias"}},
            {"buffer": {"arg": {"name": "b_running"}, "buffer_name": "running", "persistent": True}},
            {"buffer": {"arg": {"name": "b_running_tail"}, "buffer_name": "running_tail", "persistent": True}},
            {"buffer": {"arg": {"name": "b_window"}, "buffer_name": "window", "persistent": False}},
            {"tensor_constant": {"arg": {"name": "c_lifted_tensor_0"}, "tensor_constant_name": "lifted_tensor_0"}},
            {"user_input": {"arg": T("x")}},
            {"constant_input": {"name": "alpha", "value": {"as_int": 2}}},
        ],
        "output_specs": [
            {"buffer_mutation": {"arg": {"name": "add_1"}, "buffer_name": "running_tail"}},
            {"user_output": {"arg": T("getitem_4")}},
            {"user_output": {"arg": T("getitem")}},
            {"user_output": {"arg": T("to")}},
            {"user_output": {"arg": {"as_sym_int": {"as_name": "mul"}}}},
            {"user_output": {"arg": T("nonzero")}},
        ],
    }
    leaf = {"type": None, "context": None, "children_spec": []}
    in_spec = json.dumps([1, {"type": "builtins.tuple", "context": "null", "children_spec": [
        {"type": "builtins.tuple", "context": "null", "children_spec": [leaf, leaf]},
        {"type": "builtins.dict", "context": "[]", "children_spec": []}]}])
    out_spec = json.dumps([1, {"type": "builtins.tuple", "context": "null", "children_spec": [leaf] * 5}])
    mcg = [
        {"fqn": "", "signature": {"inputs": [T("x"), {"as_int": 2}],
                                  "outputs": [T("getitem_4"), T("getitem"), T("to"), {"as_sym_int": {"as_name": "mul"}}, T("nonzero")],
                                  "in_spec": in_spec, "out_spec": out_spec, "forward_arg_names": ["x", "alpha"]}},
        {"fqn": "fc", "signature": None},
    ]
    gm = {"graph": graph, "signature": sig, "module_call_graph": mcg, "metadata": {"origin": "gen.py"}}
    if minor >= 15:
        gm["treespec_namedtuple_fields"] = {}
    ep = {"graph_module": gm, "opset_version": {"aten": 10},
          "range_constraints": {"s0": {"min_val": 2, "max_val": None}, "u0": {"min_val": 0, "max_val": None}},
          "schema_version": {"major": 8, "minor": minor}, "verifiers": [], "torch_version": torch_version}
    if minor >= 15:
        ep["guards_code"] = []
    return ep


# ---------------------------------------------------------------------------
# Weights.

def weights():
    """The state dict (params + persistent buffers) and the constants."""
    w = Storage(FloatStorage, "0", [float(i) / 8 for i in range(32)])
    b = Storage(FloatStorage, "1", [0.5 * i for i in range(8)])
    r = Storage(FloatStorage, "2", [1.0 + i for i in range(8)])
    win = Storage(FloatStorage, "3", [0.25, 0.5, 0.75, 1.0])
    c = Storage(LongStorage, "4", [7])
    state = {
        "fc.weight": Tensor(w, 0, [8, 4], [1, 8], param=True),  # a transposed parameter
        "fc.bias": Tensor(b, 0, [8], [1], param=True),
        "running": Tensor(r, 0, [8], [1]),
        "running_tail": Tensor(r, 4, [4], [1]),  # a view of running's storage
    }
    consts = {"window": Tensor(win, 0, [4], [1]), "lifted_tensor_0": Tensor(c, 0, [], [])}
    return state, consts


def payloads(tensors, prefix, start=0):
    """Raw payload records and a PayloadConfig, torch >= 2.9 style."""
    config, files, names = {}, {}, {}
    for fqn, t in tensors.items():
        key = t.storage.key
        if key not in names:
            names[key] = "%s_%d" % (prefix, start + len(names))
            files[names[key]] = t.storage.data()
        dtype = 5 if t.storage.cls is LongStorage else 7
        config[fqn] = {"path_name": names[key], "is_param": t.param, "use_pickle": False,
                       "tensor_meta": tmeta(dtype, [si(s) for s in t.size], [si(s) for s in t.stride], t.param, t.offset)}
    return {"config": config}, files


def dumps(obj):
    return json.dumps(obj)


def write_archive(path, root, programs, pickled):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        writestr(z, root + "/archive_format", "pt2")
        writestr(z, root + "/archive_version", "0")
        writestr(z, root + "/byteorder", "little")
        for k, (name, ep) in enumerate(programs):
            writestr(z, root + "/models/%s.json" % name, dumps(ep))
            state, consts = weights()
            if pickled:
                writestr(z, root + "/data/weights/%s.pt" % name, torch_save(state, "weights"))
                writestr(z, root + "/data/constants/%s.pt" % name, torch_save(consts, "constants"))
            else:
                for part, tensors, prefix in (("weights", state, "weight"), ("constants", consts, "tensor")):
                    cfg, files = payloads(tensors, prefix, 10 * k)
                    writestr(z, root + "/data/%s/%s_%s_config.json" % (part, name, part), dumps(cfg))
                    for fname, data in files.items():
                        writestr(z, root + "/data/%s/%s" % (part, fname), data)
            writestr(z, root + "/data/sample_inputs/%s.pt" % name, b"not read")
        writestr(z, root + "/.data/version", "6\n")
        writestr(z, root + "/.data/serialization_id", "0" * 40)


def with_unknowns(ep):
    """Schema 8.20 plus fields and members a future minor version might add."""
    ep = copy.deepcopy(ep)
    ep["future_top_level"] = {"anything": [1, 2, 3]}
    g = ep["graph_module"]["graph"]
    g["future_graph_field"] = None
    g["nodes"][0]["future_node_field"] = {"nested": True}
    g["nodes"][1]["inputs"][0]["future_arg_field"] = 1
    g["tensor_values"]["x"]["future_meta_field"] = "x"
    g["tensor_values"]["x"]["dtype"] = "FLOAT"                    # an enum by name
    # The old all-members union form: every other member present and null.
    g["nodes"][7]["inputs"][1]["arg"] = {"as_none": None, "as_tensor": {"name": "b_running_tail"}, "as_int": None}
    ep["range_constraints"]["s0"]["max_val"] = None
    return ep


def main():
    write_archive("archive_2_9.pt2", "archive_2_9", [("model", program(14, "2.9.0"))], pickled=False)
    write_archive("archive_2_8.pt2", "archive_2_8", [("model", program(8, "2.8.0"))], pickled=True)
    write_archive("two_models.pt2", "two_models", [("encoder", program(14, "2.9.0")), ("decoder", program(14, "2.9.0"))], pickled=False)
    state, consts = weights()
    with zipfile.ZipFile("legacy_2_7.pt2", "w", zipfile.ZIP_STORED) as z:
        writestr(z, "serialized_exported_program.json", dumps(program(7, "2.7.1")))
        writestr(z, "serialized_state_dict.pt", torch_save(state, "serialized_state_dict"))
        writestr(z, "serialized_constants.pt", torch_save(consts, "serialized_constants"))
        writestr(z, "serialized_example_inputs.pt", b"not read")
        writestr(z, "version", "8.7")
    # A bare torch.save pickle (fc.weight and fc.bias) for the hostile-archive tests.
    buf = io.BytesIO()
    TorchPickler(buf, protocol=2).dump(collections.OrderedDict((k, state[k]) for k in ("fc.weight", "fc.bias")))
    with open("state.pkl", "wb") as f:
        f.write(buf.getvalue())
    with open("block_8_20.json", "w") as f:
        f.write(dumps(with_unknowns(program(20, "2.12.1", plain=True))))


if __name__ == "__main__":
    main()
