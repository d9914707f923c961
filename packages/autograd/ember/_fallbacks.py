"""Modules that another distribution provides, with a stand-in when it is
not installed: ``import ember.distributed`` finds ember-distributed's
package where it is installed, and otherwise ``_distributed_unavailable``
(is_available() False, as on PyTorch builds without distributed support).

The finder sits at the end of ``sys.meta_path``, so it answers only after
the ordinary path finders have found nothing."""
import importlib.util
import os
import sys

STAND_INS = {"ember.distributed": "_distributed_unavailable.py"}


class _StandInFinder:
    @staticmethod
    def find_spec(fullname, path=None, target=None):
        file = STAND_INS.get(fullname)
        if file is None:
            return None
        return importlib.util.spec_from_file_location(
            fullname, os.path.join(os.path.dirname(__file__), file))


def install():
    if not any(isinstance(f, _StandInFinder) for f in sys.meta_path):
        sys.meta_path.append(_StandInFinder())
