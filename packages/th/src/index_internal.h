/* Shared pieces of index.c and index_scatter.c: index checks in
 * PyTorch's words, compute copies and the per-dtype arithmetic.
 * Internal. */
#ifndef TH_INDEX_INTERNAL_H
#define TH_INDEX_INTERNAL_H
#include "th_internal.h"

/* Plain static functions (an `inline` would change what gcc inlines);
 * unused in files that do not call them. */
#define IDX_SHARED static __attribute__((unused))

/* ---- small helpers -------------------------------------------------- */

/* PyTorch's scalar type names, as its messages spell them. */
IDX_SHARED const char *title(int dtype) { return th__dtype_title(dtype); }

/* 0-d tensors behave like shape [1] for dim-wise ops. */
IDX_SHARED int ne_dim(const th_tensor *t) { return t->ndim ? t->ndim : 1; }
IDX_SHARED int64_t ne_size(const th_tensor *t, int d) {
    return t->ndim ? t->sizes[d] : 1;
}

IDX_SHARED int compute_dtype(int dtype) {
    return th__is_half(dtype) ? TH_FLOAT32 : dtype;
}

/* A fresh contiguous int64 copy of an index tensor. */
IDX_SHARED th_tensor *index_copy_i64(const th_tensor *index) {
    th_tensor *r = th_empty(index->ndim, index->sizes, TH_INT64);
    if (r && th_copy(r, index) != TH_OK) {
        th_tensor_release(r);
        return NULL;
    }
    return r;
}

/* How an op reads an index: PyTorch wraps negative entries for some ops and
 * refuses them for others, each with its own wording. */
enum {
    IDX_WRAP = 0,     /* negatives wrap; "index %d is out of bounds ..." */
    IDX_FLAT = 1,     /* take / put_: negatives wrap; "out of range: ..." */
    IDX_GATHER = 2,   /* gather / scatter: no negatives; RuntimeError */
    IDX_SELECT = 3,   /* index_select / index_add_: no negatives */
    IDX_COPY = 4      /* index_copy_: no negatives */
};

IDX_SHARED int index_error(int64_t v, int64_t size, int dim, int mode) {
    switch (mode) {
    case IDX_FLAT:
        return th__error(TH_ERR_INDEX, "out of range: tried to access index "
                         "%lld on a tensor of %lld elements.", (long long)v,
                         (long long)size);
    case IDX_SELECT:
        return th__error(TH_ERR_INDEX, "index out of range in self");
    case IDX_COPY:
        return th__error(TH_ERR_INDEX, "index_copy_(): index %lld is out of "
                         "bounds for dimension %d with size %lld",
                         (long long)v, dim, (long long)size);
    default:
        return th__error(mode == IDX_GATHER ? TH_ERR_RUNTIME : TH_ERR_INDEX,
                         "index %lld is out of bounds for dimension %d "
                         "with size %lld", (long long)v, dim, (long long)size);
    }
}

/* Wraps negative entries of a private int64 index in place after checking
 * them against `size` (mode: one of IDX_*). */
IDX_SHARED int wrap_indices(th_tensor *idx, int64_t size, int dim,
                            int mode) {
    int64_t *p = (int64_t *)th__ptr(idx), n = th_numel(idx);
    int64_t lo = mode == IDX_WRAP || mode == IDX_FLAT ? -size : 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t v = p[i];
        if (v < lo || v >= size) return index_error(v, size, dim, mode);
        if (v < 0) p[i] = v + size;
    }
    return TH_OK;
}

/* Checked, wrapped int64 copy of `index` for a dim of length `size`. */
IDX_SHARED th_tensor *checked_index(const th_tensor *index, int64_t size,
                                    int dim, int mode) {
    th_tensor *r = index_copy_i64(index);
    if (r && wrap_indices(r, size, dim, mode) != TH_OK) {
        th_tensor_release(r);
        return NULL;
    }
    return r;
}

/* The same for read-only use: a contiguous int64 index already in
 * [0, size) is used as it is (one scan, no copy), unless it shares memory
 * with `self`, which is about to be written. */
IDX_SHARED th_tensor *checked_index_ro(const th_tensor *index,
                                       int64_t size, int dim, int mode,
                                       const th_tensor *self) {
    if (index->dtype == TH_INT64 && th_is_contiguous(index) &&
        !(self && index->storage == self->storage)) {
        const int64_t *p = (const int64_t *)th__ptr(index);
        int64_t n = th_numel(index);
        int out = 0;
        for (int64_t i = 0; i < n; i++) out |= (uint64_t)p[i] >= (uint64_t)size;
        if (!out) {
            th_tensor_retain((th_tensor *)index);
            return (th_tensor *)index;
        }
    }
    return checked_index(index, size, dim, mode);
}

/* A contiguous tensor of `dtype` holding t's values; a private copy when t
 * shares memory with `self` (which is about to be written). */
IDX_SHARED th_tensor *input_copy(const th_tensor *t, int dtype,
                                 const th_tensor *self) {
    if (t->dtype == dtype && !(self && t->storage == self->storage))
        return th_contiguous(t);
    return th_to_dtype(t, dtype);
}

/* A 0-d tensor of `dtype` holding the value of a 0-d (or 1-element) t.
 * A complex value with an imaginary part has no real-dtype equivalent:
 * refused in PyTorch's words (as th_fill), never silently dropped. */
IDX_SHARED th_tensor *scalar_as(const th_tensor *t, int dtype) {
    if (th_dtype_is_complex(t->dtype) && !th_dtype_is_complex(dtype)) {
        double re, im;
        if (th_get_complex(t, 0, &re, &im) != TH_OK) return NULL;
        if (im != 0)
            return th__error_null(TH_ERR_RUNTIME, "value cannot be converted to "
                                  "type %s without overflow", th__dtype_title(dtype));
    }
    th_tensor *r = th_empty(0, NULL, dtype);
    th_tensor *one = r ? th_view(t, 0, NULL) : NULL;
    if (!one || th_copy(r, one) != TH_OK) {
        th_tensor_release(r);
        r = NULL;
    }
    th_tensor_release(one);
    return r;
}

/* In-place ops compute on a contiguous tensor of `dtype`: self itself when
 * it already is one, else a converted copy written back by work_end(). */
IDX_SHARED th_tensor *work_begin(th_tensor *self, int dtype) {
    if (self->dtype == dtype && th_is_contiguous(self)) {
        th_tensor_retain(self);
        return self;
    }
    return th_to_dtype(self, dtype);
}

IDX_SHARED int work_end(th_tensor *self, th_tensor *work) {
    int rc = TH_OK;
    if (work != self) rc = th_copy(self, work);
    th__bump_version(self);
    th_tensor_release(work);
    return rc;
}

IDX_SHARED int check_value(const char *op, const th_tensor *value) {
    if (value->ndim != 0)
        return th__error(TH_ERR_RUNTIME,
                         "%s only supports a 0-dimensional value tensor, but "
                         "got tensor with %d dimension(s).", op, value->ndim);
    return TH_OK;
}

/* ---- per-dtype arithmetic ------------------------------------------- */
/* Wrapping integer arithmetic (no signed overflow), logical for bool. */
#define ADD_f32(a, b) ((a) + (b))
#define ADD_f64(a, b) ((a) + (b))
#define ADD_i8(a, b) ((int8_t)((a) + (b)))
#define ADD_u8(a, b) ((uint8_t)((a) + (b)))
#define ADD_i16(a, b) ((int16_t)((a) + (b)))
#define ADD_i32(a, b) ((int32_t)((uint32_t)(a) + (uint32_t)(b)))
#define ADD_i64(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))
#define ADD_b8(a, b) ((th_bool_t)((a) | (b)))
#define MUL_f32(a, b) ((a) * (b))
#define MUL_f64(a, b) ((a) * (b))
#define MUL_i8(a, b) ((int8_t)((a) * (b)))
#define MUL_u8(a, b) ((uint8_t)((a) * (b)))
#define MUL_i16(a, b) ((int16_t)((int32_t)(a) * (int32_t)(b)))
#define MUL_i32(a, b) ((int32_t)((uint32_t)(a) * (uint32_t)(b)))
#define MUL_i64(a, b) ((int64_t)((uint64_t)(a) * (uint64_t)(b)))
#define MUL_b8(a, b) ((th_bool_t)((a) & (b)))
#define ISNAN_f32(x) isnan(x)
#define ISNAN_f64(x) isnan(x)
#define ISNAN_i8(x) 0
#define ISNAN_u8(x) 0
#define ISNAN_i16(x) 0
#define ISNAN_i32(x) 0
#define ISNAN_i64(x) 0
#define ISNAN_b8(x) 0
#define LOWEST_f32 (-INFINITY)
#define LOWEST_f64 (-INFINITY)
#define LOWEST_i8 INT8_MIN
#define LOWEST_u8 0
#define LOWEST_i16 INT16_MIN
#define LOWEST_i32 INT32_MIN
#define LOWEST_i64 INT64_MIN
#define LOWEST_b8 0
#define HIGHEST_f32 INFINITY
#define HIGHEST_f64 INFINITY
#define HIGHEST_i8 INT8_MAX
#define HIGHEST_u8 UINT8_MAX
#define HIGHEST_i16 INT16_MAX
#define HIGHEST_i32 INT32_MAX
#define HIGHEST_i64 INT64_MAX
#define HIGHEST_b8 1
/* mean's division: true for floats, floor for integers (count > 0) */
#define DIV_f32(v, c) ((float)((v) / (float)(c)))
#define DIV_f64(v, c) ((v) / (double)(c))
#define DIV_INT(T, v, c) \
    ((T)((int64_t)(v) / (c) - ((int64_t)(v) % (c) != 0 && (v) < 0)))
#define DIV_i8(v, c) DIV_INT(int8_t, v, c)
#define DIV_u8(v, c) ((uint8_t)((v) / (c)))
#define DIV_i16(v, c) DIV_INT(int16_t, v, c)
#define DIV_i32(v, c) DIV_INT(int32_t, v, c)
#define DIV_i64(v, c) DIV_INT(int64_t, v, c)
#define DIV_b8(v, c) ((th_bool_t)((v) / (c) != 0))
/* PyTorch's scatter max/min: a NaN in either operand wins */
#define MAX_OF(S, d, s) (ISNAN_##S(s) ? (s) : ((d) < (s) ? (s) : (d)))
#define MIN_OF(S, d, s) (ISNAN_##S(s) ? (s) : ((s) < (d) ? (s) : (d)))

#endif
