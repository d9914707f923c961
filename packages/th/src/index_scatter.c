/* Gather / scatter along a dim and masks: gather, scatter_, scatter_add_,
 * scatter_reduce_, masked_fill_, masked_select, masked_scatter_, nonzero
 * (index.c has the other indexing ops and describes the common rules). */
#include "index_internal.h"

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
    case 16: SG_GATHER(th_u128); break;
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
    case 16: SG_PUT(th_u128); break;
    default: SG_PUT(uint64_t); break;
    }
}

int th_scatter_(th_tensor *self, int dim, const th_tensor *index,
                const th_tensor *src, int reduce, int include_self) {
    if (reduce < TH_SCATTER_NONE || reduce > TH_SCATTER_AMIN)
        return th__error(TH_ERR_VALUE, "scatter(): unknown reduce code %d",
                         reduce);
    if (th__check_internal_overlap(self)) return th_last_status();
    if (reduce != TH_SCATTER_NONE && th__refuse_complex("scatter_reduce", self->dtype))
        return th_last_status();
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

static void mfill_128(char **d, const int64_t *s, int64_t n, void *ctx) {
    for (int64_t i = 0; i < n; i++)
        if (*(const uint8_t *)(d[1] + i * s[1])) memcpy(d[0] + i * s[0], ctx, 16);
}

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
    int64_t item = th_dtype_itemsize(self->dtype);
    th_loop_fn fill = item == 16 ? mfill_128 : item == 8 ? mfill_64 : item == 4 ? mfill_32
                      : item == 2 ? mfill_16 : mfill_8;
    th__iter_run(&it, fill, th__ptr(v),
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
    case 16: COMPRESS(th_u128); break;
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
    case 16: EXPAND_MASKED(th_u128); break;
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
    case TH_COMPLEX64:
    case TH_COMPLEX128: { /* either part nonzero */
        int f64 = dtype == TH_COMPLEX128;
        for (int64_t i = 0; i < n; i++)
            m[i] = f64 ? ((const double *)p)[2 * i] != 0 || ((const double *)p)[2 * i + 1] != 0
                       : ((const float *)p)[2 * i] != 0 || ((const float *)p)[2 * i + 1] != 0;
        break;
    }
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
