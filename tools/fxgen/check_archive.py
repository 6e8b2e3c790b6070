#!/usr/bin/env python3
"""Validate PT2 archives (torch >= 2.9 layout) and their io/ fixtures.

    python3 tools/fxgen/check_archive.py [--ops-spec gen/ops.spec] [--execute] DIR_OR_PT2...

Structural checks need only the Python standard library:

* container: one root folder, stored records, flags 0x0808, data 64-byte
  aligned, archive_format/archive_version/byteorder/.data/version records;
* program JSON: every struct has its fields in declaration order, every
  union exactly one known tag, schema major 8;
* names: every tensor/symbol name defined once, before use, with a
  TensorMeta / SymInt value; graph inputs match the signature's input specs
  and graph outputs its output specs; symbols in TensorMetas have range
  constraints;
* payloads: every parameter, buffer and constant of the signature has a
  PayloadMeta whose record exists, holds a whole number of elements and
  covers the strided view; payload metas agree with the graph's placeholder
  metas (dtype, sizes);
* io/: input_<i>.npy match the user inputs' dtype and shape (hints for
  dynamic dims), one output_<i>.npy per user output;
* fixtures that can catch errors: no expected output is degenerate
  (constant, all zero, NaN or Inf), and no BatchNorm buffer holds the
  trivial statistics of a fresh module (running_mean all 0, running_var
  all 1), which would make eval-mode batch norm a near identity.

--ops-spec checks every node target and argument name against the op
table (gen/ops.spec). --execute (needs torch) rebuilds the weights from the
payloads, runs the program op by op with torch and compares the results with
io/output_<i>.npy.
"""

import sys

sys.dont_write_bytecode = True

import argparse  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import struct  # noqa: E402
import zipfile  # noqa: E402


class CheckError(Exception):
    """An archive violates the format; the message names the file and JSON path."""


DTYPE_SIZES = {1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 2, 7: 4, 8: 8, 9: 4, 10: 8, 11: 16, 12: 1, 13: 2,
               28: 2, 29: 1, 30: 1, 31: 1, 32: 1, 33: 1, 34: 4, 35: 8}

FIELDS = {
    "ExportedProgram": ["graph_module", "opset_version", "range_constraints", "schema_version",
                        "verifiers", "torch_version", "guards_code"],
    "GraphModule": ["graph", "signature", "module_call_graph", "metadata", "treespec_namedtuple_fields"],
    "Graph": ["inputs", "outputs", "nodes", "tensor_values", "sym_int_values", "sym_bool_values",
              "is_single_tensor_return", "custom_obj_values", "sym_float_values"],
    "Node": ["target", "inputs", "outputs", "metadata", "is_hop_single_tensor_return", "name"],
    "NamedArgument": ["name", "arg", "kind"],
    "TensorMeta": ["dtype", "sizes", "requires_grad", "device", "strides", "storage_offset", "layout"],
    "Device": ["type", "index"],
    "SymExpr": ["expr_str", "hint"],
    "GraphSignature": ["input_specs", "output_specs"],
    "ModuleCallEntry": ["fqn", "signature"],
    "ModuleCallSignature": ["inputs", "outputs", "in_spec", "out_spec", "forward_arg_names"],
    "RangeConstraint": ["min_val", "max_val"],
    "SchemaVersion": ["major", "minor"],
    "PayloadConfig": ["config"],
    "PayloadMeta": ["path_name", "is_param", "use_pickle", "tensor_meta"],
}
ARGUMENT_TAGS = {"as_none", "as_tensor", "as_tensors", "as_int", "as_ints", "as_float", "as_floats",
                 "as_string", "as_strings", "as_sym_int", "as_sym_ints", "as_scalar_type",
                 "as_memory_format", "as_layout", "as_device", "as_bool", "as_bools", "as_sym_bool",
                 "as_sym_bools", "as_graph", "as_optional_tensors", "as_custom_obj", "as_operator",
                 "as_sym_float", "as_sym_floats", "as_optional_tensor", "as_complex",
                 "as_nested_tensors", "as_int_lists", "as_string_to_argument", "as_float_lists"}
INPUT_SPEC_TAGS = {"user_input", "parameter", "buffer", "tensor_constant", "custom_obj", "token",
                   "constant_input"}
OUTPUT_SPEC_TAGS = {"user_output", "loss_output", "buffer_mutation", "gradient_to_parameter",
                    "gradient_to_user_input", "user_input_mutation", "token", "parameter_mutation"}
_SYMBOL = re.compile(r"Symbol\('([^']+)'")
_TARGET = re.compile(r"^(torch\.ops\.[A-Za-z_][\w]*\.[A-Za-z_]\w*\.[A-Za-z_]\w*|_operator\.\w+|torch\.sym_\w+|math\.\w+)$")


def fail(where, msg):
    raise CheckError("%s: %s" % (where, msg))


def struct_fields(obj, kind, where):
    if not isinstance(obj, dict):
        fail(where, "%s must be an object, got %s" % (kind, type(obj).__name__))
    want = FIELDS[kind]
    if list(obj) != want:
        fail(where, "%s fields %s, want %s (declaration order)" % (kind, list(obj), want))


def union(obj, tags, where):
    if not isinstance(obj, dict) or len(obj) != 1:
        fail(where, "union must be an object with exactly one key, got %r" % (obj,))
    tag = next(iter(obj))
    if tag not in tags:
        fail(where, "unknown union tag %r" % tag)
    return tag, obj[tag]


# --- container -------------------------------------------------------------------------------

def read_container(path):
    try:
        with open(path, "rb") as f:
            raw = f.read()
        zf = zipfile.ZipFile(io.BytesIO(raw))
    except (zipfile.BadZipFile, OSError) as e:
        fail(path, "not a zip archive: %s" % e)
    infos = zf.infolist()
    if not infos:
        fail(path, "empty archive")
    root = infos[0].filename.split("/")[0]
    records = {}
    for info in infos:
        where = "%s: record %s" % (path, info.filename)
        if not info.filename.startswith(root + "/"):
            fail(where, "not under the root folder %r" % root)
        if info.compress_type != zipfile.ZIP_STORED:
            fail(where, "compressed (method %d); records must be stored" % info.compress_type)
        if info.flag_bits != 0x0808:
            fail(where, "general-purpose flags 0x%04x, want 0x0808" % info.flag_bits)
        off = info.header_offset
        if raw[off:off + 4] != b"PK\x03\x04":
            fail(where, "no local header at offset %d" % off)
        name_len, extra_len = struct.unpack("<HH", raw[off + 26:off + 30])
        data_off = off + 30 + name_len + extra_len
        if data_off % 64 != 0:
            fail(where, "data at offset %d is not 64-byte aligned" % data_off)
        try:
            records[info.filename[len(root) + 1:]] = zf.read(info)
        except (zipfile.BadZipFile, ValueError) as e:
            fail(where, "unreadable: %s" % e)
    expect = {"archive_format": b"pt2", "archive_version": b"0", ".data/version": b"6\n"}
    for name, value in expect.items():
        if records.get(name) != value:
            fail(path, "record %s is %r, want %r" % (name, records.get(name), value))
    if records.get("byteorder") not in (b"little", b"big"):
        fail(path, "record byteorder is %r" % records.get("byteorder"))
    sid = records.get(".data/serialization_id")
    if sid is None or len(sid) != 40:
        fail(path, "record .data/serialization_id missing or not 40 bytes")
    return root, records


# --- program JSON ------------------------------------------------------------------------------

class Program:
    """Walks one models/<name>.json, collecting definitions and uses."""

    def __init__(self, path, name, ep):
        self.path = path
        self.name = name
        self.ep = ep
        self.tensors = {}
        self.syms = {}
        self.defined = set()
        self.symbols_used = set()

    def where(self, jp):
        return "%s: models/%s.json %s" % (self.path, self.name, jp)

    def check(self):
        ep = self.ep
        struct_fields(ep, "ExportedProgram", self.where("$"))
        struct_fields(ep["schema_version"], "SchemaVersion", self.where("schema_version"))
        if ep["schema_version"]["major"] != 8:
            fail(self.where("schema_version"), "major %r, want 8" % ep["schema_version"]["major"])
        for sym, rc in ep["range_constraints"].items():
            struct_fields(rc, "RangeConstraint", self.where("range_constraints.%s" % sym))
        gm = ep["graph_module"]
        struct_fields(gm, "GraphModule", self.where("graph_module"))
        g = gm["graph"]
        gw = "graph_module.graph"
        struct_fields(g, "Graph", self.where(gw))
        for name, meta in g["tensor_values"].items():
            self.tensor_meta(meta, "%s.tensor_values.%s" % (gw, name))
        for name, si in g["sym_int_values"].items():
            self.sym_int(si, "%s.sym_int_values.%s" % (gw, name))
        for i, a in enumerate(g["inputs"]):
            self.define(a, "%s.inputs[%d]" % (gw, i))
        for i, node in enumerate(g["nodes"]):
            self.node(node, "%s.nodes[%d]" % (gw, i))
        for i, a in enumerate(g["outputs"]):
            self.use(a, "%s.outputs[%d]" % (gw, i))
        for sym in sorted(self.symbols_used):
            if sym not in ep["range_constraints"]:
                fail(self.where("range_constraints"), "symbol %s used in a TensorMeta has no range" % sym)
        self.signature(gm["signature"], g)
        self.call_graph(gm["module_call_graph"])

    def tensor_meta(self, meta, jp):
        struct_fields(meta, "TensorMeta", self.where(jp))
        if meta["dtype"] not in DTYPE_SIZES:
            fail(self.where(jp + ".dtype"), "unknown ScalarType %r" % meta["dtype"])
        if len(meta["sizes"]) != len(meta["strides"]):
            fail(self.where(jp), "%d sizes but %d strides" % (len(meta["sizes"]), len(meta["strides"])))
        for k in ("sizes", "strides"):
            for i, s in enumerate(meta[k]):
                self.sym_int(s, "%s.%s[%d]" % (jp, k, i))
        self.sym_int(meta["storage_offset"], jp + ".storage_offset")
        struct_fields(meta["device"], "Device", self.where(jp + ".device"))
        if meta["layout"] != 7:
            fail(self.where(jp + ".layout"), "layout %r, want 7 (strided)" % meta["layout"])

    def sym_int(self, si, jp):
        tag, val = union(si, {"as_int", "as_expr"}, self.where(jp))
        if tag == "as_int":
            if not isinstance(val, int) or isinstance(val, bool):
                fail(self.where(jp), "as_int must be an integer")
            return
        struct_fields(val, "SymExpr", self.where(jp + ".as_expr"))
        syms = _SYMBOL.findall(val["expr_str"])
        if not syms:
            fail(self.where(jp), "expr_str %r names no symbol" % val["expr_str"])
        self.symbols_used.update(syms)

    def _def_name(self, name, kind, jp):
        if name in self.defined:
            fail(self.where(jp), "%s %s defined twice" % (kind, name))
        table = self.ep["graph_module"]["graph"]["tensor_values" if kind == "tensor" else "sym_int_values"]
        if name not in table:
            fail(self.where(jp), "%s %s has no %s entry" % (kind, name,
                 "tensor_values" if kind == "tensor" else "sym_int_values"))
        self.defined.add(name)

    def define(self, arg, jp):
        tag, val = union(arg, ARGUMENT_TAGS, self.where(jp))
        if tag == "as_tensor":
            self._def_name(val["name"], "tensor", jp)
        elif tag == "as_tensors":
            for i, t in enumerate(val):
                self._def_name(t["name"], "tensor", "%s.as_tensors[%d]" % (jp, i))
        elif tag == "as_sym_int":
            st, sv = union(val, {"as_name", "as_int"}, self.where(jp + ".as_sym_int"))
            if st == "as_name":
                self._def_name(sv, "symint", jp)
        elif tag != "as_none":
            fail(self.where(jp), "cannot define a value with %s" % tag)

    def _use_name(self, name, jp):
        if name not in self.defined:
            fail(self.where(jp), "name %s used before it is defined" % name)

    def use(self, arg, jp):
        tag, val = union(arg, ARGUMENT_TAGS, self.where(jp))
        if tag == "as_tensor":
            self._use_name(val["name"], jp)
        elif tag == "as_tensors":
            for i, t in enumerate(val):
                self._use_name(t["name"], "%s[%d]" % (jp, i))
        elif tag == "as_optional_tensors":
            for i, t in enumerate(val):
                ot, ov = union(t, {"as_tensor", "as_none"}, self.where("%s[%d]" % (jp, i)))
                if ot == "as_tensor":
                    self._use_name(ov["name"], "%s[%d]" % (jp, i))
        elif tag in ("as_sym_int", "as_sym_ints"):
            for i, s in enumerate(val if tag == "as_sym_ints" else [val]):
                st, sv = union(s, {"as_name", "as_int"}, self.where("%s[%d]" % (jp, i)))
                if st == "as_name":
                    self._use_name(sv, jp)
        elif tag in ("as_float", "as_floats"):
            for v in val if tag == "as_floats" else [val]:
                if isinstance(v, str) and v not in ("Infinity", "-Infinity", "NaN"):
                    fail(self.where(jp), "float %r" % v)
        elif tag == "as_device":
            struct_fields(val, "Device", self.where(jp + ".as_device"))
        return tag

    def node(self, node, jp):
        struct_fields(node, "Node", self.where(jp))
        if not _TARGET.match(node["target"]):
            fail(self.where(jp + ".target"), "target %r is not spelled like torch.export's" % node["target"])
        if "getitem" in node["target"]:
            fail(self.where(jp + ".target"), "getitem nodes must be folded into their producer")
        seen = set()
        for i, na in enumerate(node["inputs"]):
            njp = "%s.inputs[%d]" % (jp, i)
            struct_fields(na, "NamedArgument", self.where(njp))
            if na["kind"] not in (1, 2):
                fail(self.where(njp + ".kind"), "kind %r, want 1 or 2" % na["kind"])
            if na["name"] in seen:
                fail(self.where(njp), "argument %s given twice" % na["name"])
            seen.add(na["name"])
            self.use(na["arg"], njp + ".arg")
        for k, v in node["metadata"].items():
            if not isinstance(v, str):
                fail(self.where("%s.metadata.%s" % (jp, k)), "metadata values must be strings")
        for i, out in enumerate(node["outputs"]):
            self.define(out, "%s.outputs[%d]" % (jp, i))
        if not isinstance(node["name"], str) or not node["name"]:
            fail(self.where(jp + ".name"), "node name missing")

    def signature(self, sig, g):
        sw = "graph_module.signature"
        struct_fields(sig, "GraphSignature", self.where(sw))
        if len(sig["input_specs"]) != len(g["inputs"]):
            fail(self.where(sw), "%d input specs for %d graph inputs" % (len(sig["input_specs"]), len(g["inputs"])))
        self.state_inputs = []
        self.user_inputs = []
        for i, (spec, ginput) in enumerate(zip(sig["input_specs"], g["inputs"])):
            jp = "%s.input_specs[%d]" % (sw, i)
            tag, val = union(spec, INPUT_SPEC_TAGS, self.where(jp))
            gname = ginput.get("as_tensor", {}).get("name")
            if tag == "user_input":
                name = val["arg"].get("as_tensor", {}).get("name")
                self.user_inputs.append(name)
            elif tag in ("parameter", "buffer", "tensor_constant"):
                name = val["arg"]["name"]
                key = {"parameter": "parameter_name", "buffer": "buffer_name",
                       "tensor_constant": "tensor_constant_name"}[tag]
                persistent = val.get("persistent", True) if tag == "buffer" else tag == "parameter"
                self.state_inputs.append((tag, name, val[key], persistent))
            else:
                fail(self.where(jp), "input spec %s is not produced by fxgen programs" % tag)
            if name != gname:
                fail(self.where(jp), "names %r but graph input %d is %r" % (name, i, gname))
        if len(sig["output_specs"]) != len(g["outputs"]):
            fail(self.where(sw), "%d output specs for %d graph outputs"
                 % (len(sig["output_specs"]), len(g["outputs"])))
        buffers = {fqn for tag, _, fqn, _ in self.state_inputs if tag == "buffer"}
        self.user_output_index = []
        seen_user = False
        for i, (spec, gout) in enumerate(zip(sig["output_specs"], g["outputs"])):
            jp = "%s.output_specs[%d]" % (sw, i)
            tag, val = union(spec, OUTPUT_SPEC_TAGS, self.where(jp))
            if tag == "user_output":
                seen_user = True
                self.user_output_index.append(i)
                arg = val["arg"]
            elif tag == "buffer_mutation":
                if seen_user:
                    fail(self.where(jp), "buffer mutation after a user output")
                if val["buffer_name"] not in buffers:
                    fail(self.where(jp), "mutates %r, which is not a buffer input" % val["buffer_name"])
                arg = {"as_tensor": val["arg"]}
            else:
                fail(self.where(jp), "output spec %s is not produced by fxgen programs" % tag)
            if arg != gout:
                fail(self.where(jp), "arg %s does not match graph output %s" % (arg, gout))

    def call_graph(self, mcg):
        if not mcg or mcg[0].get("fqn") != "":
            fail(self.where("graph_module.module_call_graph"), "first entry must be the root (fqn \"\")")
        for i, e in enumerate(mcg):
            jp = "graph_module.module_call_graph[%d]" % i
            struct_fields(e, "ModuleCallEntry", self.where(jp))
            if e["signature"] is not None:
                s = e["signature"]
                struct_fields(s, "ModuleCallSignature", self.where(jp + ".signature"))
                for k in ("in_spec", "out_spec"):
                    spec = json.loads(s[k])
                    if not (isinstance(spec, list) and len(spec) == 2 and spec[0] == 1):
                        fail(self.where("%s.signature.%s" % (jp, k)), "not a protocol-1 TreeSpec")
                for j, a in enumerate(s["inputs"] + s["outputs"]):
                    self.use(a, "%s.signature.args[%d]" % (jp, j))


# --- payloads ----------------------------------------------------------------------------------

def check_payloads(prog, records):
    weights_cfg = load_config(prog, records, "data/weights/%s_weights_config.json" % prog.name)
    consts_cfg = load_config(prog, records, "data/constants/%s_constants_config.json" % prog.name)
    tv = prog.ep["graph_module"]["graph"]["tensor_values"]
    for tag, name, fqn, persistent in prog.state_inputs:
        cfg, directory = (weights_cfg, "data/weights/") if persistent else (consts_cfg, "data/constants/")
        jp = "%s config entry %s (input %s)" % (directory, fqn, name)
        meta = cfg["config"].get(fqn)
        if meta is None:
            fail(prog.where(jp), "missing")
        gmeta = tv[name]
        for k in ("dtype", "sizes", "strides", "storage_offset"):
            if meta["tensor_meta"][k] != gmeta[k]:
                fail(prog.where(jp), "payload %s %s differs from the graph's %s"
                     % (k, meta["tensor_meta"][k], gmeta[k]))
        if (tag == "parameter") != meta["is_param"]:
            fail(prog.where(jp), "is_param is %r for a %s" % (meta["is_param"], tag))
    for cfg, directory in ((weights_cfg, "data/weights/"), (consts_cfg, "data/constants/")):
        for fqn, meta in cfg["config"].items():
            trivial = {"running_mean": 0.0, "running_var": 1.0}.get(fqn.rsplit(".", 1)[-1])
            if trivial is not None and meta.get("tensor_meta") and meta["tensor_meta"]["dtype"] == 7:
                data = records.get(directory + meta["path_name"], b"")
                order = "<" if records.get("byteorder") != b"big" else ">"
                vals = struct.unpack("%s%df" % (order, len(data) // 4), data[:len(data) // 4 * 4])
                if vals and all(v == trivial for v in vals):
                    fail(prog.where("%s config entry %s" % (directory, fqn)),
                         "BatchNorm statistics are trivial (every element %s): set them or run training batches"
                         % trivial)
            jp = "%s config entry %s" % (directory, fqn)
            struct_fields(meta, "PayloadMeta", prog.where(jp))
            if meta["use_pickle"]:
                fail(prog.where(jp), "pickled payloads are not produced by fxgen")
            tm = meta["tensor_meta"]
            prog.tensor_meta(tm, jp + ".tensor_meta")
            data = records.get(directory + meta["path_name"])
            if data is None:
                fail(prog.where(jp), "record %s%s missing" % (directory, meta["path_name"]))
            esize = DTYPE_SIZES[tm["dtype"]]
            if len(data) % esize:
                fail(prog.where(jp), "record of %d bytes is not whole %d-byte elements" % (len(data), esize))
            numel = len(data) // esize
            sizes = [s["as_int"] for s in tm["sizes"]]
            strides = [s["as_int"] for s in tm["strides"]]
            offset = tm["storage_offset"]["as_int"]
            if all(s > 0 for s in sizes):
                last = offset + sum((s - 1) * st for s, st in zip(sizes, strides))
                if last >= numel:
                    fail(prog.where(jp), "view (sizes %s, strides %s, offset %d) reaches element %d of %d"
                         % (sizes, strides, offset, last, numel))
    return weights_cfg, consts_cfg


def load_config(prog, records, name):
    data = records.get(name)
    if data is None:
        fail(prog.where(""), "record %s missing" % name)
    try:
        cfg = json.loads(data)
    except ValueError as e:
        fail(prog.where(name), "invalid JSON: %s" % e)
    struct_fields(cfg, "PayloadConfig", prog.where(name))
    return cfg


# --- io fixtures -------------------------------------------------------------------------------

NPY_DESCR = {"|u1": 1, "|i1": 2, "<i2": 3, "<i4": 4, "<i8": 5, "<f2": 6, "<f4": 7, "<f8": 8,
             "<c8": 10, "<c16": 11, "|b1": 12}


def read_npy_header(path):
    """(export dtype code, shape) from a .npy header; no numpy needed."""
    import ast
    with open(path, "rb") as f:
        magic = f.read(8)
        if magic[:6] != b"\x93NUMPY":
            fail(path, "not a .npy file")
        major = magic[6]
        n = struct.unpack("<H" if major == 1 else "<I", f.read(2 if major == 1 else 4))[0]
        try:
            header = ast.literal_eval(f.read(n).decode("latin1"))
        except (ValueError, SyntaxError) as e:
            fail(path, "bad .npy header: %s" % e)
    if header.get("fortran_order"):
        fail(path, "Fortran-ordered arrays are not used by fxgen")
    code = NPY_DESCR.get(header.get("descr"))
    if code is None:
        fail(path, "unsupported dtype %r" % header.get("descr"))
    return code, tuple(header["shape"])


NPY_STRUCT = {"|u1": "B", "|i1": "b", "<i2": "h", "<i4": "i", "<i8": "q", "<f2": "e", "<f4": "f", "<f8": "d",
              "|b1": "?"}


def read_npy(path):
    """(descr, shape, values) of a little-endian C-order .npy file; no numpy needed."""
    import ast
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:6] != b"\x93NUMPY":
        fail(path, "not a .npy file")
    hl = 2 if raw[6] == 1 else 4
    n = struct.unpack("<H" if hl == 2 else "<I", raw[8:8 + hl])[0]
    header = ast.literal_eval(raw[8 + hl:8 + hl + n].decode("latin1"))
    code = NPY_STRUCT.get(header["descr"])
    if code is None:
        fail(path, "unsupported dtype %r" % header["descr"])
    count = 1
    for d in header["shape"]:
        count *= d
    data = raw[8 + hl + n:]
    size = struct.calcsize(code)
    if len(data) != count * size:
        fail(path, "%d data bytes for %d elements of %s" % (len(data), count, header["descr"]))
    return header["descr"], tuple(header["shape"]), struct.unpack("<%d%s" % (count, code), data)


def degenerate(descr, values):
    """Why an expected output cannot catch errors ("" when it can)."""
    if not values:
        return "empty"
    if descr[-2] == "f":
        if any(v != v or v in (float("inf"), float("-inf")) for v in values):
            return "not finite (NaN or Inf)"
        if all(v == 0 for v in values):
            return "all zero"
    if len(values) > 1 and all(v == values[0] for v in values):
        return "constant (every element %r)" % (values[0],)
    return ""


def check_outputs_useful(io_dir, n_out):
    for i in range(n_out):
        path = os.path.join(io_dir, "output_%d.npy" % i)
        descr, _, values = read_npy(path)
        why = degenerate(descr, values)
        if why:
            fail(path, "expected output is %s: a fixture must be able to catch errors" % why)


def check_io(prog, io_dir):
    tv = prog.ep["graph_module"]["graph"]["tensor_values"]
    for i, name in enumerate(prog.user_inputs):
        path = os.path.join(io_dir, "input_%d.npy" % i)
        if not os.path.isfile(path):
            fail(path, "missing (user input %s)" % name)
        code, shape = read_npy_header(path)
        meta = tv[name]
        if code != meta["dtype"] or len(shape) != len(meta["sizes"]):
            fail(path, "dtype %d shape %s does not match input %s (dtype %d, rank %d)"
                 % (code, shape, name, meta["dtype"], len(meta["sizes"])))
        for d, s in enumerate(meta["sizes"]):
            if "as_int" in s and s["as_int"] != shape[d]:
                fail(path, "dim %d is %d, input %s has %d" % (d, shape[d], name, s["as_int"]))
            if "as_expr" in s and s["as_expr"]["hint"] is not None and s["as_expr"]["hint"].get("as_int") != shape[d]:
                fail(path, "dim %d is %d, the hint of input %s is %s" % (d, shape[d], name, s["as_expr"]["hint"]))
    n_out = len(prog.user_output_index)
    for i in range(n_out):
        path = os.path.join(io_dir, "output_%d.npy" % i)
        if not os.path.isfile(path):
            fail(path, "missing (user output %d)" % i)
    if os.path.exists(os.path.join(io_dir, "output_%d.npy" % n_out)):
        fail(io_dir, "more output files than the program's %d user outputs" % n_out)
    check_outputs_useful(io_dir, n_out)


# --- op table ----------------------------------------------------------------------------------

def load_ops_spec(path):
    ops = {}
    with open(path) as f:
        lines = f.readlines()
    for line in lines:
        line = line.strip()
        if not line or line.startswith(("#", "[")):
            continue
        sig = line.split("|")[0].strip()
        m = re.match(r"^([\w]+)::([\w]+)(?:\.([\w]+))?\((.*)\)\s*->", sig)
        if not m:
            continue
        ns, name, overload, args = m.groups()
        names = []
        depth = 0
        cur = ""
        for ch in args:
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
            if ch == "," and depth == 0:
                names.append(cur)
                cur = ""
            else:
                cur += ch
        names.append(cur)
        arg_names = []
        for a in names:
            a = a.split("=")[0].strip()
            if not a or a in ("*", "..."):
                continue
            arg_names.append(a.split()[-1])
        ops["%s::%s.%s" % (ns, name, overload or "default")] = arg_names
    return ops


def check_ops(prog, ops):
    for i, node in enumerate(prog.ep["graph_module"]["graph"]["nodes"]):
        t = node["target"]
        if t.startswith("torch.ops."):
            _, _, ns, name, overload = t.split(".")
            key = "%s::%s.%s" % (ns, name, overload)
        elif t.startswith("_operator."):
            key = "operator::%s.default" % t.split(".", 1)[1]
        else:
            key = t.replace(".", "::", 1) + ".default"
        jp = "graph_module.graph.nodes[%d] (%s)" % (i, node["name"])
        if key not in ops:
            fail(prog.where(jp), "op %s is not in the op table" % t)
        for na in node["inputs"]:
            if na["name"] not in ops[key]:
                fail(prog.where(jp), "argument %r is not in the schema of %s %s" % (na["name"], key, ops[key]))


# --- execution ---------------------------------------------------------------------------------

def execute(prog, records, weights_cfg, consts_cfg, io_dir):
    import numpy as np
    import operator
    import torch

    codes = {1: torch.uint8, 2: torch.int8, 3: torch.int16, 4: torch.int32, 5: torch.int64, 6: torch.float16,
             7: torch.float32, 8: torch.float64, 12: torch.bool, 13: torch.bfloat16}

    def rebuild(cfg, directory, fqn):
        meta = cfg["config"][fqn]
        tm = meta["tensor_meta"]
        dtype = codes[tm["dtype"]]
        data = bytearray(records[directory + meta["path_name"]])
        flat = torch.frombuffer(data, dtype=dtype) if data else torch.zeros(0, dtype=dtype)
        sizes = [s["as_int"] for s in tm["sizes"]]
        if not data:
            return torch.zeros(sizes, dtype=dtype)
        return flat.as_strided(sizes, [s["as_int"] for s in tm["strides"]], tm["storage_offset"]["as_int"])

    env = {}
    for tag, name, fqn, persistent in prog.state_inputs:
        if persistent:
            env[name] = rebuild(weights_cfg, "data/weights/", fqn)
        else:
            env[name] = rebuild(consts_cfg, "data/constants/", fqn)
    for i, name in enumerate(prog.user_inputs):
        env[name] = torch.from_numpy(np.load(os.path.join(io_dir, "input_%d.npy" % i)))

    def value(arg):
        tag, v = next(iter(arg.items()))
        if tag == "as_tensor":
            return env[v["name"]]
        if tag == "as_tensors":
            return [env[t["name"]] for t in v]
        if tag == "as_optional_tensors":
            return [None if "as_none" in t else env[t["as_tensor"]["name"]] for t in v]
        if tag in ("as_float",):
            return float(v.replace("Infinity", "inf")) if isinstance(v, str) else v
        if tag == "as_floats":
            return [float(x.replace("Infinity", "inf")) if isinstance(x, str) else x for x in v]
        if tag == "as_sym_int":
            return env[v["as_name"]] if "as_name" in v else v["as_int"]
        if tag == "as_sym_ints":
            return [env[s["as_name"]] if "as_name" in s else s["as_int"] for s in v]
        if tag == "as_scalar_type":
            return codes[v]
        if tag == "as_device":
            return torch.device(v["type"], v["index"]) if v["index"] is not None else torch.device(v["type"])
        if tag == "as_layout":
            return torch.strided
        if tag == "as_memory_format":
            return {1: torch.contiguous_format, 2: torch.channels_last, 3: torch.channels_last_3d,
                    4: torch.preserve_format}[v]
        if tag == "as_none":
            return None
        return v

    def resolve(target):
        if target.startswith("_operator."):
            return getattr(operator, target.split(".", 1)[1])
        obj = torch
        for part in target.split(".")[1:]:
            obj = getattr(obj, part)
        return obj

    with torch.no_grad():
        for i, node in enumerate(prog.ep["graph_module"]["graph"]["nodes"]):
            fn = resolve(node["target"])
            args = [value(na["arg"]) for na in node["inputs"] if na["kind"] == 1]
            kwargs = {na["name"]: value(na["arg"]) for na in node["inputs"] if na["kind"] == 2}
            try:
                res = fn(*args, **kwargs)
            except Exception as e:  # noqa: BLE001 - report any torch failure with the node
                fail(prog.where("graph_module.graph.nodes[%d] (%s)" % (i, node["name"])),
                     "execution failed: %s" % str(e).splitlines()[0])
            outs = node["outputs"]
            if not outs:  # _assert_tensor_metadata and other checks return nothing
                continue
            if len(outs) == 1:
                res = [res]
            for out, r in zip(outs, res):
                tag, v = next(iter(out.items()))
                if tag == "as_tensor":
                    env[v["name"]] = r
                elif tag == "as_tensors":
                    for t, rr in zip(v, r):
                        env[t["name"]] = rr
                elif tag == "as_sym_int":
                    env[v["as_name"]] = int(r)
    outputs = prog.ep["graph_module"]["graph"]["outputs"]
    for k, idx in enumerate(prog.user_output_index):
        got = value(outputs[idx])
        want = torch.from_numpy(np.load(os.path.join(io_dir, "output_%d.npy" % k)))
        ok = torch.allclose(got, want, rtol=1e-4, atol=1e-5) if want.is_floating_point() else torch.equal(got, want)
        if got.shape != want.shape or not ok:
            fail(prog.where("graph_module.graph.outputs[%d]" % idx),
                 "executed output differs from io/output_%d.npy" % k)


# --- driver ------------------------------------------------------------------------------------

def check_path(target, ops=None, run=False):
    if os.path.isdir(target):
        path = os.path.join(target, "program.pt2")
        io_dir = os.path.join(target, "io")
    else:
        path = target
        io_dir = os.path.join(os.path.dirname(target), "io")
    _, records = read_container(path)
    models = sorted(n for n in records if n.startswith("models/") and n.endswith(".json"))
    if not models:
        fail(path, "no models/<name>.json record")
    summaries = []
    for m in models:
        name = m[len("models/"):-len(".json")]
        try:
            ep = json.loads(records[m])
        except ValueError as e:
            fail(path, "%s: invalid JSON: %s" % (m, e))
        prog = Program(path, name, ep)
        prog.check()
        wcfg, ccfg = check_payloads(prog, records)
        if os.path.isdir(io_dir):
            check_io(prog, io_dir)
        if ops is not None:
            check_ops(prog, ops)
        if run:
            execute(prog, records, wcfg, ccfg, io_dir)
        summaries.append("%s: %d nodes, %d inputs, %d outputs" % (
            name, len(ep["graph_module"]["graph"]["nodes"]), len(ep["graph_module"]["graph"]["inputs"]),
            len(ep["graph_module"]["graph"]["outputs"])))
    return summaries


def main(argv=None):
    ap = argparse.ArgumentParser(description="Validate PT2 archives written by fxgen or torch.export.save.")
    ap.add_argument("paths", nargs="+", help="program directories (with program.pt2 and io/) or .pt2 files")
    ap.add_argument("--ops-spec", help="check targets and argument names against this gen/ops.spec")
    ap.add_argument("--execute", action="store_true", help="run each program with torch and compare outputs")
    args = ap.parse_args(argv)
    ops = load_ops_spec(args.ops_spec) if args.ops_spec else None
    bad = 0
    for p in args.paths:
        try:
            for s in check_path(p, ops, args.execute):
                print("ok   %s %s" % (p, s))
        except CheckError as e:
            bad += 1
            print("FAIL %s" % e, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
