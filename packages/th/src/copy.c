/* Copies between any dtypes and layouts, fills, contiguous/clone. */
#include "elementwise.h"

#define NATIVE2(X, ...)                   \
    X(TH_FLOAT32, float, f32, __VA_ARGS__)  \
    X(TH_FLOAT64, double, f64, __VA_ARGS__) \
    X(TH_INT8, int8_t, i8, __VA_ARGS__)     \
    X(TH_UINT8, uint8_t, u8, __VA_ARGS__)   \
    X(TH_INT16, int16_t, i16, __VA_ARGS__)  \
    X(TH_INT32, int32_t, i32, __VA_ARGS__)  \
    X(TH_INT64, int64_t, i64, __VA_ARGS__)  \
    X(TH_BOOL, th_bool_t, b8, __VA_ARGS__)

#define CONV_f32(v) ((float)(v))
#define CONV_f64(v) ((double)(v))
#define CONV_i8(v) ((int8_t)(v))
#define CONV_u8(v) ((uint8_t)(int64_t)(v))
#define CONV_i16(v) ((int16_t)(v))
#define CONV_i32(v) ((int32_t)(v))
#define CONV_i64(v) ((int64_t)(v))
#define CONV_b8(v) ((th_bool_t)((v) != 0))

/* op 0 = destination (DT), op 1 = source (ST) */
#define CAST_LOOP(DE, DT, DS, SE, ST, SS)                                     \
    static void cast_##SS##_##DS(char **d, const int64_t *s, int64_t n,       \
                                 void *ctx) {                                 \
        (void)ctx;                                                            \
        if (s[0] == sizeof(DT) && s[1] == sizeof(ST)) {                       \
            DT *restrict o = (DT *)d[0];                                      \
            const ST *restrict x = (const ST *)d[1];                          \
            for (int64_t i = 0; i < n; i++) o[i] = CONV_##DS(x[i]);           \
        } else {                                                              \
            char *o = d[0];                                                   \
            const char *x = d[1];                                             \
            for (int64_t i = 0; i < n; i++, o += s[0], x += s[1])             \
                *(DT *)o = CONV_##DS(*(const ST *)x);                         \
        }                                                                     \
    }
#define CAST_FROM(SE, ST, SS) NATIVE2(CAST_LOOP, SE, ST, SS)
TH_FOR_NATIVE_DTYPES(CAST_FROM)

#define CAST_ENTRY(DE, DT, DS, SE, ST, SS) [SE][DE] = cast_##SS##_##DS,
#define CAST_ROW(SE, ST, SS) NATIVE2(CAST_ENTRY, SE, ST, SS)
static const th_loop_fn native_casts[TH_NUM_DTYPES][TH_NUM_DTYPES] = {
    TH_FOR_NATIVE_DTYPES(CAST_ROW)};

/* Half types go through float; ctx holds {src dtype, dst dtype}. */
static void cast_generic(char **d, const int64_t *s, int64_t n, void *ctx) {
    const int *dt = ctx;
    char *o = d[0];
    const char *x = d[1];
    for (int64_t i = 0; i < n; i++, o += s[0], x += s[1])
        th__store_double(o, dt[1], th__load_double(x, dt[0]));
}

static void half_to_f32(char **d, const int64_t *s, int64_t n, void *ctx) {
    int bf = *(const int *)ctx == TH_BFLOAT16;
    char *o = d[0];
    const char *x = d[1];
    for (int64_t i = 0; i < n; i++, o += s[0], x += s[1]) {
        th_half_t h = *(const th_half_t *)x;
        *(float *)o = bf ? th__bf16_to_float(h) : th__half_to_float(h);
    }
}

static void f32_to_half(char **d, const int64_t *s, int64_t n, void *ctx) {
    int bf = ((const int *)ctx)[1] == TH_BFLOAT16;
    char *o = d[0];
    const char *x = d[1];
    for (int64_t i = 0; i < n; i++, o += s[0], x += s[1]) {
        float f = *(const float *)x;
        *(th_half_t *)o = bf ? th__float_to_bf16(f) : th__float_to_half(f);
    }
}

#define COPY_BYTES(BITS)                                                      \
    static void copy_##BITS(char **d, const int64_t *s, int64_t n,            \
                            void *ctx) {                                      \
        (void)ctx;                                                            \
        typedef uint##BITS##_t T;                                             \
        if (s[0] == sizeof(T) && s[1] == sizeof(T)) {                         \
            memcpy(d[0], d[1], (size_t)n * sizeof(T));                        \
        } else if (s[1] == 0) {                                               \
            T v = *(const T *)d[1];                                           \
            char *o = d[0];                                                   \
            for (int64_t i = 0; i < n; i++, o += s[0]) *(T *)o = v;           \
        } else {                                                              \
            char *o = d[0];                                                   \
            const char *x = d[1];                                             \
            for (int64_t i = 0; i < n; i++, o += s[0], x += s[1])             \
                *(T *)o = *(const T *)x;                                      \
        }                                                                     \
    }
COPY_BYTES(8)
COPY_BYTES(16)
COPY_BYTES(32)
COPY_BYTES(64)

/* complex128 elements: two 64-bit words */
static void copy_128(char **d, const int64_t *s, int64_t n, void *ctx) {
    (void)ctx;
    if (s[0] == 16 && s[1] == 16) {
        memcpy(d[0], d[1], (size_t)n * 16);
    } else {
        char *o = d[0];
        const char *x = d[1];
        for (int64_t i = 0; i < n; i++, o += s[0], x += s[1]) memcpy(o, x, 16);
    }
}

static th_loop_fn copy_loop(int64_t itemsize) {
    switch (itemsize) {
    case 1: return copy_8;
    case 2: return copy_16;
    case 4: return copy_32;
    case 16: return copy_128;
    default: return copy_64;
    }
}

/* Do the element ranges of a and b in the same storage intersect? */
static int may_overlap(const th_tensor *a, const th_tensor *b) {
    if (a->storage != b->storage) return 0;
    int64_t lo[2], hi[2];
    const th_tensor *ts[2] = {a, b};
    for (int k = 0; k < 2; k++) {
        int64_t item = th_dtype_itemsize(ts[k]->dtype);
        lo[k] = hi[k] = ts[k]->offset * item;
        for (int i = 0; i < ts[k]->ndim; i++) {
            if (ts[k]->sizes[i] == 0) return 0;
            int64_t span = (ts[k]->sizes[i] - 1) * ts[k]->strides[i] * item;
            if (span > 0) hi[k] += span; else lo[k] += span;
        }
        hi[k] += item;
    }
    return lo[0] < hi[1] && lo[1] < hi[0];
}

static int same_layout(const th_tensor *a, const th_tensor *b) {
    if (a->offset != b->offset || a->dtype != b->dtype || !th__same_shape(a, b))
        return 0;
    for (int i = 0; i < a->ndim; i++)
        if (a->sizes[i] > 1 && a->strides[i] != b->strides[i]) return 0;
    return 1;
}

/* Fills write one value everywhere, so they may target broadcast views;
 * copies may not (which source element would win?). */
static int copy_impl(th_tensor *dst, const th_tensor *src);

int th_copy(th_tensor *dst, const th_tensor *src) {
    if (th__check_internal_overlap(dst)) return th_last_status();
    return copy_impl(dst, src);
}

static int copy_impl(th_tensor *dst, const th_tensor *src) {
    th_tensor *e = th_expand(src, dst->ndim, dst->sizes);
    if (!e) {
        char b1[256], b2[256];
        return th__error(TH_ERR_RUNTIME,
                         "copy: source of shape %s cannot be broadcast to the "
                         "destination shape %s",
                         th__shape_str(src->ndim, src->sizes, b1),
                         th__shape_str(dst->ndim, dst->sizes, b2));
    }
    th__bump_version(dst);
    if (e->storage == dst->storage && same_layout(e, dst)) {
        th_tensor_release(e);
        return TH_OK; /* copying a tensor onto itself */
    }
    if (may_overlap(dst, e)) { /* e.g. x[1:] = x[:-1] */
        th_tensor *c = th_clone(e);
        th_tensor_release(e);
        if (!c) return th_last_status();
        e = c;
    }
    const th_tensor *ops[2] = {dst, e};
    th_iter it;
    th__iter_init(&it, 2, ops);
    int dts[2] = {e->dtype, dst->dtype};
    if (e->dtype == dst->dtype) {
        th__iter_run(&it, copy_loop(th_dtype_itemsize(dst->dtype)), NULL, 1);
    } else if (th_dtype_is_complex(e->dtype) || th_dtype_is_complex(dst->dtype)) {
        th__iter_run(&it, th__complex_cast_loop(e->dtype, dst->dtype), dts, 1);
    } else if (th__is_half(e->dtype) && dst->dtype == TH_FLOAT32) {
        th__iter_run(&it, half_to_f32, dts, 1);
    } else if (e->dtype == TH_FLOAT32 && th__is_half(dst->dtype)) {
        th__iter_run(&it, f32_to_half, dts, 1);
    } else if (th__is_half(e->dtype) || th__is_half(dst->dtype)) {
        th__iter_run(&it, cast_generic, dts, 1);
    } else {
        th__iter_run(&it, native_casts[e->dtype][dst->dtype], NULL, 1);
    }
    th_tensor_release(e);
    return TH_OK;
}

th_tensor *th_clone(const th_tensor *t) {
    th_tensor *r = th__empty_like(t, t->dtype);
    if (r && th_copy(r, t) != TH_OK) {
        th_tensor_release(r);
        return NULL;
    }
    return r;
}

th_tensor *th_contiguous(const th_tensor *t) {
    if (th_is_contiguous(t)) {
        th_tensor_retain((th_tensor *)t);
        return (th_tensor *)t;
    }
    return th_clone(t);
}

th_tensor *th_to_dtype(const th_tensor *t, int dtype) {
    th_tensor *r = th__empty_like(t, dtype);
    if (r && th_copy(r, t) != TH_OK) {
        th_tensor_release(r);
        return NULL;
    }
    return r;
}

th_tensor *th__cast(const th_tensor *t, int dtype) {
    if (t->dtype == dtype) {
        th_tensor_retain((th_tensor *)t);
        return (th_tensor *)t;
    }
    return th_to_dtype(t, dtype);
}

int th_fill(th_tensor *t, const th_tensor *value) {
    if (th_numel(value) != 1)
        return th__error(TH_ERR_RUNTIME,
                         "fill_ only supports 0-dimension value tensor but "
                         "got tensor with %d dimensions.", value->ndim);
    if (th_dtype_is_complex(value->dtype) && !th_dtype_is_complex(t->dtype)) {
        double re, im;
        th_get_complex(value, 0, &re, &im);
        if (im != 0) /* a real tensor cannot hold it (PyTorch's words) */
            return th__error(TH_ERR_RUNTIME, "value cannot be converted to type %s "
                             "without overflow", th__dtype_title(t->dtype));
    }
    th_tensor *v = th_empty(0, NULL, t->dtype);
    if (!v) return th_last_status();
    th_tensor *one = th_view(value, 0, NULL);
    int rc = one ? th_copy(v, one) : th_last_status();
    th_tensor_release(one);
    if (rc == TH_OK) rc = copy_impl(t, v);
    th_tensor_release(v);
    return rc;
}

int th_fill_double(th_tensor *t, double value) {
    th_tensor *v = th_scalar_double(value, t->dtype);
    if (!v) return th_last_status();
    int rc = copy_impl(t, v);
    th_tensor_release(v);
    return rc;
}

int th_zero(th_tensor *t) {
    if (th_is_contiguous(t)) {
        th__bump_version(t);
        memset(th__ptr(t), 0, (size_t)(th_numel(t) * th_dtype_itemsize(t->dtype)));
        return TH_OK;
    }
    return th_fill_double(t, 0.0);
}
