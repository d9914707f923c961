"""The exported C API of libTHNN is recorded in abi/thnn.abi: a change to the
header's declarations without a version bump fails here, as does an exported
symbol no header declares (ember.th.testing.AbiRecord).

After an intended change: bump THNN_ABI_VERSION_MINOR (additions) or
THNN_ABI_VERSION_MAJOR (changes and removals) in include/thnn.h, then run
``python tests/test_abi.py --update``.
"""
import importlib
import importlib.util
import pathlib

from ember.th.testing import AbiRecord

ROOT = pathlib.Path(__file__).resolve().parents[1]
BINDING = "ember.thnn"


def _expand(name, text):
    """thnn.h with its kernel table (include/thnn_kernels.def) written out, as
    installed."""
    spec = importlib.util.spec_from_file_location(
        "_thnn_kernel_table", ROOT / "ember" / "thnn" / "_kernel_table.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.expand_header(text, (ROOT / "include" / mod.TABLE).read_text())


def _library():
    return pathlib.Path(importlib.import_module(BINDING).get_lib_dir()) / "libTHNN.so"


def _binding_version():
    return importlib.import_module(BINDING).abi_version()


ABI = AbiRecord("thnn", ROOT, ["thnn.h"], _library, _binding_version, expand=_expand)
(test_api_matches_record, test_exported_symbols_are_the_declared_api,
 test_binding_reports_matching_version) = ABI.tests()

if __name__ == "__main__":
    ABI.main(__file__)
