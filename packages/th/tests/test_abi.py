"""The exported C API of libTH is recorded in abi/th.abi: a change to the
header's declarations without a version bump fails here, as does an exported
symbol no header declares (ember.th.testing.AbiRecord).

After an intended change: bump TH_ABI_VERSION_MINOR (additions) or
TH_ABI_VERSION_MAJOR (changes and removals) in include/th.h, then run
``python tests/test_abi.py --update``.

The op enums are compared with their enumerators written out from
include/th_ops.def.  Ops appended to a family need no bump (their codes are
new, the others unchanged): the record's enumerators must stay a prefix of
the header's, so renumbering or removing an op fails here.
"""
import importlib
import importlib.util
import pathlib

from ember.th.testing import AbiRecord

ROOT = pathlib.Path(__file__).resolve().parents[1]
BINDING = "ember.th"
OP_ENUMS = ("typedef enum th_unary_op{", "typedef enum th_binary_op{",
            "typedef enum th_reduce_op{")


def _expand(name, text):
    """th.h with its op enumerators written out from th_ops.def, as installed."""
    if name != "th.h":
        return text
    spec = importlib.util.spec_from_file_location("_th_opsdef",
                                                  ROOT / "ember" / "th" / "_opsdef.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.expand_header(text, (ROOT / "include" / "th_ops.def").read_text())


def _library():
    return pathlib.Path(importlib.import_module(BINDING).get_lib_dir()) / "libTH.so"


def _binding_version():
    return importlib.import_module(BINDING).abi_version()


ABI = AbiRecord("th", ROOT, ["th.h", "th_meta.h"], _library, _binding_version,
                expand=_expand, growing_enums=OP_ENUMS)
(test_api_matches_record, test_exported_symbols_are_the_declared_api,
 test_binding_reports_matching_version) = ABI.tests()

if __name__ == "__main__":
    ABI.main(__file__)
