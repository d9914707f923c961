/* Indexing: selects, gathers and scatters along a dim, masks, flat (take /
 * put_) and advanced (integer tensor) indexing.
 *
 * Pure data movement goes by element size, so all 10 dtypes share one path.
 * Arithmetic (scatter reductions, index_add_, accumulating puts) runs per
 * native dtype; float16/bfloat16 are computed in float32 on a temporary
 * copy that is converted back.  Every index is checked, and negative ones
 * wrapped on a private int64 copy, before anything is written. */
#include <stdio.h>

#include "th_internal.h"

/* ---- small helpers -------------------------------------------------- */

/* PyTorch's scalar type names, as its messages spell them. */
static const char *title(int dtype) {
    static const char *names[TH_NUM_DTYPES] = {
        "Float", "Double", "Half", "BFloat16", "Char",
        "Byte",  "Short",  "Int",  "Long",     "Bool"};
    return dtype >= 0 && dtype < TH_NUM_DTYPES ? names[dtype] : "Invalid";
}

/* 0-d tensors behave like shape [1] for dim-wise ops. */
static int ne_dim(const th_tensor *t) { return t->ndim ? t->ndim : 1; }
static int64_t ne_size(const th_tensor *t, int d) {
    return t->ndim ? t->sizes[d] : 1;
}

static int compute_dtype(int dtype) {
    return th__is_half(dtype) ? TH_FLOAT32 : dtype;
}

static int is_index_dtype(int dtype) {
    return dtype == TH_INT64 || dtype == TH_INT32;
}

/* outer x size x inner around `dim` of t's (contiguous) shape. */
static void split_at(const th_tensor *t, int dim, int64_t *outer,
                     int64_t *size, int64_t *inner) {
    *outer = t->ndim ? th__prod(dim, t->sizes) : 1;
    *size = ne_size(t, dim);
    *inner = t->ndim ? th__prod(t->ndim - dim - 1, t->sizes + dim + 1) : 1;
}

/* A fresh contiguous int64 copy of an index tensor. */
static th_tensor *index_copy_i64(const th_tensor *index) {
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

static int index_error(int64_t v, int64_t size, int dim, int mode) {
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
static int wrap_indices(th_tensor *idx, int64_t size, int dim, int mode) {
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
static th_tensor *checked_index(const th_tensor *index, int64_t size, int dim,
                                int mode) {
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
static th_tensor *checked_index_ro(const th_tensor *index, int64_t size,
                                   int dim, int mode, const th_tensor *self) {
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

static int index_dtype_error(const char *op, const th_tensor *index) {
    return th__error(TH_ERR_TYPE,
                     "%s(): Expected dtype int64 or int32 for index, but got "
                     "%s", op, title(index->dtype));
}

/* A contiguous tensor of `dtype` holding t's values; a private copy when t
 * shares memory with `self` (which is about to be written). */
static th_tensor *input_copy(const th_tensor *t, int dtype,
                             const th_tensor *self) {
    if (t->dtype == dtype && !(self && t->storage == self->storage))
        return th_contiguous(t);
    return th_to_dtype(t, dtype);
}

/* A 0-d tensor of `dtype` holding the value of a 0-d (or 1-element) t. */
static th_tensor *scalar_as(const th_tensor *t, int dtype) {
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
static th_tensor *work_begin(th_tensor *self, int dtype) {
    if (self->dtype == dtype && th_is_contiguous(self)) {
        th_tensor_retain(self);
        return self;
    }
    return th_to_dtype(self, dtype);
}

static int work_end(th_tensor *self, th_tensor *work) {
    int rc = TH_OK;
    if (work != self) rc = th_copy(self, work);
    th__bump_version(self);
    th_tensor_release(work);
    return rc;
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

/* ---- block walks: index_select, index_*_, take, put_, advanced index -
 * A "compact" operand holds blocks (o, i) of `inner` elements at
 * (o * n + i) * inner; the "indexed" operand holds them at
 * o * ostride + off[i].  Everything is contiguous and in elements. */
typedef struct {
    char *compact;
    char *indexed;
    const int64_t *off;
    int64_t n, inner, ostride, item;
    const char *value; /* fill value / add alpha, in the indexed dtype */
    int dtype;
} blk_ctx;

#define GATHER_ELEMS(T)                                                       \
    do {                                                                      \
        T *d = (T *)c->compact;                                               \
        const T *s = (const T *)c->indexed;                                   \
        for (int64_t r = b; r < e; r++) {                                     \
            d[r] = s[o * c->ostride + c->off[i]];                             \
            if (++i == c->n) { i = 0; o++; }                                  \
        }                                                                     \
    } while (0)

/* compact <- indexed, over blocks r = o * n + i in [b, e) */
static void gather_range(int64_t b, int64_t e, void *vctx) {
    const blk_ctx *c = vctx;
    int64_t o = b / c->n, i = b % c->n;
    if (c->inner == 1) {
        switch (c->item) {
        case 1: GATHER_ELEMS(uint8_t); return;
        case 2: GATHER_ELEMS(uint16_t); return;
        case 4: GATHER_ELEMS(uint32_t); return;
        default: GATHER_ELEMS(uint64_t); return;
        }
    }
    int64_t bytes = c->inner * c->item;
    for (int64_t r = b; r < e; r++) {
        memcpy(c->compact + r * bytes,
               c->indexed + (o * c->ostride + c->off[i]) * c->item,
               (size_t)bytes);
        if (++i == c->n) { i = 0; o++; }
    }
}

#define PUT_ELEMS(T)                                                          \
    do {                                                                      \
        T *d = (T *)c->indexed;                                               \
        const T *s = (const T *)c->compact;                                   \
        for (int64_t o = b; o < e; o++)                                       \
            for (int64_t i = 0; i < c->n; i++)                                \
                d[o * c->ostride + c->off[i]] = s[o * c->n + i];              \
    } while (0)

/* indexed <- compact, over outer slices [b, e); in order, so the last
 * write to a duplicated index wins */
static void put_range(int64_t b, int64_t e, void *vctx) {
    const blk_ctx *c = vctx;
    if (c->inner == 1) {
        switch (c->item) {
        case 1: PUT_ELEMS(uint8_t); return;
        case 2: PUT_ELEMS(uint16_t); return;
        case 4: PUT_ELEMS(uint32_t); return;
        default: PUT_ELEMS(uint64_t); return;
        }
    }
    int64_t bytes = c->inner * c->item;
    for (int64_t o = b; o < e; o++)
        for (int64_t i = 0; i < c->n; i++)
            memcpy(c->indexed + (o * c->ostride + c->off[i]) * c->item,
                   c->compact + (o * c->n + i) * bytes, (size_t)bytes);
}

#define FILL_ELEMS(T)                                                         \
    do {                                                                      \
        T *d = (T *)c->indexed, v;                                            \
        memcpy(&v, c->value, sizeof v);                                       \
        for (int64_t o = b; o < e; o++)                                       \
            for (int64_t i = 0; i < c->n; i++) {                              \
                T *p = d + o * c->ostride + c->off[i];                        \
                for (int64_t k = 0; k < c->inner; k++) p[k] = v;              \
            }                                                                 \
    } while (0)

/* indexed blocks <- value */
static void fill_range(int64_t b, int64_t e, void *vctx) {
    const blk_ctx *c = vctx;
    switch (c->item) {
    case 1: FILL_ELEMS(uint8_t); return;
    case 2: FILL_ELEMS(uint16_t); return;
    case 4: FILL_ELEMS(uint32_t); return;
    default: FILL_ELEMS(uint64_t); return;
    }
}

/* indexed blocks += alpha * compact blocks, per dtype */
#define ADD_WALK(E, T, S)                                                     \
    static void add_walk_##S(const blk_ctx *c, int64_t b, int64_t e) {        \
        T *d = (T *)c->indexed, a;                                            \
        const T *s = (const T *)c->compact;                                   \
        memcpy(&a, c->value, sizeof a);                                       \
        for (int64_t o = b; o < e; o++)                                       \
            for (int64_t i = 0; i < c->n; i++) {                              \
                T *restrict dp = d + o * c->ostride + c->off[i];              \
                const T *restrict sp = s + (o * c->n + i) * c->inner;         \
                for (int64_t k = 0; k < c->inner; k++)                        \
                    dp[k] = ADD_##S(dp[k], MUL_##S(a, sp[k]));                \
            }                                                                 \
    }
TH_FOR_NATIVE_DTYPES(ADD_WALK)

static void add_range(int64_t b, int64_t e, void *vctx) {
    const blk_ctx *c = vctx;
    switch (c->dtype) {
#define ADD_CASE(E, T, S) case E: add_walk_##S(c, b, e); break;
        TH_FOR_NATIVE_DTYPES(ADD_CASE)
#undef ADD_CASE
    default: break;
    }
}

/* Runs a walk: gathers split over all blocks, writes over outer slices
 * (different slices never touch the same element). */
static void blk_run(th_range_fn fn, blk_ctx *c, int64_t outer) {
    if (c->n == 0 || outer == 0 || c->inner == 0) return;
    int64_t per_block = TH_MAX(c->inner, 1);
    if (fn == gather_range)
        th_parallel_for(outer * c->n, TH_MAX(1, TH_GRAIN / per_block), fn, c);
    else
        th_parallel_for(outer, TH_MAX(1, TH_GRAIN / (per_block * c->n)), fn,
                         c);
}

/* ---- index_select and the index_*_ family --------------------------- */
th_tensor *th_index_select(const th_tensor *a, int dim, const th_tensor *index) {
    if ((dim = th__wrap_dim(dim, a->ndim)) < 0) return NULL;
    if (index->ndim > 1)
        return th__error_null(TH_ERR_INDEX,
                              "index_select(): Index is supposed to be a "
                              "vector");
    if (!is_index_dtype(index->dtype)) {
        index_dtype_error("index_select", index);
        return NULL;
    }
    int64_t n = th_numel(index), outer, size, inner;
    if (a->ndim == 0 && n != 1)
        return th__error_null(TH_ERR_INDEX,
                              "index_select(): Index to scalar can have only "
                              "1 value, got %lld value(s)", (long long)n);
    split_at(a, dim, &outer, &size, &inner);
    th_tensor *idx = checked_index(index, size, dim, IDX_SELECT);
    if (!idx) return NULL;
    int64_t sizes[TH_MAX_DIMS];
    memcpy(sizes, a->sizes, sizeof sizes);
    if (a->ndim) sizes[dim] = n;
    th_tensor *r = th_empty(a->ndim, sizes, a->dtype);
    th_tensor *ac = r ? th_contiguous(a) : NULL;
    if (ac) {
        int64_t *off = (int64_t *)th__ptr(idx);
        for (int64_t i = 0; i < n; i++) off[i] *= inner;
        blk_ctx c = {th__ptr(r), th__ptr(ac), off, n, inner, size * inner,
                     th_dtype_itemsize(a->dtype), NULL, a->dtype};
        blk_run(gather_range, &c, outer);
    } else {
        th_tensor_release(r);
        r = NULL;
    }
    th_tensor_release(ac);
    th_tensor_release(idx);
    return r;
}

/* Shared checks of index_add_/index_copy_: a 0/1-d index with one entry
 * per slice of src along dim; src and self alike apart from dim. */
static int check_index_source(const char *op, const th_tensor *self, int dim,
                              const th_tensor *index, const th_tensor *src) {
    if (index->ndim > 1)
        return th__error(TH_ERR_INDEX,
                         "%s(): Index should have dimension 1 or 0 (got %d)",
                         op, index->ndim);
    if (!is_index_dtype(index->dtype)) return index_dtype_error(op, index);
    if (src->dtype != self->dtype)
        return th__error(TH_ERR_TYPE,
                         "%s(): self (%s) and source (%s) must have the same "
                         "scalar type", op, title(self->dtype),
                         title(src->dtype));
    char b1[256], b2[256];
    int bad = ne_dim(src) != ne_dim(self);
    for (int d = 0; d < ne_dim(self) && !bad; d++)
        bad = d != dim && ne_size(src, d) != ne_size(self, d);
    if (bad)
        return th__error(TH_ERR_RUNTIME,
                         "%s(): source of shape %s must match self of shape "
                         "%s apart from dimension %d", op,
                         th__shape_str(src->ndim, src->sizes, b1),
                         th__shape_str(self->ndim, self->sizes, b2), dim);
    if (th_numel(index) != ne_size(src, dim))
        return th__error(TH_ERR_RUNTIME,
                         "%s(): Number of indices (%lld) should be equal to "
                         "source.size(dim) (%lld)", op,
                         (long long)th_numel(index),
                         (long long)ne_size(src, dim));
    return TH_OK;
}

enum { MODE_COPY, MODE_ADD, MODE_FILL };

/* self's slices idx[i] along dim <- src slice i (copy / add alpha * src)
 * or <- value (fill); src, value already checked. */
static int index_slices(th_tensor *self, int dim, const th_tensor *index,
                        const th_tensor *src, const th_tensor *value,
                        int mode) {
    int64_t outer, size, inner;
    split_at(self, dim, &outer, &size, &inner);
    th_tensor *idx = checked_index(index, size, dim,
                                   mode == MODE_ADD ? IDX_SELECT
                                   : mode == MODE_COPY ? IDX_COPY : IDX_WRAP);
    if (!idx) return th_last_status();
    int cdt = mode == MODE_ADD ? compute_dtype(self->dtype) : self->dtype;
    th_tensor *sc = NULL, *v = NULL, *work = NULL;
    int rc;
    if ((src && !(sc = input_copy(src, cdt, self))) ||
        (value && !(v = scalar_as(value, cdt))) ||
        !(work = work_begin(self, cdt))) {
        rc = th_last_status();
        goto done;
    }
    int64_t n = th_numel(idx), *off = (int64_t *)th__ptr(idx);
    for (int64_t i = 0; i < n; i++) off[i] *= inner;
    blk_ctx c = {sc ? th__ptr(sc) : NULL, th__ptr(work), off, n, inner,
                 size * inner, th_dtype_itemsize(cdt),
                 v ? th__ptr(v) : NULL, cdt};
    blk_run(mode == MODE_COPY ? put_range
            : mode == MODE_ADD ? add_range : fill_range, &c, outer);
    rc = work_end(self, work);
done:
    th_tensor_release(sc);
    th_tensor_release(v);
    th_tensor_release(idx);
    return rc;
}

int th_index_add_(th_tensor *self, int dim, const th_tensor *index,
                  const th_tensor *src, const th_tensor *alpha) {
    if ((dim = th__wrap_dim(dim, self->ndim)) < 0) return th_last_status();
    if (check_index_source("index_add_", self, dim, index, src) != TH_OK)
        return th_last_status();
    if (alpha && th_numel(alpha) != 1)
        return th__error(TH_ERR_RUNTIME, "index_add_(): alpha must be a "
                         "0-dimensional tensor, got %lld elements",
                         (long long)th_numel(alpha));
    th_tensor *one = alpha ? NULL : th_scalar_int64(1, TH_INT64);
    if (!alpha && !one) return th_last_status();
    int rc = index_slices(self, dim, index, src, alpha ? alpha : one, MODE_ADD);
    th_tensor_release(one);
    return rc;
}

int th_index_copy_(th_tensor *self, int dim, const th_tensor *index,
                   const th_tensor *src) {
    if ((dim = th__wrap_dim(dim, self->ndim)) < 0) return th_last_status();
    if (check_index_source("index_copy_", self, dim, index, src) != TH_OK)
        return th_last_status();
    return index_slices(self, dim, index, src, NULL, MODE_COPY);
}

static int check_value(const char *op, const th_tensor *value) {
    if (value->ndim != 0)
        return th__error(TH_ERR_RUNTIME,
                         "%s only supports a 0-dimensional value tensor, but "
                         "got tensor with %d dimension(s).", op, value->ndim);
    return TH_OK;
}

int th_index_fill_(th_tensor *self, int dim, const th_tensor *index,
                   const th_tensor *value) {
    if ((dim = th__wrap_dim(dim, self->ndim)) < 0) return th_last_status();
    if (index->ndim > 1)
        return th__error(TH_ERR_INDEX,
                         "index_fill_(): Index has to be a vector/scalar");
    if (!is_index_dtype(index->dtype))
        return index_dtype_error("index_fill_", index);
    if (check_value("index_fill_", value) != TH_OK) return th_last_status();
    return index_slices(self, dim, index, NULL, value, MODE_FILL);
}

/* ---- gather / scatter ----------------------------------------------- */
/* The index tensor walked row by row (rows run along its last dim).  The
 * element at (pos, j) maps to `self` (the indexed operand) at
 * base_self(pos) + j * inner_self + idx * dim_stride and to the other
 * operand at base_other(pos) + j * inner_other; offsets in elements. */
typedef struct {
    int ndim, dim;
    int64_t sizes[TH_MAX_DIMS];
    int64_t st_self[TH_MAX_DIMS], st_other[TH_MAX_DIMS];
    int64_t rows, len, inner_self, inner_other, dim_stride;
} sg_geom;

static void sg_init(sg_geom *g, int dim, const th_tensor *index,
                    const th_tensor *self, const th_tensor *other) {
    g->ndim = ne_dim(index);
    g->dim = dim;
    for (int d = 0; d < g->ndim; d++) {
        g->sizes[d] = ne_size(index, d);
        g->st_self[d] = self->ndim ? self->strides[d] : 0;
        g->st_other[d] = other->ndim ? other->strides[d] : 0;
    }
    int last = g->ndim - 1;
    g->len = g->sizes[last];
    g->rows = g->len ? th_numel(index) / g->len : 0;
    g->inner_self = last == dim ? 0 : g->st_self[last];
    g->inner_other = g->st_other[last];
    g->dim_stride = g->st_self[dim];
}

static void sg_row_base(const sg_geom *g, int64_t row, int64_t *bs,
                        int64_t *bo) {
    int64_t s = 0, o = 0;
    for (int d = g->ndim - 2; d >= 0; d--) {
        int64_t p = row % g->sizes[d];
        row /= g->sizes[d];
        if (d != g->dim) s += p * g->st_self[d];
        o += p * g->st_other[d];
    }
    *bs = s;
    *bo = o;
}

/* Runs BODY with `so` (self offset) and `oo` (other offset) set for every
 * index element of rows [RB, RE).  Fields are copied to locals: stores
 * through byte-typed pointers would otherwise force reloads. */
#define SG_WALK(g, idx, RB, RE, BODY)                                         \
    {                                                                         \
        const int64_t len_ = (g)->len, is_ = (g)->inner_self;                 \
        const int64_t io_ = (g)->inner_other, ds_ = (g)->dim_stride;          \
        const int64_t *idx_ = (idx);                                          \
        for (int64_t row = (RB); row < (RE); row++) {                         \
            int64_t bs, bo;                                                   \
            sg_row_base(g, row, &bs, &bo);                                    \
            const int64_t *ip = idx_ + row * len_;                            \
            if (is_ == 0 && io_ == 1 && ds_ == 1) { /* dim is a dense last */ \
                for (int64_t j = 0; j < len_; j++) {                          \
                    int64_t so = bs + ip[j], oo = bo + j;                     \
                    (void)oo;                                                 \
                    BODY                                                      \
                }                                                             \
            } else {                                                          \
                for (int64_t j = 0; j < len_; j++) {                          \
                    int64_t so = bs + j * is_ + ip[j] * ds_, oo = bo + j * io_; \
                    (void)oo;                                                 \
                    BODY                                                      \
                }                                                             \
            }                                                                 \
        }                                                                     \
    }

typedef struct {
    const sg_geom *g;
    const int64_t *idx;
    char *self, *other;
    int64_t item;
} sg_ctx;

#define SG_GATHER(T)                                                          \
    do {                                                                      \
        const T *s = (const T *)c->self;                                      \
        T *o = (T *)c->other;                                                 \
        SG_WALK(c->g, c->idx, b, e, o[oo] = s[so];)                           \
    } while (0)

static void sg_gather_range(int64_t b, int64_t e, void *vctx) {
    const sg_ctx *c = vctx;
    switch (c->item) {
    case 1: SG_GATHER(uint8_t); break;
    case 2: SG_GATHER(uint16_t); break;
    case 4: SG_GATHER(uint32_t); break;
    default: SG_GATHER(uint64_t); break;
    }
}

/* Checks shared by gather and scatter: index dtype, ndim, sizes. */
static int check_sg(const char *op, const th_tensor *self, int dim,
                    const th_tensor *index, const th_tensor *src,
                    int is_gather) {
    if (index->dtype != TH_INT64 && index->dtype != TH_INT32)
        return th__error(TH_ERR_TYPE, "%s(): Expected dtype int64 for index",
                         op);
    if (ne_dim(index) != ne_dim(self))
        return th__error(TH_ERR_RUNTIME,
                         "Index tensor must have the same number of "
                         "dimensions as %s tensor",
                         is_gather ? "input" : "self");
    if (src && ne_dim(src) != ne_dim(index))
        return th__error(TH_ERR_RUNTIME,
                         "Index tensor must have the same number of "
                         "dimensions as src tensor");
    char b1[256], b2[256], b3[256];
    for (int d = 0; d < ne_dim(self); d++) {
        int bad = d != dim && ne_size(index, d) > ne_size(self, d);
        if (is_gather && bad)
            return th__error(TH_ERR_RUNTIME,
                             "Size does not match at dimension %d expected "
                             "index %s to be smaller than self %s apart from "
                             "dimension %d", d,
                             th__shape_str(index->ndim, index->sizes, b1),
                             th__shape_str(self->ndim, self->sizes, b2), dim);
        if (bad && !src)
            return th__error(TH_ERR_RUNTIME,
                             "Expected index %s to be smaller than self %s "
                             "apart from dimension %d",
                             th__shape_str(index->ndim, index->sizes, b1),
                             th__shape_str(self->ndim, self->sizes, b2), dim);
        if (src) bad = bad || ne_size(index, d) > ne_size(src, d);
        if (bad)
            return th__error(TH_ERR_RUNTIME,
                             "Expected index %s to be smaller than self %s "
                             "apart from dimension %d and to be smaller size "
                             "than src %s",
                             th__shape_str(index->ndim, index->sizes, b1),
                             th__shape_str(self->ndim, self->sizes, b2), dim,
                             th__shape_str(src->ndim, src->sizes, b3));
    }
    return TH_OK;
}

th_tensor *th_gather(const th_tensor *a, int dim, const th_tensor *index) {
    if ((dim = th__wrap_dim(dim, a->ndim)) < 0) return NULL;
    if (check_sg("gather", a, dim, index, NULL, 1) != TH_OK) return NULL;
    th_tensor *idx = checked_index_ro(index, ne_size(a, dim), dim, IDX_GATHER, NULL);
    if (!idx) return NULL;
    th_tensor *r = th_empty(index->ndim, index->sizes, a->dtype);
    if (r && th_numel(r) > 0) {
        sg_geom g;
        sg_init(&g, dim, index, a, r);
        sg_ctx c = {&g, (const int64_t *)th__ptr(idx), th__ptr(a), th__ptr(r),
                    th_dtype_itemsize(a->dtype)};
        th_parallel_for(g.rows, TH_MAX(1, TH_GRAIN / g.len), sg_gather_range,
                         &c);
    }
    th_tensor_release(idx);
    return r;
}

/* Scatter with reduction, per dtype.  Serial: indices may collide. */
#define SCATTER_FN(E, T, S)                                                   \
    static void scatter_##S(const sg_ctx *c, int reduce, int include_self,    \
                            int64_t *counts) {                                \
        T *d = (T *)c->self;                                                  \
        const T *s = (const T *)c->other;                                     \
        const sg_geom *g = c->g;                                              \
        int64_t R = g->rows;                                                  \
        if (reduce != TH_SCATTER_NONE && !include_self) {                     \
            T id = reduce == TH_SCATTER_PROD ? (T)1                           \
                 : reduce == TH_SCATTER_AMAX ? (T)LOWEST_##S                  \
                 : reduce == TH_SCATTER_AMIN ? (T)HIGHEST_##S : (T)0;         \
            SG_WALK(g, c->idx, 0, R, d[so] = id;)                             \
        }                                                                     \
        switch (reduce) {                                                     \
        case TH_SCATTER_NONE: SG_WALK(g, c->idx, 0, R, d[so] = s[oo];) break; \
        case TH_SCATTER_SUM:                                                  \
            SG_WALK(g, c->idx, 0, R, d[so] = ADD_##S(d[so], s[oo]);) break;   \
        case TH_SCATTER_MEAN:                                                 \
            SG_WALK(g, c->idx, 0, R,                                          \
                    d[so] = ADD_##S(d[so], s[oo]); counts[so]++;)             \
            break;                                                            \
        case TH_SCATTER_PROD:                                                 \
            SG_WALK(g, c->idx, 0, R, d[so] = MUL_##S(d[so], s[oo]);) break;   \
        case TH_SCATTER_AMAX:                                                 \
            SG_WALK(g, c->idx, 0, R, d[so] = MAX_OF(S, d[so], s[oo]);) break; \
        case TH_SCATTER_AMIN:                                                 \
            SG_WALK(g, c->idx, 0, R, d[so] = MIN_OF(S, d[so], s[oo]);) break; \
        }                                                                     \
    }                                                                         \
    static void mean_div_##S(char *p, const int64_t *counts, int64_t n) {     \
        T *d = (T *)p;                                                        \
        for (int64_t k = 0; k < n; k++)                                       \
            if (counts[k] > 1) d[k] = DIV_##S(d[k], counts[k]);               \
    }
TH_FOR_NATIVE_DTYPES(SCATTER_FN)

/* Data movement only: last write wins, any dtype. */
#define SG_PUT(T)                                                             \
    do {                                                                      \
        T *d = (T *)c->self;                                                  \
        const T *s = (const T *)c->other;                                     \
        SG_WALK(c->g, c->idx, 0, c->g->rows, d[so] = s[oo];)                  \
    } while (0)

static void sg_put(const sg_ctx *c) {
    switch (c->item) {
    case 1: SG_PUT(uint8_t); break;
    case 2: SG_PUT(uint16_t); break;
    case 4: SG_PUT(uint32_t); break;
    default: SG_PUT(uint64_t); break;
    }
}

int th_scatter_(th_tensor *self, int dim, const th_tensor *index,
                const th_tensor *src, int reduce, int include_self) {
    if (reduce < TH_SCATTER_NONE || reduce > TH_SCATTER_AMIN)
        return th__error(TH_ERR_VALUE, "scatter(): unknown reduce code %d",
                         reduce);
    if (th__check_internal_overlap(self)) return th_last_status();
    if (reduce == TH_SCATTER_MEAN && self->dtype == TH_BOOL)
        return th__error(TH_ERR_TYPE, "\"scatter_gather_tensor_cpu_reduce_mean\" "
                         "not implemented for 'Bool'");
    if ((dim = th__wrap_dim(dim, self->ndim)) < 0) return th_last_status();
    /* a 0-d src with a non-0-d index is a fill value (scatter_(dim, i, v)) */
    int value_mode = src->ndim == 0 && index->ndim != 0;
    if (!value_mode && src->dtype != self->dtype)
        return th__error(TH_ERR_TYPE,
                         "scatter(): Expected self.dtype to be equal to "
                         "src.dtype");
    if (index->dtype != TH_INT64 && index->dtype != TH_INT32)
        return th__error(TH_ERR_TYPE,
                         "scatter(): Expected dtype int64 for index");
    if (th_numel(index) == 0) return TH_OK;
    if (check_sg("scatter", self, dim, index, value_mode ? NULL : src, 0))
        return th_last_status();
    th_tensor *idx = checked_index_ro(index, ne_size(self, dim), dim, IDX_GATHER, self);
    if (!idx) return th_last_status();

    int cdt = reduce == TH_SCATTER_NONE ? self->dtype : compute_dtype(self->dtype);
    /* mean keeps per-element counts, laid out like a contiguous self */
    int need_work = cdt != self->dtype || reduce == TH_SCATTER_MEAN;
    th_tensor *work = NULL, *sv = NULL, *v0 = NULL;
    int64_t *counts = NULL;
    int rc = TH_OK;
    if (need_work) {
        work = th_to_dtype(self, cdt);
    } else {
        th_tensor_retain(self);
        work = self;
    }
    if (!work) goto fail;
    if (value_mode) {
        if (!(v0 = scalar_as(src, cdt))) goto fail;
        sv = th_expand(v0, index->ndim, index->sizes);
    } else if (src->dtype == cdt && src->storage != self->storage) {
        th_tensor_retain((th_tensor *)src);
        sv = (th_tensor *)src;
    } else {
        sv = th_to_dtype(src, cdt);
    }
    if (!sv) goto fail;
    int64_t nwork = th_numel(work);
    if (reduce == TH_SCATTER_MEAN) {
        if (!(counts = th__alloc(nwork * (int64_t)sizeof(int64_t)))) goto fail;
        for (int64_t k = 0; k < nwork; k++) counts[k] = include_self ? 1 : 0;
    }
    sg_geom g;
    sg_init(&g, dim, index, work, sv);
    sg_ctx c = {&g, (const int64_t *)th__ptr(idx), th__ptr(work), th__ptr(sv),
                th_dtype_itemsize(cdt)};
    if (reduce == TH_SCATTER_NONE) {
        sg_put(&c);
    } else {
        switch (cdt) {
#define SCATTER_CASE(E, T, S)                                                 \
    case E:                                                                   \
        scatter_##S(&c, reduce, include_self, counts);                        \
        if (counts) mean_div_##S(th__ptr(work), counts, nwork);               \
        break;
            TH_FOR_NATIVE_DTYPES(SCATTER_CASE)
#undef SCATTER_CASE
        default: break;
        }
    }
    rc = work_end(self, work);
    work = NULL;
    goto done;
fail:
    rc = th_last_status() ? th_last_status() : TH_ERR_MEMORY;
done:
    th__free(counts);
    th_tensor_release(work);
    th_tensor_release(sv);
    th_tensor_release(v0);
    th_tensor_release(idx);
    return rc;
}

/* ---- masks ---------------------------------------------------------- */
#define MFILL(BITS)                                                           \
    static void mfill_##BITS(char **d, const int64_t *s, int64_t n,           \
                             void *ctx) {                                     \
        typedef uint##BITS##_t T;                                             \
        T v;                                                                  \
        memcpy(&v, ctx, sizeof v);                                            \
        if (s[0] == sizeof(T) && s[1] == 1) {                                 \
            T *restrict o = (T *)d[0];                                        \
            const uint8_t *restrict m = (const uint8_t *)d[1];                \
            for (int64_t i = 0; i < n; i++) o[i] = m[i] ? v : o[i];           \
        } else {                                                              \
            char *o = d[0];                                                   \
            const char *m = d[1];                                             \
            for (int64_t i = 0; i < n; i++, o += s[0], m += s[1])             \
                if (*m) *(T *)o = v;                                          \
        }                                                                     \
    }
MFILL(8)
MFILL(16)
MFILL(32)
MFILL(64)

static int has_zero_stride(const th_tensor *t) {
    for (int i = 0; i < t->ndim; i++)
        if (t->sizes[i] > 1 && t->strides[i] == 0) return 1;
    return 0;
}

int th_masked_fill_(th_tensor *self, const th_tensor *mask,
                    const th_tensor *value) {
    if (mask->dtype != TH_BOOL)
        return th__error(TH_ERR_TYPE,
                         "masked_fill_ only supports boolean masks, but got "
                         "mask with dtype %s", th_dtype_name(mask->dtype));
    if (th__check_internal_overlap(self)) return th_last_status();
    if (check_value("masked_fill_", value) != TH_OK) return th_last_status();
    th_tensor *m = th_expand(mask, self->ndim, self->sizes);
    if (!m) return th_last_status();
    th_tensor *v = scalar_as(value, self->dtype);
    if (!v) {
        th_tensor_release(m);
        return th_last_status();
    }
    if (mask->storage == self->storage) { /* mask read while self changes */
        th_tensor *mc = th_clone(m);
        th_tensor_release(m);
        if (!(m = mc)) {
            th_tensor_release(v);
            return th_last_status();
        }
    }
    th__bump_version(self);
    const th_tensor *ops[2] = {self, m};
    th_iter it;
    th__iter_init(&it, 2, ops);
    static const th_loop_fn loops[9] = {NULL, mfill_8, mfill_16, NULL,
                                        mfill_32, NULL, NULL, NULL, mfill_64};
    th__iter_run(&it, loops[th_dtype_itemsize(self->dtype)], th__ptr(v),
                 !has_zero_stride(self));
    th_tensor_release(m);
    th_tensor_release(v);
    return TH_OK;
}

static int64_t count_true(const uint8_t *m, int64_t n) {
    int64_t c = 0;
    for (int64_t i = 0; i < n; i++) c += m[i] != 0;
    return c;
}

#define COMPRESS(T)                                                           \
    do {                                                                      \
        T *o = (T *)dst;                                                      \
        const T *x = (const T *)src;                                          \
        for (int64_t i = 0, k = 0; i < n; i++)                                \
            if (m[i]) o[k++] = x[i];                                          \
    } while (0)

/* dst[k++] = src[i] where m[i] */
static void compress(char *dst, const char *src, const uint8_t *m, int64_t n,
                     int64_t item) {
    switch (item) {
    case 1: COMPRESS(uint8_t); break;
    case 2: COMPRESS(uint16_t); break;
    case 4: COMPRESS(uint32_t); break;
    default: COMPRESS(uint64_t); break;
    }
}

th_tensor *th_masked_select(const th_tensor *a, const th_tensor *mask) {
    if (mask->dtype != TH_BOOL)
        return th__error_null(TH_ERR_TYPE,
                              "masked_select: expected BoolTensor for mask, "
                              "got %s", th_dtype_name(mask->dtype));
    int64_t shape[TH_MAX_DIMS];
    int nd = th_broadcast_shapes(a->ndim, a->sizes, mask->ndim, mask->sizes,
                                 shape);
    if (nd < 0) return NULL;
    th_tensor *ea = th_expand(a, nd, shape), *em = th_expand(mask, nd, shape);
    th_tensor *ac = ea ? th_contiguous(ea) : NULL;
    th_tensor *mc = em ? th_contiguous(em) : NULL;
    th_tensor *r = NULL;
    if (ac && mc) {
        int64_t n = th_numel(ac);
        const uint8_t *m = (const uint8_t *)th__ptr(mc);
        int64_t cnt = count_true(m, n);
        r = th_empty(1, &cnt, a->dtype);
        if (r) compress(th__ptr(r), th__ptr(ac), m, n, th_dtype_itemsize(a->dtype));
    }
    th_tensor_release(ea);
    th_tensor_release(em);
    th_tensor_release(ac);
    th_tensor_release(mc);
    return r;
}

#define EXPAND_MASKED(T)                                                      \
    do {                                                                      \
        T *o = (T *)dst;                                                      \
        const T *x = (const T *)srcp;                                         \
        for (int64_t i = 0, k = 0; i < n; i++)                                \
            if (m[i]) o[i] = x[k++];                                          \
    } while (0)

int th_masked_scatter_(th_tensor *self, const th_tensor *mask,
                       const th_tensor *src) {
    if (mask->dtype != TH_BOOL)
        return th__error(TH_ERR_TYPE,
                         "masked_scatter_ only supports boolean masks, but "
                         "got mask with dtype %s", th_dtype_name(mask->dtype));
    if (src->dtype != self->dtype)
        return th__error(TH_ERR_TYPE,
                         "masked_scatter_: expected self and source to have "
                         "same dtypes but got %s and %s", title(self->dtype),
                         title(src->dtype));
    th_tensor *em = th_expand(mask, self->ndim, self->sizes);
    th_tensor *mc = em ? th_contiguous(em) : NULL;
    th_tensor *sc = NULL, *work = NULL;
    int rc = TH_OK;
    if (!mc) goto fail;
    int64_t n = th_numel(mc);
    const uint8_t *m = (const uint8_t *)th__ptr(mc);
    int64_t cnt = count_true(m, n);
    if (cnt > th_numel(src)) {
        th__error(TH_ERR_RUNTIME,
                  "masked_scatter_: Number of elements of source (%lld) < "
                  "number of ones in mask (%lld)", (long long)th_numel(src),
                  (long long)cnt);
        goto fail;
    }
    if (!(sc = input_copy(src, self->dtype, self))) goto fail;
    if (!(work = work_begin(self, self->dtype))) goto fail;
    char *dst = th__ptr(work);
    const char *srcp = th__ptr(sc);
    switch (th_dtype_itemsize(self->dtype)) {
    case 1: EXPAND_MASKED(uint8_t); break;
    case 2: EXPAND_MASKED(uint16_t); break;
    case 4: EXPAND_MASKED(uint32_t); break;
    default: EXPAND_MASKED(uint64_t); break;
    }
    rc = work_end(self, work);
    goto done;
fail:
    rc = th_last_status();
done:
    th_tensor_release(em);
    th_tensor_release(mc);
    th_tensor_release(sc);
    return rc;
}

/* m[i] = (x[i] != 0) for a contiguous tensor's n elements; NaN counts as
 * nonzero, -0.0 as zero. */
static void nonzero_flags(const char *p, int dtype, int64_t n, uint8_t *m) {
    switch (dtype) {
#define NZ_CASE(E, T, S)                                                      \
    case E: {                                                                 \
        const T *x = (const T *)p;                                            \
        for (int64_t i = 0; i < n; i++) m[i] = x[i] != 0;                     \
        break;                                                                \
    }
        TH_FOR_NATIVE_DTYPES(NZ_CASE)
#undef NZ_CASE
    default: { /* float16 / bfloat16: any bit but the sign's */
        const th_half_t *x = (const th_half_t *)p;
        for (int64_t i = 0; i < n; i++) m[i] = (x[i] & 0x7fff) != 0;
    }
    }
}

th_tensor *th_nonzero(const th_tensor *a) {
    th_tensor *ac = th_contiguous(a);
    if (!ac) return NULL;
    int64_t n = th_numel(ac);
    uint8_t *m = th__alloc(n);
    th_tensor *r = NULL;
    if (m) {
        nonzero_flags(th__ptr(ac), a->dtype, n, m);
        int64_t sizes[2] = {count_true(m, n), a->ndim};
        r = th_empty(2, sizes, TH_INT64);
        if (r) {
            int64_t *o = (int64_t *)th__ptr(r);
            int64_t pos[TH_MAX_DIMS] = {0};
            int nd = a->ndim;
            for (int64_t i = 0; i < n; i++) {
                if (m[i]) {
                    memcpy(o, pos, (size_t)nd * sizeof(int64_t));
                    o += nd;
                }
                for (int d = nd - 1; d >= 0 && ++pos[d] == a->sizes[d]; d--)
                    pos[d] = 0;
            }
        }
    }
    th__free(m);
    th_tensor_release(ac);
    return r;
}

/* ---- flat indexing: take / put_ ------------------------------------- */
th_tensor *th_take(const th_tensor *a, const th_tensor *index) {
    if (!is_index_dtype(index->dtype)) {
        th__error(TH_ERR_TYPE, "take(): Expected a long tensor for index, "
                  "but got %s", title(index->dtype));
        return NULL;
    }
    th_tensor *idx = checked_index_ro(index, th_numel(a), 0, IDX_FLAT, NULL);
    if (!idx) return NULL;
    th_tensor *r = th_empty(index->ndim, index->sizes, a->dtype);
    th_tensor *ac = r ? th_contiguous(a) : NULL;
    if (ac) {
        blk_ctx c = {th__ptr(r), th__ptr(ac), (const int64_t *)th__ptr(idx),
                     th_numel(idx), 1, 0, th_dtype_itemsize(a->dtype), NULL,
                     a->dtype};
        blk_run(gather_range, &c, 1);
    } else {
        th_tensor_release(r);
        r = NULL;
    }
    th_tensor_release(ac);
    th_tensor_release(idx);
    return r;
}

int th_put_(th_tensor *self, const th_tensor *index, const th_tensor *src,
            int accumulate) {
    if (!is_index_dtype(index->dtype))
        return th__error(TH_ERR_TYPE, "put_(): Expected a long tensor for "
                         "index, but got %s", title(index->dtype));
    if (src->dtype != self->dtype)
        return th__error(TH_ERR_TYPE,
                         "put_(): self and source expected to have the same "
                         "dtype, but got self.dtype = %s and source.dtype = %s",
                         title(self->dtype), title(src->dtype));
    if (th_numel(src) != th_numel(index))
        return th__error(TH_ERR_RUNTIME,
                         "put_(): Expected source and index to have the same "
                         "number of elements, but got source.numel() = %lld, "
                         "index.numel() = %lld", (long long)th_numel(src),
                         (long long)th_numel(index));
    th_tensor *idx = checked_index_ro(index, th_numel(self), 0, IDX_FLAT, self);
    if (!idx) return th_last_status();
    int cdt = accumulate ? compute_dtype(self->dtype) : self->dtype;
    th_tensor *sc = input_copy(src, cdt, self), *one = NULL, *work = NULL;
    int rc;
    if (!sc || !(one = th_scalar_int64(1, cdt)) ||
        !(work = work_begin(self, cdt))) {
        rc = th_last_status();
    } else {
        blk_ctx c = {th__ptr(sc), th__ptr(work), (const int64_t *)th__ptr(idx),
                     th_numel(idx), 1, 0, th_dtype_itemsize(cdt), th__ptr(one),
                     cdt};
        blk_run(accumulate ? add_range : put_range, &c, 1);
        rc = work_end(self, work);
    }
    th_tensor_release(sc);
    th_tensor_release(one);
    th_tensor_release(idx);
    return rc;
}

/* ---- advanced indexing: a[..., i0, i1, ...] ------------------------- */
/* The indices turned into element offsets (of a contiguous `a`) over their
 * broadcast shape; the result is a.shape[:first] + bshape + rest. */
typedef struct {
    th_tensor *off;      /* int64 of the broadcast index shape */
    int64_t outer, ostride, inner;
    int rndim;
    int64_t rshape[TH_MAX_DIMS];
} adv_plan;

static int mask_shape_error(const th_tensor *mask, int k, const th_tensor *a,
                            int d) {
    char b1[256], b2[256];
    return th__error(TH_ERR_INDEX,
                     "The shape of the mask %s at index %d does not match "
                     "the shape of the indexed tensor %s at index %d",
                     th__shape_str(mask->ndim, mask->sizes, b1), k,
                     th__shape_str(a->ndim, a->sizes, b2), d);
}

static int adv_prepare(const th_tensor *a, int first, int n,
                       th_tensor *const *indices, adv_plan *p) {
    th_tensor *list[TH_MAX_DIMS]; /* int index tensors, one per a-dim */
    int nlist = 0, rc = TH_OK;
    p->off = NULL;
    if (first < 0 || first > a->ndim || n < 0)
        return th__error(TH_ERR_INDEX, "index: first dim %d or count %d out "
                         "of range for a tensor of dimension %d", first, n,
                         a->ndim);
    /* bool/uint8 masks become one int64 index per dim they cover */
    for (int k = 0; k < n; k++) {
        const th_tensor *ix = indices[k];
        int d = first + nlist;
        int isint = is_index_dtype(ix->dtype);
        int ismask = ix->dtype == TH_BOOL || ix->dtype == TH_UINT8;
        if (!isint && !ismask) {
            rc = th__error(TH_ERR_INDEX, "tensors used as indices must be "
                           "long, int, byte or bool tensors");
            goto fail;
        }
        int span = ismask ? ix->ndim : 1;
        if (ismask && span == 0) {
            rc = th__error(TH_ERR_NOT_IMPLEMENTED, "index: a 0-d boolean "
                           "index is not supported here; unsqueeze first");
            goto fail;
        }
        if (d + span > a->ndim) {
            rc = th__error(TH_ERR_INDEX, "too many indices for tensor of "
                           "dimension %d (got %d)", a->ndim, d + span - first);
            goto fail;
        }
        if (isint) {
            th_tensor_retain((th_tensor *)ix);
            list[nlist++] = (th_tensor *)ix;
            continue;
        }
        for (int j = 0; j < span; j++)
            if (ix->sizes[j] != a->sizes[d + j]) {
                rc = mask_shape_error(ix, j, a, d + j);
                goto fail;
            }
        th_tensor *nz = th_nonzero(ix);
        if (!nz) goto fail_status;
        for (int j = 0; j < span; j++)
            if (!(list[nlist++] = th_select(nz, 1, j))) {
                nlist--;
                th_tensor_release(nz);
                goto fail_status;
            }
        th_tensor_release(nz);
    }
    /* broadcast the index shapes */
    int nb = 0;
    int64_t bshape[TH_MAX_DIMS], tmp[TH_MAX_DIMS];
    for (int k = 0; k < nlist; k++) {
        int r = th_broadcast_shapes(nb, bshape, list[k]->ndim, list[k]->sizes,
                                    tmp);
        if (r < 0) {
            char msg[900], b1[256];
            int pos = 0;
            for (int j = 0; j < nlist && pos < 600; j++)
                pos += snprintf(msg + pos, sizeof msg - (size_t)pos, "%s%s",
                                j ? ", " : "",
                                th__shape_str(list[j]->ndim, list[j]->sizes, b1));
            rc = th__error(TH_ERR_INDEX, "shape mismatch: indexing tensors "
                           "could not be broadcast together with shapes %s",
                           msg);
            goto fail;
        }
        nb = r;
        memcpy(bshape, tmp, sizeof(int64_t) * (size_t)nb);
    }
    int rest = a->ndim - first - nlist;
    if (first + nb + rest > TH_MAX_DIMS) {
        rc = th__error(TH_ERR_VALUE, "index: result would have %d dimensions, "
                       "more than the %d supported", first + nb + rest,
                       TH_MAX_DIMS);
        goto fail;
    }
    /* offsets into a contiguous copy of a */
    int64_t cstride[TH_MAX_DIMS];
    int64_t s = 1;
    for (int d = a->ndim - 1; d >= 0; d--) {
        cstride[d] = s;
        s *= a->sizes[d];
    }
    if (!(p->off = th_empty(nb, bshape, TH_INT64))) goto fail_status;
    int64_t nidx = th_numel(p->off), *off = (int64_t *)th__ptr(p->off);
    memset(off, 0, (size_t)nidx * sizeof(int64_t));
    for (int k = 0; k < nlist; k++) {
        int d = first + k;
        th_tensor *ex = th_expand(list[k], nb, bshape);
        th_tensor *ec = ex ? index_copy_i64(ex) : NULL;
        th_tensor_release(ex);
        if (!ec || wrap_indices(ec, a->sizes[d], d, IDX_WRAP) != TH_OK) {
            th_tensor_release(ec);
            goto fail_status;
        }
        const int64_t *v = (const int64_t *)th__ptr(ec);
        for (int64_t i = 0; i < nidx; i++) off[i] += v[i] * cstride[d];
        th_tensor_release(ec);
    }
    p->outer = th__prod(first, a->sizes);
    p->ostride = th__prod(a->ndim - first, a->sizes + first);
    p->inner = th__prod(rest, a->sizes + first + nlist);
    p->rndim = first + nb + rest;
    memcpy(p->rshape, a->sizes, sizeof(int64_t) * (size_t)first);
    memcpy(p->rshape + first, bshape, sizeof(int64_t) * (size_t)nb);
    memcpy(p->rshape + first + nb, a->sizes + first + nlist,
           sizeof(int64_t) * (size_t)rest);
    for (int k = 0; k < nlist; k++) th_tensor_release(list[k]);
    return TH_OK;
fail_status:
    rc = th_last_status();
fail:
    for (int k = 0; k < nlist; k++) th_tensor_release(list[k]);
    th_tensor_release(p->off);
    p->off = NULL;
    return rc;
}

th_tensor *th_index(const th_tensor *a, int first_dim, int n,
                    th_tensor *const *indices) {
    adv_plan p;
    if (adv_prepare(a, first_dim, n, indices, &p) != TH_OK) return NULL;
    th_tensor *r = th_empty(p.rndim, p.rshape, a->dtype);
    th_tensor *ac = r ? th_contiguous(a) : NULL;
    if (ac) {
        blk_ctx c = {th__ptr(r), th__ptr(ac), (const int64_t *)th__ptr(p.off),
                     th_numel(p.off), p.inner, p.ostride,
                     th_dtype_itemsize(a->dtype), NULL, a->dtype};
        blk_run(gather_range, &c, p.outer);
    } else {
        th_tensor_release(r);
        r = NULL;
    }
    th_tensor_release(ac);
    th_tensor_release(p.off);
    return r;
}

int th_index_put_(th_tensor *self, int first_dim, int n,
                  th_tensor *const *indices, const th_tensor *values,
                  int accumulate) {
    adv_plan p;
    if (adv_prepare(self, first_dim, n, indices, &p) != TH_OK)
        return th_last_status();
    th_tensor *ev = th_expand(values, p.rndim, p.rshape);
    if (!ev) {
        char b1[256], b2[256];
        th_tensor_release(p.off);
        return th__error(TH_ERR_RUNTIME,
                         "shape mismatch: value tensor of shape %s cannot be "
                         "broadcast to indexing result of shape %s",
                         th__shape_str(values->ndim, values->sizes, b1),
                         th__shape_str(p.rndim, p.rshape, b2));
    }
    int cdt = accumulate ? compute_dtype(self->dtype) : self->dtype;
    /* a single value fills; otherwise values are materialised */
    int fill = !accumulate && th_numel(values) == 1;
    th_tensor *vc = fill ? scalar_as(values, cdt) : input_copy(ev, cdt, self);
    th_tensor *one = vc ? th_scalar_int64(1, cdt) : NULL;
    th_tensor *work = one ? work_begin(self, cdt) : NULL;
    int rc;
    if (!work) {
        rc = th_last_status();
    } else {
        blk_ctx c = {th__ptr(vc), th__ptr(work),
                     (const int64_t *)th__ptr(p.off), th_numel(p.off), p.inner,
                     p.ostride, th_dtype_itemsize(cdt),
                     fill ? th__ptr(vc) : th__ptr(one), cdt};
        blk_run(fill ? fill_range : accumulate ? add_range : put_range, &c,
                p.outer);
        rc = work_end(self, work);
    }
    th_tensor_release(ev);
    th_tensor_release(vc);
    th_tensor_release(one);
    th_tensor_release(p.off);
    return rc;
}
