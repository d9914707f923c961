"""The exported C API of libTHCUNN is recorded in abi/thcunn.abi: a change to the
header's declarations without a version bump fails here, as does an exported
symbol no header declares (ember.th.testing.AbiRecord).

After an intended change: bump THCUNN_ABI_VERSION_MINOR (additions) or
THCUNN_ABI_VERSION_MAJOR (changes and removals) in include/thcunn.h, then run
``python tests/test_thcunn_abi.py --update``.
"""
import importlib
import pathlib

from ember.th.testing import AbiRecord

ROOT = pathlib.Path(__file__).resolve().parents[1]
BINDING = "ember.thcunn"


def _library():
    return pathlib.Path(importlib.import_module(BINDING).get_lib_dir()) / "libTHCUNN.so"


ABI = AbiRecord("thcunn", ROOT, ["thcunn.h"], _library)
test_api_matches_record, test_exported_symbols_are_the_declared_api = ABI.tests()

if __name__ == "__main__":
    ABI.main(__file__)
