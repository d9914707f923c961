"""The exported C API of libTHNN is recorded in abi/thnn.abi; a change to the
header's declarations without a version bump fails here.

After an intended change: bump THNN_ABI_VERSION_MINOR (additions) or
THNN_ABI_VERSION_MAJOR (changes and removals) in include/thnn.h, then run
``python tests/test_abi.py --update``.
"""
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
HEADER = ROOT / "include" / "thnn.h"
RECORD = ROOT / "abi" / "thnn.abi"


def header_version(text):
    major = re.search(r"#define THNN_ABI_VERSION_MAJOR (\d+)", text).group(1)
    minor = re.search(r"#define THNN_ABI_VERSION_MINOR (\d+)", text).group(1)
    return f"{major}.{minor}"


def declarations(text):
    """Types and prototypes, comments and preprocessor lines removed, one
    declaration per line with whitespace normalised."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = "\n".join(l for l in text.splitlines() if not l.strip().startswith("#"))
    text = text.replace('extern "C" {', " ")
    text = re.sub(r"\s+", " ", text)
    decls = [d.strip() + ";" for d in text.split(";") if d.strip() not in ("", "}")]
    return [re.sub(r"\s*([(),*{}])\s*", r"\1", d) for d in decls]


def function_names(decls):
    return sorted({m.group(1) for d in decls for m in [re.search(r"\b(thnn_\w+)\(", d)]
                   if m and "(*" not in d.split(m.group(1))[0]})


def test_api_matches_record():
    text = HEADER.read_text()
    version = header_version(text)
    recorded = RECORD.read_text().splitlines()
    rec_version, rec_decls = recorded[0].split()[1], recorded[1:]
    current = declarations(text)
    if current != rec_decls:
        assert version != rec_version, (
            "the declarations in include/thnn.h changed but THNN_ABI_VERSION is still "
            f"{version}: bump it (minor for additions, major for changes) and run "
            "`python tests/test_abi.py --update`")
        pytest.fail(f"th.h is at ABI {version} but abi/thnn.abi records {rec_version}: run "
                    "`python tests/test_abi.py --update` to record the new API")
    assert version == rec_version, "abi/thnn.abi records another version: run --update"


def test_exported_symbols_are_the_declared_api():
    import ember.thnn
    so = pathlib.Path(ember.thnn.get_lib_dir()) / "libTHNN.so"
    out = subprocess.run(["nm", "-D", "--defined-only", str(so)], capture_output=True,
                         text=True, check=True).stdout
    exported = sorted({l.split()[-1] for l in out.splitlines() if l.split()[-1].startswith("thnn_")})
    declared = function_names(declarations(HEADER.read_text()))
    assert exported == declared, (
        f"exported but not declared: {sorted(set(exported) - set(declared))}; "
        f"declared but missing: {sorted(set(declared) - set(exported))}")


def test_binding_reports_matching_version():
    import ember.thnn
    major, minor = ember.thnn.abi_version()
    assert f"{major}.{minor}" == header_version(HEADER.read_text())


def update():
    text = HEADER.read_text()
    RECORD.write_text(f"version {header_version(text)}\n" + "\n".join(declarations(text)) + "\n")
    print(f"recorded ABI {header_version(text)} in {RECORD}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--update"]:
        update()
    else:
        sys.exit(pytest.main([__file__]))
