/* The op vocabulary (libTH's th_ops.def) as libTHC has compiled it: the
 * rows behind thc_op_get(), and the names, flags and dtype classes the
 * kernels' dispatch checks. */
#include <stddef.h>

#include "thc_internal.h"
#define TH_OPS_CLASS_MACROS
#include "th_ops.def"

/* the rows name their flags TH_OPF_*: libTH's th.h (through th_meta.h)
 * defines them, with the same values as libTHC's THC_OPF_* (checked here) */
#define SAME_FLAG(F) typedef char same_##F[(TH_OPF_##F == THC_OPF_##F) ? 1 : -1];
SAME_FLAG(PREDICATE) SAME_FLAG(FLOAT) SAME_FLAG(FLOAT_ONLY) SAME_FLAG(VECTOR_MATH)
SAME_FLAG(DIVISOR) SAME_FLAG(EXPONENT) SAME_FLAG(NO_INPLACE) SAME_FLAG(HIDDEN)
SAME_FLAG(TAKES_DTYPE)

#define KIND_KEEP 0
#define KIND_FLOAT THC_OPF_FLOAT
#define KIND_MATH (THC_OPF_FLOAT | THC_OPF_VECTOR_MATH)
#define KIND_ONLYF THC_OPF_FLOAT_ONLY
#define KIND_PRED THC_OPF_PREDICATE
#define CLS(c) (TH_IF_F_##c(THC_OPC_FLOAT |) TH_IF_I_##c(THC_OPC_INT |) \
                TH_IF_B_##c(THC_OPC_BOOL |) 0)
#define EXPRS(c, fs, is, bs)                                           \
    {(0 TH_IF_F_##c(+1)) ? fs : NULL, (0 TH_IF_I_##c(+1)) ? is : NULL, \
     (0 TH_IF_B_##c(+1)) ? bs : NULL}

static const thc_op_info unary_rows[] = {
#define TH_UNARY_OP(CODE, name, c, kind, flags, f, i, b) \
    {#name, THC_OP_UNARY, THC_##CODE, CLS(c), KIND_##kind | (flags), EXPRS(c, #f, #i, #b)},
#include "th_ops.def"
};
static const thc_op_info binary_rows[] = {
#define TH_BINARY_OP(CODE, name, c, kind, flags, f, i, b) \
    {#name, THC_OP_BINARY, THC_##CODE, CLS(c), KIND_##kind | (flags), EXPRS(c, #f, #i, #b)},
#include "th_ops.def"
};
static const thc_op_info reduce_rows[] = {
#define TH_REDUCE_OP(CODE, name, c, flags, identity, combine) \
    {#name, THC_OP_REDUCE, THC_##CODE, CLS(c), (flags), {#combine, #identity, NULL}},
#include "th_ops.def"
};

static const thc_op_info *row(int family, int code) {
    switch (family) {
    case THC_OP_UNARY: return code >= 0 && code < THC_NUM_UNARY_OPS ? &unary_rows[code] : NULL;
    case THC_OP_BINARY: return code >= 0 && code < THC_NUM_BINARY_OPS ? &binary_rows[code] : NULL;
    case THC_OP_REDUCE: return code >= 0 && code < THC_NUM_REDUCE_OPS ? &reduce_rows[code] : NULL;
    default: return NULL;
    }
}

THC_API int thc_op_count(int family) {
    switch (family) {
    case THC_OP_UNARY: return THC_NUM_UNARY_OPS;
    case THC_OP_BINARY: return THC_NUM_BINARY_OPS;
    case THC_OP_REDUCE: return THC_NUM_REDUCE_OPS;
    default:
        thc__error(THC_ERR_VALUE, "invalid op family %d", family);
        return -1;
    }
}

THC_API const thc_op_info *thc_op_get(int family, int code) {
    if (thc_op_count(family) < 0) return NULL;
    const thc_op_info *r = row(family, code);
    return r ? r : (const thc_op_info *)thc__error_null(THC_ERR_VALUE, "invalid op code %d", code);
}

const char *thc__op_name(int family, int code) {
    const thc_op_info *r = row(family, code);
    return r ? r->name : "?";
}

int thc__op_flags(int family, int code) {
    const thc_op_info *r = row(family, code);
    return r ? r->flags : 0;
}

int thc__op_has_dtype(int family, int code, int dtype) {
    const thc_op_info *r = row(family, code);
    int cls = dtype == THC_BOOL ? THC_OPC_BOOL
              : thc_dtype_is_floating(dtype) ? THC_OPC_FLOAT : THC_OPC_INT;
    return r && (r->classes & cls);
}
