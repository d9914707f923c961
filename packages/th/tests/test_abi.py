"""The exported C API of libTH is recorded in abi/th.abi; a change to the
header's declarations without a version bump fails here.

After an intended change: bump TH_ABI_VERSION_MINOR (additions) or
TH_ABI_VERSION_MAJOR (changes and removals) in include/th.h, then run
``python tests/test_abi.py --update``.
"""
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
HEADER = ROOT / "include" / "th.h"
# th_meta.h (the metadata API for libraries built on libTH) is versioned with th.h
HEADERS = [HEADER, ROOT / "include" / "th_meta.h"]
RECORD = ROOT / "abi" / "th.abi"


def api_text():
    return "\n".join(h.read_text() for h in HEADERS)


def header_version(text):
    major = re.search(r"#define TH_ABI_VERSION_MAJOR (\d+)", text).group(1)
    minor = re.search(r"#define TH_ABI_VERSION_MINOR (\d+)", text).group(1)
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
    return sorted({m.group(1) for d in decls for m in [re.search(r"\b(th_\w+)\(", d)]
                   if m and "(*" not in d.split(m.group(1))[0]})


def test_api_matches_record():
    text = HEADER.read_text()
    version = header_version(text)
    recorded = RECORD.read_text().splitlines()
    rec_version, rec_decls = recorded[0].split()[1], recorded[1:]
    current = declarations(api_text())
    if current != rec_decls:
        assert version != rec_version, (
            "the declarations in include/th.h changed but TH_ABI_VERSION is still "
            f"{version}: bump it (minor for additions, major for changes) and run "
            "`python tests/test_abi.py --update`")
        pytest.fail(f"th.h is at ABI {version} but abi/th.abi records {rec_version}: run "
                    "`python tests/test_abi.py --update` to record the new API")
    assert version == rec_version, "abi/th.abi records another version: run --update"


def test_exported_symbols_are_the_declared_api():
    import ember.th
    so = pathlib.Path(ember.th.get_lib_dir()) / "libTH.so"
    out = subprocess.run(["nm", "-D", "--defined-only", str(so)], capture_output=True,
                         text=True, check=True).stdout
    exported = sorted({l.split()[-1] for l in out.splitlines() if l.split()[-1].startswith("th")})
    declared = function_names(declarations(api_text()))
    assert exported == declared, (
        f"exported but not declared: {sorted(set(exported) - set(declared))}; "
        f"declared but missing: {sorted(set(declared) - set(exported))}")


def test_binding_reports_matching_version():
    import ember.th
    major, minor = ember.th.abi_version()
    assert f"{major}.{minor}" == header_version(HEADER.read_text())


def update():
    text = HEADER.read_text()
    RECORD.write_text(f"version {header_version(text)}\n" + "\n".join(declarations(api_text())) + "\n")
    print(f"recorded ABI {header_version(text)} in {RECORD}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--update"]:
        update()
    else:
        sys.exit(pytest.main([__file__]))
