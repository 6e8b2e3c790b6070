"""Raw tensor payloads and their PayloadConfig (PT2 archive, torch >= 2.9).

Tensors are grouped by (untyped storage, dtype). Each group becomes one
record holding the bytes of the whole storage, native byte order, no header;
every FQN of the group gets a PayloadMeta with the shared path name and its
own TensorMeta (sizes, strides, storage offset), so views and aliases
survive the round trip. Records are numbered in order of first appearance.
"""

import ctypes

from . import schema_json


def _storage_key(t):
    return (t.storage().data_ptr(), t.dtype)


def _storage_bytes(t):
    """The raw bytes of t's whole storage (native byte order)."""
    storage = t.storage()
    nbytes = storage.size() * t.element_size()
    if nbytes == 0:
        return b""
    return ctypes.string_at(storage.data_ptr(), nbytes)


def build_payloads(items, prefix):
    """Group tensors and return (records, config_dict).

    items: list of (fqn, tensor, is_param) in state-dict order.
    prefix: record file prefix, "weight_" or "tensor_".
    records: dict of file name (e.g. "weight_0") -> bytes.
    config_dict: the PayloadConfig as a JSON-ready dict.
    """
    groups = []
    index = {}
    for fqn, t, is_param in items:
        key = _storage_key(t)
        if key not in index:
            index[key] = len(groups)
            groups.append([])
        groups[index[key]].append((fqn, t, is_param))
    records = {}
    config = {}
    for i, group in enumerate(groups):
        path = "%s%d" % (prefix, i)
        records[path] = _storage_bytes(group[0][1])
        for fqn, t, is_param in group:
            config[fqn] = {
                "path_name": path,
                "is_param": bool(is_param),
                "use_pickle": False,
                "tensor_meta": schema_json.tensor_meta_concrete(t),
            }
    return records, {"config": config}
