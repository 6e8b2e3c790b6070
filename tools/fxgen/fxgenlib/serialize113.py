"""Serialize a TracedProgram into torch.export's ExportedProgram JSON (schema 8.20).

Follows torch/_export/serde/serialize.py's rules (pt2-format.md §3-§5):
node targets spelled like serialize_operator, inputs walked over the op
schema (arguments given as kwargs are KEYWORD, given positionally are
POSITIONAL, left at their default are omitted), getitem nodes folded into
their producer's outputs (unused slots named <node>_unused_<i>), symbolic
arithmetic nodes with positional inputs named from the Python signature.
"""

import inspect
import json
import operator

import torch
import torch.fx as fx

from . import metadata, schema_json
from .schema_json import EncodeError

try:
    from torch.fx.experimental.symbolic_shapes import PySymInt
except ImportError:  # pragma: no cover
    PySymInt = ()

_SYM_TYPES = tuple(t for t in (getattr(torch, "SymIntNode", None), PySymInt) if t)
_SYM_OPS = {operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod,
            operator.truediv, operator.pow, operator.neg, operator.eq, operator.ne,
            operator.lt, operator.le, operator.gt, operator.ge}


class SerializeError(Exception):
    """The traced graph holds something the schema cannot express."""


def _is_sym(value):
    return isinstance(value, _SYM_TYPES)


def resolve_target(target, args):
    """The OpOverload for a node target (1.13 records some calls as packets)."""
    if isinstance(target, torch._ops.OpOverloadPacket):
        if target is torch.ops.aten.sym_size and len(args) == 2:
            return torch.ops.aten.sym_size.int
        raise SerializeError("op packet %s has no unique overload" % target)
    return target


def operator_name(target):
    if isinstance(target, torch._ops.OpOverload):
        module = target.__module__.replace("torch._ops", "torch.ops")
        return "%s.%s" % (module, target.__name__)
    return "%s.%s" % (target.__module__, target.__name__)


def _treespec_json(spec):
    if spec.type is None:
        return schema_json.treespec_leaf()
    children = [_treespec_json(c) for c in spec.children_specs]
    if spec.type is tuple:
        return schema_json.treespec_node("builtins.tuple", "null", children)
    if spec.type is list:
        return schema_json.treespec_node("builtins.list", "null", children)
    if spec.type is dict:
        return schema_json.treespec_node("builtins.dict", json.dumps(list(spec.context)), children)
    raise SerializeError("output container %s is not supported" % spec.type)


def treespec_dumps(spec_json):
    return json.dumps([schema_json.TREESPEC_VERSION, spec_json])


def in_spec_json(n_inputs):
    leaves = [schema_json.treespec_leaf() for _ in range(n_inputs)]
    return schema_json.treespec_node("builtins.tuple", "null", [
        schema_json.treespec_node("builtins.tuple", "null", leaves),
        schema_json.treespec_node("builtins.dict", "[]", []),
    ])


class Serializer:
    """One TracedProgram -> ExportedProgram dict."""

    def __init__(self, prog, frame_filter, torch_version):
        self.prog = prog
        self.filter = frame_filter
        self.torch_version = torch_version
        self.symbols = prog.symbols
        self.names = {}
        self.tensor_values = {}
        self.sym_int_values = {}
        self.dedup = {}

    # --- naming -----------------------------------------------------------
    def _assign_names(self):
        """Placeholder names from the signature, FX names for the rest.

        Nodes turned from in-place into functional ops lose the trailing
        underscore of their FX name (relu_ -> relu, add__1 -> add_1), as
        torch.export would have named them.
        """
        graph = self.prog.gm.graph
        taken = {i.name for i in self.prog.inputs}
        for info in self.prog.inputs:
            self.names[info.node] = info.name
        renamed = []
        for node in graph.nodes:
            if node.op in ("placeholder", "output"):
                continue
            if node.meta.get("fxgen_functionalized"):
                renamed.append(node)
                continue
            name = node.name
            while name in taken:
                name = name + "_1"
            taken.add(name)
            self.names[node] = name
        for node in renamed:
            op = node.target._schema.name.split("::")[1]
            base = node.name
            if base.startswith(op + "_"):
                base = op + base[len(op) + 1:]
            name, k = base, 0
            while name in taken:
                k += 1
                name = "%s_%d" % (base, k)
            taken.add(name)
            self.names[node] = name

    def name(self, node):
        n = self.names[node]
        return self.dedup.get(n, n)

    # --- values -------------------------------------------------------------
    def _tensor_meta(self, val, where):
        if not isinstance(val, torch.Tensor):
            raise SerializeError("%s: expected a tensor value, got %s" % (where, type(val).__name__))
        try:
            return schema_json.tensor_meta(list(val.size()), list(val.stride()), val.storage_offset(),
                                           val.dtype, val.requires_grad, val.device, val.layout,
                                           self.symbols)
        except EncodeError as e:
            raise SerializeError("%s: %s" % (where, e)) from e

    def _add_tensor(self, name, val, where):
        if name in self.tensor_values:
            raise SerializeError("%s: tensor name %s defined twice" % (where, name))
        self.tensor_values[name] = self._tensor_meta(val, where)
        return {"name": name}

    def _add_sym_int(self, name, val):
        self.sym_int_values[name] = schema_json.sym_int(val if not isinstance(val, PySymInt) else val.expr,
                                                        self.symbols)
        return {"as_name": name}

    def _output(self, name, val, where):
        if val is None:
            return {"as_none": True}
        if isinstance(val, torch.Tensor):
            return {"as_tensor": self._add_tensor(name, val, where)}
        if _is_sym(val) or isinstance(val, int) and not isinstance(val, bool):
            return {"as_sym_int": self._add_sym_int(name, val)}
        raise SerializeError("%s: cannot serialize output %r" % (where, val))

    # --- arguments ------------------------------------------------------------
    def _is_sym_node(self, node):
        return self.names.get(node) in self.sym_int_values

    def arg(self, a, arg_type=None, where=""):
        if isinstance(a, fx.Node):
            if self._is_sym_node(a):
                return {"as_sym_int": {"as_name": self.name(a)}}
            return {"as_tensor": {"name": self.name(a)}}
        if type(a) is bool:
            return {"as_bool": a}
        if type(a) is str:
            return {"as_string": a}
        if type(a) is int:
            return {"as_int": a}
        if type(a) is float:
            return {"as_float": schema_json.float_value(a)}
        if a is None:
            return {"as_none": True}
        if isinstance(a, (list, tuple)):
            return self._list_arg(list(a), arg_type, where)
        if isinstance(a, torch.dtype):
            return {"as_scalar_type": schema_json.dtype_code(a)}
        if isinstance(a, torch.device):
            return {"as_device": schema_json.device(a)}
        if isinstance(a, torch.memory_format):
            return {"as_memory_format": schema_json.memory_format_code(a)}
        if isinstance(a, torch.layout):
            return {"as_layout": schema_json.layout_code(a)}
        raise SerializeError("%s: unsupported argument %r (%s)" % (where, a, type(a).__name__))

    def _list_arg(self, a, arg_type, where):
        if not a:
            if arg_type is None:
                return {"as_tensors": []}
            t = arg_type
            if isinstance(t, torch.OptionalType):
                t = t.getElementType()
            if not isinstance(t, torch.ListType):
                raise SerializeError("%s: empty list for non-list type %s" % (where, arg_type))
            elem = t.getElementType()
            if isinstance(elem, torch.OptionalType):
                elem = elem.getElementType()
            for typ, tag in ((torch.BoolType, "as_bools"), (torch.IntType, "as_ints"),
                             (torch.FloatType, "as_floats"), (torch.StringType, "as_strings"),
                             (torch.TensorType, "as_tensors")):
                if isinstance(elem, typ):
                    return {tag: []}
            if str(elem) == "SymInt":
                return {"as_ints": []}
            raise SerializeError("%s: empty list of %s" % (where, elem))
        if all(type(x) is bool for x in a):
            return {"as_bools": a}
        if all(type(x) is int for x in a):
            return {"as_ints": a}
        if all(type(x) is float for x in a):
            return {"as_floats": [schema_json.float_value(x) for x in a]}
        if all(type(x) is str for x in a):
            return {"as_strings": a}
        if all(type(x) is int or isinstance(x, fx.Node) and self._is_sym_node(x) for x in a):
            return {"as_sym_ints": [{"as_int": x} if type(x) is int else {"as_name": self.name(x)} for x in a]}
        if all(isinstance(x, fx.Node) for x in a):
            return {"as_tensors": [{"name": self.name(x)} for x in a]}
        if all(isinstance(x, fx.Node) or x is None for x in a):
            return {"as_optional_tensors": [
                {"as_none": True} if x is None else {"as_tensor": {"name": self.name(x)}} for x in a]}
        raise SerializeError("%s: unsupported list argument %r" % (where, a))

    def _inputs(self, op, node, where):
        out = []
        kwargs = dict(node.kwargs)
        for i, sa in enumerate(op._schema.arguments):
            if sa.name in kwargs:
                out.append({"name": sa.name, "arg": self.arg(kwargs.pop(sa.name), sa.type, where + "." + sa.name),
                            "kind": 2})
            elif not sa.kwarg_only and i < len(node.args):
                out.append({"name": sa.name, "arg": self.arg(node.args[i], sa.type, where + "." + sa.name),
                            "kind": 1})
        if kwargs:
            raise SerializeError("%s: kwargs %s not in the schema of %s" % (where, sorted(kwargs), op))
        if len(node.args) > len([a for a in op._schema.arguments if not a.kwarg_only]):
            raise SerializeError("%s: %d positional args for %s" % (where, len(node.args), op))
        return out

    def _sym_inputs(self, target, node, where):
        if isinstance(target, torch._ops.OpOverload):
            names = [a.name for a in target._schema.arguments]
        else:
            names = list(inspect.signature(target).parameters)
        if node.kwargs:
            raise SerializeError("%s: symbolic op with kwargs" % where)
        return [{"name": n, "arg": self.arg(a, None, where), "kind": 1} for n, a in zip(names, node.args)]

    # --- outputs of a node ----------------------------------------------------
    def _getitem_name(self, node, index):
        found = None
        for user in node.users:
            if user.op == "call_function" and user.target is operator.getitem and user.args[1] == index:
                if found is None:
                    found = user
                else:
                    self.dedup[self.names[user]] = self.names[found]
        return self.names[found] if found is not None else "%s_unused_%d" % (self.names[node], index)

    def _outputs(self, op, node, where):
        returns = op._schema.returns
        if not returns:
            return []
        if len(returns) == 1:
            rt = returns[0].type
            if isinstance(rt, torch.ListType) and isinstance(rt.getElementType(), torch.TensorType):
                metas = self.prog.multi_output_meta.get(node)
                if metas is None:
                    raise SerializeError("%s: no element values for list return" % where)
                return [{"as_tensors": [self._add_tensor(self._getitem_name(node, i), m, where)
                                        for i, m in enumerate(metas)]}]
            return [self._output(self.names[node], node.meta.get("val"), where)]
        metas = self.prog.multi_output_meta.get(node, [])
        out = []
        for i, r in enumerate(returns):
            m = metas[i] if i < len(metas) else None
            if m is None:
                out.append({"as_none": True})
            elif isinstance(m, torch.Tensor):
                out.append({"as_tensor": self._add_tensor(self._getitem_name(node, i), m, where)})
            else:
                raise SerializeError("%s: output %d of type %s not supported" % (where, i, type(m).__name__))
        return out

    # --- graph ------------------------------------------------------------------
    def _node(self, node, index):
        where = "graph.nodes[%d] (%s)" % (index, node.name)
        target = resolve_target(node.target, node.args)
        val = node.meta.get("val")
        meta = metadata.node_metadata(self.filter, node.meta.get("fxgen_frames"),
                                      node.meta.get("fxgen_stack"), node.meta.get("fxgen_leaf"))
        if target in _SYM_OPS or _is_sym(val):
            inputs = self._sym_inputs(target, node, where)
            outputs = [self._output(self.names[node], val, where)]
        elif isinstance(target, torch._ops.OpOverload):
            inputs = self._inputs(target, node, where)
            outputs = self._outputs(target, node, where)
        else:
            raise SerializeError("%s: target %r is not an ATen op" % (where, target))
        return {"target": operator_name(target), "inputs": inputs, "outputs": outputs,
                "metadata": meta, "is_hop_single_tensor_return": None, "name": self.names[node]}

    def _placeholder_meta(self, info):
        val = info.node.meta.get("val")
        if val is None:
            return schema_json.tensor_meta_concrete(info.value)
        return self._tensor_meta(val, "input %s" % info.name)

    def graph(self):
        self._assign_names()
        inputs = []
        for info in self.prog.inputs:
            if info.name in self.tensor_values:
                raise SerializeError("input name %s defined twice" % info.name)
            self.tensor_values[info.name] = self._placeholder_meta(info)
            inputs.append({"as_tensor": {"name": info.name}})
        nodes = []
        for node in self.prog.gm.graph.nodes:
            if node.op != "call_function" or node.target is operator.getitem:
                continue
            nodes.append(self._node(node, len(nodes)))
        output = next(n for n in self.prog.gm.graph.nodes if n.op == "output")
        outputs = [self.arg(a, None, "graph.outputs") for a in output.args[0]]
        return {
            "inputs": inputs,
            "outputs": outputs,
            "nodes": nodes,
            "tensor_values": self.tensor_values,
            "sym_int_values": self.sym_int_values,
            "sym_bool_values": {},
            "is_single_tensor_return": False,
            "custom_obj_values": {},
            "sym_float_values": {},
        }

    def signature(self):
        specs = []
        for info in self.prog.inputs:
            if info.kind == "parameter":
                specs.append({"parameter": {"arg": {"name": info.name}, "parameter_name": info.target}})
            elif info.kind == "buffer":
                specs.append({"buffer": {"arg": {"name": info.name}, "buffer_name": info.target,
                                         "persistent": bool(info.persistent)}})
            elif info.kind == "constant":
                specs.append({"tensor_constant": {"arg": {"name": info.name},
                                                  "tensor_constant_name": info.target}})
            else:
                specs.append({"user_input": {"arg": {"as_tensor": {"name": info.name}}}})
        outs = []
        for value, fqn in self.prog.mutations:
            outs.append({"buffer_mutation": {"arg": {"name": self.name(value)}, "buffer_name": fqn}})
        for value in self.prog.user_outputs:
            outs.append({"user_output": {"arg": self.arg(value, None, "user output")}})
        return {"input_specs": specs, "output_specs": outs}

    def module_call_graph(self):
        users = [i for i in self.prog.inputs if i.kind == "user_input"]
        root = {
            "fqn": "",
            "signature": {
                "inputs": [{"as_tensor": {"name": i.name}} for i in users],
                "outputs": [self.arg(v, None, "user output") for v in self.prog.user_outputs],
                "in_spec": treespec_dumps(in_spec_json(len(users))),
                "out_spec": treespec_dumps(_treespec_json(self.prog.out_spec)),
                "forward_arg_names": list(self.prog.forward_arg_names) or None,
            },
        }
        return [root] + [{"fqn": fqn, "signature": None} for fqn in self.prog.module_fqns]

    def exported_program(self):
        graph = self.graph()
        return {
            "graph_module": {
                "graph": graph,
                "signature": self.signature(),
                "module_call_graph": self.module_call_graph(),
                "metadata": {},
                "treespec_namedtuple_fields": {},
            },
            "opset_version": {"aten": torch._C._get_max_operator_version()},
            "range_constraints": self.symbols.range_constraints(),
            "schema_version": {"major": schema_json.SCHEMA_VERSION[0], "minor": schema_json.SCHEMA_VERSION[1]},
            "verifiers": ["ATEN"],
            "torch_version": self.torch_version,
            "guards_code": [],
        }


def to_json_bytes(ep):
    return json.dumps(ep, allow_nan=False).encode("utf-8")
