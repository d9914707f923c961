"""ember.th finds OpenBLAS wherever scipy-openblas32 is installed: beside it
(libTH's rpath), or in another folder of sys.path (loaded by path, which
the binding does only when the rpath did not find it, so that `import
ember.th` does not pay scipy_openblas32's import otherwise)."""
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import ember.th as th

CHECK = """
import sys
import numpy as np
import ember.th as th
a = th.tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
assert (th.matmul(a, a.t()).numpy() == a.numpy() @ a.numpy().T).all()
print(th.__file__, "scipy_openblas32" in sys.modules)
"""


def _package_dir(module):
    return pathlib.Path(module.__file__).resolve().parent


def run_in(path, tmp_path):
    """CHECK in an interpreter without site-packages whose sys.path is
    `path` plus the folders of numpy and cffi."""
    import cffi
    import numpy
    deps = tmp_path / "deps"
    deps.mkdir(exist_ok=True)
    for mod in (numpy, cffi):
        link = deps / _package_dir(mod).name
        if not link.exists():
            link.symlink_to(_package_dir(mod))
    backend = next(_package_dir(cffi).parent.glob("_cffi_backend*.so"))
    if not (deps / backend.name).exists():
        (deps / backend.name).symlink_to(backend)
    for extra in ("numpy.libs", "pycparser"):
        src = _package_dir(numpy).parent / extra
        if src.exists() and not (deps / extra).exists():
            (deps / extra).symlink_to(src)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([*map(str, path), str(deps)]))
    r = subprocess.run([sys.executable, "-S", "-c", CHECK], capture_output=True, text=True,
                       env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


@pytest.mark.skipif(not th.has_blas(), reason="a TH_NO_BLAS build loads no OpenBLAS")
def test_openblas_installed_in_another_folder(tmp_path):
    import scipy_openblas32
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(_package_dir(th), a / "ember" / "th")   # ember/ as a namespace
    shutil.copytree(_package_dir(scipy_openblas32), b / "scipy_openblas32")
    where, imported = run_in([a, b], tmp_path)
    assert where.startswith(str(a)) and imported == "True"


@pytest.mark.skipif(not th.has_blas(), reason="a TH_NO_BLAS build loads no OpenBLAS")
def test_openblas_beside_ember_th_is_not_imported(tmp_path):
    import scipy_openblas32
    a = tmp_path / "a"
    shutil.copytree(_package_dir(th), a / "ember" / "th")
    shutil.copytree(_package_dir(scipy_openblas32), a / "scipy_openblas32")
    where, imported = run_in([a], tmp_path)
    assert where.startswith(str(a)) and imported == "False"
