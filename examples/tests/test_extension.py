"""examples/extension: the C softplus builds, matches ember, passes gradcheck."""
import pytest

import ember
from ember.utils import ffi

from example_helpers import load_example


@pytest.fixture
def softplus(extensions_dir):
    module = load_example("extension/softplus.py", "softplus_example")
    module._ext = None      # build into this test's own cache
    return module


@pytest.mark.parametrize("beta", [0.5, 1.0, 3.0])
def test_gradcheck_float64(softplus, beta):
    ember.manual_seed(0)
    x = (5 * ember.randn(4, 6, dtype=ember.float64)).requires_grad_()
    assert ember.autograd.gradcheck(lambda t: softplus.scaled_softplus(t, beta), (x,))
    wide = ember.randn(4, 12, dtype=ember.float64)[:, ::2].requires_grad_()   # strided
    assert ember.autograd.gradcheck(lambda t: softplus.scaled_softplus(t, beta), (wide,))


def test_matches_ember_ops_in_float32(softplus):
    x = ember.linspace(-40, 40, 101)
    y = softplus.scaled_softplus(x, 2.0)
    ref = ember.clamp(x, min=0) + ember.log1p(ember.exp(-2.0 * x.abs())) / 2.0
    assert y.dtype == ember.float32
    assert ember.allclose(y, ref, atol=1e-6)


def test_the_c_checks_become_python_errors(softplus):
    with pytest.raises(ValueError, match="float32 or float64"):
        softplus.scaled_softplus(ember.arange(3))
    with pytest.raises(ValueError, match="beta must be positive"):
        softplus.scaled_softplus(ember.ones(3), -1.0)


def test_main_runs(softplus, capsys):
    softplus.main()
    assert "gradcheck: True" in capsys.readouterr().out


def test_a_bad_extension_fails_with_the_compilers_message(tmp_path, extensions_dir):
    (tmp_path / "bad.h").write_text("int bad(th_tensor *out);\n")
    (tmp_path / "bad.c").write_text('#include <th.h>\nint bad(th_tensor *out) { return out->no_such_field; }\n')
    with pytest.raises(ffi.ExtensionError, match="no_such_field") as info:
        ffi.create_extension("bad", [tmp_path / "bad.h"], [tmp_path / "bad.c"])
    assert "bad.c:2" in str(info.value)
