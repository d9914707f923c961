"""The exported C API of libTH is recorded in abi/th.abi; a change to the
header's declarations without a version bump fails here.

After an intended change: bump TH_ABI_VERSION_MINOR (additions) or
TH_ABI_VERSION_MAJOR (changes and removals) in include/th.h, then run
``python tests/test_abi.py --update``.

The op enums are compared with their enumerators written out from
include/th_ops.def.  Ops appended to a family need no bump (their codes are
new, the others unchanged): the record's enumerators must stay a prefix of
the header's, so renumbering or removing an op fails here.
"""
import importlib.util
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
HEADER = ROOT / "include" / "th.h"
RECORD = ROOT / "abi" / "th.abi"
OPS = ROOT / "include" / "th_ops.def"
OP_ENUMS = ("typedef enum th_unary_op{", "typedef enum th_binary_op{",
            "typedef enum th_reduce_op{")


def header_text():
    """th.h with its op enumerators written out, as installed."""
    spec = importlib.util.spec_from_file_location("_th_opsdef",
                                                  ROOT / "ember" / "th" / "_opsdef.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.expand_header(HEADER.read_text(), OPS.read_text())


def _enumerators(decl):
    return [e for e in decl[decl.index("{") + 1:decl.rindex("}")].split(",")
            if "_NUM_" not in e]


def same_api(recorded, current):
    """Equal declarations, except that an op enum may have gained
    enumerators at its end."""
    if len(recorded) != len(current):
        return False
    for r, c in zip(recorded, current):
        if r != c and not (r.startswith(OP_ENUMS) and r.split("{")[0] == c.split("{")[0]
                           and _enumerators(c)[:len(_enumerators(r))] == _enumerators(r)):
            return False
    return True


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
    text = header_text()
    version = header_version(text)
    recorded = RECORD.read_text().splitlines()
    rec_version, rec_decls = recorded[0].split()[1], recorded[1:]
    current = declarations(text)
    if not same_api(rec_decls, current):
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
    declared = function_names(declarations(header_text()))
    assert exported == declared, (
        f"exported but not declared: {sorted(set(exported) - set(declared))}; "
        f"declared but missing: {sorted(set(declared) - set(exported))}")


def test_binding_reports_matching_version():
    import ember.th
    major, minor = ember.th.abi_version()
    assert f"{major}.{minor}" == header_version(HEADER.read_text())


def update():
    text = header_text()
    RECORD.write_text(f"version {header_version(text)}\n" + "\n".join(declarations(text)) + "\n")
    print(f"recorded ABI {header_version(text)} in {RECORD}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--update"]:
        update()
    else:
        sys.exit(pytest.main([__file__]))
