"""Build script run by poetry-core (``[tool.poetry.build] script``).

Builds against the INSTALLED ember-th, found with ``import ember.th``
(its header folder and libTH.so): pip needs ember-th in the build
environment, from [build-system].requires — as a wheel in a folder named
by PIP_FIND_LINKS — or already installed with --no-build-isolation.

1. builds libTHNN with the package's Makefile (TH_INCLUDE/TH_LIB_DIR set
   from ember.th),
2. copies the library, header (its kernel table written out), the table
   (thnn_kernels.def, which ember-thcunn's build reads) and pkg-config
   file into ember/thnn/,
3. compiles the cffi extension ember/thnn/_thnn_cffi, linked with $ORIGIN
   rpaths to its own libTHNN.so and to ember/th/lib/libTH.so.
"""
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PKG = HERE / "ember" / "thnn"


def cdef_from_header(text: str) -> str:
    """thnn.h as cffi's cdef reads it (ember-th's build step), with th_tensor
    and th_generator pointers declared as void * so that ember.th's tensors
    (cdata of another FFI) pass straight through."""
    from ember.th._build import cdef_from_header as cdef
    text = re.sub(r"\bth_tensor\s*\*", "void *", cdef(text, "THNN"))
    return re.sub(r"\bth_generator\s*\*", "void *", text)


def plain_header() -> str:
    """thnn.h with the kernel table (include/thnn_kernels.def) written out:
    what is installed and what cffi reads.  The module doing it is loaded
    by path (ember.thnn is not built yet)."""
    spec = importlib.util.spec_from_file_location("_thnn_kernel_table",
                                                  PKG / "_kernel_table.py")
    table = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(table)
    return table.expand_header((HERE / "include" / "thnn.h").read_text(),
                               (HERE / "include" / table.TABLE).read_text())


def th_paths():
    import ember.th as th  # the installed ember-th
    return th.get_include(), th.get_lib_dir()


def build_library(th_inc: str, th_lib: str) -> Path:
    build_dir = os.environ.get("THNN_BUILD_DIR", "build/wheel")
    env = dict(os.environ, PYTHON=sys.executable, TH_INCLUDE=th_inc, TH_LIB_DIR=th_lib)
    jobs = os.environ.get("THNN_MAKE_JOBS", "2")
    subprocess.check_call(["make", "-C", str(HERE), f"-j{jobs}", f"BUILD={build_dir}",
                           f"TH_INCLUDE={th_inc}", f"TH_LIB_DIR={th_lib}"], env=env)
    return HERE / build_dir


def build_extension(build: Path, dep_inc: str, dep_lib: str) -> None:
    from ember.th import _build as steps
    steps.compile_extension(
        "ember.thnn._thnn_cffi", "thnn.h",
        cdef_from_header(plain_header()), PKG, build,
        [PKG / "include", dep_inc], [PKG / "lib", dep_lib], ["THNN", "TH"],
        ["-Wl,-rpath,$ORIGIN/lib", "-Wl,-rpath,$ORIGIN/../th/lib"])


def main() -> None:
    th_inc, th_lib = th_paths()
    build = build_library(th_inc, th_lib)
    from ember.th import _build as steps
    steps.install_into_package(build, HERE, PKG, "libTHNN.so", ("thnn.h", "thnn_kernels.def"),
                               "thnn.pc")
    (PKG / "include" / "thnn.h").write_text(plain_header())  # the header as installed
    build_extension(build, th_inc, th_lib)


if __name__ == "__main__":
    main()
