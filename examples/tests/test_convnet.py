"""The CNN of examples/c/convnet.c (C) and examples/lua/convnet.lua (LuaJIT)
built and run without Python, against ember's output for the same file."""
import os
import shlex
import shutil
import struct
import subprocess
import sys

import pytest

from example_helpers import EXAMPLES


def ember_flags(package):
    out = subprocess.run([sys.executable, "-m", package, "--cflags", "--libs"],
                         capture_output=True, text=True, check=True).stdout
    return shlex.split(out)


def corrupted(path, tmp_path):
    """The same file with the last expected value changed."""
    data = bytearray(path.read_bytes())
    (value,) = struct.unpack_from("<f", data, len(data) - 4)
    struct.pack_into("<f", data, len(data) - 4, value + 0.5)
    bad = tmp_path / "corrupted.bin"
    bad.write_bytes(bytes(data))
    return bad


@pytest.fixture(scope="module")
def cc():
    compiler = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if compiler is None:
        pytest.skip("the C convnet needs a C compiler: install gcc (apt-get install gcc)")
    return compiler


def build_c(cc, out, flags):
    cmd = [cc, "-std=c99", "-Wall", "-Wextra", "-Werror", str(EXAMPLES / "c" / "convnet.c"),
           "-o", str(out)] + flags + ["-lm"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out


def test_c_convnet_matches_ember(cc, tmp_path, convnet_file):
    exe = build_c(cc, tmp_path / "convnet", ember_flags("ember.thnn"))
    r = subprocess.run([str(exe), str(convnet_file)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "output 3 x 10" in r.stdout and "OK: matches ember" in r.stdout
    # the check can fail: a changed reference value is caught
    r = subprocess.run([str(exe), str(corrupted(convnet_file, tmp_path))],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "MISMATCH" in r.stdout


def test_c_convnet_with_pkg_config(cc, tmp_path, convnet_file):
    if shutil.which("pkg-config") is None:
        pytest.skip("pkg-config is not installed (apt-get install pkg-config)")
    dirs = [subprocess.run([sys.executable, "-m", m, "--pkgconfig"], capture_output=True,
                           text=True, check=True).stdout.strip()
            for m in ("ember.thnn", "ember.th")]
    env = dict(os.environ, PKG_CONFIG_PATH=os.pathsep.join(dirs))
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "thnn", "th"], env=env,
                           capture_output=True, text=True, check=True).stdout
    libdirs = [f[2:] for f in shlex.split(flags) if f.startswith("-L")]
    exe = build_c(cc, tmp_path / "convnet_pc", shlex.split(flags) +
                  [f"-Wl,-rpath,{d}" for d in libdirs])
    r = subprocess.run([str(exe), str(convnet_file)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("content, message", [
    (b"not a tensor file", "bad magic"),
    (b"EMBRTNS1\x01\x00\x00\x00\x05\x00\x00\x00input", "truncated file"),
])
def test_c_convnet_rejects_bad_files(cc, tmp_path, content, message):
    exe = build_c(cc, tmp_path / "convnet", ember_flags("ember.thnn"))
    bad = tmp_path / "bad.bin"
    bad.write_bytes(content)
    r = subprocess.run([str(exe), str(bad)], capture_output=True, text=True)
    assert r.returncode == 2 and message in r.stderr


def lua_env():
    import ember.th as th
    import ember.thnn as thnn
    return dict(os.environ, TH_INCLUDE=th.get_include(), TH_LIB_DIR=th.get_lib_dir(),
                THNN_INCLUDE=thnn.get_include(), THNN_LIB_DIR=thnn.get_lib_dir())


@pytest.fixture(scope="module")
def luajit():
    exe = shutil.which("luajit")
    if exe is None:
        pytest.skip("the LuaJIT convnet needs LuaJIT: install it (apt-get install luajit)")
    return exe


def test_lua_convnet_matches_ember(luajit, tmp_path, convnet_file):
    script = str(EXAMPLES / "lua" / "convnet.lua")
    r = subprocess.run([luajit, script, str(convnet_file)], env=lua_env(),
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "output 3 x 10" in r.stdout and "OK: matches ember" in r.stdout
    r = subprocess.run([luajit, script, str(corrupted(convnet_file, tmp_path))],
                       env=lua_env(), capture_output=True, text=True)
    assert r.returncode == 1 and "MISMATCH" in r.stdout


def test_lua_convnet_rejects_a_bad_file(luajit, tmp_path):
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"EMBRTNS1\x01\x00\x00\x00\x05\x00\x00\x00inp")
    r = subprocess.run([luajit, str(EXAMPLES / "lua" / "convnet.lua"), str(bad)],
                       env=lua_env(), capture_output=True, text=True)
    assert r.returncode == 2 and "truncated file" in r.stderr
