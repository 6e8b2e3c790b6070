"""Node metadata in torch.export's string encodings (pt2-format.md §5).

While tracing, each FX node records the module call stack and the Python
stack at the moment it was created. This module turns those into the
strings torch.export serializes:

* stack_trace: the frames of model code (the model file, torchvision,
  torch.nn modules and functional), outermost first, each as
  '  File "<path>", line N, in <fn>\\n    <code>\\n'. Paths are made
  machine-independent: repository files relative to the repository root,
  installed packages relative to their site directory.
* nn_module_stack: ';'-joined 'key,path,type' entries (non-strict form:
  key = path, '@<n>' appended for the n-th repeated call of one module);
  the root module is not listed.
* source_fn_stack: for nodes created inside a leaf module, 'name,type'
  with name = the module path with '.' -> '_'.
"""

import linecache
import os
import traceback

ST_DELIMITER = ";"

_KEEP = (
    os.sep + "torchvision" + os.sep,
    os.sep + os.path.join("torch", "nn", "modules") + os.sep,
    os.sep + os.path.join("torch", "nn", "functional.py"),
)
_DROP = (
    os.path.join("torch", "nn", "modules", "module.py"),
)


def type_name(obj_type):
    return "%s.%s" % (obj_type.__module__, obj_type.__qualname__)


class FrameFilter:
    """Selects and renames the frames that belong to model code."""

    def __init__(self, repo_root, model_files):
        self.repo_root = os.path.realpath(repo_root)
        self.model_files = {os.path.realpath(f) for f in model_files}

    def keep(self, filename):
        real = os.path.realpath(filename)
        if real in self.model_files:
            return True
        if any(d in real for d in _DROP):
            return False
        return any(k in real for k in _KEEP)

    def display(self, filename):
        real = os.path.realpath(filename)
        if real.startswith(self.repo_root + os.sep):
            return os.path.relpath(real, self.repo_root)
        for marker in ("site-packages", "dist-packages"):
            idx = real.rfind(os.sep + marker + os.sep)
            if idx >= 0:
                return real[idx + len(marker) + 2:]
        return os.path.basename(real)

    def stack_trace(self, frames):
        """frames: list of (filename, lineno, name) outermost first."""
        out = []
        for filename, lineno, name in frames:
            if not self.keep(filename):
                continue
            code = linecache.getline(filename, lineno).strip()
            out.append('  File "%s", line %d, in %s\n    %s\n' % (self.display(filename), lineno, name, code))
        return "".join(out)


def capture_frames():
    """The current Python stack as (filename, lineno, name), outermost first."""
    return [(f.filename, f.lineno, f.name) for f in traceback.extract_stack()]


def nn_module_stack(stack):
    """stack: list of (key, path, type_str) for the modules below the root."""
    return ST_DELIMITER.join("%s,%s,%s" % entry for entry in stack)


def source_fn_stack(stack, leaf):
    """The innermost module, when it has no children, as 'name,type'."""
    if not stack or not leaf:
        return ""
    _, path, ty = stack[-1]
    return "%s,%s" % (path.replace(".", "_"), ty)


def node_metadata(frame_filter, frames, stack, innermost_is_leaf):
    meta = {}
    trace = frame_filter.stack_trace(frames) if frames else ""
    if trace:
        meta["stack_trace"] = trace
    if stack:
        meta["nn_module_stack"] = nn_module_stack(stack)
        src = source_fn_stack(stack, innermost_is_leaf)
        if src:
            meta["source_fn_stack"] = src
    return meta
