"""The exported C API of libTHC is recorded in abi/thc.abi; a change to the
header's declarations without a version bump fails here.

After an intended change: bump THC_ABI_VERSION_MINOR (additions) or
THC_ABI_VERSION_MAJOR (changes and removals) in include/thc.h, then run
``python tests/test_abi.py --update``.
"""
import importlib
import importlib.util
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
HEADER = ROOT / "include" / "thc.h"
RECORD = ROOT / "abi" / "thc.abi"
OP_ENUMS = ("typedef enum thc_unary_op{", "typedef enum thc_binary_op{",
            "typedef enum thc_reduce_op{")


def header_text():
    """thc.h with its op enumerators written out from libTH's th_ops.def (the
    sibling packages/th, else the installed ember-th's), as installed.  As
    for th.h, ops appended to a family need no bump: the record's
    enumerators must stay a prefix of the header's."""
    th = ROOT.parent / "th"
    if not (th / "include" / "th_ops.def").is_file():
        th = pathlib.Path(importlib.import_module("ember.th").get_include()).parent
        reader, table = th / "_opsdef.py", th / "include" / "th_ops.def"
    else:
        reader, table = th / "ember" / "th" / "_opsdef.py", th / "include" / "th_ops.def"
    spec = importlib.util.spec_from_file_location("_th_opsdef", reader)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.expand_header(HEADER.read_text(), table.read_text())


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
    major = re.search(r"#define THC_ABI_VERSION_MAJOR (\d+)", text).group(1)
    minor = re.search(r"#define THC_ABI_VERSION_MINOR (\d+)", text).group(1)
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
        m = re.search(r"\b(thc_\w+)\(", d)
        if m and "(*" not in d.split(m.group(1))[0] and not d.startswith("typedef"):
            names.add(m.group(1))
    return sorted(names)


def test_api_matches_record():
    text = header_text()
    version = header_version(text)
    recorded = RECORD.read_text().splitlines()
    rec_version, rec_decls = recorded[0].split()[1], recorded[1:]
    if not same_api(rec_decls, declarations(text)):
        assert version != rec_version, (
            "the declarations in include/thc.h changed but THC_ABI_VERSION is still "
            f"{version}: bump it (minor for additions, major for changes) and run "
            "`python tests/test_abi.py --update`")
        pytest.fail(f"thc.h is at ABI {version} but abi/thc.abi records {rec_version}: "
                    "run `python tests/test_abi.py --update`")
    assert version == rec_version, "abi/thc.abi records another version: run --update"


def test_exported_symbols_are_the_declared_api():
    thc = importlib.import_module("ember.thc")
    so = pathlib.Path(thc.__file__).parent / "lib" / "libTHC.so"
    out = subprocess.run(["nm", "-D", "--defined-only", str(so)], capture_output=True,
                         text=True, check=True).stdout
    exported = sorted({line.split()[-1] for line in out.splitlines()
                       if line.split()[-1].startswith("thc")})
    declared = function_names(declarations(header_text()))
    assert exported == declared, (
        f"exported but not declared: {sorted(set(exported) - set(declared))}; "
        f"declared but missing: {sorted(set(declared) - set(exported))}")


def update():
    text = header_text()
    RECORD.write_text(f"version {header_version(text)}\n" + "\n".join(declarations(text)) + "\n")
    print(f"recorded ABI {header_version(text)} in {RECORD}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--update"]:
        update()
    else:
        sys.exit(pytest.main([__file__]))
