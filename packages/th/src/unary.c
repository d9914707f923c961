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
                o[i] = (OT)(EXPR);                                            \
            }                                                                 \
        } else {                                                              \
            char *op = d[0];                                                  \
            const char *xp = d[1];                                            \
            for (int64_t i = 0; i < n; i++, op += s[0], xp += s[1]) {         \
                T x = *(const T *)xp;                                         \
                *(OT *)op = (OT)(EXPR);                                       \
            }                                                                 \
        }                                                                     \
    }

/* ops defined for every native dtype; integers negate and square in
 * uint64, wrapping like PyTorch (-INT64_MIN == INT64_MIN) where signed
 * overflow would be undefined */
#define INEG(x) ((__typeof__(x))(0 - (uint64_t)(x)))
#define IMUL(x, y) ((__typeof__(x))((uint64_t)(x) * (uint64_t)(y)))
#define DEF_FOR_TYPES(E, T_, S)               \
    LOOP(sign_##S, T_, T_, (x > 0) - (x < 0)) \
    LOOP(isnan_##S, T_, th_bool_t, x != x)    \
    LOOP(lnot_##S, T_, th_bool_t, x == 0)
TH_FOR_NATIVE_DTYPES(DEF_FOR_TYPES)
#define DEF_NEG_F(E, T_, S)                   \
    LOOP(neg_##S, T_, T_, -x)                 \
    LOOP(abs_##S, T_, T_, x < 0 ? -x : x)     \
    LOOP(square_##S, T_, T_, x * x)
TH_FOR_FLOAT_DTYPES(DEF_NEG_F)
#define DEF_NEG_I(E, T_, S)                   \
    LOOP(neg_##S, T_, T_, INEG(x))            \
    LOOP(abs_##S, T_, T_, x < 0 ? INEG(x) : x) \
    LOOP(square_##S, T_, T_, IMUL(x, x))
TH_FOR_INT_DTYPES(DEF_NEG_I)
LOOP(neg_b8, th_bool_t, th_bool_t, -x)
LOOP(abs_b8, th_bool_t, th_bool_t, x)
LOOP(square_b8, th_bool_t, th_bool_t, x * x)

#define DEF_INT(E, T_, S) LOOP(bnot_##S, T_, T_, ~x)
TH_FOR_INT_DTYPES(DEF_INT)
LOOP(bnot_b8, th_bool_t, th_bool_t, !x)

/* float-only exact loops */
static double erfinv_d(double y);
#define DEF_FLOAT(E, T_, S)                                              \
    LOOP(floor_##S, T_, T_, floor(x))                                    \
    LOOP(ceil_##S, T_, T_, ceil(x))                                      \
    LOOP(round_##S, T_, T_, nearbyint(x))                                \
    LOOP(trunc_##S, T_, T_, trunc(x))                                    \
    LOOP(frac_##S, T_, T_, x - trunc(x))                                 \
    LOOP(isinf_##S, T_, th_bool_t, isinf(x))                             \
    LOOP(isfinite_##S, T_, th_bool_t, isfinite(x))                       \
    LOOP(isposinf_##S, T_, th_bool_t, isinf(x) && x > 0)                 \
    LOOP(isneginf_##S, T_, th_bool_t, isinf(x) && x < 0)                 \
    LOOP(erfinv_##S, T_, T_, erfinv_d((double)x))                        \
    LOOP(fsign_##S, T_, T_, x > 0 ? 1 : x < 0 ? -1 : x)                  \
    LOOP(fabs_##S, T_, T_, fabs(x))
TH_FOR_FLOAT_DTYPES(DEF_FLOAT)

/* Inverse error function: Giles' single-precision approximation as a
 * start, refined by two Newton steps on erf in double precision. */
static double erfinv_d(double y) {
    if (y <= -1.0) return y == -1.0 ? -INFINITY : NAN;
    if (y >= 1.0) return y == 1.0 ? INFINITY : NAN;
    if (y != y) return y;
    double w = -log((1.0 - y) * (1.0 + y)), x;
    if (w < 5.0) {
        w -= 2.5;
        x = 2.81022636e-08;
        x = 3.43273939e-07 + x * w;
        x = -3.5233877e-06 + x * w;
        x = -4.39150654e-06 + x * w;
        x = 0.00021858087 + x * w;
        x = -0.00125372503 + x * w;
        x = -0.00417768164 + x * w;
        x = 0.246640727 + x * w;
        x = 1.50140941 + x * w;
    } else {
        w = sqrt(w) - 3.0;
        x = -0.000200214257;
        x = 0.000100950558 + x * w;
        x = 0.00134934322 + x * w;
        x = -0.00367342844 + x * w;
        x = 0.00573950773 + x * w;
        x = -0.0076224613 + x * w;
        x = 0.00943887047 + x * w;
        x = 1.00167406 + x * w;
        x = 2.83297682 + x * w;
    }
    x *= y;
    for (int i = 0; i < 2; i++) { /* Newton: f(x) = erf(x) - y */
        double err = erf(x) - y;
        x -= err / (2.0 / sqrt(TH_PI) * exp(-x * x));
    }
    return x;
}

#define TABLE(PREFIX)                                                          \
    {[TH_FLOAT32] = PREFIX##_f32, [TH_FLOAT64] = PREFIX##_f64,                 \
     [TH_INT8] = PREFIX##_i8, [TH_UINT8] = PREFIX##_u8,                        \
     [TH_INT16] = PREFIX##_i16, [TH_INT32] = PREFIX##_i32,                     \
     [TH_INT64] = PREFIX##_i64, [TH_BOOL] = PREFIX##_b8}

static const th_loop_fn neg_t[TH_NUM_DTYPES] = TABLE(neg);
static const th_loop_fn abs_t[TH_NUM_DTYPES] = TABLE(abs);
static const th_loop_fn square_t[TH_NUM_DTYPES] = TABLE(square);
static const th_loop_fn sign_t[TH_NUM_DTYPES] = TABLE(sign);
static const th_loop_fn isnan_t[TH_NUM_DTYPES] = TABLE(isnan);
static const th_loop_fn lnot_t[TH_NUM_DTYPES] = TABLE(lnot);

static const char *op_names[TH_NUM_UNARY_OPS] = {
    "neg", "abs", "sign", "exp", "exp2", "expm1", "log", "log2", "log10",
    "log1p", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tan", "asin",
    "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
    "sigmoid", "erf", "erfc", "erfinv", "floor", "ceil", "round", "trunc",
    "frac", "isnan", "isinf", "isfinite", "logical_not", "bitwise_not",
    "square", "isposinf", "isneginf"};

int th__unary_is_float_op(int op) {
    switch (op) {
    case TH_EXP: case TH_EXP2: case TH_EXPM1: case TH_LOG: case TH_LOG2:
    case TH_LOG10: case TH_LOG1P: case TH_SQRT: case TH_RSQRT:
    case TH_RECIPROCAL: case TH_SIN: case TH_COS: case TH_TAN: case TH_ASIN:
    case TH_ACOS: case TH_ATAN: case TH_SINH: case TH_COSH: case TH_TANH:
    case TH_ASINH: case TH_ACOSH: case TH_ATANH: case TH_SIGMOID: case TH_ERF:
    case TH_ERFC: case TH_ERFINV:
        return 1;
    default:
        return 0;
    }
}

static int is_predicate(int op) {
    return op == TH_ISNAN || op == TH_ISINF || op == TH_ISFINITE ||
           op == TH_ISPOSINF || op == TH_ISNEGINF || op == TH_LOGICAL_NOT;
}


/* Compute dtype (what the loop runs in) and result dtype for op on dtype. */
static int unary_types(int op, int dtype, int *compute, int *result) {
    if (op < 0 || op >= TH_NUM_UNARY_OPS)
        return th__error(TH_ERR_VALUE, "invalid unary op code %d", op);
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
        if (op == TH_BITWISE_NOT && fl)
            return th__error(TH_ERR_TYPE,
                             "\"bitwise_not_cpu\" not implemented for '%s'",
                             th__dtype_title(dtype));
        if (dtype == TH_BOOL && (op == TH_ABS || op == TH_FLOOR || op == TH_CEIL ||
                                 op == TH_TRUNC || op == TH_ROUND))
            return th__error(TH_ERR_TYPE, "\"%s_cpu\" not implemented for 'Bool'",
                             op_names[op]);
        if (op == TH_FRAC && !fl)
            return th__error(TH_ERR_TYPE,
                             "\"frac_cpu\" not implemented for '%s'",
                             th__dtype_title(dtype));
    }
    /* the loop runs in the result dtype for float ops (integers are
     * converted first), else in the input dtype; halves run in float32 */
    int src = th__unary_is_float_op(op) || op == TH_SQUARE ? *result : dtype;
    *compute = th__is_half(src) ? TH_FLOAT32 : src;
    return TH_OK;
}

static th_loop_fn unary_loop(int op, int ct) {
    int fl = ct == TH_FLOAT32 || ct == TH_FLOAT64, d = ct == TH_FLOAT64;
    th_loop_fn f = fl ? th__unary_math_loop(op, ct) : NULL;
    if (f) return f;
#define F(NAME) (d ? NAME##_f64 : NAME##_f32)
    switch (op) {
    case TH_NEG: return neg_t[ct];
    case TH_ABS: return fl ? F(fabs) : abs_t[ct];
    case TH_SQUARE: return square_t[ct];
    case TH_SIGN: return fl ? F(fsign) : sign_t[ct];
    case TH_ISNAN: return isnan_t[ct];
    case TH_LOGICAL_NOT: return lnot_t[ct];
    case TH_ERFINV: return F(erfinv);
    case TH_FRAC: return F(frac);
    case TH_BITWISE_NOT:
        switch (ct) {
        case TH_INT8: return bnot_i8;
        case TH_UINT8: return bnot_u8;
        case TH_INT16: return bnot_i16;
        case TH_INT32: return bnot_i32;
        case TH_INT64: return bnot_i64;
        default: return bnot_b8;
        }
    default: break;
    }
    if (fl) {
        switch (op) {
        case TH_FLOOR: return F(floor);
        case TH_CEIL: return F(ceil);
        case TH_ROUND: return F(round);
        case TH_TRUNC: return F(trunc);
        case TH_ISINF: return F(isinf);
        case TH_ISFINITE: return F(isfinite);
        case TH_ISPOSINF: return F(isposinf);
        case TH_ISNEGINF: return F(isneginf);
        default: return NULL;
        }
    }
#undef F
    return NULL; /* integer rounding ops and predicates: handled by caller */
}

/* Integer inputs: rounding ops are the identity, inf/nan tests constant. */
static int integer_shortcut(int op, th_tensor *out, const th_tensor *a) {
    switch (op) {
    case TH_FLOOR: case TH_CEIL: case TH_ROUND: case TH_TRUNC:
        return th_copy(out, a);
    case TH_ISINF: case TH_ISPOSINF: case TH_ISNEGINF:
        return th_fill_double(out, 0.0);
    case TH_ISFINITE:
        return th_fill_double(out, 1.0);
    default:
        return th__error(TH_ERR_TYPE, "\"%s\" not implemented for '%s'",
                         op_names[op], th__dtype_title(a->dtype));
    }
}

int th_unary_out(int op, th_tensor *out, const th_tensor *a) {
    int ct = 0, rt = 0;
    if (unary_types(op, a->dtype, &ct, &rt)) return th_last_status();
    if (th__check_out_shape(out, a->ndim, a->sizes)) return th_last_status();
    if (!th__can_cast(rt, out->dtype))
        return th__error(TH_ERR_RUNTIME,
                         "result type %s can't be cast to the desired output "
                         "type %s", th__dtype_title(rt),
                         th__dtype_title(out->dtype));
    th_loop_fn fn = unary_loop(op, ct);
    if (!fn) {
        th__bump_version(out);
        return integer_shortcut(op, out, a);
    }
    int lt = is_predicate(op) ? TH_BOOL : ct; /* what the loop writes */
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
