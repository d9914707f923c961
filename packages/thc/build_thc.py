"""Build script run by poetry-core (``[tool.poetry.build] script``).

Builds against the INSTALLED ember-th (libTHC links libTH for tensor
metadata, th_meta.h), found with ``import ember.th``: install ember-th
first and this package with --no-build-isolation, or offer ember-th as a
wheel through PIP_FIND_LINKS, as for ember-thnn.

1. builds libTHC with the package's Makefile: with nvcc when it is found
   (through $NVCC, PATH, $CUDA_HOME, /usr/local/cuda), host-side only when
   EMBER_NO_CUDA=1 (the Makefile stops with a message when neither holds),
2. copies the library, header (thc.h with its op enumerators written out
   from libTH's th_ops.def) and pkg-config file into ember/thc/,
3. compiles the cffi extension ember/thc/_thc_cffi against it, linked with
   an $ORIGIN rpath so the installed package finds its own libTHC.so.

libTHC.so finds libTH.so through an $ORIGIN rpath into ember/th/lib, and
links libcudart.so with an absolute rpath into the CUDA toolkit it was
built with (CUDA_LIB in the Makefile).
"""
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PKG = HERE / "ember" / "thc"

# the C callbacks through which a Python object serves as the allocator's device
CALLBACKS = """extern "Python" int _thc_py_malloc(void *ctx, void **ptr, size_t nbytes);
extern "Python" int _thc_py_free(void *ctx, void *ptr);
extern "Python" int _thc_py_stream_synchronize(void *ctx, void *stream);
extern "Python" int _thc_py_stream_query(void *ctx, void *stream);
extern "Python" int _thc_py_mem_info(void *ctx, size_t *free_bytes, size_t *total_bytes);
extern "Python" int _thc_py_event_record(void *ctx, void *stream, void **event);
extern "Python" int _thc_py_event_query(void *ctx, void *event);
extern "Python" int _thc_py_event_synchronize(void *ctx, void *event);
extern "Python" int _thc_py_event_destroy(void *ctx, void *event);
"""


def th_paths():
    try:
        import ember.th as th  # the installed ember-th
    except ImportError:
        sys.exit("ember-thc builds against ember-th: install it first (pip install ember-th), "
                 "then pip install --no-build-isolation ember-thc")
    return th.get_include(), th.get_lib_dir()


def build_library(th_inc: str, th_lib: str) -> Path:
    no_cuda = os.environ.get("EMBER_NO_CUDA") == "1"
    build_dir = os.environ.get("THC_BUILD_DIR", "build/wheel-nocuda" if no_cuda else "build/wheel")
    jobs = os.environ.get("THC_MAKE_JOBS", "2")
    env = dict(os.environ, PYTHON=sys.executable)
    try:
        subprocess.check_call(["make", "-C", str(HERE), f"-j{jobs}", f"BUILD={build_dir}",
                               f"TH_INCLUDE={th_inc}", f"TH_LIB_DIR={th_lib}"], env=env)
    except subprocess.CalledProcessError:
        sys.exit("ember-thc: building libTHC failed (see above). Without a CUDA toolkit, "
                 "build the host-side library only: EMBER_NO_CUDA=1 pip install ...")
    return HERE / build_dir


def plain_header(th_inc: str) -> str:
    """thc.h with its op enumerators written out from libTH's th_ops.def
    (what is installed, and what cffi reads)."""
    from ember.th import _opsdef
    return _opsdef.expand_header((HERE / "include" / "thc.h").read_text(),
                                 (Path(th_inc) / "th_ops.def").read_text())


def build_extension(build: Path, th_inc: str, th_lib: str) -> None:
    from ember.th import _build as steps
    cdef = steps.cdef_from_header(plain_header(th_inc), "THC", CALLBACKS)
    steps.compile_extension("ember.thc._thc_cffi", "thc.h", cdef, PKG, build,
                            [PKG / "include", th_inc], [PKG / "lib"], ["THC"],
                            ["-Wl,-rpath,$ORIGIN/lib", f"-Wl,-rpath-link,{th_lib}"])


def main() -> None:
    th_inc, th_lib = th_paths()
    if not (Path(th_inc) / "th_ops.def").is_file():
        sys.exit(f"ember-thc: the installed ember-th has no th_ops.def in {th_inc}: upgrade "
                 "ember-th (libTHC's op vocabulary is libTH's)")
    build = build_library(th_inc, th_lib)
    from ember.th import _build as steps
    steps.install_into_package(build, HERE, PKG, "libTHC.so", ("thc.h",), "thc.pc")
    (PKG / "include" / "thc.h").write_text(plain_header(th_inc))   # the header as installed
    build_extension(build, th_inc, th_lib)


if __name__ == "__main__":
    main()
