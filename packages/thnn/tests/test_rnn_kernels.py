"""The recurrent cell kernels: the C test program (tests/c/test_rnn.c)
built against the installed library, and the binding against NumPy on
random data, in place outputs and errors."""
import shutil
import subprocess
import sys
import pathlib
import os

import numpy as np
import pytest

import ember.th as th
import ember.thnn as thnn

SOURCE = pathlib.Path(__file__).resolve().parent / "c" / "test_rnn.c"
CC = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")


@pytest.mark.skipif(CC is None, reason="no C compiler on PATH")
def test_c_program(tmp_path):
    flags = subprocess.run([sys.executable, "-m", "ember.thnn", "--cflags", "--libs"],
                           capture_output=True, text=True, check=True).stdout.split()
    exe = tmp_path / "test_rnn"
    subprocess.run([CC, "-std=c99", "-Wall", "-Wextra", "-Werror", "-D_POSIX_C_SOURCE=200809L",
                    "-I" + str(SOURCE.parent), str(SOURCE), *flags, "-lm", "-o", str(exe)],
                   check=True, capture_output=True, timeout=120)
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and " 0 failed" in out.stdout, out.stdout + out.stderr


def sig(x):
    return 1 / (1 + np.exp(-x))


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-13), (np.float32, 1e-5)])
def test_lstm_against_numpy(dtype, tol):
    g = np.random.default_rng(0)
    B, H = 5, 7
    gates, c0 = g.standard_normal((B, 4 * H)).astype(dtype), g.standard_normal((B, H)).astype(dtype)
    t = th.from_numpy(gates.copy())
    h, c = thnn.lstm_cell_forward(t, th.from_numpy(c0))
    i, f, gg, o = np.split(gates.astype(np.float64), 4, axis=1)
    cn = sig(f) * c0 + sig(i) * np.tanh(gg)
    np.testing.assert_allclose(c.numpy(), cn, atol=tol)
    np.testing.assert_allclose(h.numpy(), sig(o) * np.tanh(cn), atol=tol)
    # the gates were replaced in place by their activations
    np.testing.assert_allclose(t.numpy(), np.concatenate([sig(i), sig(f), np.tanh(gg), sig(o)], 1),
                               atol=tol)


def test_outputs_into_slices_and_gemm_out():
    g = np.random.default_rng(1)
    buf = th.zeros(6, 4, dtype=th.float64)
    gates = th.from_numpy(g.standard_normal((6, 4)))
    thnn.rnn_cell_forward(gates.narrow(0, 2, 2), "tanh", buf.narrow(0, 2, 2))
    want = np.zeros((6, 4))
    want[2:4] = np.tanh(gates.numpy()[2:4])
    np.testing.assert_allclose(buf.numpy(), want, atol=1e-15)
    a, b = th.from_numpy(g.standard_normal((3, 5))), th.from_numpy(g.standard_normal((4, 5)))
    out = th.ones(3, 4, dtype=th.float64)
    thnn.gemm_out(out, a, b.t(), 1.0)
    np.testing.assert_allclose(out.numpy(), 1 + a.numpy() @ b.numpy().T, atol=1e-13)


def test_errors():
    with pytest.raises(RuntimeError, match="4 \\* hidden_size"):
        thnn.lstm_cell_forward(th.zeros(2, 6, dtype=th.float32), th.zeros(2, 1, dtype=th.float32))
    with pytest.raises(RuntimeError, match="h_prev"):
        thnn.gru_cell_forward(th.zeros(2, 6), th.zeros(2, 6), th.zeros(3, 2))
    with pytest.raises(RuntimeError, match="Unknown nonlinearity: sigmoid"):
        thnn.rnn_cell_forward(th.zeros(2, 2), "sigmoid")
    with pytest.raises(TypeError, match="Float or Double|float"):
        thnn.rnn_cell_forward(th.zeros(2, 2, dtype=th.int64), "tanh")
