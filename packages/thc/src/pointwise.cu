// Element-wise operations on device tensors: conversion copies and fills,
// unary and binary ops with broadcasting and libTH's type promotion,
// a + alpha * b, clamp and where.  The dtype rules are libTH's; each op
// runs one kernel per compute dtype with the op code as an argument.
#include "ops.cuh"

using namespace thc;

namespace {

// geometry of (out, inputs...) broadcast to out's shape; host scalars take
// out's place (their kernel operand ignores it)
thc__geom geometry(const thc_tensor *out, int n, const thc_tensor *const *in) {
    const thc_tensor *ops[THC__MAX_OPS] = {out};
    for (int k = 0; k < n; k++) ops[k + 1] = thc__on_host(in[k]) ? out : in[k];
    thc__geom g;
    thc__geom_init(&g, out->ndim, out->sizes, n + 1, ops);
    g.offsets[0] = 0;   // kernels get pointers that include the offsets
    for (int k = 0; k < n; k++) g.offsets[k + 1] = 0;
    return g;
}

// ---- conversion copy and fill -----------------------------------------------
template <typename U> struct ConvertFn {
    U *out;
    const void *src;
    int src_dtype;
    Offsets g;
    THC_HD void operator()(int64_t i) const {
        int64_t off[2];
        g.at<2>(i, off);
        out[off[0]] = load_as<U>(src, src_dtype, off[1]);
    }
};

template <typename U> struct FillFn {
    U *out;
    U value;
    Offsets g;
    THC_HD void operator()(int64_t i) const {
        int64_t off[1];
        g.at<1>(i, off);
        out[off[0]] = value;
    }
};

int check_internal_overlap(const thc_tensor *out) {
    for (int i = 0; i < out->ndim; i++)
        if (out->strides[i] == 0 && out->sizes[i] > 1)
            return thc__error(THC_ERR_RUNTIME,
                              "unsupported operation: more than one element of the written-to "
                              "tensor refers to a single memory location. Please clone() the "
                              "tensor before performing the operation.");
    return THC_OK;
}

// out = src (already on the device, broadcastable to out) converted
int copy_kernel(thc_tensor *out, const thc_tensor *src) {
    bool same_shape = out->ndim == src->ndim;
    for (int d = 0; same_shape && d < out->ndim; d++) same_shape = out->sizes[d] == src->sizes[d];
    if (same_shape && out->dtype == src->dtype && thc_is_contiguous(out) &&
        thc_is_contiguous(src)) {   // one device-to-device transfer
        size_t nbytes = (size_t)(thc_numel(out) * thc_dtype_itemsize(out->dtype));
        return nbytes ? thc__memcpy(thc__ptr(out), thc__ptr(src), nbytes, THC__D2D,
                                    thc__stream())
                      : THC_OK;
    }
    thc__geom g = geometry(out, 1, &src);
    int rc = THC_OK;
    switch (out->dtype) {
        THC_CASES_ALL(rc = for_each("copy", g.numel,
                                    ConvertFn<scalar_t>{(scalar_t *)thc__ptr(out), thc__ptr(src),
                                                        src->dtype, Offsets::of(g)},
                                    thc__stream()))
    }
    return rc;
}

int fill_value(thc_tensor *t, const thc_tensor *value) {
    const thc_tensor *none[1] = {t};
    thc__geom g = geometry(t, 0, none);
    int rc = THC_OK;
    switch (t->dtype) {
        THC_CASES_ALL(rc = for_each("fill", g.numel,
                                    FillFn<scalar_t>{(scalar_t *)thc__ptr(t),
                                                     host_value<scalar_t>(value), Offsets::of(g)},
                                    thc__stream()))
    }
    return rc;
}

}  // namespace

// ---- shared helpers ------------------------------------------------------------
extern "C" int thc__can_cast(int from, int to) {
    return thc__dtype_category(from) <= thc__dtype_category(to);
}

extern "C" int thc__check_out_shape(const thc_tensor *out, int ndim, const int64_t *sizes) {
    int same = out->ndim == ndim;
    for (int i = 0; same && i < ndim; i++) same = out->sizes[i] == sizes[i];
    if (same) return check_internal_overlap(out);
    char b1[256], b2[256];
    return thc__error(THC_ERR_RUNTIME, "output with shape %s doesn't match the broadcast shape %s",
                      thc__shape_str(out->ndim, out->sizes, b1), thc__shape_str(ndim, sizes, b2));
}

extern "C" int thc__partial_overlap(const thc_tensor *a, const thc_tensor *b) {
    if (a->storage != b->storage) return 0;
    if (a->offset == b->offset && a->dtype == b->dtype && thc__same_shape(a, b)) {
        int same = 1;
        for (int i = 0; i < a->ndim && same; i++)
            same = a->sizes[i] <= 1 || a->strides[i] == b->strides[i];
        if (same) return 0;
    }
    return 1;   // conservative: same storage, different layout
}

extern "C" thc_tensor *thc__cast(const thc_tensor *t, int dtype) {
    if (t->dtype == dtype) {
        thc_tensor_retain((thc_tensor *)t);
        return (thc_tensor *)t;
    }
    if (thc__on_host(t)) {
        thc_tensor *s = thc_dtype_is_floating(t->dtype) || thc_dtype_is_floating(dtype)
                            ? thc_scalar_double(thc__scalar_double(t), dtype)
                            : thc_scalar_int64(thc__scalar_int64(t), dtype);
        if (s) s->flags = t->flags;
        return s;
    }
    return thc_to_dtype(t, dtype);
}

// ---- copies and fills ------------------------------------------------------------
extern "C" THC_API int thc_copy(thc_tensor *dst, const thc_tensor *src) {
    if (thc__check_device("copy_", "the destination", dst)) return thc_last_status();
    if (!src) return thc__error(THC_ERR_VALUE, "copy_: the source is NULL");
    int64_t shape[THC_MAX_DIMS];
    int nd = thc_broadcast_shapes(dst->ndim, dst->sizes, src->ndim, src->sizes, shape);
    if (nd < 0) return thc_last_status();
    char b1[256], b2[256];
    for (int i = 0; i < nd; i++)
        if (nd != dst->ndim || shape[i] != dst->sizes[i])
            return thc__error(THC_ERR_RUNTIME,
                              "The size of the source %s cannot be broadcast to the destination "
                              "%s", thc__shape_str(src->ndim, src->sizes, b1),
                              thc__shape_str(dst->ndim, dst->sizes, b2));
    if (check_internal_overlap(dst)) return thc_last_status();
    if (!thc__on_host(src) && src->storage->device != dst->storage->device)
        return thc__copy_between_devices(dst, src);
    int rc;
    if (thc__on_host(src)) {
        rc = fill_value(dst, src);
    } else if (thc__partial_overlap(dst, src)) {
        thc_tensor *tmp = thc_clone(src);
        if (!tmp) return thc_last_status();
        rc = copy_kernel(dst, tmp);
        thc_tensor_release(tmp);
    } else {
        rc = copy_kernel(dst, src);
    }
    if (!rc) thc__bump_version(dst);
    return rc;
}

extern "C" THC_API thc_tensor *thc_clone(const thc_tensor *t) {
    if (thc__check_device("clone", "the tensor", t)) return NULL;
    thc_tensor *c = thc__empty_like(t, t->dtype);
    if (c && copy_kernel(c, t)) {
        thc_tensor_release(c);
        return NULL;
    }
    return c;
}

extern "C" THC_API thc_tensor *thc_contiguous(const thc_tensor *t) {
    if (thc__check_device("contiguous", "the tensor", t)) return NULL;
    if (thc_is_contiguous(t)) {
        thc_tensor_retain((thc_tensor *)t);
        return (thc_tensor *)t;
    }
    return thc_clone(t);
}

extern "C" THC_API thc_tensor *thc_to_dtype(const thc_tensor *t, int dtype) {
    if (thc__check_device("to", "the tensor", t)) return NULL;
    if (thc__check_dtype(dtype)) return NULL;
    thc_tensor *c = thc__empty_like(t, dtype);
    if (c && copy_kernel(c, t)) {
        thc_tensor_release(c);
        return NULL;
    }
    return c;
}

extern "C" THC_API int thc_fill(thc_tensor *t, const thc_tensor *value) {
    if (thc__check_device("fill_", "the tensor", t)) return thc_last_status();
    if (!value || thc_numel(value) != 1)
        return thc__error(THC_ERR_RUNTIME, "fill_ only supports 0-dimension value tensor but got "
                          "tensor with %d dimensions.", value ? value->ndim : 0);
    if (check_internal_overlap(t)) return thc_last_status();
    int rc;
    if (thc__on_host(value)) {
        rc = fill_value(t, value);
    } else {   // a device value: broadcast-copy it
        thc_tensor *v = thc_view(value, 0, NULL);
        if (!v) return thc_last_status();
        rc = copy_kernel(t, v);
        thc_tensor_release(v);
    }
    if (!rc) thc__bump_version(t);
    return rc;
}

extern "C" THC_API int thc_fill_double(thc_tensor *t, double v) {
    thc_tensor *s = thc_scalar_double(v, THC_FLOAT64);
    if (!s) return thc_last_status();
    int rc = thc_fill(t, s);
    thc_tensor_release(s);
    return rc;
}

extern "C" THC_API int thc_zero(thc_tensor *t) { return thc_fill_double(t, 0.0); }

// ---- unary -----------------------------------------------------------------------
namespace {

bool unary_is_float_op(int op) { return thc__op_flags(THC_OP_UNARY, op) & THC_OPF_FLOAT; }

bool unary_is_predicate(int op) { return thc__op_flags(THC_OP_UNARY, op) & THC_OPF_PREDICATE; }

int unary_types(int op, int dtype, int *compute, int *result) {
    if (op < 0 || op >= THC_NUM_UNARY_OPS)
        return thc__error(THC_ERR_VALUE, "invalid unary op code %d", op);
    int fl = thc_dtype_is_floating(dtype);
    if (unary_is_float_op(op)) {
        *result = fl ? dtype : thc_get_default_dtype();
    } else if (unary_is_predicate(op)) {
        *result = THC_BOOL;
    } else {
        *result = op == THC_SQUARE && dtype == THC_BOOL ? THC_INT64 : dtype;
        if (op == THC_NEG && dtype == THC_BOOL)
            return thc__error(THC_ERR_RUNTIME,
                              "Negation, the `-` operator, on a bool tensor is not supported. "
                              "If you are trying to invert a mask, use the `~` or "
                              "`logical_not()` operator instead.");
    }
    int src = unary_is_float_op(op) || op == THC_SQUARE ? *result : dtype;
    *compute = thc__is_half(src) ? THC_FLOAT32 : src;
    if (!thc__op_has_dtype(THC_OP_UNARY, op, *compute))   // a class the op's row lacks
        return thc__error(THC_ERR_TYPE, "\"%s_cuda\" not implemented for '%s'",
                          thc__op_name(THC_OP_UNARY, op), thc__dtype_title(dtype));
    return THC_OK;
}

template <typename T> struct UnaryFn {
    T *out;
    const T *in;
    int op;
    Offsets g;
    THC_HD void operator()(int64_t i) const {
        int64_t off[2];
        g.at<2>(i, off);
        out[off[0]] = unary_value<T>(op, in[off[1]]);
    }
};

template <typename T> struct UnaryPredFn {
    bool *out;
    const T *in;
    int op;
    Offsets g;
    THC_HD void operator()(int64_t i) const {
        int64_t off[2];
        g.at<2>(i, off);
        out[off[0]] = unary_predicate<T>(op, in[off[1]]);
    }
};

int unary_kernel(int op, thc_tensor *dst, const thc_tensor *in) {
    thc__geom g = geometry(dst, 1, &in);
    int rc = THC_OK;
    const char *what = thc__op_name(THC_OP_UNARY, op);
    if (unary_is_predicate(op)) {
        switch (in->dtype) {
            THC_CASES_COMPUTE(rc = for_each(what, g.numel,
                                            UnaryPredFn<scalar_t>{(bool *)thc__ptr(dst),
                                                                  (const scalar_t *)thc__ptr(in),
                                                                  op, Offsets::of(g)},
                                            thc__stream()))
        }
    } else {
        switch (in->dtype) {
            THC_CASES_COMPUTE(rc = for_each(what, g.numel,
                                            UnaryFn<scalar_t>{(scalar_t *)thc__ptr(dst),
                                                              (const scalar_t *)thc__ptr(in), op,
                                                              Offsets::of(g)},
                                            thc__stream()))
        }
    }
    return rc;
}

// Writes through a temporary when out's dtype or layout does not allow
// the kernel to write it directly.  kernel(dst) fills a tensor of dtype lt.
template <typename K>
int run_into(thc_tensor *out, int lt, const thc_tensor *const *inputs, int n, K kernel) {
    thc_tensor *dst = out;
    bool overlap = false;
    for (int k = 0; k < n; k++)
        overlap = overlap || (!thc__on_host(inputs[k]) && thc__partial_overlap(out, inputs[k]));
    if (out->dtype != lt || overlap) dst = thc__empty_like(out, lt);
    if (!dst) return thc_last_status();
    int rc = kernel(dst);
    if (!rc) thc__bump_version(out);
    if (dst != out) {
        if (!rc) rc = thc_copy(out, dst);
        thc_tensor_release(dst);
    }
    return rc;
}

}  // namespace

extern "C" THC_API int thc_unary_out(int op, thc_tensor *out, const thc_tensor *a) {
    if (thc__check_device("unary op", "out", out) || thc__check_device("unary op", "input", a))
        return thc_last_status();
    int ct = 0, rt = 0;
    if (unary_types(op, a->dtype, &ct, &rt)) return thc_last_status();
    if (thc__check_out_shape(out, a->ndim, a->sizes)) return thc_last_status();
    if (!thc__can_cast(rt, out->dtype))
        return thc__error(THC_ERR_RUNTIME,
                          "result type %s can't be cast to the desired output type %s",
                          thc__dtype_title(rt), thc__dtype_title(out->dtype));
    int lt = unary_is_predicate(op) ? THC_BOOL : ct;
    thc_tensor *in = thc__cast(a, ct);
    if (!in) return thc_last_status();
    const thc_tensor *ins[1] = {in};
    int rc = run_into(out, lt, ins, 1, [&](thc_tensor *dst) { return unary_kernel(op, dst, in); });
    thc_tensor_release(in);
    return rc;
}

extern "C" THC_API thc_tensor *thc_unary(int op, const thc_tensor *a) {
    if (thc__check_device("unary op", "input", a)) return NULL;
    int ct = 0, rt = 0;
    if (unary_types(op, a->dtype, &ct, &rt)) return NULL;
    thc_tensor *out = thc__empty_like(a, rt);
    if (out && thc_unary_out(op, out, a)) {
        thc_tensor_release(out);
        return NULL;
    }
    return out;
}

// ---- binary ----------------------------------------------------------------------
namespace {

int binary_flags(int op) { return thc__op_flags(THC_OP_BINARY, op); }

int binary_types(int op, const thc_tensor *a, const thc_tensor *b, int *compute, int *result) {
    if (op < 0 || op >= THC_NUM_BINARY_OPS)
        return thc__error(THC_ERR_VALUE, "invalid binary op code %d", op);
    int rt = thc_result_type(a, b);
    int flags = binary_flags(op);
    if ((flags & THC_OPF_FLOAT_ONLY) && !thc_dtype_is_floating(rt))
        return thc__error(THC_ERR_TYPE, "\"%s_cuda\" not implemented for '%s'",
                          thc__op_name(THC_OP_BINARY, op), thc__dtype_title(rt));
    if ((flags & THC_OPF_FLOAT) && !thc_dtype_is_floating(rt)) rt = thc_get_default_dtype();
    int ct = thc__is_half(rt) ? THC_FLOAT32 : rt;
    if (!thc__op_has_dtype(THC_OP_BINARY, op, ct)) {
        if (op == THC_SUB && ct == THC_BOOL)
            return thc__error(THC_ERR_RUNTIME,
                              "Subtraction, the `-` operator, with two bool tensors is not "
                              "supported. Use the `^` or `logical_xor()` operator instead.");
        return thc__error(THC_ERR_TYPE, "\"%s_cuda\" not implemented for '%s'",
                          thc__op_name(THC_OP_BINARY, op), thc__dtype_title(rt));
    }
    *compute = ct;
    *result = (flags & THC_OPF_PREDICATE) ? THC_BOOL : rt;
    return THC_OK;
}

template <typename T> struct BinaryFn {
    T *out;
    In<T> a, b;
    int op;
    Offsets g;
    THC_HD void operator()(int64_t i) const {
        int64_t off[3];
        g.at<3>(i, off);
        out[off[0]] = binary_value<T>(op, a.at(off[1]), b.at(off[2]));
    }
};

// the hot arithmetic ops get kernels of their own (no switch per element)
template <typename T, int OP> struct FixedBinaryFn {
    T *out;
    In<T> a, b;
    Offsets g;
    THC_HD void operator()(int64_t i) const {
        int64_t off[3];
        g.at<3>(i, off);
        out[off[0]] = binary_value<T>(OP, a.at(off[1]), b.at(off[2]));
    }
};

template <typename T> struct BinaryPredFn {
    bool *out;
    In<T> a, b;
    int op;
    Offsets g;
    THC_HD void operator()(int64_t i) const {
        int64_t off[3];
        g.at<3>(i, off);
        out[off[0]] = binary_predicate<T>(op, a.at(off[1]), b.at(off[2]));
    }
};

template <typename T>
int binary_typed(int op, thc_tensor *dst, const thc_tensor *a, const thc_tensor *b) {
    const thc_tensor *ins[2] = {a, b};
    thc__geom g = geometry(dst, 2, ins);
    Offsets o = Offsets::of(g);
    const char *what = thc__op_name(THC_OP_BINARY, op);
    In<T> x = operand<T>(a), y = operand<T>(b);
    if (binary_flags(op) & THC_OPF_PREDICATE)
        return for_each(what, g.numel, BinaryPredFn<T>{(bool *)thc__ptr(dst), x, y, op, o},
                        thc__stream());
    T *out = (T *)thc__ptr(dst);
    switch (op) {
    case THC_ADD: return for_each(what, g.numel, FixedBinaryFn<T, THC_ADD>{out, x, y, o}, thc__stream());
    case THC_SUB: return for_each(what, g.numel, FixedBinaryFn<T, THC_SUB>{out, x, y, o}, thc__stream());
    case THC_MUL: return for_each(what, g.numel, FixedBinaryFn<T, THC_MUL>{out, x, y, o}, thc__stream());
    case THC_DIV: return for_each(what, g.numel, FixedBinaryFn<T, THC_DIV>{out, x, y, o}, thc__stream());
    default: return for_each(what, g.numel, BinaryFn<T>{out, x, y, op, o}, thc__stream());
    }
}

int binary_kernel(int op, int ct, thc_tensor *dst, const thc_tensor *a, const thc_tensor *b) {
    int rc = THC_OK;
    switch (ct) { THC_CASES_COMPUTE(rc = binary_typed<scalar_t>(op, dst, a, b)) }
    return rc;
}

// Integer division by zero and negative integer powers are errors (as in
// libTH); the check reads one flag back from the device.
int check_integer_rhs(int op, const thc_tensor *b) {
    bool div = binary_flags(op) & THC_OPF_DIVISOR;
    if (!div && !(binary_flags(op) & THC_OPF_EXPONENT)) return THC_OK;
    if (thc__on_host(b)) {
        int64_t v = thc__scalar_int64(b);
        if (div ? v == 0 : v < 0)
            return thc__error(THC_ERR_RUNTIME, div ? "ZeroDivisionError"
                              : "Integers to negative integer powers are not allowed.");
        return THC_OK;
    }
    thc_tensor *zero = thc_scalar_int64(0, THC_INT64);
    if (!zero) return thc_last_status();
    thc_tensor *bad = thc_binary(div ? THC_EQ : THC_LT, b, zero);
    thc_tensor_release(zero);
    if (!bad) return thc_last_status();
    int64_t found = 0;
    int rc = THC_OK;
    if (thc_numel(bad) > 0) {
        thc_tensor *any = thc_reduce(THC_RED_ANY, bad, 0, NULL, 0, -1);
        rc = any ? thc_get_int64(any, 0, &found) : thc_last_status();
        thc_tensor_release(any);
    }
    thc_tensor_release(bad);
    if (rc) return rc;
    if (found && div) return thc__error(THC_ERR_RUNTIME, "ZeroDivisionError");
    if (found)
        return thc__error(THC_ERR_RUNTIME, "Integers to negative integer powers are not allowed.");
    return THC_OK;
}

int check_binary_devices(const char *what, const thc_tensor *a, const thc_tensor *b) {
    if (!a || !b) return thc__error(THC_ERR_VALUE, "%s: an operand is NULL", what);
    if (thc__on_host(a) && thc__on_host(b))
        return thc__error(THC_ERR_RUNTIME, "%s: both operands are host scalars; one must be a "
                          "CUDA tensor", what);
    int da = a->storage->device, db = b->storage->device;
    if (da >= 0 && db >= 0 && da != db)
        return thc__error(THC_ERR_RUNTIME, "Expected all tensors to be on the same device, but "
                          "found at least two devices, cuda:%d and cuda:%d!", da, db);
    for (const thc_tensor *t : {a, b}) {
        if (thc__on_host(t) && t->ndim != 0)
            return thc__error(THC_ERR_RUNTIME, "%s: a host operand must be a 0-d scalar", what);
        if (!thc__on_host(t) && thc__check_device(what, "an operand", t))
            return thc_last_status();
    }
    return THC_OK;
}

}  // namespace

extern "C" THC_API int thc_binary_out(int op, thc_tensor *out, const thc_tensor *a,
                                      const thc_tensor *b) {
    if (thc__check_device("binary op", "out", out) || check_binary_devices("binary op", a, b))
        return thc_last_status();
    int ct = 0, rt = 0;
    if (binary_types(op, a, b, &ct, &rt)) return thc_last_status();
    int64_t shape[THC_MAX_DIMS];
    int nd = thc_broadcast_shapes(a->ndim, a->sizes, b->ndim, b->sizes, shape);
    if (nd < 0 || thc__check_out_shape(out, nd, shape)) return thc_last_status();
    if (!thc__can_cast(rt, out->dtype))
        return thc__error(THC_ERR_RUNTIME,
                          "result type %s can't be cast to the desired output type %s",
                          thc__dtype_title(rt), thc__dtype_title(out->dtype));
    if (thc_dtype_is_integral(ct) && check_integer_rhs(op, b)) return thc_last_status();
    int lt = (binary_flags(op) & THC_OPF_PREDICATE) ? THC_BOOL : ct;
    thc_tensor *ca = thc__cast(a, ct), *cb = ca ? thc__cast(b, ct) : NULL;
    int rc = THC_OK;
    if (!cb) {
        rc = thc_last_status();
    } else {
        const thc_tensor *ins[2] = {ca, cb};
        rc = run_into(out, lt, ins, 2,
                      [&](thc_tensor *dst) { return binary_kernel(op, ct, dst, ca, cb); });
    }
    thc_tensor_release(ca);
    thc_tensor_release(cb);
    return rc;
}

extern "C" THC_API thc_tensor *thc_binary(int op, const thc_tensor *a, const thc_tensor *b) {
    if (check_binary_devices("binary op", a, b)) return NULL;
    int ct = 0, rt = 0;
    if (binary_types(op, a, b, &ct, &rt)) return NULL;
    int64_t shape[THC_MAX_DIMS];
    int nd = thc_broadcast_shapes(a->ndim, a->sizes, b->ndim, b->sizes, shape);
    if (nd < 0) return NULL;
    thc_tensor *out = thc_empty(nd, shape, rt);
    if (out && thc_binary_out(op, out, a, b)) {
        thc_tensor_release(out);
        return NULL;
    }
    return out;
}

// ---- a + alpha * b, clamp, where ---------------------------------------------------
namespace {

template <typename T> struct AxpyFn {
    T *out;
    In<T> a, b;
    T alpha;
    Offsets g;
    THC_HD void operator()(int64_t i) const {
        int64_t off[3];
        g.at<3>(i, off);
        out[off[0]] = (T)(a.at(off[1]) + alpha * b.at(off[2]));
    }
};

template <typename T> struct ClampFn {
    T *out;
    In<T> a, lo, hi;
    bool has_lo, has_hi;
    Offsets g;
    THC_HD void operator()(int64_t i) const {
        int64_t off[4];
        g.at<4>(i, off);
        T x = a.at(off[1]);
        if (x != x) {   // NaN stays
            out[off[0]] = x;
            return;
        }
        if (has_lo) {
            T l = lo.at(off[2]);
            x = (l != l) ? l : (x < l ? l : x);
        }
        if (has_hi) {
            T h = hi.at(off[3]);
            x = (h != h) ? h : (x > h ? h : x);
        }
        out[off[0]] = x;
    }
};

template <typename T> struct WhereFn {
    T *out;
    In<bool> cond;
    In<T> a, b;
    Offsets g;
    THC_HD void operator()(int64_t i) const {
        int64_t off[4];
        g.at<4>(i, off);
        out[off[0]] = cond.at(off[1]) ? a.at(off[2]) : b.at(off[3]);
    }
};

// clamp's result dtype (a against lo, then against hi) and broadcast shape
int clamp_geometry(const thc_tensor *a, const thc_tensor *lo, const thc_tensor *hi, int *rt,
                   int *nd, int64_t *shape) {
    *rt = a->dtype;
    if (lo) *rt = thc_result_type(a, lo);
    if (hi) {
        thc_tensor tmp = *a;   // the type of (a, lo) against hi
        tmp.dtype = *rt;
        *rt = thc_result_type(&tmp, hi);
    }
    *nd = a->ndim;
    for (int i = 0; i < *nd; i++) shape[i] = a->sizes[i];
    for (const thc_tensor *t : {lo, hi})
        if (t && (*nd = thc_broadcast_shapes(*nd, shape, t->ndim, t->sizes, shape)) < 0)
            return thc_last_status();
    return THC_OK;
}

}  // namespace

extern "C" THC_API int thc_add_scaled_out(thc_tensor *out, const thc_tensor *a,
                                          const thc_tensor *b, const thc_tensor *alpha) {
    if (thc__check_device("add", "out", out) || check_binary_devices("add", a, b))
        return thc_last_status();
    if (!alpha || !thc__on_host(alpha))
        return thc__error(THC_ERR_VALUE, "add: alpha must be a host scalar");
    int ct = 0, rt = 0;
    if (binary_types(THC_ADD, a, b, &ct, &rt)) return thc_last_status();
    if (!thc_dtype_is_floating(ct) && thc_dtype_is_floating(alpha->dtype))
        return thc__error(THC_ERR_RUNTIME, "For integral input tensors, argument alpha must not "
                          "be a floating point number.");
    if (ct != THC_BOOL && alpha->dtype == THC_BOOL)
        return thc__error(THC_ERR_RUNTIME, "Boolean alpha only supported for Boolean results.");
    int64_t shape[THC_MAX_DIMS];
    int nd = thc_broadcast_shapes(a->ndim, a->sizes, b->ndim, b->sizes, shape);
    if (nd < 0 || thc__check_out_shape(out, nd, shape)) return thc_last_status();
    if (!thc__can_cast(rt, out->dtype))
        return thc__error(THC_ERR_RUNTIME,
                          "result type %s can't be cast to the desired output type %s",
                          thc__dtype_title(rt), thc__dtype_title(out->dtype));
    thc_tensor *ca = thc__cast(a, ct), *cb = ca ? thc__cast(b, ct) : NULL;
    int rc = THC_OK;
    if (!cb) {
        rc = thc_last_status();
    } else {
        const thc_tensor *ins[2] = {ca, cb};
        rc = run_into(out, ct, ins, 2, [&](thc_tensor *dst) {
            thc__geom g = geometry(dst, 2, ins);
            int r = THC_OK;
            if (ct == THC_BOOL) {   // a or (alpha and b)
                if (thc__scalar_double(alpha) != 0) return binary_kernel(THC_ADD, ct, dst, ca, cb);
                thc_tensor *no = thc_scalar_int64(0, THC_BOOL);
                int r2 = no ? binary_kernel(THC_ADD, ct, dst, ca, no) : thc_last_status();
                thc_tensor_release(no);
                return r2;
            }
            switch (ct) {
                THC_CASES_NUMBER(r = for_each("add", g.numel,
                                              AxpyFn<scalar_t>{(scalar_t *)thc__ptr(dst),
                                                               operand<scalar_t>(ca),
                                                               operand<scalar_t>(cb),
                                                               host_value<scalar_t>(alpha),
                                                               Offsets::of(g)},
                                              thc__stream()))
            }
            return r;
        });
    }
    thc_tensor_release(ca);
    thc_tensor_release(cb);
    return rc;
}

extern "C" THC_API thc_tensor *thc_add_scaled(const thc_tensor *a, const thc_tensor *b,
                                              const thc_tensor *alpha) {
    if (check_binary_devices("add", a, b)) return NULL;
    int ct = 0, rt = 0;
    if (binary_types(THC_ADD, a, b, &ct, &rt)) return NULL;
    int64_t shape[THC_MAX_DIMS];
    int nd = thc_broadcast_shapes(a->ndim, a->sizes, b->ndim, b->sizes, shape);
    if (nd < 0) return NULL;
    thc_tensor *out = thc_empty(nd, shape, rt);
    if (out && thc_add_scaled_out(out, a, b, alpha)) {
        thc_tensor_release(out);
        return NULL;
    }
    return out;
}

extern "C" THC_API int thc_clamp_out(thc_tensor *out, const thc_tensor *a,
                                     const thc_tensor *lo, const thc_tensor *hi) {
    if (thc__check_device("clamp", "out", out) || thc__check_device("clamp", "input", a))
        return thc_last_status();
    if (!lo && !hi)
        return thc__error(THC_ERR_RUNTIME, "torch.clamp: At least one of 'min' or 'max' must "
                          "not be None");
    int rt, nd;
    int64_t shape[THC_MAX_DIMS];
    if (clamp_geometry(a, lo, hi, &rt, &nd, shape)) return thc_last_status();
    if (rt == THC_BOOL)
        return thc__error(THC_ERR_TYPE, "\"clamp_cuda\" not implemented for 'Bool'");
    int ct = thc__is_half(rt) ? THC_FLOAT32 : rt;
    if (thc__check_out_shape(out, nd, shape)) return thc_last_status();
    if (!thc__can_cast(rt, out->dtype))
        return thc__error(THC_ERR_RUNTIME,
                          "result type %s can't be cast to the desired output type %s",
                          thc__dtype_title(rt), thc__dtype_title(out->dtype));
    thc_tensor *ca = thc__cast(a, ct);
    thc_tensor *cl = ca && lo ? thc__cast(lo, ct) : NULL;
    thc_tensor *ch = ca && hi ? thc__cast(hi, ct) : NULL;
    int rc = THC_OK;
    if (!ca || (lo && !cl) || (hi && !ch)) {
        rc = thc_last_status();
    } else {
        const thc_tensor *ins[3] = {ca, cl ? cl : ca, ch ? ch : ca};
        rc = run_into(out, ct, ins, 3, [&](thc_tensor *dst) {
            thc__geom g = geometry(dst, 3, ins);
            int r = THC_OK;
            switch (ct) {
                THC_CASES_NUMBER(r = for_each("clamp", g.numel,
                                              ClampFn<scalar_t>{(scalar_t *)thc__ptr(dst),
                                                                operand<scalar_t>(ins[0]),
                                                                operand<scalar_t>(ins[1]),
                                                                operand<scalar_t>(ins[2]),
                                                                cl != NULL, ch != NULL,
                                                                Offsets::of(g)},
                                              thc__stream()))
            }
            return r;
        });
    }
    thc_tensor_release(ca);
    thc_tensor_release(cl);
    thc_tensor_release(ch);
    return rc;
}

extern "C" THC_API thc_tensor *thc_clamp(const thc_tensor *a, const thc_tensor *lo,
                                         const thc_tensor *hi) {
    if (thc__check_device("clamp", "input", a)) return NULL;
    int rt, nd;
    int64_t shape[THC_MAX_DIMS];
    if (clamp_geometry(a, lo, hi, &rt, &nd, shape)) return NULL;
    thc_tensor *out = thc_empty(nd, shape, rt);
    if (out && thc_clamp_out(out, a, lo, hi)) {
        thc_tensor_release(out);
        return NULL;
    }
    return out;
}

extern "C" THC_API thc_tensor *thc_where(const thc_tensor *cond, const thc_tensor *a,
                                         const thc_tensor *b) {
    if (thc__check_device("where", "condition", cond) || check_binary_devices("where", a, b))
        return NULL;
    if (cond->dtype != THC_BOOL)
        return (thc_tensor *)thc__error_null(THC_ERR_RUNTIME,
                                             "where expected condition to be a boolean tensor, "
                                             "but got a tensor with dtype %s",
                                             thc__dtype_title(cond->dtype));
    int rt = thc_result_type(a, b);
    int64_t shape[THC_MAX_DIMS];
    int nd = thc_broadcast_shapes(a->ndim, a->sizes, b->ndim, b->sizes, shape);
    if (nd < 0 || (nd = thc_broadcast_shapes(nd, shape, cond->ndim, cond->sizes, shape)) < 0)
        return NULL;
    thc_tensor *out = thc_empty(nd, shape, rt);
    if (!out) return NULL;
    int ct = thc__is_half(rt) ? THC_FLOAT32 : rt;
    thc_tensor *ca = thc__cast(a, ct), *cb = ca ? thc__cast(b, ct) : NULL;
    int rc = THC_OK;
    if (!cb) {
        rc = thc_last_status();
    } else {
        const thc_tensor *ins[3] = {cond, ca, cb};
        rc = run_into(out, ct, ins, 3, [&](thc_tensor *dst) {
            thc__geom g = geometry(dst, 3, ins);
            int r = THC_OK;
            switch (ct) {
                THC_CASES_COMPUTE(r = for_each("where", g.numel,
                                               WhereFn<scalar_t>{(scalar_t *)thc__ptr(dst),
                                                                 operand<bool>(cond),
                                                                 operand<scalar_t>(ca),
                                                                 operand<scalar_t>(cb),
                                                                 Offsets::of(g)},
                                               thc__stream()))
            }
            return r;
        });
    }
    thc_tensor_release(ca);
    thc_tensor_release(cb);
    if (rc) {
        thc_tensor_release(out);
        return NULL;
    }
    return out;
}
