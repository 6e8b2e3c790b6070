"""EXPORT_SKIPS: model classes the capture refuses, each with its reason (data: export_skips.json)."""

import json
import os

_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "export_skips.json")


def entries():
    with open(_PATH) as f:
        return json.load(f)["entries"]


def lookup(class_name):
    """The EXPORT_SKIPS entry naming class_name (scope "all"), or None."""
    for e in entries():
        if e["scope"] == "all" and class_name in e["classes"]:
            return e
    return None
