"""Build script run by poetry-core (``[tool.poetry.build] script``).

1. builds libTH with the package's Makefile (honours TH_NO_BLAS=1 and
   TH_NO_THREADS=1 from the environment),
2. copies the library, headers (th.h with its op enumerators written out
   from th_ops.def) and pkg-config file into ember/th/,
3. compiles the cffi extension ember/th/_th_cffi against it, linked with
   an $ORIGIN rpath so the installed package finds its own libTH.so.
"""
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PKG = HERE / "ember" / "th"


def _build_steps():
    """ember/th/_build.py, loaded by path (ember.th itself is not built yet)."""
    spec = importlib.util.spec_from_file_location("_ember_th_build", PKG / "_build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


steps = _build_steps()


def _opsdef():
    """ember/th/_opsdef.py, loaded by path (ember.th is not built yet)."""
    spec = importlib.util.spec_from_file_location("_th_opsdef", PKG / "_opsdef.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def plain_header() -> str:
    """th.h with the op enumerators written out from th_ops.def (what is
    installed, and what cffi reads)."""
    return _opsdef().expand_header((HERE / "include" / "th.h").read_text(),
                                   (HERE / "include" / "th_ops.def").read_text())


def build_library() -> Path:
    # one folder per configuration, apart from a plain `make`'s build/, so
    # switching TH_NO_BLAS or TH_NO_THREADS always rebuilds the objects
    config = "".join(f"-{k[3:].lower()}" for k in ("TH_NO_BLAS", "TH_NO_THREADS")
                     if os.environ.get(k) == "1")
    build_dir = os.environ.get("TH_BUILD_DIR", f"build/wheel{config}")
    env = dict(os.environ, PYTHON=sys.executable)
    jobs = os.environ.get("TH_MAKE_JOBS", "2")
    subprocess.check_call(["make", "-C", str(HERE), f"-j{jobs}", f"BUILD={build_dir}"], env=env)
    return HERE / build_dir


def cdef() -> str:
    """What cffi declares for ember.th._th_cffi (also read by the aarch64
    cross build, embedded/aarch64_wheels.py)."""
    return steps.cdef_from_header(
        plain_header(), "TH",
        'extern "Python" void _ember_th_release(void *ctx, void *data);\n')


def build_extension(build: Path) -> None:
    steps.compile_extension("ember.th._th_cffi", "th.h", cdef(), PKG, build,
                            [HERE / "include"], [PKG / "lib"], ["TH"],
                            ["-Wl,-rpath,$ORIGIN/lib"])


def main() -> None:
    build = build_library()
    steps.install_into_package(build, HERE, PKG, "libTH.so",
                               ("th.h", "th_ops.def", "th_meta.h", "th_check.h", "th_ops_expr.h"),
                               "th.pc")
    (PKG / "include" / "th.h").write_text(plain_header())
    build_extension(build)


if __name__ == "__main__":
    main()
