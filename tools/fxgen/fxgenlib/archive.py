"""Assemble the records of a PT2 archive (torch >= 2.9 layout, raw payloads).

Records, relative to the archive's root folder (pt2-format.md §1.1):
archive_format, archive_version, byteorder, .data/version,
.data/serialization_id, models/<name>.json, the weights and constants
payload configs and raw payload files, and data/sample_inputs/<name>.pt.
"""

import sys

from . import pt2zip

ARCHIVE_FORMAT = b"pt2"
ARCHIVE_VERSION = b"0"
DATA_VERSION = b"6\n"


def build_records(model_name, program_json, weights, constants, sample_inputs=None):
    """Return {record name: bytes}.

    weights, constants: (records, config_dict) as built by payload.build_payloads.
    sample_inputs: torch.save bytes of (args, kwargs), or None to leave it out.
    """
    import json
    records = {
        "archive_format": ARCHIVE_FORMAT,
        "archive_version": ARCHIVE_VERSION,
        "byteorder": sys.byteorder.encode("ascii"),
        ".data/version": DATA_VERSION,
        "models/%s.json" % model_name: program_json,
        "data/weights/%s_weights_config.json" % model_name: json.dumps(weights[1]).encode("utf-8"),
        "data/constants/%s_constants_config.json" % model_name: json.dumps(constants[1]).encode("utf-8"),
    }
    for name, data in weights[0].items():
        records["data/weights/" + name] = data
    for name, data in constants[0].items():
        records["data/constants/" + name] = data
    if sample_inputs is not None:
        records["data/sample_inputs/%s.pt" % model_name] = sample_inputs
    records[".data/serialization_id"] = pt2zip.serialization_id(records)
    return records


def write_archive(path, root, records):
    """Write the zip to path atomically (a temporary file renamed into place)."""
    import os
    data = pt2zip.write_zip(root, records)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
    return len(data)
