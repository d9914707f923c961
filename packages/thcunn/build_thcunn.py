"""Build script run by poetry-core (``[tool.poetry.build] script``).

Builds against the INSTALLED ember-thc, found with ``import ember.thc``
(its header folder and libTHC.so): pip needs ember-thc in the build
environment, from [build-system].requires — as a wheel in a folder named
by PIP_FIND_LINKS — or already installed with --no-build-isolation.

1. builds libTHCUNN with the package's Makefile (THC_INCLUDE/THC_LIB_DIR set
   from ember.thc): with nvcc, or as host C++ with EMBER_NO_CUDA=1 (then it
   runs only on libTHC's emulated device),
2. copies the library, header (ember-thnn's kernel table written out) and
   pkg-config file into ember/thcunn/,
3. compiles the cffi extension ember/thcunn/_thcunn_cffi, linked with $ORIGIN
   rpaths to its own libTHCUNN.so and to ember/thc/lib/libTHC.so.
"""
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PKG = HERE / "ember" / "thcunn"


def cdef_from_header(text: str) -> str:
    """thcunn.h as cffi's cdef reads it (ember-th's build step), with thc_tensor
    and thc_generator pointers declared as void * so that ember.thc's tensors
    (cdata of another FFI) pass straight through."""
    from ember.th._build import cdef_from_header as cdef
    text = re.sub(r"\bthc_tensor\s*\*", "void *", cdef(text, "THCUNN"))
    return re.sub(r"\bthc_generator\s*\*", "void *", text)


def th_paths():
    """thc.h's folder and libTHC.so's, from the installed ember-thc (which
    itself needs ember-th: its header and the op vocabulary, th_ops.def)."""
    try:
        import ember.thc as thc  # the installed ember-thc
    except ImportError:
        sys.exit("ember-thcunn builds against the installed ember-thc (and ember-th): install "
                 "them first (pip install ./packages/th ./packages/thc), then "
                 "pip install --no-build-isolation ./packages/thcunn")
    return thc.get_include(), thc.get_lib_dir()


def thnn_include() -> str:
    """ember-thnn's include folder, holding the kernel table thcunn.h
    includes (thnn_kernels.def)."""
    try:
        import ember.thnn as thnn  # the installed ember-thnn
    except ImportError:
        sys.exit("ember-thcunn builds against the installed ember-thnn (its kernel table and "
                 "binding): pip install --no-build-isolation ./packages/thnn first")
    inc = thnn.get_include()
    if not (Path(inc) / "thnn_kernels.def").is_file():
        sys.exit(f"ember-thcunn: the installed ember-thnn has no thnn_kernels.def in {inc}: "
                 "upgrade ember-thnn (libTHCUNN's kernels are declared in libTHNN's table)")
    return inc


def plain_header() -> str:
    """thcunn.h with ember-thnn's kernel table written out: what is
    installed and what cffi reads."""
    from ember.thnn import _kernel_table as table
    return table.expand_header((HERE / "include" / "thcunn.h").read_text(),
                               (Path(thnn_include()) / table.TABLE).read_text())


def build_library(th_inc: str, th_lib: str) -> Path:
    config = "-nocuda" if os.environ.get("EMBER_NO_CUDA") == "1" else ""
    build_dir = os.environ.get("THCUNN_BUILD_DIR", f"build/wheel{config}")
    env = dict(os.environ, PYTHON=sys.executable, THC_INCLUDE=th_inc, THC_LIB_DIR=th_lib)
    jobs = os.environ.get("THCUNN_MAKE_JOBS", "2")
    subprocess.check_call(["make", "-C", str(HERE), f"-j{jobs}", f"BUILD={build_dir}",
                           f"THC_INCLUDE={th_inc}", f"THC_LIB_DIR={th_lib}",
                           f"THNN_INCLUDE={thnn_include()}"], env=env)
    return HERE / build_dir


def build_extension(build: Path, dep_inc: str, dep_lib: str) -> None:
    from ember.th import _build as steps
    steps.compile_extension(
        "ember.thcunn._thcunn_cffi", "thcunn.h",
        cdef_from_header(plain_header()), PKG, build,
        [PKG / "include", dep_inc], [PKG / "lib", dep_lib], ["THCUNN", "THC"],
        ["-Wl,-rpath,$ORIGIN/lib", "-Wl,-rpath,$ORIGIN/../thc/lib"])


def main() -> None:
    th_inc, th_lib = th_paths()
    build = build_library(th_inc, th_lib)
    from ember.th import _build as steps
    steps.install_into_package(build, HERE, PKG, "libTHCUNN.so", ("thcunn.h",), "thcunn.pc")
    (PKG / "include" / "thcunn.h").write_text(plain_header())  # the header as installed
    build_extension(build, th_inc, th_lib)


if __name__ == "__main__":
    main()
