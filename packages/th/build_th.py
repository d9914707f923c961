"""Build script run by poetry-core (``[tool.poetry.build] script``).

1. builds libTH with the package's Makefile (honours TH_NO_BLAS=1 and
   TH_NO_THREADS=1 from the environment),
2. copies the library, header and pkg-config file into ember/th/,
3. compiles the cffi extension ember/th/_th_cffi against it, linked with
   an $ORIGIN rpath so the installed package finds its own libTH.so.
"""
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

HERE = Path(__file__).resolve().parent
PKG = HERE / "ember" / "th"


def cdef_from_header(text: str) -> str:
    """The header as cffi's cdef reads it: preprocessor lines dropped
    (numeric #defines kept), the C++ guard blocks skipped, plus the
    declaration of the Python release callback."""
    keep, in_cplusplus = [], False
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("#ifdef __cplusplus"):
            in_cplusplus = True
        elif in_cplusplus:
            in_cplusplus = not s.startswith("#endif")
        elif s.startswith("#"):
            m = re.match(r"#define\s+(TH_\w+)\s+(-?\d+)\s*$", s)
            if m:
                keep.append(f"#define {m.group(1)} {m.group(2)}")
        else:
            keep.append(line)
    keep.append('extern "Python" void _ember_th_release(void *ctx, void *data);')
    return "\n".join(keep) + "\n"


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


def install_into_package(build: Path) -> None:
    lib_dir, inc_dir = PKG / "lib", PKG / "include"
    for d in (lib_dir, inc_dir):
        shutil.rmtree(d, ignore_errors=True)
    (lib_dir / "pkgconfig").mkdir(parents=True)
    inc_dir.mkdir(parents=True)
    shutil.copy2(build / "lib" / "libTH.so", lib_dir / "libTH.so")
    for header in ("th.h", "th_meta.h"):
        shutil.copy2(HERE / "include" / header, inc_dir / header)
    pc = (build / "lib" / "pkgconfig" / "th.pc").read_text()
    # relocatable: paths relative to the .pc file's own folder
    pc = re.sub(r"^prefix=.*$", "prefix=${pcfiledir}/../..", pc, flags=re.M)
    pc = pc.replace("libdir=${prefix}/lib", "libdir=${prefix}/lib").replace(
        "includedir=${prefix}/include", "includedir=${prefix}/include")
    (lib_dir / "pkgconfig" / "th.pc").write_text(pc)


def build_extension(build: Path) -> None:
    import cffi

    ffi = cffi.FFI()
    ffi.cdef(cdef_from_header((HERE / "include" / "th.h").read_text()))
    ffi.set_source(
        "ember.th._th_cffi",
        '#include "th.h"',
        include_dirs=[str(HERE / "include")],
        library_dirs=[str(PKG / "lib")],
        libraries=["TH"],
        extra_link_args=["-Wl,-rpath,$ORIGIN/lib"],
        extra_compile_args=["-O2"],
    )
    tmp = build / "cffi"
    tmp.mkdir(parents=True, exist_ok=True)
    out = ffi.compile(tmpdir=str(tmp), verbose=False)
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    for old in PKG.glob("_th_cffi*.so"):
        old.unlink()
    shutil.copy2(out, PKG / f"_th_cffi{suffix}")


def main() -> None:
    build = build_library()
    install_into_package(build)
    build_extension(build)


if __name__ == "__main__":
    main()
