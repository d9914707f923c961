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

/* one loop per row of th_ops.def and class of its compute dtypes */
#define GEN_KEEP(E, T, S, NAME, EXPR) BLOOP(NAME##_##S, T, T, EXPR)
#define GEN_FLOAT GEN_KEEP
#define GEN_ONLYF GEN_KEEP
#define GEN_PRED(E, T, S, NAME, EXPR) BLOOP(NAME##_##S, T, th_bool_t, EXPR)
#define TH_BINARY_OP(CODE, name, c, kind, flags, f, i, b) \
    TH_IF_F_##c(TH_FLOATS_A(GEN_##kind, name, f))        \
    TH_IF_I_##c(TH_INTS_A(GEN_##kind, name, i))          \
    TH_IF_B_##c(TH_BOOL_A(GEN_##kind, name, b))
#include "th_ops.def"

static const th_loop_fn loops[TH_NUM_BINARY_OPS][TH_NUM_DTYPES] = {
#define TH_BINARY_OP(CODE, name, c, ...)                                   \
    [TH_##CODE] = {TH_IF_F_##c(TH_ROW_FLOAT(name), ) TH_IF_I_##c(TH_ROW_INT(name), ) \
                   TH_IF_B_##c(TH_ROW_BOOL(name))},
#include "th_ops.def"
};

/* each op's TH_OPF_ bits (op already checked to be in range) */
static const int op_flag_table[TH_NUM_BINARY_OPS] = {
#define TH_BINARY_OP(CODE, name, c, kind, flags, ...) [TH_##CODE] = TH_KIND_##kind | (flags),
#include "th_ops.def"
};
static inline int op_flags(int op) { return op_flag_table[op]; }

/* the loop for op in compute dtype ct, NULL where the op has none */
static th_loop_fn binary_loop(int op, int ct) {
    return th_dtype_is_complex(ct) ? th__complex_binary_loop(op, ct) : loops[op][ct];
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
    int flags = op_flags(op);
    if (th_dtype_is_complex(rt)) {
        if (!binary_loop(op, rt))
            return th__error(TH_ERR_TYPE, "\"%s_cpu\" not implemented for '%s'",
                             th__op_name(TH_OP_BINARY, op), th__dtype_title(rt));
        *compute = rt;
        *result = (flags & TH_OPF_PREDICATE) ? TH_BOOL : rt;
        return TH_OK;
    }
    if ((flags & TH_OPF_FLOAT_ONLY) && !th_dtype_is_floating(rt))
        return th__error(TH_ERR_TYPE, "\"%s_cpu\" not implemented for '%s'",
                         th__op_name(TH_OP_BINARY, op), th__dtype_title(rt));
    if ((flags & TH_OPF_FLOAT) && !th_dtype_is_floating(rt))
        rt = th_get_default_dtype();
    int ct = th__is_half(rt) ? TH_FLOAT32 : rt;
    if (!loops[op][ct]) {
        if (op == TH_SUB && ct == TH_BOOL)
            return th__error(TH_ERR_RUNTIME,
                             "Subtraction, the `-` operator, with two bool "
                             "tensors is not supported. Use the `^` or "
                             "`logical_xor()` operator instead.");
        return th__error(TH_ERR_TYPE, "\"%s_cpu\" not implemented for '%s'",
                         th__op_name(TH_OP_BINARY, op), th__dtype_title(rt));
    }
    *compute = ct;
    *result = (flags & TH_OPF_PREDICATE) ? TH_BOOL : rt;
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
    int div = (op_flags(op) & TH_OPF_DIVISOR) != 0;
    if (!div && !(op_flags(op) & TH_OPF_EXPONENT)) return TH_OK;
    th_tensor *bc = th__cast(b, div ? ct : b->dtype);
    th_tensor *b64 = bc ? th__cast(bc, TH_INT64) : NULL;
    th_tensor_release(bc);
    if (!b64) return th_last_status();
    scan_ctx c = {0, !div};
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
    int lt = (op_flags(op) & TH_OPF_PREDICATE) ? TH_BOOL : ct;
    return binary_driver(binary_loop(op, ct), NULL, ct, lt, out, a, b);
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
    if (th_dtype_is_complex(rt)) { /* out = a + (alpha * b): two passes */
        th_tensor *scaled = th_binary(TH_MUL, b, alpha);
        int rc = scaled ? th_binary_out(TH_ADD, out, a, scaled) : th_last_status();
        th_tensor_release(scaled);
        return rc;
    }
    if (th_dtype_is_complex(alpha->dtype))
        return th__error(TH_ERR_RUNTIME, "For non-complex input tensors, argument alpha "
                         "must not be a complex number.");
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
