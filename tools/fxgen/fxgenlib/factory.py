"""Load a model file and call its factory (the fxgen contract).

The factory NAME() returns (module, example_inputs_tuple). It may carry a
`dynamic_shapes` attribute: {input_index: {dim: (name, min, max)}} with
min/max ints or None; dims sharing a name share one symbol.
"""

import importlib.util
import os
import sys


class FactoryError(Exception):
    """The model file or its factory does not follow the contract."""


def load(path, factory_name):
    if not os.path.isfile(path):
        raise FactoryError("%s: no such model file" % path)
    stem = os.path.splitext(os.path.basename(path))[0]
    directory = os.path.dirname(os.path.abspath(path))
    if directory not in sys.path:
        sys.path.insert(0, directory)
    spec = importlib.util.spec_from_file_location(stem, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[stem] = mod
    spec.loader.exec_module(mod)
    fn = getattr(mod, factory_name, None)
    if fn is None or not callable(fn):
        raise FactoryError("%s: no factory function %r" % (path, factory_name))
    result = fn()
    if not (isinstance(result, tuple) and len(result) == 2):
        raise FactoryError("%s:%s() must return (module, example_inputs_tuple)" % (path, factory_name))
    module, inputs = result
    if not isinstance(inputs, tuple):
        raise FactoryError("%s:%s(): example inputs must be a tuple, got %s"
                           % (path, factory_name, type(inputs).__name__))
    return module, inputs, getattr(fn, "dynamic_shapes", None) or {}, mod
