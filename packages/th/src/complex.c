/* Complex numbers: complex64/complex128 storage is C99's float _Complex /
 * double _Complex (real part, then imaginary part, as NumPy's).  This file
 * holds what only complex tensors need: the few element-wise loops they
 * have (the op vocabulary's rows are real-valued; the dispatchers in
 * unary.c and binary.c ask here for a complex dtype; abs gives the real
 * |z|), casts to and from them, views as pairs of reals, arg z and conj. */
#include <complex.h>

#include "elementwise.h"

typedef float _Complex c64;
typedef double _Complex c128;

int th__refuse_complex(const char *op, int dtype) {
    if (!th_dtype_is_complex(dtype)) return TH_OK;
    return th__error(TH_ERR_TYPE, "\"%s_cpu\" not implemented for '%s'", op,
                     th__dtype_title(dtype));
}

/* ---- element access ------------------------------------------------ */
void th__load_complex(const char *p, int dtype, double *re, double *im) {
    if (dtype == TH_COMPLEX64) {
        c64 z = *(const c64 *)p;
        *re = crealf(z);
        *im = cimagf(z);
    } else if (dtype == TH_COMPLEX128) {
        c128 z = *(const c128 *)p;
        *re = creal(z);
        *im = cimag(z);
    } else {
        *re = th__load_double(p, dtype);
        *im = 0.0;
    }
}

/* A complex value into an element of any dtype: real dtypes keep the
 * real part (PyTorch's casts discard the imaginary part). */
void th__store_complex(char *p, int dtype, double re, double im) {
    if (dtype == TH_COMPLEX64) {
        float parts[2] = {(float)re, (float)im};
        memcpy(p, parts, sizeof parts);
    } else if (dtype == TH_COMPLEX128) {
        double parts[2] = {re, im};
        memcpy(p, parts, sizeof parts);
    } else if (dtype == TH_BOOL) {
        *(th_bool_t *)p = re != 0 || im != 0;
    } else {
        th__store_double(p, dtype, re);
    }
}

int th_get_complex(const th_tensor *t, int64_t linear, double *re, double *im) {
    int64_t n = th_numel(t);
    if (linear < 0 || linear >= n)
        return th__error(TH_ERR_INDEX, "index %lld is out of bounds for a tensor of %lld "
                         "elements", (long long)linear, (long long)n);
    int64_t o = 0;
    for (int i = t->ndim - 1; i >= 0; i--) {
        o += (linear % t->sizes[i]) * t->strides[i];
        linear /= t->sizes[i];
    }
    th__load_complex(th__ptr(t) + o * th_dtype_itemsize(t->dtype), t->dtype, re, im);
    return TH_OK;
}

th_tensor *th_scalar_complex(double re, double im, int dtype) {
    th_tensor *t = th_empty(0, NULL, dtype);
    if (t) th__store_complex(th__ptr(t), dtype, re, im);
    return t;
}

int th_fill_complex(th_tensor *t, double re, double im) {
    if (!th_dtype_is_complex(t->dtype) && im != 0)
        return th__error(TH_ERR_RUNTIME, "value cannot be converted to type %s without "
                         "overflow", th__dtype_title(t->dtype));
    th_tensor *v = th_scalar_complex(re, im, th_dtype_is_complex(t->dtype) ? t->dtype
                                                                         : TH_COMPLEX128);
    if (!v) return th_last_status();
    int rc = th_fill(t, v);
    th_tensor_release(v);
    return rc;
}

/* ---- casts --------------------------------------------------------- */
/* ctx holds {source dtype, destination dtype} */
static void cast_any(char **d, const int64_t *s, int64_t n, void *ctx) {
    const int *dt = ctx;
    char *o = d[0];
    const char *x = d[1];
    for (int64_t i = 0; i < n; i++, o += s[0], x += s[1]) {
        double re, im;
        th__load_complex(x, dt[0], &re, &im);
        th__store_complex(o, dt[1], re, im);
    }
}

/* loop NAME: out (OT) = EXPR of x (T), over any strides */
#define CUNARY(NAME, T, OT, EXPR)                                             \
    static void NAME(char **d, const int64_t *s, int64_t n, void *ctx) {      \
        (void)ctx;                                                            \
        char *o = d[0];                                                       \
        const char *p = d[1];                                                 \
        for (int64_t i = 0; i < n; i++, o += s[0], p += s[1]) {               \
            T x = *(const T *)p;                                              \
            *(OT *)o = (OT)(EXPR);                                            \
        }                                                                     \
    }
CUNARY(f32_to_c64, float, c64, (c64)x)
CUNARY(f64_to_c128, double, c128, (c128)x)
CUNARY(c64_to_c128, c64, c128, (c128)x)
CUNARY(c128_to_c64, c128, c64, (c64)x)
CUNARY(c64_to_f32, c64, float, crealf(x))
CUNARY(c128_to_f64, c128, double, creal(x))

/* The loop copying src dtype into dst dtype when either is complex; ctx
 * must then point at {src, dst}. */
th_loop_fn th__complex_cast_loop(int src, int dst) {
    if (src == TH_FLOAT32 && dst == TH_COMPLEX64) return f32_to_c64;
    if (src == TH_FLOAT64 && dst == TH_COMPLEX128) return f64_to_c128;
    if (src == TH_COMPLEX64 && dst == TH_COMPLEX128) return c64_to_c128;
    if (src == TH_COMPLEX128 && dst == TH_COMPLEX64) return c128_to_c64;
    if (src == TH_COMPLEX64 && dst == TH_FLOAT32) return c64_to_f32;
    if (src == TH_COMPLEX128 && dst == TH_FLOAT64) return c128_to_f64;
    return cast_any;
}

/* ---- element-wise loops -------------------------------------------- */
#define CBINARY(NAME, T, OT, EXPR)                                            \
    static void NAME(char **d, const int64_t *s, int64_t n, void *ctx) {      \
        (void)ctx;                                                            \
        char *o = d[0];                                                       \
        const char *p = d[1], *q = d[2];                                      \
        for (int64_t i = 0; i < n; i++, o += s[0], p += s[1], q += s[2]) {    \
            T x = *(const T *)p, y = *(const T *)q;                           \
            *(OT *)o = (OT)(EXPR);                                            \
        }                                                                     \
    }

#define LN2 0.693147180559945309417232121458176568
#define LN10 2.30258509299404568401799145468436421

/* each row: the op, its c64 expression, its c128 expression */
#define C_UNARY_OPS(X)                                                        \
    X(NEG, c64, -x, -x)                                                       \
    X(ABS, float, cabsf(x), cabs(x))                                          \
    X(EXP, c64, cexpf(x), cexp(x))                                            \
    X(LOG, c64, clogf(x), clog(x))                                            \
    X(SQRT, c64, csqrtf(x), csqrt(x))                                         \
    X(RECIPROCAL, c64, 1 / x, 1 / x)                                          \
    X(SQUARE, c64, x * x, x * x)                                              \
    X(SIN, c64, csinf(x), csin(x))                                            \
    X(COS, c64, ccosf(x), ccos(x))                                            \
    X(TANH, c64, ctanhf(x), ctanh(x))                                         \
    X(TAN, c64, ctanf(x), ctan(x))                                            \
    X(SINH, c64, csinhf(x), csinh(x))                                         \
    X(COSH, c64, ccoshf(x), ccosh(x))                                         \
    X(ASIN, c64, casinf(x), casin(x))                                         \
    X(ACOS, c64, cacosf(x), cacos(x))                                         \
    X(ATAN, c64, catanf(x), catan(x))                                         \
    X(ASINH, c64, casinhf(x), casinh(x))                                      \
    X(ACOSH, c64, cacoshf(x), cacosh(x))                                      \
    X(ATANH, c64, catanhf(x), catanh(x))                                      \
    X(RSQRT, c64, 1 / csqrtf(x), 1 / csqrt(x))                                \
    X(LOG2, c64, clogf(x) / (float)LN2, clog(x) / LN2)                        \
    X(LOG10, c64, clogf(x) / (float)LN10, clog(x) / LN10)                     \
    X(EXP2, c64, cexpf(x * (float)LN2), cexp(x * LN2))                        \
    X(SIGMOID, c64, 1 / (1 + cexpf(-x)), 1 / (1 + cexp(-x)))                  \
    X(ISNAN, th_bool_t, isnan(crealf(x)) || isnan(cimagf(x)),                 \
      isnan(creal(x)) || isnan(cimag(x)))                                     \
    X(ISINF, th_bool_t, isinf(crealf(x)) || isinf(cimagf(x)),                 \
      isinf(creal(x)) || isinf(cimag(x)))                                     \
    X(ISFINITE, th_bool_t, isfinite(crealf(x)) && isfinite(cimagf(x)),        \
      isfinite(creal(x)) && isfinite(cimag(x)))                               \
    X(LOGICAL_NOT, th_bool_t, x == 0, x == 0)
#define C_BINARY_OPS(X)                                                       \
    X(ADD, c64, x + y, x + y)                                                 \
    X(SUB, c64, x - y, x - y)                                                 \
    X(MUL, c64, x * y, x * y)                                                 \
    X(DIV, c64, x / y, x / y)                                                 \
    X(POW, c64, cpowf(x, y), cpow(x, y))                                      \
    X(EQ, th_bool_t, x == y, x == y)                                          \
    X(NE, th_bool_t, x != y, x != y)

/* the c128 row's result type: c128 where the c64 row has c64 */
#define OUT128_c64 c128
#define OUT128_th_bool_t th_bool_t
#define OUT128_float double
#define GEN_UNARY(OP, OT, E64, E128)                                          \
    CUNARY(un_##OP##_c64, c64, OT, E64)                                       \
    CUNARY(un_##OP##_c128, c128, OUT128_##OT, E128)
#define GEN_BINARY(OP, OT, E64, E128)                                         \
    CBINARY(bin_##OP##_c64, c64, OT, E64)                                     \
    CBINARY(bin_##OP##_c128, c128, OUT128_##OT, E128)
C_UNARY_OPS(GEN_UNARY)
C_BINARY_OPS(GEN_BINARY)

#define ROW_UNARY(OP, ...) [TH_##OP] = {un_##OP##_c64, un_##OP##_c128},
#define ROW_BINARY(OP, ...) [TH_##OP] = {bin_##OP##_c64, bin_##OP##_c128},
static const th_loop_fn unary_loops[TH_NUM_UNARY_OPS][2] = {C_UNARY_OPS(ROW_UNARY)};
static const th_loop_fn binary_loops[TH_NUM_BINARY_OPS][2] = {C_BINARY_OPS(ROW_BINARY)};

th_loop_fn th__complex_unary_loop(int op, int dtype) {
    if (op < 0 || op >= TH_NUM_UNARY_OPS || !th_dtype_is_complex(dtype)) return NULL;
    return unary_loops[op][dtype == TH_COMPLEX128];
}

th_loop_fn th__complex_binary_loop(int op, int dtype) {
    if (op < 0 || op >= TH_NUM_BINARY_OPS || !th_dtype_is_complex(dtype)) return NULL;
    return binary_loops[op][dtype == TH_COMPLEX128];
}

/* ---- arg z, conj --------------------------------------------------- */
CUNARY(arg_c64, c64, float, cargf(x))
CUNARY(arg_c128, c128, double, carg(x))
CUNARY(conj_c64, c64, c64, conjf(x))
CUNARY(conj_c128, c128, c128, conj(x))

static th_tensor *map_complex(const th_tensor *t, const char *name, int real_result,
                              th_loop_fn f64, th_loop_fn f128) {
    if (!th_dtype_is_complex(t->dtype))
        return th__error(TH_ERR_TYPE, "%s expects a complex tensor, got %s", name,
                         th_dtype_name(t->dtype)), NULL;
    int rt = real_result ? th_complex_part_dtype(t->dtype) : t->dtype;
    th_tensor *out = th__empty_like(t, rt);
    if (!out) return NULL;
    const th_tensor *ops[2] = {out, t};
    th_iter it;
    th__iter_init(&it, 2, ops);
    th__iter_run(&it, t->dtype == TH_COMPLEX128 ? f128 : f64, NULL, 1);
    return out;
}

th_tensor *th_complex_angle(const th_tensor *t) {
    return map_complex(t, "angle", 1, arg_c64, arg_c128);
}

th_tensor *th_conj(const th_tensor *t) {
    if (!th_dtype_is_complex(t->dtype)) return th_clone(t);
    return map_complex(t, "conj", 0, conj_c64, conj_c128);
}

/* ---- views as pairs of reals --------------------------------------- */
th_tensor *th_view_as_real(const th_tensor *t) {
    if (!th_dtype_is_complex(t->dtype))
        return th__error(TH_ERR_RUNTIME, "view_as_real is only supported for complex "
                         "tensors"), NULL;
    if (t->ndim >= TH_MAX_DIMS)
        return th__error(TH_ERR_RUNTIME, "view_as_real: a tensor of %d dims has no room "
                         "for the last dim of 2 (at most %d dims)", t->ndim,
                         TH_MAX_DIMS), NULL;
    int64_t sizes[TH_MAX_DIMS], strides[TH_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++) {
        sizes[i] = t->sizes[i];
        /* strides of 2^62 elements or more cannot double: no tensor that
         * big exists, but a hand-made view could claim it */
        if (th__mul_ovf(t->strides[i], 2, &strides[i]))
            return th__error(TH_ERR_RUNTIME, "view_as_real: stride overflow"), NULL;
    }
    sizes[t->ndim] = 2;
    strides[t->ndim] = 1;
    int64_t offset;
    if (th__mul_ovf(t->offset, 2, &offset))
        return th__error(TH_ERR_RUNTIME, "view_as_real: offset overflow"), NULL;
    return th_tensor_from_storage(t->storage, offset, t->ndim + 1, sizes, strides,
                                  th_complex_part_dtype(t->dtype));
}

th_tensor *th_view_as_complex(const th_tensor *t) {
    int ct = t->dtype == TH_FLOAT32 ? TH_COMPLEX64
             : t->dtype == TH_FLOAT64 ? TH_COMPLEX128 : -1;
    if (ct < 0)
        return th__error(TH_ERR_RUNTIME, "view_as_complex is only supported for float "
                         "and double tensors, but got a tensor of scalar type: %s",
                         th__dtype_title(t->dtype)), NULL;
    if (t->ndim == 0 || t->sizes[t->ndim - 1] != 2)
        return th__error(TH_ERR_RUNTIME, "Tensor must have a last dimension of size 2"),
               NULL;
    if (t->strides[t->ndim - 1] != 1)
        return th__error(TH_ERR_RUNTIME, "Tensor must have a last dimension with stride "
                         "1"), NULL;
    int64_t sizes[TH_MAX_DIMS], strides[TH_MAX_DIMS];
    for (int i = 0; i < t->ndim - 1; i++) {
        sizes[i] = t->sizes[i];
        if (t->strides[i] % 2)
            return th__error(TH_ERR_RUNTIME, "Tensor must have a stride divisible by 2 "
                             "for all but last dimension"), NULL;
        strides[i] = t->strides[i] / 2;
    }
    if (t->offset % 2)
        return th__error(TH_ERR_RUNTIME, "Tensor must have a storage_offset divisible by "
                         "2"), NULL;
    return th_tensor_from_storage(t->storage, t->offset / 2, t->ndim - 1, sizes, strides,
                                  ct);
}
