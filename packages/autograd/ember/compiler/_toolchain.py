"""The system C compiler, the on-disk kernel cache and loading.

A kernel's shared library lives at ``$EMBER_CACHE_DIR/<key[:2]>/<key>.so``
(default ``~/.cache/ember/kernels``), its source beside it; the key hashes
the source, the compiler (its path and version line), the flags and the
CPU's features (the code is built for this CPU).  A compile writes to
names of its own and renames into place, so processes compiling the same
kernel at once each get a whole library (the last rename wins; both are
the same), and a cached kernel is loaded without compiling.
"""
import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
import time

import cffi

from ._codegen import ARGS_CDEF, ENTRY, ENTRY_CDEF

__all__ = ["CompilerMissing", "compiler", "cache_dir", "load", "stats"]

# -ffp-contract=off: no fused multiply-adds, so every operation rounds as
# eager evaluation (libTH is built in ISO C mode, which implies it)
FLAGS = ("-std=gnu99", "-O3", "-ffp-contract=off", "-fno-math-errno", "-fPIC", "-shared",
         "-march=native", "-fopenmp-simd")
_ffi = cffi.FFI()
_ffi.cdef(ARGS_CDEF + ENTRY_CDEF)
_loaded = {}        # key -> (library handle, function)
_lock = threading.Lock()
#: what this process did: kernels compiled, loaded from the disk cache, seconds compiling
stats = {"compiled": 0, "loaded": 0, "compile_s": 0.0}


class CompilerMissing(RuntimeError):
    """No working C compiler: the caller runs eagerly."""


@functools.lru_cache(maxsize=None)
def _compiler_of(cc):
    path = shutil.which(cc)
    if path is None:
        return None
    try:
        version = subprocess.run([path, "--version"], capture_output=True, text=True,
                                 timeout=30).stdout.splitlines()[:1]
    except (OSError, subprocess.SubprocessError):
        return None
    return path, (version[0] if version else "")


def compiler():
    """(path, version line) of the C compiler: $CC, else cc, gcc or clang."""
    for cc in ([os.environ["CC"]] if os.environ.get("CC") else ["cc", "gcc", "clang"]):
        found = _compiler_of(cc)
        if found is not None:
            return found
    raise CompilerMissing("no C compiler found (set CC, or put cc, gcc or clang on PATH)")


def cache_dir():
    """$EMBER_CACHE_DIR, else ~/.cache/ember/kernels."""
    return os.environ.get("EMBER_CACHE_DIR") or \
        os.path.join(os.path.expanduser("~"), ".cache", "ember", "kernels")


@functools.lru_cache(maxsize=1)
def _cpu_features():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return os.uname().machine


@functools.lru_cache(maxsize=1)
def _vector_math():
    """-lmvec where the generated code declares glibc's vector math (x86-64,
    glibc 2.35 or later: the same test as the kernel prelude's)."""
    import platform
    lib, version = platform.libc_ver()
    try:
        major, minor = (int(v) for v in version.split(".")[:2])
    except ValueError:
        return []
    if os.uname().machine == "x86_64" and lib == "glibc" and (major, minor) >= (2, 35):
        return ["-lmvec"]
    return []


def _th_paths():
    import ember.th as th
    return th.get_include(), th.get_lib_dir()


def key_of(src):
    cc, version = compiler()
    h = hashlib.sha256()
    for part in (src, cc, version, " ".join(FLAGS), _cpu_features()):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def load(src, ffi=None, entry=ENTRY):
    """The function `entry` (declared in `ffi`: by default the fusion
    groups' ENTRY) of `src`: loaded from this process's
    table, from the disk cache, or compiled into it.  Raises
    CompilerMissing, or RuntimeError with the compiler's message."""
    key = key_of(src)
    with _lock:
        hit = _loaded.get(key)
        if hit is not None:
            return hit[1], key, None
        folder = os.path.join(cache_dir(), key[:2])
        path = os.path.join(folder, key + ".so")
        compiled_in = None
        if not os.path.exists(path):
            compiled_in = _compile(src, folder, key, path)
            stats["compiled"] += 1
            stats["compile_s"] += compiled_in
        else:
            stats["loaded"] += 1
        lib = (ffi or _ffi).dlopen(path)
        fn = getattr(lib, entry)
        _loaded[key] = (lib, fn)
        return fn, key, compiled_in


def _compile(src, folder, key, path):
    cc, _ = compiler()
    os.makedirs(folder, exist_ok=True)
    inc, libdir = _th_paths()
    fd, tmp_c = tempfile.mkstemp(prefix=key + ".", suffix=".c", dir=folder)
    with os.fdopen(fd, "w") as f:
        f.write(src)
    tmp_so = tmp_c[:-2] + ".so"
    cmd = [cc, *FLAGS, f"-I{inc}", tmp_c, "-o", tmp_so, f"-L{libdir}", "-lTH",
           f"-Wl,-rpath,{libdir}", *_vector_math(), "-lm"]
    start = time.perf_counter()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.SubprocessError) as e:
        _remove(tmp_c, tmp_so)
        raise CompilerMissing(f"the C compiler {cc} could not run: {e}") from None
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        _remove(tmp_so)
        raise RuntimeError(f"ember.compile: {cc} failed on {tmp_c}:\n{done.stderr[-4000:]}")
    os.replace(tmp_so, path)               # atomic: readers see a whole library
    os.replace(tmp_c, path[:-3] + ".c")    # the source, for EMBER_LOGS=fusion and explain
    return seconds


def _remove(*paths):
    for p in paths:
        try:
            os.unlink(p)
        except OSError:
            pass


def forget():
    """Drops the loaded-kernel table (the libraries stay mapped)."""
    with _lock:
        _loaded.clear()
