"""Paths and loading of the example scripts, shared by the example tests."""
import importlib.util
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent


def load_example(relpath, name):
    """Imports an example script as a module (examples are not a package)."""
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / relpath)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
