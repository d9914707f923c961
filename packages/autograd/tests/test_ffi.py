"""ember.utils.ffi: C extensions that take ember tensors, built and cached."""
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import numpy as np
import pytest

import ember
import ember.th as th
from ember.backends import BackendError
from ember.utils import ffi

pytestmark = pytest.mark.skipif(shutil.which(ffi._compiler()[0]) is None,
                                reason="needs a C compiler (install gcc, or set $CC)")

SCALE_SRC = """
int scale_out(th_tensor *out, const th_tensor *x, double a) {
    th_tensor *s = th_scalar_double(a, TH_FLOAT64);
    int rc = s ? th_binary_out(TH_MUL, out, x, s) : 1;
    th_tensor_release(s);
    return rc;
}
int fill_uniform(th_tensor *out, th_generator *g) {
    return th_uniform_(out, 0.0, 1.0, g);
}
int64_t count(const th_tensor *x) { return x ? th_numel(x) : -1; }
const char *last_error(void) { return th_last_error(); }
"""
SCALE_DECLS = ["int scale_out(th_tensor *out, const th_tensor *x, double a);",
               "int fill_uniform(th_tensor *out, th_generator *g);",
               "int64_t count(const th_tensor *x);",
               "const char *last_error(void);"]
SUFFIX = sysconfig.get_config_var("EXT_SUFFIX")


@pytest.fixture
def build_dir(tmp_path, monkeypatch):
    d = tmp_path / "ext"
    monkeypatch.setenv("EMBER_EXTENSIONS_DIR", str(d))
    monkeypatch.setattr(ffi, "_loaded", {})   # each test sees only its own builds
    return d


def built(d):
    return sorted(p.name for p in d.glob(f"*{SUFFIX}"))


@pytest.fixture
def scale(build_dir):
    return ffi.load_inline("scale", SCALE_SRC, SCALE_DECLS)


# ---- calling ------------------------------------------------------------------

def test_ember_and_th_tensors_pass_straight_through(scale):
    x = ember.arange(6.0).view(2, 3).t()           # strided input
    out = ember.empty(3, 2)
    assert scale.scale_out(out, x, 2.5) == 0
    np.testing.assert_allclose(out.numpy(), 2.5 * x.numpy())
    raw_out, raw_x = th.empty(4, dtype=th.float64), th.arange(4, dtype=th.float64)
    assert scale.scale_out(raw_out, raw_x, -1.0) == 0
    assert raw_out.tolist() == [0.0, -1.0, -2.0, -3.0]
    assert scale.count(x) == 6 and scale.count(None) == -1


def test_libth_errors_surface_as_status(scale):
    out, x = ember.empty(2), ember.ones(3)
    assert scale.scale_out(out, x, 1.0) != 0        # shape mismatch, reported by libTH
    assert "shape" in scale.ffi.string(scale.last_error()).decode()


def test_written_tensors_get_a_new_version_inputs_do_not(scale):
    x, out = ember.ones(3), ember.empty(3)
    vx, vo = x._version, out._version
    scale.scale_out(out, x, 2.0)
    assert x._version == vx and out._version > vo


def test_writing_into_a_saved_tensor_is_caught_by_autograd(scale):
    a = ember.ones(3, requires_grad=True)
    b = a * 1.0
    y = (b * b).sum()                  # saves b
    scale.scale_out(b, ember.ones(3), 3.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_leaf_requiring_grad_is_not_written(scale):
    leaf = ember.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        scale.scale_out(leaf, ember.ones(3), 1.0)
    with ember.no_grad():
        scale.scale_out(leaf, ember.ones(3), 4.0)
    assert leaf.detach().tolist() == [4.0, 4.0, 4.0]
    # reading a leaf that requires grad is fine
    out = ember.empty(3)
    scale.scale_out(out, leaf, 0.5)
    assert out.tolist() == [2.0, 2.0, 2.0]


def test_generators(scale):
    a, b = ember.empty(5, dtype=ember.float64), ember.empty(5, dtype=ember.float64)
    scale.fill_uniform(a, ember.Generator().manual_seed(7))
    expected = ember.rand(5, generator=ember.Generator().manual_seed(7), dtype=ember.float64)
    assert a.tolist() == expected.tolist()
    ember.manual_seed(3)
    scale.fill_uniform(b, None)                    # NULL: the default generator
    ember.manual_seed(3)
    assert b.tolist() == ember.rand(5, dtype=ember.float64).tolist()


@pytest.mark.parametrize("args, match", [
    ((ember.empty(2),), r"takes 3 arguments \(1 given\)"),
    (([1.0, 2.0], ember.ones(2), 1.0), "argument 1 must be an ember tensor, not list"),
    ((ember.empty(2), np.ones(2), 1.0), "argument 2 must be an ember tensor, not ndarray"),
])
def test_bad_arguments_raise_type_error(scale, args, match):
    with pytest.raises(TypeError, match=match):
        scale.scale_out(*args)


def test_bad_generator_argument(scale):
    with pytest.raises(TypeError, match="must be an ember.Generator or None"):
        scale.fill_uniform(ember.empty(2), 3)


def test_module_facts(scale):
    assert scale.__name__ == "scale"
    assert Path(scale.__file__).name.startswith("scale_")
    assert "scale_out" in scale.scale_out.__doc__
    assert not hasattr(scale, "TH_ADD")     # only the declared functions
    assert scale.lib.TH_SUB == 1          # libTH's constants stay on .lib


# ---- create_extension from files, with libTHNN ---------------------------------

def test_create_extension_from_files(tmp_path, build_dir):
    thnn = pytest.importorskip("ember.thnn")
    (tmp_path / "act.h").write_text(textwrap.dedent("""\
        #ifndef ACT_H
        #define ACT_H
        #include <th.h>
        #define ACT_VERSION 3
        /* relu through libTHNN, then an offset */
        int relu_plus(th_tensor *out, const th_tensor *x, double offset);
        #endif
        """))
    (tmp_path / "act.c").write_text(textwrap.dedent("""\
        #include "act.h"
        #include <thnn.h>
        int relu_plus(th_tensor *out, const th_tensor *x, double offset) {
            if (thnn_activation_forward(out, x, THNN_RELU, 0.0, 0.0)) return 1;
            th_tensor *s = th_scalar_double(offset, TH_FLOAT64);
            int rc = s ? th_binary_out(TH_ADD, out, out, s) : 1;
            th_tensor_release(s);
            return rc;
        }
        """))
    ext = ffi.create_extension("act", headers=str(tmp_path / "act.h"),
                               sources=[tmp_path / "act.c"],
                               extra_compile_args=["-std=c99", "-Wall", "-Werror"],
                               include_dirs=[tmp_path], libraries=["m"])
    x = ember.tensor([-1.0, 0.5, 2.0])
    out = ember.empty(3)
    assert ext.relu_plus(out, x, 1.0) == 0
    assert out.tolist() == [1.0, 1.5, 3.0]
    assert ext.lib.ACT_VERSION == 3
    assert thnn.abi_version()[0] >= 1


def test_missing_files(tmp_path, build_dir):
    (tmp_path / "a.h").write_text("int f(int x);\n")
    with pytest.raises(FileNotFoundError, match="source file not found"):
        ffi.create_extension("a", [tmp_path / "a.h"], [tmp_path / "missing.c"])
    with pytest.raises(FileNotFoundError, match="header file not found"):
        ffi.create_extension("a", [tmp_path / "missing.h"], [])


# ---- errors ---------------------------------------------------------------------

def test_compiler_error_carries_the_compiler_output(build_dir):
    src = "int broken(th_tensor *out) { return this_is_not_defined + 1; }"
    with pytest.raises(ffi.ExtensionError) as info:
        ffi.load_inline("broken", src, "int broken(th_tensor *out);")
    msg = str(info.value)
    assert "this_is_not_defined" in msg and "error" in msg
    assert "broken_0.c:1" in msg                  # points at the user's own line
    assert built(build_dir) == []                 # nothing half-built is cached
    assert [p for p in build_dir.iterdir() if p.is_dir()] == []


def test_undefined_symbol_fails_at_load(build_dir):
    src = "int never_defined(void);\nint uses(void) { return never_defined(); }"
    with pytest.raises(ffi.ExtensionError, match="cannot be loaded.*never_defined"):
        ffi.load_inline("undef", src, "int uses(void);")
    assert built(build_dir) == []


@pytest.mark.parametrize("decl, exc, match", [
    ("int f(th_tensor *x", ValueError, "could not read the extension's declarations"),
    ("extern int x;", ValueError, "declares no functions"),
    ("th_tensor *make(void);", TypeError, "pass the output tensor as a parameter"),
])
def test_bad_declarations(build_dir, decl, exc, match):
    with pytest.raises(exc, match=match):
        ffi.load_inline("bad", "int f(void) { return 0; }", decl)


@pytest.mark.parametrize("name", ["1abc", "a-b", "", None, "a.b"])
def test_bad_names(build_dir, name):
    with pytest.raises(ValueError, match="Python identifier"):
        ffi.load_inline(name, "int f(void) { return 0; }", "int f(void);")


def test_bad_source_types(build_dir):
    with pytest.raises(TypeError, match="C source text"):
        ffi.load_inline("s", [b"int f(void) { return 0; }"], "int f(void);")
    with pytest.raises(TypeError, match="C declarations"):
        ffi.load_inline("s", "int f(void) { return 0; }", [])


@pytest.mark.skipif(importlib.util.find_spec("ember.thc") is not None,
                    reason="checks the message without ember-thc installed")
def test_with_cuda_names_the_gpu_backend(build_dir):
    with pytest.raises(BackendError, match="ember-thc"):
        ffi.load_inline("gpu", "int f(void) { return 0; }", "int f(void);", with_cuda=True)
    with pytest.raises(BackendError, match="ember-thc"):
        ffi.create_extension("gpu", [], [], with_cuda=True)


# ---- the cache ----------------------------------------------------------------

def test_cache_is_reused_and_keyed_by_sources_and_flags(build_dir, monkeypatch):
    a = ffi.load_inline("cached", SCALE_SRC, SCALE_DECLS)
    first = built(build_dir)
    assert len(first) == 1
    mtime = (build_dir / first[0]).stat().st_mtime_ns
    monkeypatch.setattr(ffi, "_loaded", {})
    monkeypatch.setattr(ffi, "_compile", lambda *a, **k: pytest.fail("rebuilt"))
    b = ffi.load_inline("cached", SCALE_SRC, SCALE_DECLS)
    assert b is not a and built(build_dir) == first
    assert (build_dir / first[0]).stat().st_mtime_ns == mtime
    monkeypatch.undo()
    monkeypatch.setenv("EMBER_EXTENSIONS_DIR", str(build_dir))
    ffi.load_inline("cached", SCALE_SRC + "\n/* changed */\n", SCALE_DECLS)
    ffi.load_inline("cached", SCALE_SRC, SCALE_DECLS, extra_compile_args=["-O1"])
    assert len(built(build_dir)) == 3


def test_cache_key_follows_the_libth_abi(build_dir, monkeypatch):
    ffi.load_inline("abi", SCALE_SRC, SCALE_DECLS)
    real = ffi._libraries()
    bumped = [(n, inc, lib, (abi[0], abi[1] + 1), h) for n, inc, lib, abi, h in real]
    monkeypatch.setattr(ffi, "_libraries", lambda: bumped)
    ffi.load_inline("abi", SCALE_SRC, SCALE_DECLS)
    assert len(built(build_dir)) == 2


def test_build_directory_argument(tmp_path, build_dir):
    mine = tmp_path / "mine"
    ffi.load_inline("placed", SCALE_SRC, SCALE_DECLS, build_directory=mine)
    assert len(built(mine)) == 1 and not build_dir.exists()


def test_default_directory(monkeypatch, tmp_path):
    monkeypatch.delenv("EMBER_EXTENSIONS_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert ffi.default_build_directory() == tmp_path / ".cache" / "ember" / "extensions"


def test_verbose_prints_the_commands(build_dir, capfd):
    ffi.load_inline("loud", SCALE_SRC, SCALE_DECLS, verbose=True)
    assert "-shared" in capfd.readouterr().out
    ffi._loaded.clear()
    ffi.load_inline("loud", SCALE_SRC, SCALE_DECLS, verbose=True)
    assert "using the cached build" in capfd.readouterr().out


BUILD_IN_CHILD = """
import sys
from ember.utils import ffi
ext = ffi.load_inline("race", sys.argv[1], sys.argv[2])
print(ext.__file__)
"""


def test_two_processes_building_at_once(build_dir):
    src = SCALE_SRC + "\n" + "\n".join(f"int pad{i}(void) {{ return {i}; }}" for i in range(200))
    decls = "\n".join(SCALE_DECLS)
    env = dict(os.environ, EMBER_EXTENSIONS_DIR=str(build_dir))
    procs = [subprocess.Popen([sys.executable, "-c", BUILD_IN_CHILD, src, decls], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
    assert outs[0][0] == outs[1][0]
    assert len(built(build_dir)) == 1
    assert [p for p in build_dir.iterdir() if p.is_dir()] == []   # no temp folders left


# ---- the header reader ----------------------------------------------------------

def test_declarations_from_header():
    text = textwrap.dedent("""\
        #ifndef X_H
        #define X_H
        #include <th.h>
        #define LIMIT 0x10
        #define TWICE(x) \\
            ((x) * 2)
        #ifdef __cplusplus
        extern "C" {
        #endif
        int f(th_tensor *t);
        #ifdef __cplusplus
        }
        #endif
        #endif
        """)
    out = ffi.declarations_from_header(text)
    assert "#define LIMIT 0x10" in out and "int f(th_tensor *t);" in out
    assert "TWICE" not in out and "((x) * 2)" not in out
    assert "extern" not in out and "#include" not in out


# ---- threads -------------------------------------------------------------------

RENDEZVOUS_SRC = """
#include <time.h>
/* adds one to counter[0], then waits (up to ~20 s) until it reaches n */
int rendezvous(th_tensor *counter, int64_t n) {
    int64_t *c = (int64_t *)th_data_ptr(counter);
    __atomic_add_fetch(c, 1, __ATOMIC_SEQ_CST);
    for (int i = 0; i < 20000; i++) {
        if (__atomic_load_n(c, __ATOMIC_SEQ_CST) >= n) return 0;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return 1;
}
"""


def test_calls_run_without_the_gil(build_dir):
    """Two threads meet inside C: only possible if neither holds the GIL there."""
    import threading
    ext = ffi.load_inline("meet", RENDEZVOUS_SRC, "int rendezvous(th_tensor *c, int64_t n);")
    counter = ember.zeros(1, dtype=ember.int64)
    results = []
    ts = [threading.Thread(target=lambda: results.append(ext.rendezvous(counter, 2)))
          for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert results == [0, 0] and counter.item() == 2
