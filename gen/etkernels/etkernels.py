"""Write gen/etkernels.spec: the kernels ExecuTorch's kernel libraries register.

Reads the kernel lists shipped in the installed executorch package
(kernels/portable/functions.yaml, et_copy_ops.yaml, custom_ops.yaml and
kernels/quantized/quantized.yaml), takes each kernel's schema from torch's
operator registry (entries of functions.yaml name an ATen op only) or from
the list itself (the other lists spell the schema), and finds the
functional op each out variant computes: the overload of the same op whose
arguments are the out variant's arguments without the out tensors, or
that plus arguments the out tensor carries (dtype, layout, device,
pin_memory, memory_format).

The runtime the executorch package ships (extension.pybindings.portable_lib)
links kernel libraries whose lists the package does not ship: its
optimized kernels (lib/libexecutorch_kernels_optimized.so, built from
ExecuTorch's kernels/optimized/optimized.yaml) register out variants the
portable library lacks, such as _fft_r2c.out. So the runtime's registered
operator names are read too, and each ATen out variant among them that no
list names is recorded with torch's schema and the library whose shared
object holds the registration: the N of lib/libexecutorch_kernels_N.so.

Usage: python gen/etkernels/etkernels.py [-o gen/etkernels.spec]
(without -o the file is written to stdout). gen/opgen reads the result.
"""

import argparse
import importlib.metadata
import importlib.util
import os
import sys

import yaml

LISTS = [
    ("portable", "kernels/portable/functions.yaml"),
    ("portable", "kernels/portable/custom_ops.yaml"),
    ("portable", "kernels/portable/et_copy_ops.yaml"),
    ("quantized", "kernels/quantized/quantized.yaml"),
]

CARRIED = {"dtype", "layout", "device", "pin_memory", "memory_format"}


def executorch_dir():
    spec = importlib.util.find_spec("executorch")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("etkernels: the executorch package is not installed (make venv)")
    return list(spec.submodule_search_locations)[0]


def entries(root):
    """Yield (library, name, schema-or-None) for every kernel in the lists."""
    for lib, rel in LISTS:
        with open(os.path.join(root, rel)) as f:
            doc = yaml.safe_load(f) or []
        for e in doc:
            if "func" in e:
                schema = e["func"]
                name = schema.split("(", 1)[0]
                if "::" not in name:
                    name = "aten::" + name
                    schema = "aten::" + schema
                yield lib, name, schema
            else:
                yield lib, "aten::" + e["op"], None


def runtime_ops(root):
    """Yield (library, name) for every ATen out variant the runtime registers."""
    from executorch.extension.pybindings import portable_lib

    libdir = os.path.join(root, "lib")
    objs = []
    for f in sorted(os.listdir(libdir)):
        if f.startswith("libexecutorch_kernels_") and f.endswith(".so"):
            with open(os.path.join(libdir, f), "rb") as fh:
                objs.append((f[len("libexecutorch_kernels_"):-len(".so")], fh.read()))
    for name in sorted(set(portable_lib._get_operator_names())):
        if not name.startswith("aten::"):
            continue
        s = torch_schema(name)
        if s is None:
            sys.exit("etkernels: the runtime registers %s but torch has no such op" % name)
        if not args_of(s)[1]:
            continue  # a prim op (sym_size, _local_scalar_dense), not a kernel
        needle = name.encode() + b"\0"
        libs = [lib for lib, data in objs if registers(data, needle)]
        if len(libs) != 1:
            sys.exit("etkernels: the runtime registers %s, found in %s of the kernel libraries in %s" %
                     (name, libs or "none", libdir))
        yield libs[0], name


def registers(data, needle):
    """Whether data holds needle as a whole NUL-terminated string."""
    i = data.find(needle)
    while i >= 0:
        if i == 0 or data[i - 1] == 0:
            return True
        i = data.find(needle, i + 1)
    return False


def split_name(name):
    ns, rest = name.split("::", 1)
    base, _, overload = rest.partition(".")
    return ns, base, overload or "default"


# Modules that register the non-ATen namespaces' functional ops with torch,
# so their out variants can be matched to them.
# (dim_order_ops and et_copy are registered by executorch.exir, slow to
# import: their out variants are named X.out for the functional X.)
REGISTRIES = [
    "torch.ao.quantization.fx._decomposed",
]


def load_registries():
    import importlib

    for m in REGISTRIES:
        importlib.import_module(m)


def packet(ns, base):
    import torch

    try:
        return getattr(getattr(torch.ops, ns), base)
    except (AttributeError, RuntimeError):
        return None


def torch_schema(name):
    ns, base, overload = split_name(name)
    p = packet(ns, base)
    if p is None or overload not in p.overloads():
        return None
    return getattr(p, overload)._schema


def args_of(schema):
    """(name, type) of each argument, and the names of the written (out) ones."""
    ins, outs = [], []
    for a in schema.arguments:
        if a.alias_info is not None and a.alias_info.is_write:
            outs.append(a.name)
        else:
            ins.append((a.name, str(a.type)))
    return ins, outs


def functional_of(name, schema):
    """The functional overload an out variant computes, or ''."""
    ns, base, overload = split_name(name)
    ins, outs = args_of(schema)
    if not outs:
        return ""
    p = packet(ns, base)
    if p is None:
        return "%s::%s" % (ns, base) if overload == "out" else ""
    best = ""
    for ov in sorted(p.overloads()):
        if ov == overload:
            continue
        s = getattr(p, ov)._schema
        fins, fouts = args_of(s)
        if fouts or any(a.alias_info is not None for a in s.arguments):
            continue
        if len(s.returns) != len(outs) and not (len(outs) == 1 and len(s.returns) == 1):
            if not (len(s.returns) == 1 and str(s.returns[0].type).endswith("[]")):
                continue
        full = fins == ins
        carried = [a for a in fins if a not in ins]
        if not full and not (all(a[0] in CARRIED for a in carried) and [a for a in fins if a in ins] == ins):
            continue
        fname = "%s::%s%s" % (ns, base, "" if ov == "default" else "." + ov)
        if full:
            return fname
        best = best or fname
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-o", "--out", help="output file (default stdout)")
    opts = ap.parse_args()
    root = executorch_dir()
    load_registries()
    version = importlib.metadata.version("executorch")
    rows = {}
    for lib, name, schema in entries(root):
        s = torch_schema(name)
        if s is not None:
            text = str(s)
        elif schema is not None:
            text = schema
        else:
            sys.exit("etkernels: %s is in %s's kernel list but torch has no such op" % (name, lib))
        if s is None:
            import torch

            s = torch._C.parse_schema(text)
        fn = functional_of(name, s)
        attrs = ["lib=" + lib]
        if fn:
            attrs.append("functional=" + fn)
        if name in rows and rows[name][0] != text:
            sys.exit("etkernels: %s listed twice with different schemas" % name)
        rows[name] = (text, attrs)
    for lib, name in runtime_ops(root):
        if name in rows:
            continue
        s = torch_schema(name)
        fn = functional_of(name, s)
        attrs = ["lib=" + lib]
        if fn:
            attrs.append("functional=" + fn)
        rows[name] = (str(s), attrs)
    lines = [
        "# Code generated by gen/etkernels/etkernels.py from the kernel lists and the runtime of executorch %s; DO NOT EDIT." % version,
        "#",
        "# Every kernel ExecuTorch's portable and quantized kernel libraries register, and the",
        "# out variants its runtime's other kernel libraries (optimized) register besides:",
        "#   <schema> | lib=<library> [functional=<the functional op an out variant computes>]",
        "# gen/opgen reads this file (go generate ./ir); regenerate it with `make kernels`.",
    ]
    for name in sorted(rows):
        text, attrs = rows[name]
        lines.append("%s | %s" % (text, " ".join(attrs)))
    data = "\n".join(lines) + "\n"
    if opts.out:
        with open(opts.out, "w") as f:
            f.write(data)
    else:
        sys.stdout.write(data)


if __name__ == "__main__":
    main()
