"""Test tools shipped with ember-th for Ember's C libraries (libTH and the
libraries built on it: libTHNN, libTHC, libTHCUNN).

- ``AbiRecord``: each library's exported C API is recorded in
  ``abi/<lib>.abi`` (the declarations of its public headers at the
  current ABI version); the tests fail when a header's declarations
  change without a version bump, or when the library exports a symbol the
  headers do not declare.  A package's ``tests/test_abi.py`` is::

      ABI = AbiRecord("thc", ROOT, ["thc.h"], library=lambda: ...)
      test_api_matches_record, test_exported_symbols_are_the_declared_api = ABI.tests()
      if __name__ == "__main__":
          ABI.main(__file__)

  and ``python tests/test_abi.py --update`` records an intended change.
- The C programs' assertion harness is ``th_check.h``, installed with
  ``th.h`` (``ember.th.get_include()``).
"""
import pathlib
import re
import subprocess
import sys


def declarations(text):
    """Types and prototypes of a header, comments and preprocessor lines
    removed, one declaration per line with whitespace normalised."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = "\n".join(line for line in text.splitlines() if not line.strip().startswith("#"))
    text = re.sub(r"\s+", " ", text.replace('extern "C" {', " "))
    decls = [d.strip() + ";" for d in text.split(";") if d.strip() not in ("", "}")]
    return [re.sub(r"\s*([(),*{}])\s*", r"\1", d) for d in decls]


class AbiRecord:
    """The ABI record of the library with function prefix `prefix` (th,
    thc, ...): its headers (in root/include, the first one defining
    <PREFIX>_ABI_VERSION_MAJOR/MINOR), the record root/abi/<prefix>.abi,
    library() the path of the built shared library, and binding_version()
    the (major, minor) its Python binding reports, if it says."""

    def __init__(self, prefix, root, headers, library, binding_version=None):
        self.prefix, self.root = prefix, pathlib.Path(root)
        self.headers = [self.root / "include" / h for h in headers]
        self.record = self.root / "abi" / f"{prefix}.abi"
        self.library, self.binding_version = library, binding_version

    def version(self):
        text = self.headers[0].read_text()
        p = self.prefix.upper()
        major = re.search(rf"#define {p}_ABI_VERSION_MAJOR (\d+)", text).group(1)
        minor = re.search(rf"#define {p}_ABI_VERSION_MINOR (\d+)", text).group(1)
        return f"{major}.{minor}"

    def declarations(self):
        return declarations("\n".join(h.read_text() for h in self.headers))

    def function_names(self):
        names = set()
        for d in self.declarations():
            m = re.search(rf"\b({self.prefix}_\w+)\(", d)
            if m and "(*" not in d.split(m.group(1))[0] and not d.startswith("typedef"):
                names.add(m.group(1))
        return sorted(names)

    def check_record(self):
        version, header = self.version(), self.headers[0].name
        recorded = self.record.read_text().splitlines()
        rec_version, rec_decls = recorded[0].split()[1], recorded[1:]
        if self.declarations() != rec_decls:
            assert version != rec_version, (
                f"the declarations in include/{header} changed but "
                f"{self.prefix.upper()}_ABI_VERSION is still {version}: bump it (minor for "
                "additions, major for changes) and run this test file with --update")
            raise AssertionError(f"{header} is at ABI {version} but abi/{self.record.name} "
                                 f"records {rec_version}: run this test file with --update "
                                 "to record the new API")
        assert version == rec_version, \
            f"abi/{self.record.name} records another version: run --update"

    def check_exports(self):
        out = subprocess.run(["nm", "-D", "--defined-only", str(self.library())],
                             capture_output=True, text=True, check=True).stdout
        exported = sorted({line.split()[-1] for line in out.splitlines()
                           if line.split()[-1].startswith(self.prefix + "_")})
        declared = self.function_names()
        assert exported == declared, (
            f"exported but not declared: {sorted(set(exported) - set(declared))}; "
            f"declared but missing: {sorted(set(declared) - set(exported))}")

    def check_binding(self):
        major, minor = self.binding_version()
        assert f"{major}.{minor}" == self.version()

    def tests(self):
        """The test functions, for a test module's namespace: the record,
        the exports, and (with binding_version) the binding's version."""
        def test_api_matches_record():
            self.check_record()

        def test_exported_symbols_are_the_declared_api():
            self.check_exports()

        def test_binding_reports_matching_version():
            self.check_binding()

        tests = (test_api_matches_record, test_exported_symbols_are_the_declared_api)
        return tests + (test_binding_reports_matching_version,) \
            if self.binding_version else tests

    def update(self):
        self.record.write_text(f"version {self.version()}\n" + "\n".join(self.declarations())
                               + "\n")
        print(f"recorded ABI {self.version()} in {self.record}")

    def main(self, test_file):
        """`--update` records the headers' API; otherwise runs the tests."""
        if sys.argv[1:] == ["--update"]:
            self.update()
        else:
            import pytest
            sys.exit(pytest.main([test_file]))
