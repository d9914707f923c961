"""C99 source of one fusion group.

The kernel walks the group's output shape, coalesced by the caller to
(outer dims..., inner): units of work are (row, block of the inner dim),
spread over libTH's thread pool by th_parallel_for.  Each input has its own
strides (0 where it broadcasts); the innermost stride is specialised in the
source (1: contiguous, 0: broadcast, otherwise read from the arguments), so
the inner loop of the common cases is a plain vectorisable loop.  Every
element loop is marked ``omp simd`` (the outputs are new tensors, so no
operand aliases another): with more than a few operands GCC otherwise
gives up on its run-time alias checks and leaves the loop scalar (an LSTM
cell's 7 operands ran 20x slower).  Outputs
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


# a reduction's accumulator type, identity, OpenMP reduction clauses, step
# and final value, by kind.  Sums accumulate in double (an accurate bound on
# eager's float sums); a max/min is a plain comparison the loop vectorises
# (the NaN-propagating FMAX did not: a scalar loop, slower than the rest of
# a softmax together) and a NaN seen anywhere is kept in a flag, so a row
# holding one gives NaN, as eager's amax/amin.
_REDUCE = {
    "sum": ("double", "0.0", "reduction(+:{acc})", "{acc} = {acc} + {v};", "{acc}"),
    "mean": ("double", "0.0", "reduction(+:{acc})", "{acc} = {acc} + {v};",
             "{acc} / (double)inner"),
    "amax": ("{t}", "-INFINITY", "reduction(max:{acc}) reduction(|:{acc}_nan)",
             "{acc} = {v} > {acc} ? {v} : {acc}; {acc}_nan |= {v} != {v};",
             "{acc}_nan ? NAN : {acc}"),
    "amin": ("{t}", "INFINITY", "reduction(min:{acc}) reduction(|:{acc}_nan)",
             "{acc} = {v} < {acc} ? {v} : {acc}; {acc}_nan |= {v} != {v};",
             "{acc}_nan ? NAN : {acc}"),
}


def source(group, inner_kinds):
    """C source of the group's kernel (function ENTRY).  inner_kinds: per
    operand (inputs, full-shape outputs, then row outputs) 1, 0 or None
    (contiguous, broadcast, strided) along the innermost dim."""
    ctype = _CTYPES[group.dtype]
    nin, nfull = len(group.inputs), len(group.inputs) + len(group.outputs)
    nops = nfull + len(group.row_outputs)
    slot = {v.id: i for i, v in enumerate(group.inputs)}
    for k, v in enumerate(group.results()):
        slot[v.id] = nin + k
    producer = {node.outputs[0].id: (kind, payload) for kind, node, payload in group.steps}
    pad = " " * 12

    def read(i):
        k = inner_kinds[i]
        if k == 1:
            return f"p{i}[j]"
        if k == 0:
            return f"p{i}[0]"
        return f"p{i}[j * s{i}]"

    def name(o):
        """An operand's C name: a literal, a row scalar r<id>, a full value
        t<id> computed in this loop, or a loaded input in<slot>."""
        if isinstance(o, (int, float)):
            return _literal(o, ctype)
        kind = producer.get(o.id, (None,))[0]
        if kind in ("reduce", "row"):
            return f"r{o.id}"
        if kind == "full":
            return f"t{o.id}"
        return f"in{slot[o.id]}"

    def expression(expr, operands):
        names = [name(o) for o in operands]
        text = _substitute(expr, {"x": names[0], "y": names[1] if len(names) > 1 else ""})
        return f"({ctype})({text})"

    def element_code(targets):
        """Lines computing the full values and inputs `targets` at element j:
        the inputs they read loaded, the full steps they need in order."""
        needed, stack = set(), list(targets)
        while stack:
            vid = stack.pop()
            if vid in needed:
                continue
            needed.add(vid)
            kind, payload = producer.get(vid, ("input", None))
            if kind == "full":
                stack += [o.id for o in payload[1] if not isinstance(o, (int, float))]
        loads = [f"{pad}const {ctype} in{i} = {read(i)};" for i, v in enumerate(group.inputs)
                 if v.id in needed]
        lines = [f"{pad}const {ctype} t{node.outputs[0].id} = {expression(*payload)};"
                 for kind, node, payload in group.steps
                 if kind == "full" and node.outputs[0].id in needed]
        return loads + lines

    stores = [f"{pad}{read(slot[v.id])} = t{v.id};" for v in group.outputs]
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
    if not group.reduces:
        body = f"""        int64_t row = u / a->nblocks, j0 = (u % a->nblocks) * {BLOCK};
        int64_t j1 = j0 + {BLOCK} < inner ? j0 + {BLOCK} : inner;
{outer}
        #pragma omp simd
        for (int64_t j = 0; j < j1 - j0; j++) {{
{chr(10).join(element_code([v.id for v in group.outputs]) + stores)}
        }}"""
    else:
        body = "\n".join(["        const int64_t row = u, j0 = 0;", outer] +
                         _row_passes(group, ctype, name, element_code, expression, stores,
                                     slot))
    return f"""{head}
{body}
    }}
}}

int {ENTRY}(const ember_fused_args *a, int64_t units, int64_t grain) {{
    th_parallel_for(units, grain, body, (void *)a);
    return 0;
}}
"""


def _row_passes(group, ctype, name, element_code, expression, stores, slot):
    """A reducing group's code for one row: a pass over the row per
    reduction (each element's values recomputed from the inputs: cheap next
    to reading memory again), the row steps between them once, and the
    full-shape outputs stored in the last reduction's pass, or in a pass of
    their own when full steps follow it."""
    kinds = [kind for kind, _, _ in group.steps]
    last = max(i for i, k in enumerate(kinds) if k == "reduce")
    merged = bool(group.outputs) and "full" not in kinds[last + 1:]
    row_out = {v.id for v in group.row_outputs}
    code = []
    for i, (kind, node, payload) in enumerate(group.steps):
        vid = node.outputs[0].id
        if kind == "reduce":
            rkind, operand = payload
            acc_t, identity, clauses, step, final = _REDUCE[rkind]
            acc_t, acc = acc_t.format(t=ctype), f"acc{vid}"
            targets = [operand.id] + ([v.id for v in group.outputs] if merged and i == last
                                      else [])
            flag = f" int {acc}_nan = 0;" if "_nan" in clauses else ""
            code.append(f"""        {acc_t} {acc} = {identity};{flag}
        #pragma omp simd {clauses.format(acc=acc)}
        for (int64_t j = 0; j < inner; j++) {{
{chr(10).join(element_code(targets) + (stores if merged and i == last else []))}
            {step.format(acc=acc, v=name(operand))}
        }}
        const {ctype} r{vid} = ({ctype})({final.format(acc=acc)});""")
        elif kind == "row":
            code.append(f"        const {ctype} r{vid} = {expression(*payload)};")
        if kind in ("reduce", "row") and vid in row_out:
            code.append(f"        p{slot[vid]}[0] = r{vid};")
    if group.outputs and not merged:
        code.append(f"""        #pragma omp simd
        for (int64_t j = 0; j < inner; j++) {{
{chr(10).join(element_code([v.id for v in group.outputs]) + stores)}
        }}""")
    return code
