/* Unary element-wise operations: dtype rules, dispatch and the loops that
 * need exact IEEE semantics (NaN tests, rounding, integer ops). */
#include "elementwise.h"

#pragma GCC diagnostic ignored "-Wtype-limits"

#define LOOP(NAME, T, OT, EXPR)                                               \
    static void NAME(char **d, const int64_t *s, int64_t n, void *ctx) {      \
        (void)ctx;                                                            \
        if (s[0] == sizeof(OT) && s[1] == sizeof(T)) {                        \
            OT *restrict o = (OT *)d[0];                                      \
            const T *restrict xs = (const T *)d[1];                           \
            for (int64_t i = 0; i < n; i++) {                                 \
                T x = xs[i];                                                  \
                (void)x; /* a constant expression: isinf of integers */       \
                o[i] = (OT)(EXPR);                                            \
            }                                                                 \
        } else {                                                              \
            char *op = d[0];                                                  \
            const char *xp = d[1];                                            \
            for (int64_t i = 0; i < n; i++, op += s[0], xp += s[1]) {         \
                T x = *(const T *)xp;                                         \
                (void)x;                                                      \
                *(OT *)op = (OT)(EXPR);                                       \
            }                                                                 \
        }                                                                     \
    }

/* one loop per row of th_ops.def and class of its compute dtypes; the
 * MATH rows' float loops are in unary_math.c */
#define GEN_KEEP(E, T, S, NAME, EXPR) LOOP(NAME##_##S, T, T, EXPR)
#define GEN_FLOAT GEN_KEEP
#define GEN_MATH(E, T, S, NAME, EXPR)
#define GEN_PRED(E, T, S, NAME, EXPR) LOOP(NAME##_##S, T, th_bool_t, EXPR)
#define TH_UNARY_OP(CODE, name, c, kind, flags, f, i, b) \
    TH_IF_F_##c(TH_FLOATS_A(GEN_##kind, name, f))       \
    TH_IF_I_##c(TH_INTS_A(GEN_##kind, name, i))         \
    TH_IF_B_##c(TH_BOOL_A(GEN_##kind, name, b))
#include "th_ops.def"

#define ROW_F_KEEP(name) TH_ROW_FLOAT(name),
#define ROW_F_FLOAT ROW_F_KEEP
#define ROW_F_PRED ROW_F_KEEP
#define ROW_F_MATH(name)
static const th_loop_fn loops[TH_NUM_UNARY_OPS][TH_NUM_DTYPES] = {
#define TH_UNARY_OP(CODE, name, c, kind, ...)                      \
    [TH_##CODE] = {TH_IF_F_##c(ROW_F_##kind(name)) TH_IF_I_##c(TH_ROW_INT(name), ) \
                   TH_IF_B_##c(TH_ROW_BOOL(name))},
#include "th_ops.def"
};

/* each op's TH_OPF_ bits (op already checked to be in range) */
static const int op_flag_table[TH_NUM_UNARY_OPS] = {
#define TH_UNARY_OP(CODE, name, c, kind, flags, ...) [TH_##CODE] = TH_KIND_##kind | (flags),
#include "th_ops.def"
};

int th__unary_is_float_op(int op) {
    return (op_flag_table[op] & TH_OPF_FLOAT) != 0;
}

static int is_predicate(int op) {
    return (op_flag_table[op] & TH_OPF_PREDICATE) != 0;
}

/* the loop for op in compute dtype ct, NULL where the op has none */
static th_loop_fn unary_loop(int op, int ct) {
    if (th_dtype_is_complex(ct)) return th__complex_unary_loop(op, ct);
    th_loop_fn f = ct == TH_FLOAT32 || ct == TH_FLOAT64
                       ? th__unary_math_loop(op, ct) : NULL;
    return f ? f : loops[op][ct];
}

/* Compute dtype (what the loop runs in) and result dtype for op on dtype. */
static int unary_types(int op, int dtype, int *compute, int *result) {
    if (op < 0 || op >= TH_NUM_UNARY_OPS)
        return th__error(TH_ERR_VALUE, "invalid unary op code %d", op);
    if (th_dtype_is_complex(dtype)) { /* complex.c's few loops */
        *result = op == TH_ABS ? th_complex_part_dtype(dtype)
                  : is_predicate(op) ? TH_BOOL : dtype;
        *compute = dtype;
        if (!unary_loop(op, dtype))
            return th__error(TH_ERR_TYPE, "\"%s_cpu\" not implemented for '%s'",
                             th__op_name(TH_OP_UNARY, op), th__dtype_title(dtype));
        return TH_OK;
    }
    int fl = th_dtype_is_floating(dtype);
    if (th__unary_is_float_op(op)) {
        *result = fl ? dtype : th_get_default_dtype();
    } else if (is_predicate(op)) {
        *result = TH_BOOL;
    } else {
        *result = op == TH_SQUARE && dtype == TH_BOOL ? TH_INT64 : dtype;
        if (op == TH_NEG && dtype == TH_BOOL)
            return th__error(TH_ERR_RUNTIME,
                             "Negation, the `-` operator, on a bool tensor "
                             "is not supported. If you are trying to invert "
                             "a mask, use the `~` or `logical_not()` "
                             "operator instead.");
    }
    /* the loop runs in the result dtype for float ops (integers are
     * converted first), else in the input dtype; halves run in float32 */
    int src = th__unary_is_float_op(op) || op == TH_SQUARE ? *result : dtype;
    *compute = th__is_half(src) ? TH_FLOAT32 : src;
    if (!unary_loop(op, *compute))  /* a dtype class the op's row lacks */
        return th__error(TH_ERR_TYPE, "\"%s_cpu\" not implemented for '%s'",
                         th__op_name(TH_OP_UNARY, op), th__dtype_title(dtype));
    return TH_OK;
}

int th_unary_out(int op, th_tensor *out, const th_tensor *a) {
    int ct = 0, rt = 0;
    if (unary_types(op, a->dtype, &ct, &rt)) return th_last_status();
    if (op == TH_ABS && th_dtype_is_complex(a->dtype) && th_dtype_is_complex(out->dtype))
        return th__error(TH_ERR_RUNTIME, "In-place abs is not supported for complex "
                         "tensors.");
    if (th__check_out_shape(out, a->ndim, a->sizes)) return th_last_status();
    if (!th__can_cast(rt, out->dtype))
        return th__error(TH_ERR_RUNTIME,
                         "result type %s can't be cast to the desired output "
                         "type %s", th__dtype_title(rt),
                         th__dtype_title(out->dtype));
    th_loop_fn fn = unary_loop(op, ct);
    int lt = is_predicate(op) ? TH_BOOL : ct; /* what the loop writes */
    if (op == TH_ABS && th_dtype_is_complex(ct)) lt = rt;  /* |z| is real */
    th_tensor *in = th__cast(a, ct);
    if (!in) return th_last_status();
    th_tensor *dst = out;
    if (out->dtype != lt || th__partial_overlap(out, in))
        dst = th__empty_like(out, lt);
    int rc = TH_OK;
    if (!dst) {
        rc = th_last_status();
    } else {
        const th_tensor *ops[2] = {dst, in};
        th_iter it;
        th__iter_init(&it, 2, ops);
        th__iter_run(&it, fn, NULL, 1);
        th__bump_version(out);
        if (dst != out) {
            rc = th_copy(out, dst);
            th_tensor_release(dst);
        }
    }
    th_tensor_release(in);
    return rc;
}

th_tensor *th_unary(int op, const th_tensor *a) {
    int ct = 0, rt = 0;
    if (unary_types(op, a->dtype, &ct, &rt)) return NULL;
    th_tensor *out = th__empty_like(a, rt);
    if (out && th_unary_out(op, out, a) != TH_OK) {
        th_tensor_release(out);
        return NULL;
    }
    return out;
}
