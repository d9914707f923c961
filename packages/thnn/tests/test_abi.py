"""The exported C API of libTHNN is recorded in abi/thnn.abi: a change to the
header's declarations without a version bump fails here, as does an exported
symbol no header declares (ember.th.testing.AbiRecord).

After an intended change: bump THNN_ABI_VERSION_MINOR (additions) or
THNN_ABI_VERSION_MAJOR (changes and removals) in include/thnn.h, then run
``python tests/test_abi.py --update``.
"""
import importlib
import pathlib

from ember.th.testing import AbiRecord

ROOT = pathlib.Path(__file__).resolve().parents[1]
BINDING = "ember.thnn"


def _library():
    return pathlib.Path(importlib.import_module(BINDING).get_lib_dir()) / "libTHNN.so"


def _binding_version():
    return importlib.import_module(BINDING).abi_version()


ABI = AbiRecord("thnn", ROOT, ["thnn.h"], _library, _binding_version)
(test_api_matches_record, test_exported_symbols_are_the_declared_api,
 test_binding_reports_matching_version) = ABI.tests()

if __name__ == "__main__":
    ABI.main(__file__)
