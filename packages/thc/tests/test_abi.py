"""The exported C API of libTHC is recorded in abi/thc.abi: a change to the
header's declarations without a version bump fails here, as does an exported
symbol no header declares (ember.th.testing.AbiRecord).

After an intended change: bump THC_ABI_VERSION_MINOR (additions) or
THC_ABI_VERSION_MAJOR (changes and removals) in include/thc.h, then run
``python tests/test_abi.py --update``.
"""
import importlib
import importlib.util
import pathlib

from ember.th.testing import AbiRecord

ROOT = pathlib.Path(__file__).resolve().parents[1]
BINDING = "ember.thc"
OP_ENUMS = ("typedef enum thc_unary_op{", "typedef enum thc_binary_op{",
            "typedef enum thc_reduce_op{")


def _expand(name, text):
    """thc.h with its op enumerators written out from libTH's th_ops.def (the
    sibling packages/th, else the installed ember-th's), as installed."""
    th = ROOT.parent / "th"
    if (th / "include" / "th_ops.def").is_file():
        reader, table = th / "ember" / "th" / "_opsdef.py", th / "include" / "th_ops.def"
    else:
        th = pathlib.Path(importlib.import_module("ember.th").get_include()).parent
        reader, table = th / "_opsdef.py", th / "include" / "th_ops.def"
    spec = importlib.util.spec_from_file_location("_th_opsdef", reader)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.expand_header(text, table.read_text())


def _library():
    return pathlib.Path(importlib.import_module(BINDING).get_lib_dir()) / "libTHC.so"


ABI = AbiRecord("thc", ROOT, ["thc.h"], _library, expand=_expand, growing_enums=OP_ENUMS)
test_api_matches_record, test_exported_symbols_are_the_declared_api = ABI.tests()

if __name__ == "__main__":
    ABI.main(__file__)
