"""The exported C API of libTHCUNN is recorded in abi/thcunn.abi; a change to the
header's declarations without a version bump fails here.

After an intended change: bump THCUNN_ABI_VERSION_MINOR (additions) or
THCUNN_ABI_VERSION_MAJOR (changes and removals) in include/thcunn.h, then run
``python tests/test_thcunn_abi.py --update``.
"""
import importlib
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
HEADER = ROOT / "include" / "thcunn.h"
RECORD = ROOT / "abi" / "thcunn.abi"


def header_version(text):
    major = re.search(r"#define THCUNN_ABI_VERSION_MAJOR (\d+)", text).group(1)
    minor = re.search(r"#define THCUNN_ABI_VERSION_MINOR (\d+)", text).group(1)
    return f"{major}.{minor}"


def declarations(text):
    """Types and prototypes without comments or preprocessor lines, one per
    line, whitespace normalised."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = "\n".join(line for line in text.splitlines() if not line.strip().startswith("#"))
    text = re.sub(r"\s+", " ", text.replace('extern "C" {', " "))
    decls = [d.strip() + ";" for d in text.split(";") if d.strip() not in ("", "}")]
    return [re.sub(r"\s*([(),*{}])\s*", r"\1", d) for d in decls]


def function_names(decls):
    names = set()
    for d in decls:
        m = re.search(r"\b(thcunn_\w+)\(", d)
        if m and "(*" not in d.split(m.group(1))[0] and not d.startswith("typedef"):
            names.add(m.group(1))
    return sorted(names)


def test_api_matches_record():
    text = HEADER.read_text()
    version = header_version(text)
    recorded = RECORD.read_text().splitlines()
    rec_version, rec_decls = recorded[0].split()[1], recorded[1:]
    if declarations(text) != rec_decls:
        assert version != rec_version, (
            "the declarations in include/thcunn.h changed but THCUNN_ABI_VERSION is still "
            f"{version}: bump it (minor for additions, major for changes) and run "
            "`python tests/test_thcunn_abi.py --update`")
        pytest.fail(f"thcunn.h is at ABI {version} but abi/thcunn.abi records {rec_version}: "
                    "run `python tests/test_thcunn_abi.py --update`")
    assert version == rec_version, "abi/thcunn.abi records another version: run --update"


def test_exported_symbols_are_the_declared_api():
    thcunn = importlib.import_module("ember.thcunn")
    so = pathlib.Path(thcunn.__file__).parent / "lib" / "libTHCUNN.so"
    out = subprocess.run(["nm", "-D", "--defined-only", str(so)], capture_output=True,
                         text=True, check=True).stdout
    exported = sorted({line.split()[-1] for line in out.splitlines()
                       if line.split()[-1].startswith("thcunn")})
    declared = function_names(declarations(HEADER.read_text()))
    assert exported == declared, (
        f"exported but not declared: {sorted(set(exported) - set(declared))}; "
        f"declared but missing: {sorted(set(declared) - set(exported))}")


def update():
    text = HEADER.read_text()
    RECORD.write_text(f"version {header_version(text)}\n" + "\n".join(declarations(text)) + "\n")
    print(f"recorded ABI {header_version(text)} in {RECORD}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--update"]:
        update()
    else:
        sys.exit(pytest.main([__file__]))
