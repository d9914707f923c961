"""ember-th and ember-thnn wheels for linux aarch64, cross-built, and their
Python tests run under qemu-user with Debian's aarch64 Python.

    python embedded/aarch64_wheels.py BUILD_DIR [--no-tests]

BUILD_DIR is embedded/aarch64.sh's: it holds the aarch64 libTH and libTHNN
(th-blas/, thnn-blas/) and OpenBLAS.  Each wheel is this machine's wheel
of the package (built by pip from the same sources: the Python files,
headers and pkg-config files are the same on every machine) with its
native files replaced by aarch64 ones: libTH.so / libTHNN.so from
BUILD_DIR, and the cffi extension, whose C source cffi writes here and
the cross compiler builds against Debian's aarch64 Python headers.  The
wheels are tagged cp3X-cp3X-linux_aarch64 (built against glibc 2.36 here;
not checked against a manylinux policy).

Then, unless --no-tests: an aarch64 site folder with NumPy's, cffi's,
pytest's and scipy-openblas32's aarch64 wheels, these two and the pure
wheels of ember and ember-nn, and Debian's python3 for aarch64 (unpacked,
not installed), run a subset of ember-th's, ember-thnn's, the front's and
ember.nn's Python tests under qemu-aarch64 (--tests to choose).
"""
import argparse
import base64
import csv
import hashlib
import importlib.util
import io
import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
CROSS_CC = "aarch64-linux-gnu-gcc"
PY = f"{sys.version_info.major}.{sys.version_info.minor}"
TAG = f"cp{sys.version_info.major}{sys.version_info.minor}"
EXT_SUFFIX = f".cpython-{TAG[2:]}-aarch64-linux-gnu.so"
EM_AARCH64 = 183   # ELF e_machine
# Debian packages of the target's Python (unpacked into a folder of our own)
PY_DEBS = [f"python{PY}-minimal", f"libpython{PY}-minimal", f"libpython{PY}-stdlib",
           f"libpython{PY}-dev", "libffi8", "libexpat1", "libssl3", "libbz2-1.0", "liblzma5",
           "libsqlite3-0", "libuuid1", "libcrypt1", "libncursesw6", "libtinfo6",
           "libreadline8", "libnsl2", "libtirpc3", "libgssapi-krb5-2", "libkrb5-3",
           "libk5crypto3", "libkrb5support0", "libcom-err2", "libkeyutils1", "libdb5.3",
           "libstdc++6", "libgcc-s1"]
SITE_WHEELS = ["numpy==2.4.6", "cffi", "pycparser", "pytest==9.0.3", "iniconfig", "pluggy",
               "packaging", "pygments", "scipy-openblas32", "hypothesis", "attrs",
               "sortedcontainers"]
DEFAULT_TESTS = ["packages/th/tests/test_creation.py", "packages/th/tests/test_elementwise.py",
                 "packages/th/tests/test_linalg.py", "packages/th/tests/test_lapack.py",
                 "packages/th/tests/test_limits.py", "packages/thnn/tests/test_conv.py",
                 "packages/autograd/tests/test_engine.py", "packages/nn/tests/test_module.py",
                 "packages/nn/tests/test_conv_pool.py"]


def run(cmd, **kw):
    print("$", " ".join(map(str, cmd)), flush=True)
    subprocess.run(list(map(str, cmd)), check=True, **kw)


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def elf_machine(path):
    with open(path, "rb") as f:
        head = f.read(20)
    if head[:4] != b"\x7fELF":
        raise SystemExit(f"{path} is not an ELF file")
    return int.from_bytes(head[18:20], "little")


def python_root(build):
    """Debian's aarch64 Python, unpacked into build/python (no install)."""
    root = build / "python"
    if (root / "usr" / "bin" / f"python{PY}").exists():
        return root
    debs = build / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    run(["apt-get", "download", *[f"{d}:arm64" for d in PY_DEBS]], cwd=debs)
    for deb in sorted(debs.glob("*.deb")):
        run(["dpkg-deb", "-x", deb, root])
    return root


def cross_extension(module, cdef, header, include_dirs, lib_dirs, libs, rpaths, pyroot, out):
    """Builds cffi extension `module` for aarch64 into `out` (a file)."""
    import cffi
    ffi = cffi.FFI()
    ffi.cdef(cdef)
    ffi.set_source(module, f'#include "{header}"')
    src = out.with_suffix(".c")
    ffi.emit_c_code(str(src))
    # Debian's pyconfig.h includes <aarch64-linux-gnu/python3.X/pyconfig.h>
    inc = [pyroot / "usr" / "include" / f"python{PY}", pyroot / "usr" / "include",
           *include_dirs]
    run([CROSS_CC, "-shared", "-fPIC", "-O2", "-fvisibility=hidden", src, "-o", out,
         *[f"-I{d}" for d in inc], *[f"-L{d}" for d in lib_dirs], *[f"-l{l}" for l in libs],
         *[f"-Wl,-rpath,{r}" for r in rpaths]])


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return [name, f"sha256={digest}", str(len(data))]


def retarget(host_wheel, replace, out_dir):
    """The host wheel with files replaced ({old name or None: (new name,
    bytes)}), tagged linux_aarch64, its RECORD rewritten."""
    with zipfile.ZipFile(host_wheel) as z:
        files = {n: z.read(n) for n in z.namelist()}
    for old, (new, data) in replace.items():
        if old is not None:
            if old not in files:
                raise SystemExit(f"{host_wheel.name} has no {old}")
            del files[old]
        files[new] = data
    info = next(n for n in files if n.endswith(".dist-info/WHEEL")).rsplit("/", 1)[0]
    wheel_meta = [line for line in files[f"{info}/WHEEL"].decode().splitlines()
                  if not line.startswith("Tag:")]
    wheel_meta.append(f"Tag: {TAG}-{TAG}-linux_aarch64")
    files[f"{info}/WHEEL"] = ("\n".join(wheel_meta) + "\n").encode()
    record = f"{info}/RECORD"
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    for name in sorted(files):
        if name != record:
            w.writerow(record_line(name, files[name]))
    w.writerow([record, "", ""])
    files[record] = buf.getvalue().encode()
    dist, version = host_wheel.name.split("-")[:2]
    out = out_dir / f"{dist}-{version}-{TAG}-{TAG}-linux_aarch64.whl"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name in sorted(files):
            z.writestr(name, files[name])
    return out


def build_wheels(build, pyroot):
    host = build / "host-wheels"
    shutil.rmtree(host, ignore_errors=True)
    run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "-w", host, *[ROOT / "packages" / p for p in ("th", "thnn", "autograd", "nn")]])
    out = build / "wheels"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    host_suffix = sysconfig.get_config_var("EXT_SUFFIX")
    th_lib, thnn_lib = build / "th-blas" / "lib", build / "thnn-blas" / "lib"
    work = build / "cffi"
    work.mkdir(exist_ok=True)

    build_th = load(ROOT / "packages" / "th" / "build_th.py", "_ember_build_th")
    th_inc = ROOT / "packages" / "th" / "include"
    th_ext = work / f"_th_cffi{EXT_SUFFIX}"
    cross_extension("ember.th._th_cffi", build_th.cdef(), "th.h", [th_inc], [th_lib], ["TH"],
                    ["$ORIGIN/lib"], pyroot, th_ext)
    wheels = [retarget(next(host.glob("ember_th-*.whl")), {
        "ember/th/lib/libTH.so": ("ember/th/lib/libTH.so", (th_lib / "libTH.so").read_bytes()),
        f"ember/th/_th_cffi{host_suffix}": (f"ember/th/_th_cffi{EXT_SUFFIX}", th_ext.read_bytes()),
    }, out)]

    build_thnn = load(ROOT / "packages" / "thnn" / "build_thnn.py", "_ember_build_thnn")
    thnn_inc = ROOT / "packages" / "thnn" / "include"
    thnn_ext = work / f"_thnn_cffi{EXT_SUFFIX}"
    cross_extension("ember.thnn._thnn_cffi",
                    build_thnn.cdef_from_header(build_thnn.plain_header()), "thnn.h",
                    [thnn_inc, th_inc], [thnn_lib, th_lib], ["THNN", "TH"],
                    ["$ORIGIN/lib", "$ORIGIN/../th/lib"], pyroot, thnn_ext)
    wheels.append(retarget(next(host.glob("ember_thnn-*.whl")), {
        "ember/thnn/lib/libTHNN.so": ("ember/thnn/lib/libTHNN.so",
                                      (thnn_lib / "libTHNN.so").read_bytes()),
        f"ember/thnn/_thnn_cffi{host_suffix}": (f"ember/thnn/_thnn_cffi{EXT_SUFFIX}",
                                               thnn_ext.read_bytes()),
    }, out))
    for whl in wheels:   # every native file in them is an aarch64 one
        with zipfile.ZipFile(whl) as z:
            for n in z.namelist():
                if n.endswith(".so"):
                    z.extract(n, work / "check")
                    if elf_machine(work / "check" / n) != EM_AARCH64:
                        raise SystemExit(f"{whl.name}: {n} is not an aarch64 file")
        print(f"built {whl}")
    # the front and ember.nn are pure Python: their wheels serve every machine
    pure = [w for w in host.glob("*-py3-none-any.whl")]
    if len(pure) != 2:
        raise SystemExit(f"expected the pure wheels of ember and ember-nn in {host}")
    return wheels + pure


def test_wheels(build, pyroot, wheels, tests):
    site = build / "site"
    shutil.rmtree(site, ignore_errors=True)
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--only-binary=:all:",
           "--python-version", PY, "--implementation", "cp", "--target", site,
           "--platform", "manylinux_2_28_aarch64", "--platform", "manylinux2014_aarch64",
           "--platform", "linux_aarch64"]
    run(pip + SITE_WHEELS)
    run(pip + ["--upgrade"] + wheels)
    qemu = shutil.which("qemu-aarch64")
    # the aarch64 glibc is the system's multiarch one; Python's own
    # libraries come from the unpacked packages; qemu_subprocess.py starts
    # the tests' child interpreters through qemu too
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), str(ROOT / "embedded")]),
               PYTHONDONTWRITEBYTECODE="1", EMBER_QEMU=qemu, EMBER_QEMU_SYSROOT=str(pyroot),
               QEMU_CPU=os.environ.get("QEMU_CPU", "cortex-a72"),   # see aarch64.sh
               LD_LIBRARY_PATH=f"{pyroot}/usr/lib/aarch64-linux-gnu:"
                               f"{pyroot}/lib/aarch64-linux-gnu")
    run([qemu, "-L", pyroot, pyroot / "usr" / "bin" / f"python{PY}", "-m", "pytest", "-q",
         "-p", "no:cacheprovider", "-p", "qemu_subprocess", *tests], env=env, cwd=ROOT,
        timeout=1800)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build", type=pathlib.Path, help="embedded/aarch64.sh's build folder")
    ap.add_argument("--no-tests", action="store_true", help="build the wheels only")
    ap.add_argument("--tests", nargs="+", default=DEFAULT_TESTS,
                    help="test files (from the repository root) to run under qemu")
    args = ap.parse_args(argv)
    build = args.build.resolve()
    if not (build / "th-blas" / "lib" / "libTH.so").exists():
        raise SystemExit(f"no aarch64 libTH in {build}: run embedded/aarch64.sh {build} first")
    pyroot = python_root(build)
    wheels = build_wheels(build, pyroot)
    if not args.no_tests:
        test_wheels(build, pyroot, wheels, args.tests)
    return 0


if __name__ == "__main__":
    sys.exit(main())
