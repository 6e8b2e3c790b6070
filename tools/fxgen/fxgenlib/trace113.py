"""Trace an nn.Module into a torch.export-shaped ATen graph with torch 1.13.

torch 1.13 has no torch.export. This module gets the same kind of program
from make_fx:

* parameters, buffers and user inputs are lifted as graph inputs
  (functional_call), in torch.export's order: parameters, buffers, lifted
  tensor constants, user inputs;
* tracing runs on fake tensors ("fake" mode, or "symbolic" mode with
  PolicyShapeEnv when the program has dynamic dims), under no_grad, with
  the nn.MultiheadAttention / TransformerEncoderLayer fast paths disabled
  (as they are under torch.export);
* a small functionalization turns in-place ops into their functional twins;
  an in-place op on a buffer becomes a buffer mutation (the new value is an
  extra leading graph output), as torch.export's functionalization does.
  In-place ops on views, parameters or user inputs are refused;
* aten._reshape_alias (a 1.13-only op) is decomposed into aten.view,
  aten.detach nodes (no-ops in inference) are dropped, dead code removed;
* tensors created inside forward (get_attr constants) become lifted
  tensor-constant inputs.

Every node keeps the module stack and the Python stack it was created
under (see metadata.py).
"""

import contextlib
import inspect
import operator
import sys

import torch
import torch.fx as fx
import torch.fx.experimental.proxy_tensor as proxy_tensor
from torch.fx.experimental.proxy_tensor import make_fx
from torch.nn.utils.stateless import functional_call
from torch.utils import _pytree as pytree

from . import metadata
from .symbols import PolicyShapeEnv, SymbolTable

try:
    from torch.fx.experimental.symbolic_shapes import PySymInt
except ImportError:  # pragma: no cover
    PySymInt = None

aten = torch.ops.aten


class TraceError(Exception):
    """The module cannot be turned into an export-shaped program."""


class InputInfo:
    """One graph input: kind is parameter, buffer, constant or user_input."""

    def __init__(self, kind, name, target, value, persistent=None):
        self.kind = kind
        self.name = name          # placeholder name, e.g. p_fc_weight
        self.target = target      # FQN / constant name / forward arg name
        self.value = value        # the real tensor (state) or example input
        self.persistent = persistent
        self.node = None          # the FX placeholder


class TracedProgram:
    """make_fx output plus everything the serializer needs."""

    def __init__(self):
        self.gm = None
        self.inputs = []          # [InputInfo] in placeholder order
        self.mutations = []       # [(fx.Node value, buffer fqn)]
        self.user_outputs = []    # [fx.Node]
        self.out_spec = None      # pytree TreeSpec of forward's output
        self.forward_arg_names = []
        self.symbols = None       # SymbolTable
        self.multi_output_meta = {}   # node -> [meta or None] per output index
        self.module_fqns = []     # submodule FQNs in named_modules order
        self.root_type = None


def _forward_arg_names(module, n):
    try:
        params = list(inspect.signature(module.forward).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = []
    for p in params:
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
        elif p.kind == p.VAR_POSITIONAL:
            break
    while len(names) < n:
        names.append("args_%d" % len(names))
    return names[:n]


def _state(module):
    params = list(module.named_parameters())
    buffers = []
    for fqn, b in module.named_buffers():
        prefix, _, leaf = fqn.rpartition(".")
        owner = module.get_submodule(prefix) if prefix else module
        buffers.append((fqn, b, leaf not in owner._non_persistent_buffers_set))
    return params, buffers


class _Recorder:
    """Module stack and Python stack per created FX node.

    Paths, types and leaf flags are taken before tracing: functional_call
    swaps module classes for stateless replacer subclasses while it runs.
    """

    def __init__(self, module):
        self.info = {}
        for path, m in module.named_modules(remove_duplicate=False):
            if id(m) not in self.info:
                leaf = next(iter(m.children()), None) is None
                self.info[id(m)] = (path, metadata.type_name(type(m)), leaf)
        self.stack = []
        self.calls = {}

    def push(self, m):
        info = self.info.get(id(m))
        if info is None or info[0] == "":
            self.stack.append(None)
            return
        path, ty, leaf = info
        n = self.calls.get(path, 0)
        self.calls[path] = n + 1
        key = path if n == 0 else "%s@%d" % (path, n)
        self.stack.append((key, path, ty, leaf))

    def pop(self):
        self.stack.pop()

    def snapshot(self):
        entries = [e for e in self.stack if e is not None]
        return [e[:3] for e in entries], bool(entries and entries[-1][3])


class _RecordingTracer(proxy_tensor.PythonKeyTracer):
    recorder = None

    def call_module(self, m, forward, args, kwargs):
        rec = type(self).recorder
        rec.push(m)
        try:
            return forward(*args, **kwargs)
        finally:
            rec.pop()

    def create_node(self, *args, **kwargs):
        node = super().create_node(*args, **kwargs)
        rec = type(self).recorder
        stack, leaf = rec.snapshot()
        node.meta["fxgen_frames"] = metadata.capture_frames()
        node.meta["fxgen_stack"] = stack
        node.meta["fxgen_leaf"] = leaf
        return node


_FASTPATH_FILES = ("activation.py", "transformer.py")


@contextlib.contextmanager
def _patched(recorder, policy):
    """Install the recording tracer, the policy shape env and the fast-path switch."""
    orig_tracer = proxy_tensor.PythonKeyTracer
    orig_env = proxy_tensor.ShapeEnv
    orig_htf = torch.overrides.has_torch_function

    def has_torch_function(args):
        caller = sys._getframe(1).f_code.co_filename
        if caller.endswith(_FASTPATH_FILES) and "nn" in caller:
            return True
        return orig_htf(args)

    _RecordingTracer.recorder = recorder
    PolicyShapeEnv.policy = policy
    proxy_tensor.PythonKeyTracer = _RecordingTracer
    proxy_tensor.ShapeEnv = PolicyShapeEnv
    torch.overrides.has_torch_function = has_torch_function
    try:
        yield
    finally:
        proxy_tensor.PythonKeyTracer = orig_tracer
        proxy_tensor.ShapeEnv = orig_env
        torch.overrides.has_torch_function = orig_htf
        _RecordingTracer.recorder = None
        PolicyShapeEnv.policy = {}


def _reshape_alias(x, size, stride):
    return aten.view.default(x, size)


def trace(module, example_inputs, dims):
    """Trace module on example_inputs; dims is a list of symbols.DynamicDim."""
    if not isinstance(example_inputs, tuple):
        raise TraceError("example inputs must be a tuple, got %s" % type(example_inputs).__name__)
    for i, x in enumerate(example_inputs):
        if not isinstance(x, torch.Tensor):
            raise TraceError("example input %d is a %s; only tensors are supported"
                             % (i, type(x).__name__))
    module.eval()
    params, buffers = _state(module)
    names = [fqn for fqn, _ in params] + [fqn for fqn, _, _ in buffers]
    n_state = len(names)
    # The fake-tensor converter numbers tensors as it meets them; a view
    # also converts its base, which takes one more number.
    n_views = sum(1 for _, b, _ in buffers if b._is_view())
    first_user = n_state + n_views
    policy = {(first_user + d.input_index, d.dim): d.symbol for d in dims}

    holder = {}

    def flat_forward(*flat):
        state = dict(zip(names, flat[:n_state]))
        out = functional_call(module, state, tuple(flat[n_state:]))
        leaves, spec = pytree.tree_flatten(out)
        for i, leaf in enumerate(leaves):
            if not isinstance(leaf, torch.Tensor):
                raise TraceError("output leaf %d is a %s; only tensor outputs are supported"
                                 % (i, type(leaf).__name__))
        holder["out_spec"] = spec
        return tuple(leaves)

    # State tensors go in as they are (fake tensors keep their strides,
    # offsets and aliasing); user inputs are fresh contiguous copies.
    args = [p for _, p in params] + [b for _, b, _ in buffers] + \
        [x.detach().clone() for x in example_inputs]
    recorder = _Recorder(module)
    mode = "symbolic" if dims else "fake"
    decomp = {aten._reshape_alias.default: _reshape_alias}
    with _patched(recorder, policy), torch.no_grad():
        gm = make_fx(flat_forward, decomposition_table=decomp, tracing_mode=mode)(*args)

    prog = TracedProgram()
    prog.gm = gm
    prog.root_type = type(module)
    prog.out_spec = holder["out_spec"]
    prog.forward_arg_names = _forward_arg_names(module, len(example_inputs))
    prog.symbols = SymbolTable(getattr(gm, "shape_env", None), dims)
    prog.module_fqns = [path for path, _ in module.named_modules() if path]

    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(args):
        raise TraceError("traced graph has %d placeholders for %d inputs" % (len(placeholders), len(args)))
    infos = []
    for fqn, p in params:
        infos.append(InputInfo("parameter", "p_" + fqn.replace(".", "_"), fqn, p))
    for fqn, b, persistent in buffers:
        infos.append(InputInfo("buffer", "b_" + fqn.replace(".", "_"), fqn, b, persistent))
    for name, x in zip(prog.forward_arg_names, example_inputs):
        infos.append(InputInfo("user_input", name, name, x))
    for info, ph in zip(infos, placeholders):
        info.node = ph

    _drop_detach(gm.graph)
    mutated = _functionalize(gm.graph, {i.node: i for i in infos})
    output = next(n for n in gm.graph.nodes if n.op == "output")
    user_outs = list(output.args[0])
    prog.mutations = [(value, info.target) for info, value in mutated]
    prog.user_outputs = user_outs
    output.args = (tuple([v for v, _ in prog.mutations] + user_outs),)
    prog.multi_output_meta = _collect_multi_output_meta(gm.graph)
    gm.graph.eliminate_dead_code()
    _fold_concrete_symints(gm.graph, prog.symbols)
    constants = _lift_constants(gm, infos)
    prog.inputs = _order_inputs(infos, constants)
    gm.graph.lint()
    gm.recompile()
    return prog


def _drop_detach(graph):
    for node in list(graph.nodes):
        if node.op == "call_function" and node.target is aten.detach.default:
            node.replace_all_uses_with(node.args[0])
            graph.erase_node(node)


def _schema(target):
    return getattr(target, "_schema", None)


def _is_inplace(target):
    schema = _schema(target)
    if schema is None or not schema.arguments:
        return False
    first = schema.arguments[0].alias_info
    return bool(first is not None and first.is_write and not schema.arguments[0].kwarg_only
                and schema.name.endswith("_"))


def _is_view(target):
    schema = _schema(target)
    if schema is None or not schema.returns:
        return False
    info = schema.returns[0].alias_info
    return info is not None and not info.is_write


def _functional_twin(target):
    schema = target._schema
    base = schema.name.split("::")[1][:-1]
    packet = getattr(aten, base, None)
    overload = target._overloadname
    op = getattr(packet, overload, None) if packet is not None else None
    if op is None:
        raise TraceError("in-place op %s has no functional twin aten.%s.%s" % (target, base, overload))
    names = [a.name for a in op._schema.arguments]
    if names != [a.name for a in schema.arguments]:
        raise TraceError("in-place op %s and %s differ in arguments" % (target, op))
    return op


def _functionalize(graph, placeholder_info):
    """Replace in-place ops by functional twins; return [(InputInfo, final value)]."""
    current = {}
    origin = {}
    order = {n: i for i, n in enumerate(graph.nodes)}
    mutated = {}
    for node in list(graph.nodes):
        if node.op not in ("call_function", "output"):
            continue
        node.args = fx.node.map_arg(node.args, lambda a: current.get(a, a))
        node.kwargs = fx.node.map_arg(node.kwargs, lambda a: current.get(a, a))
        if node.op != "call_function" or not _is_inplace(node.target):
            continue
        self_arg = node.args[0]
        root = self_arg
        while root in origin:
            root = origin[root]
        if root.op == "call_function" and _is_view(root.target):
            raise TraceError("node %s: in-place %s on a view (%s) is not supported; "
                             "write the model without it" % (node.name, node.target, root.name))
        for user in root.users:
            if user is not node and order.get(user, 0) < order[node] and \
                    user.op == "call_function" and _is_view(user.target):
                raise TraceError("node %s: in-place %s on %s, which has a live view %s"
                                 % (node.name, node.target, root.name, user.name))
        if root.op == "placeholder":
            info = placeholder_info.get(root)
            if info is None or info.kind != "buffer":
                kind = info.kind if info else "unknown"
                raise TraceError("node %s: in-place %s mutates %s input %s; only buffers may be mutated"
                                 % (node.name, node.target, kind, root.name))
            mutated[root] = (info, node)
        node.target = _functional_twin(node.target)
        node.meta["fxgen_functionalized"] = True
        origin[node] = root
        current[root] = node
    return [(info, current[ph]) for ph, (info, _) in mutated.items()]


def _collect_multi_output_meta(graph):
    """For each node read through getitem, the meta 'val' of each output index."""
    out = {}
    for node in graph.nodes:
        if node.op != "call_function" or node.target is operator.getitem:
            continue
        getitems = [u for u in node.users if u.op == "call_function" and u.target is operator.getitem]
        if not getitems:
            continue
        metas = {}
        for u in getitems:
            metas.setdefault(u.args[1], u.meta.get("val"))
        n = max(metas) + 1
        out[node] = [metas.get(i) for i in range(n)]
    return out


def _fold_concrete_symints(graph, symbols):
    """Replace symbolic-int nodes whose value is a known integer by that integer.

    1.13's tracer sometimes reads a static size through aten.sym_size;
    torch.export would have specialized it to a literal.
    """
    if symbols.shape_env is None:
        return
    sym_types = (torch.SymIntNode,) + ((PySymInt,) if PySymInt else ())
    for node in list(graph.nodes):
        val = node.meta.get("val")
        if node.op != "call_function" or not isinstance(val, sym_types):
            continue
        expr = symbols.expr_of(val.expr if isinstance(val, PySymInt) else val)
        if not expr.is_Integer:
            continue
        value = int(expr)
        for user in list(node.users):
            user.args = fx.node.map_arg(user.args, lambda a: value if a is node else a)
            user.kwargs = fx.node.map_arg(user.kwargs, lambda a: value if a is node else a)
        graph.erase_node(node)


def _lift_constants(gm, infos):
    """Turn tensor get_attr nodes into c_lifted_tensor_<i> placeholders."""
    first_user = next(i.node for i in infos if i.kind == "user_input") \
        if any(i.kind == "user_input" for i in infos) else None
    constants = []
    for node in list(gm.graph.nodes):
        if node.op != "get_attr":
            continue
        value = getattr(gm, node.target)
        if not isinstance(value, torch.Tensor):
            raise TraceError("get_attr %s is a %s; only tensor constants can be lifted"
                             % (node.target, type(value).__name__))
        i = len(constants)
        ctx = gm.graph.inserting_before(first_user) if first_user is not None else \
            gm.graph.inserting_before(next(iter(gm.graph.nodes)))
        with ctx:
            ph = gm.graph.placeholder("c_lifted_tensor_%d" % i)
        ph.meta.update(node.meta)
        ph.meta["val"] = None
        node.replace_all_uses_with(ph)
        gm.graph.erase_node(node)
        info = InputInfo("constant", ph.name, "lifted_tensor_%d" % i, value.detach().clone())
        info.node = ph
        constants.append(info)
    return constants


def _order_inputs(infos, constants):
    kinds = ("parameter", "buffer")
    return [i for i in infos if i.kind in kinds] + constants + \
        [i for i in infos if i.kind == "user_input"]
