"""libTH and libTHC share one op vocabulary (libTH's include/th_ops.def):
both libraries, as built and installed, must agree on every op's code,
name, dtype classes, flags and expressions, and both bindings must expose
the same op lists."""
import pathlib

import pytest

import ember.th as th
import ember.thc as thc
from ember.th import _elementwise, _opsdef
from ember.th._lib import lib as th_lib
from ember.thc import _tensor_ops
from ember.thc._lib import lib as thc_lib

FAMILIES = ("unary", "binary", "reduce")
# the table as shipped with ember-th: the enumerator names of every row
ROWS = _opsdef.rows((pathlib.Path(th.get_include()) / "th_ops.def").read_text())


def test_the_shipped_table_is_the_compiled_one():
    assert [(r["family"], r["name"]) for r in ROWS] == \
        [(o.family, o.name) for o in _elementwise.OPS]


@pytest.mark.parametrize("family", FAMILIES)
def test_same_number_of_ops(family):
    up = family.upper()
    th_fam, thc_fam = getattr(th_lib, f"TH_OP_{up}"), getattr(thc_lib, f"THC_OP_{up}")
    n = th_lib.th_op_count(th_fam)
    assert n == thc_lib.thc_op_count(thc_fam) == sum(r["family"] == family for r in ROWS)
    assert n == getattr(th_lib, f"TH_NUM_{up}_OPS") == getattr(thc_lib, f"THC_NUM_{up}_OPS")


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r['family']}-{r['name']}")
def test_every_op_code_agrees(row):
    ops = [o for o in _elementwise.OPS if o.family == row["family"]]
    code = [o.name for o in ops].index(row["name"])
    # the enumerators cffi has from each header
    assert getattr(th_lib, "TH_" + row["code"]) == code
    assert getattr(thc_lib, "THC_" + row["code"]) == code


@pytest.mark.parametrize("family", FAMILIES)
def test_every_row_agrees(family):
    mine = [o for o in _elementwise.OPS if o.family == family]
    theirs = [o for o in _tensor_ops.OPS if o.family == family]
    assert [tuple(o) for o in theirs] == [tuple(o) for o in mine]


def test_bindings_expose_the_same_ops():
    assert _tensor_ops.UNARY_OPS == _elementwise.UNARY_OPS
    assert _tensor_ops.BINARY_OPS == _elementwise.BINARY_OPS
    for name in [*_elementwise.UNARY_OPS, *_elementwise.BINARY_OPS]:
        assert hasattr(thc.Tensor, name), name


@pytest.mark.parametrize("family", FAMILIES)
def test_bad_family_and_code_are_errors(family):
    fam = getattr(thc_lib, f"THC_OP_{family.upper()}")
    n = thc_lib.thc_op_count(fam)
    from ember.thc._lib import ffi
    for code in (-1, n):
        assert thc_lib.thc_op_get(fam, code) == ffi.NULL
        assert "invalid op code" in ffi.string(thc_lib.thc_last_error()).decode()
    assert thc_lib.thc_op_count(99) == -1
    assert thc_lib.thc_op_get(99, 0) == ffi.NULL
    assert "invalid op family 99" in ffi.string(thc_lib.thc_last_error()).decode()
