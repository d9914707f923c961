"""The op vocabulary (include/th_ops.def) as a library reports it: libTH
through th_op_get, libTHC through thc_op_get (ember.thc reuses this
reader).  The bindings and the front's backend interface make their op
lists from it instead of keeping their own."""
from collections import namedtuple

#: One row of th_ops.def.  family: "unary", "binary" or "reduce";
#: classes: the compute dtype classes with a loop ("float", "int", "bool");
#: flags: names of the TH_OPF_* bits ("predicate", "float", "no_inplace", ...);
#: exprs: the scalar C expression by class (a reduction: "combine", "identity").
OpInfo = namedtuple("OpInfo", "name family code classes flags exprs")

FAMILIES = ("unary", "binary", "reduce")
_CLASSES = ("float", "int", "bool")
_FLAGS = ("predicate", "float", "float_only", "vector_math", "divisor", "exponent",
          "no_inplace", "hidden", "takes_dtype")


def read_ops(ffi, lib, prefix):
    """Every op of the library whose C names start with `prefix` ("th" or
    "thc"), in family and code order."""
    up = prefix.upper()
    count, get = getattr(lib, f"{prefix}_op_count"), getattr(lib, f"{prefix}_op_get")
    ops = []
    for family in FAMILIES:
        fam = getattr(lib, f"{up}_OP_{family.upper()}")
        for code in range(count(fam)):
            row = get(fam, code)
            exprs = [None if row.expr[k] == ffi.NULL else ffi.string(row.expr[k]).decode()
                     for k in range(3)]
            if family == "reduce":
                exprs = {"combine": exprs[0], "identity": exprs[1]}
            else:
                exprs = {c: e for c, e in zip(_CLASSES, exprs) if e is not None}
            ops.append(OpInfo(
                name=ffi.string(row.name).decode(), family=family, code=row.code,
                classes=frozenset(c for k, c in enumerate(_CLASSES)
                                  if row.classes & getattr(lib, f"{up}_OPC_{c.upper()}")),
                flags=frozenset(f for f in _FLAGS
                                if row.flags & getattr(lib, f"{up}_OPF_{f.upper()}")),
                exprs=exprs))
    return tuple(ops)


def codes(ops, family, exclude=()):
    """{name: code} of a family's ops, without those carrying a flag of
    `exclude`."""
    return {o.name: o.code for o in ops
            if o.family == family and not (o.flags & set(exclude))}
