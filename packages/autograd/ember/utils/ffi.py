"""C extensions whose functions take ember tensors.

You write C against libTH's header (``th.h``, and ``thnn.h`` when ember-thnn
is installed) with ``th_tensor *`` parameters, declare the functions, and
call them from Python with ``ember.Tensor``s or ``ember.th`` tensors::

    ext = ember.utils.ffi.load_inline(
        "scale",
        sources='''
            int scale_out(th_tensor *out, const th_tensor *x, double a) {
                th_tensor *s = th_scalar_double(a, TH_FLOAT64);
                int rc = s ? th_binary_out(TH_MUL, out, x, s) : 1;
                th_tensor_release(s);
                return rc;
            }''',
        functions="int scale_out(th_tensor *out, const th_tensor *x, double a);")
    ext.scale_out(out, x, 2.0)

The module is built with cffi in API mode.  Its FFI *includes* a replica of
ember.th's own FFI (same declarations, same module name), so cffi treats
``th_tensor`` as one type in both modules: the pointer an ember.th tensor
holds passes straight through, with no cast and no copy, and the C call runs
without the GIL.

Builds are cached under ``build_directory``, ``$EMBER_EXTENSIONS_DIR`` or
``~/.cache/ember/extensions``, keyed by a hash of everything that goes into
the binary: the sources and headers given, the declarations, the flags, the
compiler, libTH's (and libTHNN's) ABI version and header, the Python ABI and
cffi's version.  A build happens in a private folder and the result is
renamed into place, under a file lock, so processes building the same
extension at once neither clash nor compile twice.
"""
import contextlib
import fcntl
import hashlib
import importlib.machinery
import importlib.util
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import types
from pathlib import Path

__all__ = ["create_extension", "load_inline", "ExtensionError", "default_build_directory"]

# bumped when the way a build is made changes, so old cache entries are not reused
_BUILD_FORMAT = 1

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class ExtensionError(RuntimeError):
    """An extension failed to compile or link; the message holds the command
    and the compiler's output."""


# ---- public API -------------------------------------------------------------

def create_extension(name, headers, sources, with_cuda=False, extra_compile_args=None,
                     include_dirs=None, libraries=None, build_directory=None,
                     verbose=False, *, extra_link_args=None):
    """Builds (or takes from the cache) and loads an extension module.

    name: a Python identifier naming the extension.
    headers: path(s) of header files declaring the functions to expose (plain
        declarations; preprocessor lines are skipped for the Python side and
        the headers are #included for the C side).
    sources: path(s) of C files defining them.
    Returns a module whose functions take ember tensors for ``th_tensor *``
    parameters (None for NULL), ember.Generator for ``th_generator *``, and
    plain Python values for the rest.
    """
    _check_common(name, with_cuda)
    header_paths = [_existing(p, "header") for p in _as_list(headers, "headers")]
    source_paths = [_existing(p, "source") for p in _as_list(sources, "sources")]
    if not header_paths:
        raise ValueError("create_extension() needs at least one header declaring the functions")
    declarations = "\n".join(declarations_from_header(p.read_text()) for p in header_paths)
    preamble = "".join(f'#include "{p}"\n' for p in header_paths)
    files = [(p.name, p.read_text()) for p in header_paths + source_paths]
    return _build_and_load(name, declarations, preamble, source_paths, files,
                           extra_compile_args, include_dirs, libraries, extra_link_args,
                           build_directory, verbose)


def load_inline(name, sources, functions, *, with_cuda=False, extra_compile_args=None,
                include_dirs=None, libraries=None, build_directory=None, verbose=False,
                extra_link_args=None):
    """Builds (or takes from the cache) an extension from C source text.

    sources: C source text, or a list of texts (each compiled as one file,
        with ``th.h`` — and ``thnn.h`` when installed — already included).
    functions: the declarations of the functions to expose, as one string or a
        list of strings (``"int f(th_tensor *out, const th_tensor *x);"``).
    """
    _check_common(name, with_cuda)
    texts = _as_list(sources, "sources")
    if not all(isinstance(t, str) for t in texts):
        raise TypeError("load_inline() sources must be C source text (a str or a list of str)")
    decls = _as_list(functions, "functions")
    if not decls or not all(isinstance(d, str) for d in decls):
        raise TypeError("load_inline() functions must be C declarations (a str or a list of str)")
    declarations = "\n".join(d if d.rstrip().endswith(";") else d + ";" for d in decls)
    files = [(f"{name}_{i}.c", t) for i, t in enumerate(texts)]
    return _build_and_load(name, declarations, declarations, None, files, extra_compile_args,
                           include_dirs, libraries, extra_link_args, build_directory, verbose)


def default_build_directory():
    """$EMBER_EXTENSIONS_DIR, or ~/.cache/ember/extensions."""
    d = os.environ.get("EMBER_EXTENSIONS_DIR")
    return Path(d) if d else Path.home() / ".cache" / "ember" / "extensions"


def declarations_from_header(text):
    """A header as cffi's cdef reads it: preprocessor lines (and their
    continuations) dropped, integer #defines kept, C++ guard blocks skipped."""
    keep, in_cplusplus, continued = [], False, False
    for line in text.splitlines():
        s = line.strip()
        if continued:
            continued = s.endswith("\\")
            continue
        if s.startswith("#ifdef __cplusplus") or s.startswith("#if defined(__cplusplus)"):
            in_cplusplus = True
        elif in_cplusplus:
            in_cplusplus = not s.startswith("#endif")
        elif s.startswith("#"):
            continued = s.endswith("\\")
            m = re.match(r"#\s*define\s+(\w+)\s+(-?(?:0x[0-9a-fA-F]+|\d+))\s*$", s)
            if m:
                keep.append(f"#define {m.group(1)} {m.group(2)}")
        else:
            keep.append(line)
    return "\n".join(keep) + "\n"


# ---- argument checks --------------------------------------------------------

def _check_common(name, with_cuda):
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"extension name must be a Python identifier, got {name!r}")
    if with_cuda:
        if importlib.util.find_spec("ember.thc") is None:
            from ember.backends import BackendError
            raise BackendError(
                "with_cuda=True needs the GPU backend ember-thc, which is not installed "
                "(pip install 'ember[cuda]')")
        raise NotImplementedError("CUDA extensions are not supported by this version of "
                                  "ember.utils.ffi yet")


def _as_list(value, what):
    if isinstance(value, (str, os.PathLike)):
        return [value]
    if value is None:
        return []
    try:
        return list(value)
    except TypeError:
        raise TypeError(f"{what} must be a string, a path or a list of them, "
                        f"got {type(value).__name__}") from None


def _existing(path, what):
    p = Path(path).resolve()
    if not p.is_file():
        raise FileNotFoundError(f"extension {what} file not found: {path}")
    return p


# ---- the libraries it builds against ------------------------------------------

def _libraries():
    """(name, include dir, lib dir, ABI version, header hash) of libTH, and of
    libTHNN when ember-thnn is installed."""
    import ember.th as th
    found = [("TH", th.get_include(), th.get_lib_dir(), th.abi_version(), "th.h")]
    if importlib.util.find_spec("ember.thnn") is not None:
        import ember.thnn as thnn   # loads libTHNN before the extension needs it
        found.append(("THNN", thnn.get_include(), thnn.get_lib_dir(), thnn.abi_version(),
                      "thnn.h"))
    return [(n, inc, lib, abi, hashlib.sha256(Path(inc, h).read_bytes()).hexdigest())
            for n, inc, lib, abi, h in found]


_th_ffi = None


def _ember_th_ffi():
    """A build-time replica of ember.th's FFI: the declarations of th.h under
    the module name ember.th._th_cffi.  An FFI that includes it resolves the
    th types from the loaded ember.th module at import time."""
    global _th_ffi
    if _th_ffi is None:
        import cffi
        import ember.th as th
        base = cffi.FFI()
        base.cdef(declarations_from_header(Path(th.get_include(), "th.h").read_text()))
        base.set_source("ember.th._th_cffi", '#include "th.h"')
        _th_ffi = base
    return _th_ffi


# ---- build ------------------------------------------------------------------

def _compiler():
    return shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")


def _build_key(name, declarations, preamble_files, cflags, include_dirs, libraries,
               link_args, libs):
    import cffi
    h = hashlib.sha256()
    for part in (_BUILD_FORMAT, name, declarations, preamble_files, cflags, include_dirs,
                 libraries, link_args, libs, _compiler(), sys.implementation.cache_tag,
                 sysconfig.get_config_var("EXT_SUFFIX"), cffi.__version__):
        h.update(repr(part).encode())
        h.update(b"\0")
    return h.hexdigest()[:16]


@contextlib.contextmanager
def _file_lock(path):
    with open(path, "a+b") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def _run(cmd, verbose, cwd):
    if verbose:
        print(" ".join(shlex.quote(c) for c in cmd), flush=True)
    try:
        r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    except FileNotFoundError:
        raise ExtensionError(f"C compiler not found: {cmd[0]!r} (install one, or set $CC)") \
            from None
    if verbose and (r.stdout or r.stderr):
        print(r.stdout + r.stderr, end="", flush=True)
    if r.returncode != 0:
        raise ExtensionError(
            f"building the extension failed (exit status {r.returncode}):\n"
            f"$ {' '.join(shlex.quote(c) for c in cmd)}\n{r.stdout}{r.stderr}")


def _compile(module_name, ffi, preamble, source_paths, inline_files, cflags,
             include_dirs, libraries, link_args, libs, workdir, verbose):
    lib_includes = "".join(f'#include "{n.lower()}.h"\n' for n, *_ in libs)
    ffi.set_source(module_name, lib_includes + preamble)
    wrapper = workdir / f"{module_name}.c"
    with contextlib.redirect_stdout(sys.stdout if verbose else io.StringIO()):
        ffi.emit_c_code(str(wrapper))    # cffi says "generating ..." otherwise

    sources = list(source_paths or [])
    for fname, text in inline_files:    # inline sources see the libraries' headers
        p = workdir / fname
        p.write_text(lib_includes + "#line 1 \"" + fname + "\"\n" + text)
        sources.append(p)

    cc = _compiler()
    incs = [f"-I{d}" for d in list(include_dirs or []) + [inc for _, inc, *_ in libs]]
    pic = shlex.split(sysconfig.get_config_var("CCSHARED") or "-fPIC")
    objects = []
    for i, src in enumerate(sources):
        obj = workdir / f"{i}_{Path(src).stem}.o"
        _run(cc + pic + ["-O2"] + incs + list(cflags) + ["-c", str(src), "-o", str(obj)],
             verbose, workdir)
        objects.append(str(obj))
    # the generated wrapper needs Python's headers and none of the user's flags
    py_inc = [f"-I{sysconfig.get_paths()['include']}"]
    obj = workdir / f"{module_name}.o"
    _run(cc + pic + ["-O2"] + py_inc + incs + ["-c", str(wrapper), "-o", str(obj)],
         verbose, workdir)
    objects.append(str(obj))

    out = workdir / f"{module_name}{sysconfig.get_config_var('EXT_SUFFIX')}"
    link = []
    for n, _, lib_dir, *_ in libs:
        link += [f"-L{lib_dir}", f"-Wl,-rpath,{lib_dir}", f"-l{n}"]
    link += [f"-l{x}" for x in libraries or []]
    _run(cc + ["-shared"] + objects + ["-o", str(out)] + link + list(link_args), verbose,
         workdir)
    return out


def _parse(declarations):
    """An FFI holding the declarations (checked), with ember.th's included."""
    import cffi
    ffi = cffi.FFI()
    ffi.include(_ember_th_ffi())
    try:
        ffi.cdef(declarations)
    except cffi.CDefError as e:
        raise ValueError(f"could not read the extension's declarations: {e}") from None
    functions = _declared_functions(ffi)
    if not functions:
        raise ValueError("the extension declares no functions")
    for fname, tp in functions.items():
        # a returned th_tensor * is a new reference with no owner on the Python
        # side; outputs are passed in as parameters instead (libTHNN's contract)
        if _is_tensor_pointer(tp.result):
            raise TypeError(
                f"extension function {fname}() returns th_tensor *: pass the output "
                "tensor as a parameter instead (allocate it in Python, fill it in C)")
    return ffi


def _declared_functions(ffi):
    """{name: cffi model type} of each declared function.  cffi's runtime types
    drop `const`, so which tensors a function writes is read from the parsed
    declarations (cffi's declaration model, unchanged since cffi 1.0)."""
    return {key[len("function "):]: tp for key, (tp, _) in ffi._parser._declarations.items()
            if key.startswith("function ")}


def _is_tensor_pointer(tp):
    from cffi import model
    return isinstance(tp, model.PointerType) and \
        tp.totype.get_c_name() in ("th_tensor", "struct th_tensor")


def _const_tensor_args(ffi):
    """{function: positions of its `const th_tensor *` parameters}."""
    from cffi import model
    return {fname: {i for i, a in enumerate(tp.args)
                    if _is_tensor_pointer(a) and a.quals & model.Q_CONST}
            for fname, tp in _declared_functions(ffi).items()}


def _build_and_load(name, declarations, preamble, source_paths, files, cflags, include_dirs,
                    libraries, link_args, build_directory, verbose):
    cflags = [str(f) for f in cflags or []]
    link_args = [str(f) for f in link_args or []]
    include_dirs = [str(Path(d).resolve()) for d in include_dirs or []]
    libraries = [str(x) for x in libraries or []]
    libs = _libraries()
    ffi = _parse(declarations)    # bad declarations fail before any compiling
    key = _build_key(name, declarations, files, cflags, include_dirs, libraries, link_args,
                     libs)
    module_name = f"{name}_{key}"
    root = Path(build_directory) if build_directory else default_build_directory()
    root.mkdir(parents=True, exist_ok=True)
    target = root / f"{module_name}{sysconfig.get_config_var('EXT_SUFFIX')}"
    if module_name in _loaded:
        return _loaded[module_name]
    if not target.exists():
        with _file_lock(root / f"{module_name}.lock"):
            if not target.exists():    # another process may have built it meanwhile
                work = Path(tempfile.mkdtemp(prefix=f"{module_name}.", dir=root))
                try:
                    inline = files if source_paths is None else []
                    out = _compile(module_name, ffi, preamble, source_paths, inline,
                                   cflags, include_dirs, libraries, link_args, libs, work,
                                   verbose)
                    os.replace(out, target)
                finally:
                    shutil.rmtree(work, ignore_errors=True)
    elif verbose:
        print(f"ember.utils.ffi: using the cached build {target}", flush=True)
    ext = _load(name, module_name, target, _const_tensor_args(ffi))
    _loaded[module_name] = ext
    return ext


# ---- load and wrap ------------------------------------------------------------

_loaded = {}


def _load(name, module_name, path, const_args):
    import ember.th  # noqa: F401  the included FFI's module, and libTH, come first
    loader = importlib.machinery.ExtensionFileLoader(module_name, str(path))
    spec = importlib.util.spec_from_file_location(module_name, str(path), loader=loader)
    try:
        compiled = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(compiled)
    except ImportError as e:
        # typically a symbol the sources use but never define (shared objects
        # link with undefined symbols); drop the build so a fix is picked up
        Path(path).unlink(missing_ok=True)
        raise ExtensionError(f"extension {name!r} was built but cannot be loaded: {e}") \
            from None
    return _wrap_module(name, compiled, path, const_args)


def _wrap_module(name, compiled, path, const_args):
    ffi, lib = compiled.ffi, compiled.lib
    ext = types.ModuleType(name, f"C extension {name!r} built by ember.utils.ffi")
    ext.__file__ = str(path)
    ext.ffi, ext.lib = ffi, lib
    for fname, const_positions in const_args.items():   # the declared functions only;
        cfunc = getattr(lib, fname)                      # constants stay on ext.lib
        setattr(ext, fname, _wrap_function(fname, cfunc, ffi.typeof(cfunc), const_positions,
                                           ffi))
    return ext


_TENSOR_TYPES = ("struct th_tensor *", "th_tensor *")
_GENERATOR_TYPES = ("struct th_generator *", "th_generator *")


def _wrap_function(fname, cfunc, ctype, const_positions, ffi):
    import ember
    import ember.th as th

    from .._tensor import Tensor as EmberTensor
    from ..autograd.grad_mode import is_grad_enabled
    null = ffi.NULL
    nargs = len(ctype.args)
    tensor_pos = [i for i, a in enumerate(ctype.args) if a.cname in _TENSOR_TYPES]
    generator_pos = [i for i, a in enumerate(ctype.args) if a.cname in _GENERATOR_TYPES]
    written = [i for i in tensor_pos if i not in const_positions]

    def pointer(x, i):
        data = x._data if isinstance(x, EmberTensor) else x
        if isinstance(data, th.Tensor):
            return data._p
        if x is None:
            return null
        if isinstance(x, EmberTensor):
            raise TypeError(f"{fname}() argument {i + 1} must be a CPU tensor, "
                            f"got a tensor on {x.device}")
        raise TypeError(f"{fname}() argument {i + 1} must be an ember tensor, "
                        f"not {type(x).__name__}")

    def generator(x, i):
        if x is None:
            return null
        if isinstance(x, ember.Generator):
            return x._g
        raise TypeError(f"{fname}() argument {i + 1} must be an ember.Generator or None, "
                        f"not {type(x).__name__}")

    def call(*args):
        if len(args) != nargs:
            raise TypeError(f"{fname}() takes {nargs} argument{'s' * (nargs != 1)} "
                            f"({len(args)} given)")
        for i in written:
            x = args[i]
            if isinstance(x, EmberTensor) and x._requires_grad and x._grad_fn is None \
                    and is_grad_enabled():
                raise RuntimeError(
                    f"{fname}() argument {i + 1}: a leaf tensor that requires grad is "
                    "written by C code; pass a tensor that does not require grad, or "
                    "call it under ember.no_grad()")
        # `args` keeps the tensors (and so their C memory) alive until the call
        # returns: the C side gets borrowed pointers
        c_args = list(args)
        for i in tensor_pos:
            c_args[i] = pointer(args[i], i)
        for i in generator_pos:
            c_args[i] = generator(args[i], i)
        result = cfunc(*c_args)
        for i in written:    # C wrote through these: autograd must see a new version
            p = c_args[i]
            if p != null:
                p.storage.version += 1
        return result

    call.__name__ = call.__qualname__ = fname
    call.__doc__ = ctype.cname.replace("(*)", f" {fname}", 1) + "  (C, via ember.utils.ffi)"
    return call
