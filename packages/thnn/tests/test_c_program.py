"""The C test program builds against the installed headers and libraries,
with the flags `python -m ember.thnn --cflags --libs` prints and with
pkg-config, and passes."""
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

SOURCE = pathlib.Path(__file__).resolve().parent / "c" / "test_thnn.c"
CC = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")

pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler on PATH")


def sh(cmd, env=None):
    """Runs cmd; a failure shows its output."""
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    assert out.returncode == 0, f"{cmd} failed ({out.returncode}):\n{out.stdout}{out.stderr}"
    return out.stdout


def run(exe):
    out = subprocess.run([str(exe)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 failed" in out.stdout


def test_build_with_module_flags(tmp_path):
    flags = sh([sys.executable, "-m", "ember.thnn", "--cflags", "--libs"]).split()
    exe = tmp_path / "test_thnn"
    sh([CC, "-std=c99", "-Wall", "-Wextra", "-Werror", "-D_POSIX_C_SOURCE=200809L",
        str(SOURCE), *flags, "-lm", "-o", str(exe)])
    run(exe)


@pytest.mark.skipif(shutil.which("pkg-config") is None, reason="pkg-config not installed")
def test_build_with_pkg_config(tmp_path):
    path = sh([sys.executable, "-m", "ember.thnn", "--pkgconfig"]).strip()
    env = dict(os.environ, PKG_CONFIG_PATH=path)
    flags = sh(["pkg-config", "--cflags", "--libs", "thnn"], env=env).split()
    exe = tmp_path / "test_thnn"
    sh([CC, "-std=c99", "-D_POSIX_C_SOURCE=200809L", str(SOURCE), *flags, "-lm", "-o", str(exe)])
    run(exe)
