"""The exported C API of libTHCUNN is recorded in abi/thcunn.abi: a change to the
header's declarations without a version bump fails here, as does an exported
symbol no header declares (ember.th.testing.AbiRecord).

After an intended change: bump THCUNN_ABI_VERSION_MINOR (additions) or
THCUNN_ABI_VERSION_MAJOR (changes and removals) in include/thcunn.h, then run
``python tests/test_thcunn_abi.py --update``.
"""
import importlib
import importlib.util
import pathlib

from ember.th.testing import AbiRecord

ROOT = pathlib.Path(__file__).resolve().parents[1]
BINDING = "ember.thcunn"


def _expand(name, text):
    """thcunn.h with libTHNN's kernel table written out (the sibling
    packages/thnn's, else the installed ember-thnn's), as installed."""
    thnn = ROOT.parent / "thnn"
    if (thnn / "include" / "thnn_kernels.def").is_file():
        reader, table = thnn / "ember" / "thnn" / "_kernel_table.py", thnn / "include"
    else:
        inc = pathlib.Path(importlib.import_module("ember.thnn").get_include())
        reader, table = inc.parent / "_kernel_table.py", inc
    spec = importlib.util.spec_from_file_location("_thnn_kernel_table", reader)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.expand_header(text, (table / mod.TABLE).read_text())


def _library():
    return pathlib.Path(importlib.import_module(BINDING).get_lib_dir()) / "libTHCUNN.so"


ABI = AbiRecord("thcunn", ROOT, ["thcunn.h"], _library, expand=_expand)
test_api_matches_record, test_exported_symbols_are_the_declared_api = ABI.tests()

if __name__ == "__main__":
    ABI.main(__file__)
