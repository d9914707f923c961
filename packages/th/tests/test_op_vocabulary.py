"""libTH's op vocabulary (include/th_ops.def) as th_op_get reports it, and
the library behaving as each row says: a loop for every dtype class it
lists, PyTorch's "not implemented" error for the others, bool results for
predicates, the default float dtype for FLOAT ops."""
import numpy as np
import pytest

import ember.th as th
from ember.th._lib import ffi, lib

ELEMENTWISE = [o for o in th.ops() if o.family in ("unary", "binary")]
# one dtype per class, and a sample of it
SAMPLES = {"float": th.float32, "int": th.int32, "bool": th.bool}


def _sample(dtype):
    return th.from_numpy(np.array([3, 1, 2], dtype=np.float32)).to(dtype)


def _call(op, dtype):
    a = _sample(dtype)
    code = op.code
    if op.family == "unary":
        return th._elementwise.wrap(lib.th_unary(code, a._p))
    return th._elementwise.wrap(lib.th_binary(code, a._p, a._p))


def test_families_and_codes():
    for family in ("unary", "binary", "reduce"):
        ops = [o for o in th.ops() if o.family == family]
        assert [o.code for o in ops] == list(range(len(ops)))
        assert len({o.name for o in ops}) == len(ops)
        assert lib.th_op_count(getattr(lib, f"TH_OP_{family.upper()}")) == len(ops)
    assert th.ops()[lib.TH_MUL + lib.TH_NUM_UNARY_OPS].name == "mul"


def test_bad_family_or_code_is_an_error():
    assert lib.th_op_count(7) == -1
    assert "invalid op family 7" in ffi.string(lib.th_last_error()).decode()
    assert lib.th_op_get(lib.TH_OP_BINARY, lib.TH_NUM_BINARY_OPS) == ffi.NULL
    assert "invalid op code" in ffi.string(lib.th_last_error()).decode()
    x = _sample(th.float32)   # held: a temporary's tensor would be freed before the call
    with pytest.raises(ValueError, match="invalid unary op code"):
        th._elementwise.wrap(lib.th_unary(lib.TH_NUM_UNARY_OPS, x._p))


@pytest.mark.parametrize("op", ELEMENTWISE, ids=lambda o: o.name)
def test_rows_describe_the_loops(op):
    assert set(op.exprs) == set(op.classes)
    for cls, dtype in SAMPLES.items():
        if op.name in ("neg", "sub") and cls == "bool":
            continue   # PyTorch's own message, tested with the op
        if op.name == "square" and cls == "bool":
            continue   # computes in int64
        # FLOAT ops compute integers and bools in the default float dtype
        if cls in op.classes or "float" in op.flags:
            r = _call(op, dtype)
            if "predicate" in op.flags:
                assert r.dtype == th.bool
            elif "float" in op.flags and cls != "float":
                assert r.dtype == th.get_default_dtype()
        else:
            with pytest.raises(TypeError, match=f'"{op.name}_cpu" not implemented for'):
                _call(op, dtype)
