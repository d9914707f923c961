/* Binary element-wise operations with broadcasting and PyTorch's type
 * promotion.  Every op has one loop per dtype with fast paths for
 * contiguous operands and for a broadcast scalar on either side. */
#include "elementwise.h"

#pragma GCC diagnostic ignored "-Wtype-limits"

#define BLOOP(NAME, T, OT, EXPR)                                              \
    static void NAME(char **d, const int64_t *s, int64_t n, void *ctx) {      \
        (void)ctx;                                                            \
        if (s[0] == sizeof(OT) && s[1] == sizeof(T) && s[2] == sizeof(T)) {   \
            OT *restrict o = (OT *)d[0];                                      \
            const T *restrict xs = (const T *)d[1];                           \
            const T *restrict ys = (const T *)d[2];                           \
            for (int64_t i = 0; i < n; i++) {                                 \
                T x = xs[i], y = ys[i];                                       \
                o[i] = (OT)(EXPR);                                            \
            }                                                                 \
        } else if (s[0] == sizeof(OT) && s[1] == sizeof(T) && s[2] == 0) {    \
            OT *restrict o = (OT *)d[0];                                      \
            const T *restrict xs = (const T *)d[1];                           \
            const T y = *(const T *)d[2];                                     \
            for (int64_t i = 0; i < n; i++) {                                 \
                T x = xs[i];                                                  \
                o[i] = (OT)(EXPR);                                            \
            }                                                                 \
        } else if (s[0] == sizeof(OT) && s[1] == 0 && s[2] == sizeof(T)) {    \
            OT *restrict o = (OT *)d[0];                                      \
            const T x = *(const T *)d[1];                                     \
            const T *restrict ys = (const T *)d[2];                           \
            for (int64_t i = 0; i < n; i++) {                                 \
                T y = ys[i];                                                  \
                o[i] = (OT)(EXPR);                                            \
            }                                                                 \
        } else {                                                              \
            char *op = d[0];                                                  \
            const char *xp = d[1], *yp = d[2];                                \
            for (int64_t i = 0; i < n;                                        \
                 i++, op += s[0], xp += s[1], yp += s[2]) {                   \
                T x = *(const T *)xp, y = *(const T *)yp;                     \
                *(OT *)op = (OT)(EXPR);                                       \
            }                                                                 \
        }                                                                     \
    }

#define SAME(E, T, S, NAME, EXPR) BLOOP(NAME##_##S, T, T, EXPR)
#define TOBOOL(E, T, S, NAME, EXPR) BLOOP(NAME##_##S, T, th_bool_t, EXPR)

/* Python-style integer floor division and modulo (divisor checked != 0). */
/* y == -1 is taken apart: INT_MIN / -1 traps on x86 (the quotient wraps,
 * as in PyTorch, and the remainder is 0). */
#define INEG(x) ((int64_t)(0 - (uint64_t)(x)))
#define IFLOORDIV(x, y) ((y) == -1 ? INEG(x) : \
    (x) / (y) - (((x) % (y) != 0) && (((x) < 0) != ((y) < 0))))
#define IMOD(x, y) ((y) == -1 ? 0 : \
    (x) % (y) + ((((x) % (y)) != 0 && ((((x) % (y)) < 0) != ((y) < 0))) ? (y) : 0))
#define ITRUNCDIV(x, y) ((y) == -1 ? INEG(x) : (x) / (y))
#define IFMOD(x, y) ((y) == -1 ? 0 : (x) % (y))

static inline double fl_floordiv(double a, double b) {
    if (b == 0) return a / b;
    double mod = fmod(a, b), div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1.0;
    if (div == 0) return copysign(0.0, a / b);
    double fd = floor(div);
    if (div - fd > 0.5) fd += 1.0;
    return fd;
}

static inline double fl_mod(double a, double b) {
    double r = fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}

static inline int64_t ipow(int64_t b, int64_t e) {
    if (e < 0) return b == 1 ? 1 : b == -1 ? ((e & 1) ? -1 : 1) : 0;
    int64_t r = 1;
    while (e) {
        if (e & 1) r = (int64_t)((uint64_t)r * (uint64_t)b);
        b = (int64_t)((uint64_t)b * (uint64_t)b);
        e >>= 1;
    }
    return r;
}

#define FMAX(x, y) (((x) > (y) || (x) != (x)) ? (x) : (y))
#define FMIN(x, y) (((x) < (y) || (x) != (x)) ? (x) : (y))
#define BITS(T) ((int64_t)sizeof(T) * 8)

/* Integer + - * wrap in two's complement like PyTorch's; computed in
 * uint64 since signed overflow is undefined in C (int8/int16 promote to
 * int and never overflow, int32/int64 can). */
#define IWRAP(x, y, OP) ((__typeof__(x))((uint64_t)(x) OP (uint64_t)(y)))
TH_FLOATS_A(SAME, add, x + y) TH_INTS_A(SAME, add, IWRAP(x, y, +))
BLOOP(add_b8, th_bool_t, th_bool_t, x | y)
TH_FLOATS_A(SAME, sub, x - y) TH_INTS_A(SAME, sub, IWRAP(x, y, -))
TH_FLOATS_A(SAME, mul, x * y) TH_INTS_A(SAME, mul, IWRAP(x, y, *))
BLOOP(mul_b8, th_bool_t, th_bool_t, x & y)
TH_FLOATS_A(SAME, div, x / y)
TH_FLOATS_A(SAME, floordiv, fl_floordiv(x, y))
TH_INTS_A(SAME, floordiv, IFLOORDIV(x, y))
TH_FLOATS_A(SAME, truncdiv, trunc(x / y))
TH_INTS_A(SAME, truncdiv, ITRUNCDIV(x, y))
TH_FLOATS_A(SAME, rem, fl_mod(x, y))
TH_INTS_A(SAME, rem, IMOD(x, y))
TH_FLOATS_A(SAME, fmod, fmod(x, y))
TH_INTS_A(SAME, fmod, IFMOD(x, y))
TH_FLOATS_A(SAME, pow, pow(x, y))
TH_INTS_A(SAME, pow, ipow(x, y))
TH_FLOATS_A(SAME, atan2, atan2(x, y))
TH_FLOATS_A(SAME, hypot, hypot(x, y))
TH_FLOATS_A(SAME, copysign, copysign(x, y))
TH_FLOATS_A(SAME, max, FMAX(x, y)) TH_INTS_A(SAME, max, x > y ? x : y)
TH_BOOL_A(SAME, max, x | y)
TH_FLOATS_A(SAME, min, FMIN(x, y)) TH_INTS_A(SAME, min, x < y ? x : y)
TH_BOOL_A(SAME, min, x & y)
TH_ALL_A(TOBOOL, eq, x == y)
TH_ALL_A(TOBOOL, ne, x != y)
TH_ALL_A(TOBOOL, lt, x < y)
TH_ALL_A(TOBOOL, le, x <= y)
TH_ALL_A(TOBOOL, gt, x > y)
TH_ALL_A(TOBOOL, ge, x >= y)
TH_ALL_A(TOBOOL, land, (x != 0) & (y != 0))
TH_ALL_A(TOBOOL, lor, (x != 0) | (y != 0))
TH_ALL_A(TOBOOL, lxor, (x != 0) ^ (y != 0))
TH_INTS_A(SAME, band, x & y) TH_BOOL_A(SAME, band, x & y)
TH_INTS_A(SAME, bor, x | y) TH_BOOL_A(SAME, bor, x | y)
TH_INTS_A(SAME, bxor, x ^ y) TH_BOOL_A(SAME, bxor, x ^ y)
TH_INTS_A(SAME, lshift,
          (y < 0 || y >= BITS(x)) ? 0 : (int64_t)((uint64_t)x << y))
TH_INTS_A(SAME, rshift,
          (y < 0 || y >= BITS(x)) ? (x < 0 ? -1 : 0) : x >> y)

#define ROW_ALL(N) {TH_ROW_FLOAT(N), TH_ROW_INT(N), TH_ROW_BOOL(N)}
#define ROW_NUM(N) {TH_ROW_FLOAT(N), TH_ROW_INT(N)}
static const th_loop_fn loops[TH_NUM_BINARY_OPS][TH_NUM_DTYPES] = {
    [TH_ADD] = ROW_ALL(add),
    [TH_SUB] = ROW_NUM(sub),
    [TH_MUL] = ROW_ALL(mul),
    [TH_DIV] = {TH_ROW_FLOAT(div)},
    [TH_FLOOR_DIVIDE] = ROW_NUM(floordiv),
    [TH_TRUNC_DIVIDE] = ROW_NUM(truncdiv),
    [TH_REMAINDER] = ROW_NUM(rem),
    [TH_FMOD] = ROW_NUM(fmod),
    [TH_POW] = ROW_NUM(pow),
    [TH_ATAN2] = {TH_ROW_FLOAT(atan2)},
    [TH_HYPOT] = {TH_ROW_FLOAT(hypot)},
    [TH_COPYSIGN] = {TH_ROW_FLOAT(copysign)},
    [TH_MAXIMUM] = ROW_ALL(max),
    [TH_MINIMUM] = ROW_ALL(min),
    [TH_EQ] = ROW_ALL(eq), [TH_NE] = ROW_ALL(ne), [TH_LT] = ROW_ALL(lt),
    [TH_LE] = ROW_ALL(le), [TH_GT] = ROW_ALL(gt), [TH_GE] = ROW_ALL(ge),
    [TH_LOGICAL_AND] = ROW_ALL(land),
    [TH_LOGICAL_OR] = ROW_ALL(lor),
    [TH_LOGICAL_XOR] = ROW_ALL(lxor),
    [TH_BITWISE_AND] = {TH_ROW_INT(band), TH_ROW_BOOL(band)},
    [TH_BITWISE_OR] = {TH_ROW_INT(bor), TH_ROW_BOOL(bor)},
    [TH_BITWISE_XOR] = {TH_ROW_INT(bxor), TH_ROW_BOOL(bxor)},
    [TH_LSHIFT] = {TH_ROW_INT(lshift)},
    [TH_RSHIFT] = {TH_ROW_INT(rshift)},
};

static const char *op_names[TH_NUM_BINARY_OPS] = {
    "add", "sub", "mul", "div", "floor_divide", "trunc_divide", "remainder",
    "fmod", "pow", "atan2", "maximum", "minimum", "eq", "ne", "lt", "le",
    "gt", "ge", "logical_and", "logical_or", "logical_xor", "bitwise_and",
    "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift",
    "hypot", "copysign"};

static int is_bool_result(int op) {
    return (op >= TH_EQ && op <= TH_GE) || op == TH_LOGICAL_AND ||
           op == TH_LOGICAL_OR || op == TH_LOGICAL_XOR;
}

static int is_float_op(int op) {
    return op == TH_DIV || op == TH_ATAN2 || op == TH_HYPOT ||
           op == TH_COPYSIGN;
}

/* ---- helpers shared with the other element-wise files -------------- */
int th__can_cast(int from, int to) {
    int cf = th__dtype_category(from), ct = th__dtype_category(to);
    return cf <= ct;
}

int th__check_internal_overlap(const th_tensor *out) {
    for (int i = 0; i < out->ndim; i++)
        if (out->strides[i] == 0 && out->sizes[i] > 1)
            return th__error(TH_ERR_RUNTIME,
                             "unsupported operation: more than one element of "
                             "the written-to tensor refers to a single memory "
                             "location. Please clone() the tensor before "
                             "performing the operation.");
    return TH_OK;
}

int th__check_out_shape(const th_tensor *out, int ndim, const int64_t *sizes) {
    int same = out->ndim == ndim;
    for (int i = 0; same && i < ndim; i++) same = out->sizes[i] == sizes[i];
    if (same) return th__check_internal_overlap(out);
    char b1[256], b2[256];
    return th__error(TH_ERR_RUNTIME,
                     "output with shape %s doesn't match the broadcast shape "
                     "%s", th__shape_str(out->ndim, out->sizes, b1),
                     th__shape_str(ndim, sizes, b2));
}

int th__partial_overlap(const th_tensor *a, const th_tensor *b) {
    if (a->storage != b->storage) return 0;
    if (a->offset == b->offset && a->dtype == b->dtype &&
        th__same_shape(a, b)) {
        int same = 1;
        for (int i = 0; i < a->ndim && same; i++)
            same = a->sizes[i] <= 1 || a->strides[i] == b->strides[i];
        if (same) return 0;
    }
    return 1; /* conservative: same storage, different layout */
}

/* ---- dispatch ------------------------------------------------------ */
/* Compute dtype of the loop and result dtype of the op. */
static int binary_types(int op, const th_tensor *a, const th_tensor *b,
                        int *compute, int *result) {
    if (op < 0 || op >= TH_NUM_BINARY_OPS)
        return th__error(TH_ERR_VALUE, "invalid binary op code %d", op);
    int rt = th_result_type(a, b);
    if (op == TH_HYPOT && !th_dtype_is_floating(rt))  /* as PyTorch: floats only */
        return th__error(TH_ERR_TYPE, "\"hypot_cpu\" not implemented for '%s'",
                         th__dtype_title(rt));
    if (is_float_op(op) && !th_dtype_is_floating(rt))
        rt = th_get_default_dtype();
    int ct = th__is_half(rt) ? TH_FLOAT32 : rt;
    if (!loops[op][ct]) {
        if (op == TH_SUB && ct == TH_BOOL)
            return th__error(TH_ERR_RUNTIME,
                             "Subtraction, the `-` operator, with two bool "
                             "tensors is not supported. Use the `^` or "
                             "`logical_xor()` operator instead.");
        return th__error(TH_ERR_TYPE, "\"%s_cpu\" not implemented for '%s'",
                         op_names[op], th__dtype_title(rt));
    }
    *compute = ct;
    *result = is_bool_result(op) ? TH_BOOL : rt;
    return TH_OK;
}

/* Integer division by zero and negative integer powers are errors. */
typedef struct { int found; int want_negative; } scan_ctx;
static void scan_loop(char **d, const int64_t *s, int64_t n, void *vctx) {
    scan_ctx *c = vctx;
    for (int64_t i = 0; i < n && !c->found; i++) {
        int64_t v = *(const int64_t *)(d[0] + i * s[0]);
        c->found = c->want_negative ? v < 0 : v == 0;
    }
}

/* A divisor is scanned as the loops see it, in the compute dtype ct: an
 * int8 tensor // 256 divides by (int8)256 == 0 (a hardware trap).  An
 * exponent is scanned as given: uint8 ** -2 is refused (as PyTorch), not
 * taken as ** 254. */
static int check_integer_rhs(int op, const th_tensor *b, int ct) {
    int div = op == TH_FLOOR_DIVIDE || op == TH_TRUNC_DIVIDE ||
              op == TH_REMAINDER || op == TH_FMOD;
    if (!div && op != TH_POW) return TH_OK;
    th_tensor *bc = th__cast(b, div ? ct : b->dtype);
    th_tensor *b64 = bc ? th__cast(bc, TH_INT64) : NULL;
    th_tensor_release(bc);
    if (!b64) return th_last_status();
    scan_ctx c = {0, op == TH_POW};
    const th_tensor *ops[1] = {b64};
    th_iter it;
    th__iter_init(&it, 1, ops);
    th__iter_run(&it, scan_loop, &c, 0);
    th_tensor_release(b64);
    if (c.found && div)
        return th__error(TH_ERR_RUNTIME, "ZeroDivisionError");
    if (c.found)
        return th__error(TH_ERR_RUNTIME,
                         "Integers to negative integer powers are not "
                         "allowed.");
    return TH_OK;
}

/* Runs loop fn over (out, a, b) broadcast to out's shape. */
static void run3(th_loop_fn fn, void *ctx, th_tensor *out, const th_tensor *a,
                 const th_tensor *b) {
    th_tensor va, vb;
    th__broadcast_view(&va, a, out->ndim, out->sizes);
    th__broadcast_view(&vb, b, out->ndim, out->sizes);
    const th_tensor *ops[3] = {out, &va, &vb};
    th_iter it;
    th__iter_init(&it, 3, ops);
    th__iter_run(&it, fn, ctx, 1);
}

/* Shared driver: converts inputs to the compute dtype, writes into out
 * directly when its dtype and layout allow, else through a temporary. */
static int binary_driver(th_loop_fn fn, void *ctx, int ct, int lt,
                         th_tensor *out, const th_tensor *a,
                         const th_tensor *b) {
    th_tensor *ca = th__cast(a, ct);
    th_tensor *cb = ca ? th__cast(b, ct) : NULL;
    int rc = TH_OK;
    if (!cb) {
        rc = th_last_status();
        goto done;
    }
    th_tensor *dst = out;
    if (out->dtype != lt || th__partial_overlap(out, ca) ||
        th__partial_overlap(out, cb))
        dst = th__empty_like(out, lt);
    if (!dst) {
        rc = th_last_status();
        goto done;
    }
    run3(fn, ctx, dst, ca, cb);
    th__bump_version(out);
    if (dst != out) {
        rc = th_copy(out, dst);
        th_tensor_release(dst);
    }
done:
    th_tensor_release(ca);
    th_tensor_release(cb);
    return rc;
}

static int check_out(th_tensor *out, int rt, const th_tensor *a,
                     const th_tensor *b) {
    int64_t shape[TH_MAX_DIMS];
    int nd = th_broadcast_shapes(a->ndim, a->sizes, b->ndim, b->sizes, shape);
    if (nd < 0) return th_last_status();
    if (th__check_out_shape(out, nd, shape)) return th_last_status();
    if (!th__can_cast(rt, out->dtype))
        return th__error(TH_ERR_RUNTIME,
                         "result type %s can't be cast to the desired output "
                         "type %s", th__dtype_title(rt),
                         th__dtype_title(out->dtype));
    return TH_OK;
}

int th_binary_out(int op, th_tensor *out, const th_tensor *a,
                  const th_tensor *b) {
    int ct = 0, rt = 0;
    if (binary_types(op, a, b, &ct, &rt)) return th_last_status();
    if (check_out(out, rt, a, b)) return th_last_status();
    if (th_dtype_is_integral(ct) && check_integer_rhs(op, b, ct))
        return th_last_status();
    int lt = is_bool_result(op) ? TH_BOOL : ct;
    return binary_driver(loops[op][ct], NULL, ct, lt, out, a, b);
}

static th_tensor *new_result(int rt, const th_tensor *a, const th_tensor *b) {
    int64_t shape[TH_MAX_DIMS];
    int nd = th_broadcast_shapes(a->ndim, a->sizes, b->ndim, b->sizes, shape);
    return nd < 0 ? NULL : th_empty(nd, shape, rt);
}

th_tensor *th_binary(int op, const th_tensor *a, const th_tensor *b) {
    int ct = 0, rt = 0;
    if (binary_types(op, a, b, &ct, &rt)) return NULL;
    th_tensor *out = new_result(rt, a, b);
    if (out && th_binary_out(op, out, a, b) != TH_OK) {
        th_tensor_release(out);
        return NULL;
    }
    return out;
}

/* ---- a + alpha * b ------------------------------------------------- */
typedef struct { double f; int64_t i; } alpha_ctx;
#define AXPY_F(E, T, S, U)                                                   \
    static void axpy_##S(char **d, const int64_t *s, int64_t n, void *vc) {  \
        const T al = (T)((const alpha_ctx *)vc)->f;                          \
        if (s[0] == sizeof(T) && s[1] == sizeof(T) && s[2] == sizeof(T)) {   \
            T *restrict o = (T *)d[0];                                       \
            const T *restrict x = (const T *)d[1], *restrict y = (const T *)d[2]; \
            for (int64_t i = 0; i < n; i++) o[i] = x[i] + al * y[i];         \
        } else {                                                             \
            for (int64_t i = 0; i < n; i++)                                  \
                *(T *)(d[0] + i * s[0]) = *(const T *)(d[1] + i * s[1]) +    \
                                          al * *(const T *)(d[2] + i * s[2]); \
        }                                                                    \
    }
#define AXPY_I(E, T, S, U)                                                   \
    static void axpy_##S(char **d, const int64_t *s, int64_t n, void *vc) {  \
        const int64_t al = ((const alpha_ctx *)vc)->i;                       \
        for (int64_t i = 0; i < n; i++)                                      \
            *(T *)(d[0] + i * s[0]) = (T)(*(const T *)(d[1] + i * s[1]) +    \
                                          al * *(const T *)(d[2] + i * s[2])); \
    }
TH_FLOATS_A(AXPY_F, 0)
TH_INTS_A(AXPY_I, 0)
static const th_loop_fn axpy_loops[TH_NUM_DTYPES] = {TH_ROW_FLOAT(axpy),
                                                     TH_ROW_INT(axpy)};

int th_add_scaled_out(th_tensor *out, const th_tensor *a, const th_tensor *b,
                      const th_tensor *alpha) {
    int ct = 0, rt = 0;
    if (binary_types(TH_ADD, a, b, &ct, &rt)) return th_last_status();
    if (check_out(out, rt, a, b)) return th_last_status();
    if (th_numel(alpha) != 1)
        return th__error(TH_ERR_RUNTIME, "alpha must be a single number");
    alpha_ctx ac = {th__scalar_double(alpha), th__scalar_int64(alpha)};
    if (th_dtype_is_floating(alpha->dtype) && !th_dtype_is_floating(rt))
        return th__error(TH_ERR_RUNTIME,
                         "For integral input tensors, argument alpha must "
                         "not be a floating point number.");
    if (ct == TH_BOOL || ac.f == 1.0)
        return th_binary_out(TH_ADD, out, a, b);
    return binary_driver(axpy_loops[ct], &ac, ct, ct, out, a, b);
}

th_tensor *th_add_scaled(const th_tensor *a, const th_tensor *b,
                         const th_tensor *alpha) {
    int ct = 0, rt = 0;
    if (binary_types(TH_ADD, a, b, &ct, &rt)) return NULL;
    th_tensor *out = new_result(rt, a, b);
    if (out && th_add_scaled_out(out, a, b, alpha) != TH_OK) {
        th_tensor_release(out);
        return NULL;
    }
    return out;
}
