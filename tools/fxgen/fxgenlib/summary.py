"""Facts about a written PT2 archive, read back from the archive itself
(the same for both torch paths): node and op counts, dynamic dims, buffer
mutations, payload bytes."""

import json
import re
import zipfile

_SYMBOL = re.compile(r"Symbol\('([^']+)'")


def summarize(path):
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        root = names[0].split("/")[0]
        ep = json.loads(zf.read("%s/models/model.json" % root))
        state_bytes = sum(zf.getinfo(n).file_size for n in names
                          if n.startswith((root + "/data/weights/", root + "/data/constants/"))
                          and not n.endswith(".json"))
    gm = ep["graph_module"]
    graph = gm["graph"]
    users = [s["user_input"]["arg"]["as_tensor"]["name"] for s in gm["signature"]["input_specs"]
             if "user_input" in s]
    dynamic = []
    for i, name in enumerate(users):
        for d, size in enumerate(graph["tensor_values"][name]["sizes"]):
            if "as_expr" in size:
                dynamic.append([i, d, ",".join(_SYMBOL.findall(size["as_expr"]["expr_str"]))])
    return {
        "nodes": len(graph["nodes"]),
        "ops": sorted({n["target"] for n in graph["nodes"]}),
        "range_constraints": ep["range_constraints"],
        "dynamic": dynamic,
        "mutations": [s["buffer_mutation"]["buffer_name"] for s in gm["signature"]["output_specs"]
                      if "buffer_mutation" in s],
        "state_bytes": state_bytes,
        "torch_version": ep["torch_version"],
        "schema_version": "%d.%d" % (ep["schema_version"]["major"], ep["schema_version"]["minor"]),
    }
