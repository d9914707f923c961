"""C99 source of one fusion group.

The kernel walks the group's output shape, coalesced by the caller to
(outer dims..., inner): units of work are (row, block of the inner dim),
spread over libTH's thread pool by th_parallel_for.  Each input has its own
strides (0 where it broadcasts); the innermost stride is specialised in the
source (1: contiguous, 0: broadcast, otherwise read from the arguments), so
the inner loop of the common cases is a plain vectorisable loop.  Outputs
are new contiguous tensors.  Every node's value is rounded to the group's
dtype, as eager evaluation rounds each op's result.
"""
import math
import re

__all__ = ["ARGS_CDEF", "ENTRY", "ENTRY_CDEF", "MAX_OPERANDS", "MAX_DIMS", "BLOCK", "source"]

MAX_OPERANDS = 16   # inputs + outputs of one group
MAX_DIMS = 16       # dims after coalescing
BLOCK = 8192        # elements of the inner dim per unit of work

#: the argument block every kernel takes (declared to cffi once)
ARGS_CDEF = f"""
typedef struct ember_fused_args {{
    char *ptr[{MAX_OPERANDS}];
    int64_t strides[{MAX_OPERANDS}][{MAX_DIMS}];
    int64_t sizes[{MAX_DIMS}];
    int64_t ndim;
    int64_t nblocks;
}} ember_fused_args;
"""

#: every kernel library's one function
ENTRY = "ember_fused"
ENTRY_CDEF = f"int {ENTRY}(const ember_fused_args *a, int64_t units, int64_t grain);"

_PRELUDE = """\
#include <math.h>
#include <stdint.h>
#include "th.h"
#include "th_ops_expr.h"
#if defined(__x86_64__) && defined(__GLIBC__) && \\
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
/* glibc's vector math (libmvec) for the inner loop, as libTH's loops */
#define EMBER_SIMD(F) __attribute__((simd("notinbranch"))) float F##f(float); \\
    __attribute__((simd("notinbranch"))) double F(double);
EMBER_SIMD(exp) EMBER_SIMD(exp2) EMBER_SIMD(expm1) EMBER_SIMD(log) EMBER_SIMD(log2)
EMBER_SIMD(log10) EMBER_SIMD(log1p) EMBER_SIMD(sin) EMBER_SIMD(cos) EMBER_SIMD(tan)
EMBER_SIMD(asin) EMBER_SIMD(acos) EMBER_SIMD(atan) EMBER_SIMD(sinh) EMBER_SIMD(cosh)
EMBER_SIMD(tanh) EMBER_SIMD(asinh) EMBER_SIMD(acosh) EMBER_SIMD(atanh) EMBER_SIMD(erf)
EMBER_SIMD(erfc)
#endif
#include <tgmath.h> /* after the declarations: float operands call expf, ... */
"""

_CTYPES = {"float32": "float", "float64": "double", "int8": "int8_t", "uint8": "uint8_t",
           "int16": "int16_t", "int32": "int32_t", "int64": "int64_t"}


def _literal(x, ctype):
    if isinstance(x, int):
        # a Python int (within int64: _partition's rule) as the dtype, wrapped
        # the same way eager converts it
        return f"(({ctype})INT64_C({x}))"
    if math.isnan(x):
        return f"(({ctype})NAN)"
    if math.isinf(x):
        return f"(({ctype})({'-' if x < 0 else ''}INFINITY))"
    return f"(({ctype}){x!r})"


def _substitute(expr, names):
    """expr with its x (and y) replaced by the operand names."""
    return re.sub(r"\b[xy]\b", lambda m: f"({names[m.group(0)]})", expr)


# a reduction's accumulator type, identity, step and final value, by kind
# (sums in double, as an accurate bound on eager's float sums)
_REDUCE = {
    "sum": ("double", "0.0", "{acc} + {v}", "{acc}"),
    "mean": ("double", "0.0", "{acc} + {v}", "{acc} / (double)inner"),
    "amax": ("{t}", "-INFINITY", "FMAX({acc}, {v})", "{acc}"),
    "amin": ("{t}", "INFINITY", "FMIN({acc}, {v})", "{acc}"),
}


def source(group, inner_kinds):
    """C source of the group's kernel (function ENTRY).  inner_kinds: per
    operand (inputs, full-shape outputs, then a reduction's output) 1, 0 or
    None (contiguous, broadcast, strided) along the innermost dim."""
    ctype = _CTYPES[group.dtype]
    nin = len(group.inputs)
    slot = {v.id: i for i, v in enumerate(group.inputs)}
    lines = []

    def read(i):
        k = inner_kinds[i]
        if k == 1:
            return f"p{i}[j]"
        if k == 0:
            return f"p{i}[0]"
        return f"p{i}[j * s{i}]"

    loads = [f"{' ' * 12}const {ctype} in{i} = {read(i)};" for i in range(nin)]
    local = {}
    for n, (expr, operands) in zip(group.nodes, group.terms):
        names = []
        for o in operands:
            if isinstance(o, (int, float)):
                names.append(_literal(o, ctype))
            elif o.id in local:
                names.append(local[o.id])
            else:
                names.append(f"in{slot[o.id]}")
        var = f"t{n.outputs[0].id}"
        local[n.outputs[0].id] = var
        text = _substitute(expr, {"x": names[0], "y": names[1] if len(names) > 1 else ""})
        lines.append(f"{' ' * 12}const {ctype} {var} = ({ctype})({text});")
    # (an output's inner kind is 0 only where the inner dim has size 1: a
    # 0-d result, such as a loss's arithmetic)
    stores = [f"{' ' * 12}{read(nin + k)} = {local[v.id]};" for k, v in enumerate(group.outputs)]
    nfull = nin + len(group.outputs)
    nops = nfull + (group.reduce is not None)
    setup = []
    for i in range(nops):
        const = "const " if i < nin else ""
        setup.append(f"        {const}{ctype} *restrict p{i} = ({const}{ctype} *)a->ptr[{i}] "
                     f"+ off[{i}];")
        if i < nfull and inner_kinds[i] not in (0, 1):
            setup.append(f"        const int64_t s{i} = a->strides[{i}][a->ndim - 1];")
    head = f"""{_PRELUDE}
{ARGS_CDEF}
/* {' -> '.join(n.kind for n in group.nodes)} over {group.dtype}: size-generic */
static void body(int64_t begin, int64_t end, void *ctx) {{
    const ember_fused_args *a = (const ember_fused_args *)ctx;
    const int64_t nd = a->ndim, inner = a->sizes[nd - 1];
    (void)inner;
    for (int64_t u = begin; u < end; u++) {{"""
    outer = f"""        int64_t off[{nops}];
        for (int k = 0; k < {nops}; k++) off[k] = j0 * a->strides[k][nd - 1];
        for (int64_t d = nd - 2, rest = row; d >= 0; d--) {{
            int64_t i = rest % a->sizes[d];
            rest /= a->sizes[d];
            for (int k = 0; k < {nops}; k++) off[k] += i * a->strides[k][d];
        }}
{chr(10).join(setup)}"""
    if group.reduce is None:
        loop = f"""        int64_t row = u / a->nblocks, j0 = (u % a->nblocks) * {BLOCK};
        int64_t j1 = j0 + {BLOCK} < inner ? j0 + {BLOCK} : inner;
{outer}
        for (int64_t j = 0; j < j1 - j0; j++) {{
{chr(10).join(loads + lines + stores)}
        }}"""
    else:
        kind, operand, _ = group.reduce
        acc_t, identity, step, final = _REDUCE[kind]
        acc_t = acc_t.format(t=ctype)
        v = local[operand.id]
        simd = "        #pragma omp simd reduction(+:acc)\n" if kind in ("sum", "mean") else ""
        loop = f"""        const int64_t row = u, j0 = 0;
{outer}
        {acc_t} acc = {identity};
{simd}        for (int64_t j = 0; j < inner; j++) {{
{chr(10).join(loads + lines + stores)}
            acc = {step.format(acc="acc", v=v)};
        }}
        p{nfull}[0] = ({ctype})({final.format(acc="acc")});"""
    return f"""{head}
{loop}
    }}
}}

int {ENTRY}(const ember_fused_args *a, int64_t units, int64_t grain) {{
    th_parallel_for(units, grain, body, (void *)a);
    return 0;
}}
"""
