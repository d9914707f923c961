"""Reads th_ops.def, libTH's op vocabulary, as text: for the build scripts
(which write the op enumerators out for cffi and for the installed headers)
and the ABI test.  Pure Python, importable by path without ember.th built.
At run time the bindings ask the libraries instead (th_op_get)."""
import re

FAMILIES = {"TH_UNARY_OP": "unary", "TH_BINARY_OP": "binary", "TH_REDUCE_OP": "reduce"}
_ROW = re.compile(r"^(TH_UNARY_OP|TH_BINARY_OP|TH_REDUCE_OP)\(", re.M)
# an enum body made from the table, as th.h and thc.h write it
_BLOCK = re.compile(r"^#define (TH_UNARY_OP|TH_BINARY_OP|TH_REDUCE_OP)\(CODE, \.\.\.\) "
                    r"(\w+)##CODE,\n#include \"th_ops.def\"\n", re.M)


def _split_args(text, start):
    """The top-level comma-separated arguments of the call whose '(' is at
    text[start], and the index after its ')'."""
    depth, args, cur, i = 0, [], [], start
    while True:
        c = text[i]
        if c == "(":
            depth += 1
            if depth > 1:
                cur.append(c)
        elif c == ")":
            depth -= 1
            if depth == 0:
                args.append("".join(cur))
                return [" ".join(a.split()) for a in args], i + 1
            cur.append(c)
        elif c == "," and depth == 1:
            args.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1


def rows(def_text):
    """Every row in order: dicts with family, code (the enumerator suffix),
    name, classes and the remaining fields as written."""
    text = re.sub(r"/\*.*?\*/", " ", def_text, flags=re.S)
    text = "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("#"))
    out = []
    for m in _ROW.finditer(text):
        args, _ = _split_args(text, m.end() - 1)
        row = {"family": FAMILIES[m.group(1)], "code": args[0], "name": args[1],
               "classes": args[2]}
        if row["family"] == "reduce":
            row.update(flags=args[3], identity=args[4], combine=args[5])
        else:
            row.update(kind=args[3], flags=args[4],
                       exprs=dict(zip("fib", args[5:8])))
        out.append(row)
    return out


def expand_header(header_text, def_text):
    """The header with each op enum's X-macro block replaced by its
    enumerators written out (for FFI readers that see plain declarations)."""
    table = rows(def_text)

    def enumerators(m):
        family, prefix = FAMILIES[m.group(1)], m.group(2)
        codes = [r["code"] for r in table if r["family"] == family]
        return "".join(f"    {prefix}{c} = {i},\n" for i, c in enumerate(codes))

    expanded, n = _BLOCK.subn(enumerators, header_text)
    if n != 3:
        raise ValueError(f"expected the 3 op enums made from th_ops.def, found {n}")
    return expanded


if __name__ == "__main__":   # python _opsdef.py HEADER TABLE: the header written out
    import sys
    with open(sys.argv[1]) as h, open(sys.argv[2]) as t:
        sys.stdout.write(expand_header(h.read(), t.read()))
