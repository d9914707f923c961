"""Build script run by poetry-core (``[tool.poetry.build] script``).

Builds against the INSTALLED ember-th, found with ``import ember.th``
(its header folder and libTH.so): pip needs ember-th in the build
environment, from [build-system].requires — as a wheel in a folder named
by PIP_FIND_LINKS — or already installed with --no-build-isolation.

1. builds libTHNN with the package's Makefile (TH_INCLUDE/TH_LIB_DIR set
   from ember.th),
2. copies the library, header and pkg-config file into ember/thnn/,
3. compiles the cffi extension ember/thnn/_thnn_cffi, linked with $ORIGIN
   rpaths to its own libTHNN.so and to ember/th/lib/libTH.so.
"""
import os
import re
import shutil
import subprocess
import sys
import sysconfig
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


def install_into_package(build: Path) -> None:
    lib_dir, inc_dir = PKG / "lib", PKG / "include"
    for d in (lib_dir, inc_dir):
        shutil.rmtree(d, ignore_errors=True)
    (lib_dir / "pkgconfig").mkdir(parents=True)
    inc_dir.mkdir(parents=True)
    shutil.copy2(build / "lib" / "libTHNN.so", lib_dir / "libTHNN.so")
    shutil.copy2(HERE / "include" / "thnn.h", inc_dir / "thnn.h")
    pc = (build / "lib" / "pkgconfig" / "thnn.pc").read_text()
    pc = re.sub(r"^prefix=.*$", "prefix=${pcfiledir}/../..", pc, flags=re.M)
    (lib_dir / "pkgconfig" / "thnn.pc").write_text(pc)


def build_extension(build: Path, th_inc: str, th_lib: str) -> None:
    import cffi

    ffi = cffi.FFI()
    ffi.cdef(cdef_from_header((HERE / "include" / "thnn.h").read_text()))
    ffi.set_source(
        "ember.thnn._thnn_cffi",
        '#include "thnn.h"',
        include_dirs=[str(HERE / "include"), th_inc],
        library_dirs=[str(PKG / "lib"), th_lib],
        libraries=["THNN", "TH"],
        extra_link_args=["-Wl,-rpath,$ORIGIN/lib", "-Wl,-rpath,$ORIGIN/../th/lib"],
        extra_compile_args=["-O2"],
    )
    tmp = build / "cffi"
    tmp.mkdir(parents=True, exist_ok=True)
    out = ffi.compile(tmpdir=str(tmp), verbose=False)
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    for old in PKG.glob("_thnn_cffi*.so"):
        old.unlink()
    shutil.copy2(out, PKG / f"_thnn_cffi{suffix}")


def main() -> None:
    th_inc, th_lib = th_paths()
    build = build_library(th_inc, th_lib)
    install_into_package(build)
    build_extension(build, th_inc, th_lib)


if __name__ == "__main__":
    main()
