"""A C program built against the installed header and library runs, with
the flags `python -m ember.th --cflags --libs` prints and with pkg-config."""
import math
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

SOURCE = pathlib.Path(__file__).resolve().parents[3] / "examples" / "c" / "th_hello.c"
CC = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")

pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler on PATH")


def expected():
    g = [[5.0, 14.0], [14.0, 50.0]]
    return [sum(math.exp(0.1 * v) for v in row) for row in g]


def check_output(out):
    first, second = out.splitlines()
    assert [float(v) for v in first.split()] == pytest.approx(expected(), rel=1e-9)
    assert "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)" in second


def test_build_with_module_flags(tmp_path):
    flags = subprocess.run([sys.executable, "-m", "ember.th", "--cflags", "--libs"],
                           capture_output=True, text=True, check=True).stdout.split()
    exe = tmp_path / "th_hello"
    subprocess.run([CC, "-std=c99", "-Wall", "-Werror", str(SOURCE), *flags, "-o", str(exe)],
                   check=True)
    check_output(subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout)


@pytest.mark.skipif(shutil.which("pkg-config") is None, reason="pkg-config not installed")
def test_build_with_pkg_config(tmp_path):
    import ember.th as th
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(th.get_lib_dir(), "pkgconfig"))
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "th"], env=env,
                           capture_output=True, text=True, check=True).stdout.split()
    exe = tmp_path / "th_hello"
    subprocess.run([CC, "-std=c99", str(SOURCE), *flags, "-o", str(exe)], check=True)
    check_output(subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout)
