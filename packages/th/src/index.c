/* Indexing: selects and the index_*_ family along a dim, flat (take /
 * put_) and advanced (integer tensor) indexing; gathers, scatters and
 * masks are in index_scatter.c, the shared checks in index_internal.h.
 *
 * Pure data movement goes by element size, so all 12 dtypes share one path.
 * Arithmetic (scatter reductions, index_add_, accumulating puts) runs per
 * native dtype; float16/bfloat16 are computed in float32 on a temporary
 * copy that is converted back.  Every index is checked, and negative ones
 * wrapped on a private int64 copy, before anything is written. */
#include <stdio.h>

#include "index_internal.h"

/* ---- helpers -------------------------------------------------------- */
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

static int index_dtype_error(const char *op, const th_tensor *index) {
    return th__error(TH_ERR_TYPE,
                     "%s(): Expected dtype int64 or int32 for index, but got "
                     "%s", op, title(index->dtype));
}

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
        case 16: GATHER_ELEMS(th_u128); return;
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
        case 16: PUT_ELEMS(th_u128); return;
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
    case 16: FILL_ELEMS(th_u128); return;
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
    if (mode == MODE_ADD && th__refuse_complex("index_add", self->dtype))
        return th_last_status();
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
    if (accumulate && th__refuse_complex("put", self->dtype)) return th_last_status();
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
    if (accumulate && th__refuse_complex("index_put_with_accumulate", self->dtype))
        return th_last_status();
    /* complex values into a real tensor would lose their imaginary parts
     * (a single value is checked by scalar_as, as a fill) */
    if (th_dtype_is_complex(values->dtype) && !th_dtype_is_complex(self->dtype) &&
        (accumulate || th_numel(values) != 1))
        return th__error(TH_ERR_RUNTIME, "Index put requires the source and "
                         "destination dtypes match, got %s for the destination "
                         "and %s for the source.", title(self->dtype),
                         title(values->dtype));
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
