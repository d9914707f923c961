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
- ``HostileSizes``: the size, stride and offset checks every tensor
  library of Ember passes (libTH's rules, th_meta.h), run by ember.th's and
  ember.thc's ``tests/test_limits.py`` on their own tensors.
- The C programs' assertion harness is ``th_check.h``, installed with
  ``th.h`` (``ember.th.get_include()``).
"""
import pathlib
import re
import subprocess
import sys


BIG = 2 ** 61
I64_MAX, I64_MIN = 2 ** 63 - 1, -2 ** 63


def raises(exc, message, fn, *args):
    """fn(*args) raises exc with `message` in its text."""
    try:
        fn(*args)
    except exc as e:
        assert message in str(e), f"{message!r} not in {str(e)!r}"
        return
    raise AssertionError(f"{fn} did not raise {exc.__name__} ({message})")


class HostileSizes:
    """Sizes, strides and offsets whose arithmetic would wrap in int64 raise
    PyTorch's errors instead of making a tensor that addresses memory
    outside its storage, and refused calls leave the data untouched.  ns is
    the library's namespace (ember.th, ember.thc); values(t) gives a
    tensor's values as a (nested) list."""

    def __init__(self, ns, values):
        self.ns, self.values = ns, values

    def as_strided(self):
        x = self.ns.arange(10, dtype=self.ns.float64)
        raises(RuntimeError, "Storage size calculation overflowed with sizes=[2, 2] and "
               f"strides=[{BIG - 1}, {BIG + 10}]", x.as_strided, (2, 2), (BIG - 1, BIG + 10))
        raises(RuntimeError, "Storage size calculation overflowed",
               x.as_strided, (3, 3), (I64_MAX // 2, I64_MAX // 2))
        raises(RuntimeError, "requiring a storage size of 88 are out of bounds for storage "
               "of size 80", x.as_strided, (11,), (1,))
        raises(RuntimeError, "Storage size calculation overflowed",
               x.as_strided, (2,), (1,), I64_MAX)
        assert self.values(x) == list(range(10))  # untouched
        # a size-1 dim's stride addresses nothing: any value is valid
        assert x.as_strided((1, 1), (I64_MAX, I64_MIN), 9).item() == 9.0

    def empty(self):
        ns = self.ns
        raises(RuntimeError, f"Storage size calculation overflowed with sizes=[3] and "
               f"strides=[{BIG}]", ns.empty_strided, (3,), (BIG,))
        raises(RuntimeError, "Storage size calculation overflowed with sizes=[1099511627776, "
               "1099511627776]", ns.empty, 2 ** 40, 2 ** 40)
        raises(RuntimeError, "Storage size calculation overflowed",
               lambda: ns.empty(2 ** 62, dtype=ns.float64))
        raises(RuntimeError, "Trying to create tensor with negative dimension -3: [2, -3]",
               ns.empty, 2, -3)
        raises(RuntimeError, f"value {2 ** 64} does not fit in int64", ns.empty, 2 ** 64)
        e = ns.empty(0, 2 ** 40, 2 ** 40)  # no element: no overflow
        assert e.numel() == 0 and e.stride()[0] >= 0

    def expand(self):
        raises(RuntimeError, "numel: integer multiplication overflow",
               self.ns.ones(1, 1).expand, 2 ** 40, 2 ** 40)
        v = self.ns.ones(1, 1).expand(2 ** 40, 4)
        assert v.numel() == 2 ** 42 and v.stride() == (0, 0)

    def repeat_and_view(self):
        ones = self.ns.ones(2)
        raises(RuntimeError, "repeat: sizes [2] repeated", ones.repeat, I64_MAX)
        raises(RuntimeError, "shape '[4294967296, 4294967296, 4]' is invalid for input of "
               "size 2", ones.view, 2 ** 32, 2 ** 32, 4)
        raises(RuntimeError, "is invalid for input of size 2",
               ones.reshape, 2 ** 32, 2 ** 32, -1)
        assert self.values(ones.repeat(3)) == [1.0] * 6

    def tests(self):
        """The checks as test functions, for a test module's namespace."""
        def test_as_strided_wrapping_strides_refused():
            self.as_strided()

        def test_empty_strided_and_empty_overflow():
            self.empty()

        def test_expand_overflow():
            self.expand()

        def test_repeat_and_view_overflow():
            self.repeat_and_view()

        def test_huge_slice_step():
            self.slice_steps()

        return (test_as_strided_wrapping_strides_refused, test_empty_strided_and_empty_overflow,
                test_expand_overflow, test_repeat_and_view_overflow, test_huge_slice_step)

    def slice_steps(self):
        x = self.ns.arange(10)
        assert self.values(x[3::I64_MAX]) == [3]
        assert self.values(x[3:3:I64_MAX]) == []
        assert self.values(x.unfold(0, 2, I64_MAX)) == [[0, 1]]


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

    def __init__(self, prefix, root, headers, library, binding_version=None, expand=None,
                 growing_enums=()):
        self.prefix, self.root = prefix, pathlib.Path(root)
        self.headers = [self.root / "include" / h for h in headers]
        self.record = self.root / "abi" / f"{prefix}.abi"
        self.library, self.binding_version = library, binding_version
        #: expand(header name, text) -> the text as installed (op enums
        #: written out from th_ops.def)
        self.expand = expand or (lambda name, text: text)
        #: enum declarations (their "typedef enum x{" start) that may gain
        #: enumerators at their end without a version bump (appended ops)
        self.growing_enums = tuple(growing_enums)

    def version(self):
        text = self.headers[0].read_text()
        p = self.prefix.upper()
        major = re.search(rf"#define {p}_ABI_VERSION_MAJOR (\d+)", text).group(1)
        minor = re.search(rf"#define {p}_ABI_VERSION_MINOR (\d+)", text).group(1)
        return f"{major}.{minor}"

    def declarations(self):
        return declarations("\n".join(self.expand(h.name, h.read_text())
                                      for h in self.headers))

    def same_api(self, recorded, current):
        """Equal declarations, except that a growing enum may have gained
        enumerators at its end (its recorded ones a prefix of the current)."""
        def enumerators(decl):
            return [e for e in decl[decl.index("{") + 1:decl.rindex("}")].split(",")
                    if "_NUM_" not in e]
        if len(recorded) != len(current):
            return False
        return all(r == c or (self.growing_enums and r.startswith(self.growing_enums)
                              and r.split("{")[0] == c.split("{")[0]
                              and enumerators(c)[:len(enumerators(r))] == enumerators(r))
                   for r, c in zip(recorded, current))

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
        if not self.same_api(rec_decls, self.declarations()):
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
