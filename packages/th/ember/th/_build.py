"""Build steps shared by the C packages' build scripts (build_th.py, and
build_thc.py through the installed ember-th): a public header as cffi's
cdef, the built library and headers copied into the Python package, and
the cffi extension compiled against them.  Plain Python, importable
before ember.th's extension exists (build_th.py loads this file by path).
"""
import re
import shutil
import sysconfig
from pathlib import Path


def cdef_from_header(text: str, macro_prefix: str, extra: str = "") -> str:
    """The header as cffi's cdef reads it: preprocessor lines dropped
    (numeric `#define <macro_prefix>_...` kept), the C++ guard blocks
    skipped, plus `extra` declarations (Python callbacks)."""
    keep, in_cplusplus = [], False
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("#ifdef __cplusplus"):
            in_cplusplus = True
        elif in_cplusplus:
            in_cplusplus = not s.startswith("#endif")
        elif s.startswith("#"):
            m = re.match(rf"#define\s+({macro_prefix}_\w+)\s+(-?\d+)\s*$", s)
            if m:
                keep.append(f"#define {m.group(1)} {m.group(2)}")
        else:
            keep.append(line)
    return "\n".join(keep) + "\n" + extra


def install_into_package(build: Path, here: Path, pkg: Path, library: str,
                         headers, pc_name: str) -> None:
    """Copies build/lib/<library> and here/include/<headers> into pkg's
    lib/ and include/, with build/lib/pkgconfig/<pc_name> made relocatable
    (paths relative to the .pc file's own folder)."""
    lib_dir, inc_dir = pkg / "lib", pkg / "include"
    for d in (lib_dir, inc_dir):
        shutil.rmtree(d, ignore_errors=True)
    (lib_dir / "pkgconfig").mkdir(parents=True)
    inc_dir.mkdir(parents=True)
    shutil.copy2(build / "lib" / library, lib_dir / library)
    for header in headers:
        shutil.copy2(here / "include" / header, inc_dir / header)
    pc = (build / "lib" / "pkgconfig" / pc_name).read_text()
    pc = re.sub(r"^prefix=.*$", "prefix=${pcfiledir}/../..", pc, flags=re.M)
    (lib_dir / "pkgconfig" / pc_name).write_text(pc)


def compile_extension(module: str, header: str, cdef: str, pkg: Path, build: Path,
                      include_dirs, library_dirs, libraries, link_args) -> None:
    """Compiles the cffi extension `module` (API mode, `#include header`)
    and copies it into pkg, replacing an older build of it."""
    import cffi

    ffi = cffi.FFI()
    ffi.cdef(cdef)
    ffi.set_source(module, f'#include "{header}"', include_dirs=[str(d) for d in include_dirs],
                   library_dirs=[str(d) for d in library_dirs], libraries=list(libraries),
                   extra_link_args=list(link_args), extra_compile_args=["-O2"])
    tmp = build / "cffi"
    tmp.mkdir(parents=True, exist_ok=True)
    out = ffi.compile(tmpdir=str(tmp), verbose=False)
    name = module.rsplit(".", 1)[1]
    for old in pkg.glob(f"{name}*.so"):
        old.unlink()
    shutil.copy2(out, pkg / f"{name}{sysconfig.get_config_var('EXT_SUFFIX')}")
