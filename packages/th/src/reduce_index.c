/* Reductions that keep positions: max/min with indices, argmax/argmin,
 * cumsum/cumprod (reduce.c has the others). */
#include "reduce_internal.h"

#define COL_W 1024 /* columns per task (stack buffers) */

/* ---- max/min with indices ------------------------------------------- */
/* Index of the first extreme; a NaN is the extreme and the first one wins
 * (for integers `v != v` is false and folds away).  Rows are scanned in
 * blocks: a vectorised block extreme, then a scalar search of the block
 * only when it holds a better value (rare on long rows).  Columns keep a
 * running (best, index) per column. */
#define ARG_BLOCK 1024
#define ARG_KERNELS(E, T, S, NAME, CMP)                                       \
    static int64_t NAME##_row_##S(const T *x, int64_t n, T *best) {          \
        T b = x[0];                                                           \
        int64_t bi = 0;                                                       \
        for (int64_t i0 = 0; i0 < n && b == b; i0 += ARG_BLOCK) {             \
            int64_t m = TH_MIN(ARG_BLOCK, n - i0);                            \
            T v = v##NAME##_##S(x + i0, m);                                   \
            if (v != v) { /* the first NaN wins */                            \
                int64_t i = 0;                                                \
                while (x[i0 + i] == x[i0 + i]) i++;                           \
                b = x[i0 + i];                                                \
                bi = i0 + i;                                                  \
            } else if (v CMP b) {                                             \
                int64_t i = 0;                                                \
                while (x[i0 + i] != v) i++;                                   \
                b = v;                                                        \
                bi = i0 + i;                                                  \
            }                                                                 \
        }                                                                     \
        *best = b;                                                            \
        return bi;                                                            \
    }                                                                         \
    static void NAME##_col_##S(const T *x, int64_t K, int64_t B, int64_t w,   \
                               T *restrict best, int64_t *restrict idx) {     \
        for (int64_t j = 0; j < w; j++) {                                     \
            best[j] = x[j];                                                   \
            idx[j] = 0;                                                       \
        }                                                                     \
        for (int64_t k = 1; k < K; k++) {                                     \
            const T *row = x + k * B;                                         \
            for (int64_t j = 0; j < w; j++) {                                 \
                T v = row[j], b = best[j];                                    \
                if (v CMP b || (v != v && b == b)) {                          \
                    best[j] = v;                                              \
                    idx[j] = k;                                               \
                }                                                             \
            }                                                                 \
        }                                                                     \
    }                                                                         \
    /* (best, idx) of a later chunk replaces an earlier one if better */     \
    static void NAME##_merge_##S(T *b, int64_t *bi, T v, int64_t vi) {        \
        if (*b != *b) return;                                                 \
        if (v CMP *b || v != v) {                                             \
            *b = v;                                                           \
            *bi = vi;                                                         \
        }                                                                     \
    }

#define ARG_BOTH(E, T, S)                                                     \
    ARG_KERNELS(E, T, S, max, >) ARG_KERNELS(E, T, S, min, <)
TH_FOR_NATIVE_DTYPES(ARG_BOTH)

typedef struct {
    const char *x;
    char *vals;     /* may be NULL (argmax) */
    int64_t *idx;
    int64_t A, K, B, nb, item, chunk_len;
    int dtype, is_max;
    char *pvals;    /* per-chunk partials for a split row */
    int64_t *pidx;
    int64_t a;
} arg_ctx;

/* Rows [b, e) in row mode or blocks in column mode, typed on dtype. */
static void arg_task(int64_t b, int64_t e, void *vc) {
    arg_ctx *c = vc;
    switch (c->dtype) {
#define ARG_CASE(E, T, S)                                                     \
    case E: {                                                                 \
        const T *x = (const T *)c->x;                                         \
        T *vals = (T *)c->vals, tmp[COL_W];                                   \
        for (int64_t t = b; t < e; t++) {                                     \
            if (c->B == 1) {                                                  \
                T v;                                                          \
                c->idx[t] = c->is_max ? max_row_##S(x + t * c->K, c->K, &v)  \
                                      : min_row_##S(x + t * c->K, c->K, &v); \
                if (vals) vals[t] = v;                                        \
            } else {                                                          \
                int64_t a = t / c->nb, b0 = (t % c->nb) * COL_W;              \
                int64_t w = TH_MIN(COL_W, c->B - b0), o = a * c->B + b0;      \
                const T *xs = x + a * c->K * c->B + b0;                       \
                T *vo = vals ? vals + o : tmp;                                \
                if (c->is_max)                                                \
                    max_col_##S(xs, c->K, c->B, w, vo, c->idx + o);          \
                else                                                          \
                    min_col_##S(xs, c->K, c->B, w, vo, c->idx + o);          \
            }                                                                 \
        }                                                                     \
        break;                                                                \
    }
        TH_FOR_NATIVE_DTYPES(ARG_CASE)
#undef ARG_CASE
    }
}

/* chunks [b, e) of the long row c->a */
static void arg_chunk_task(int64_t b, int64_t e, void *vc) {
    arg_ctx *c = vc;
    switch (c->dtype) {
#define ARG_CHUNK(E, T, S)                                                    \
    case E:                                                                   \
        for (int64_t i = b; i < e; i++) {                                     \
            int64_t k0 = i * c->chunk_len;                                    \
            int64_t n = TH_MIN(c->K, k0 + c->chunk_len) - k0;                 \
            const T *x = (const T *)c->x + c->a * c->K + k0;                  \
            T *pv = (T *)c->pvals + i;                                        \
            c->pidx[i] = k0 + (c->is_max ? max_row_##S(x, n, pv)             \
                                         : min_row_##S(x, n, pv));           \
        }                                                                     \
        break;
        TH_FOR_NATIVE_DTYPES(ARG_CHUNK)
#undef ARG_CHUNK
    }
}

static void arg_merge_chunks(arg_ctx *c, int64_t nch) {
    switch (c->dtype) {
#define ARG_MERGE(E, T, S)                                                    \
    case E: {                                                                 \
        T *pv = (T *)c->pvals, best = pv[0];                                  \
        int64_t bi = c->pidx[0];                                              \
        for (int64_t i = 1; i < nch; i++) {                                   \
            if (c->is_max) max_merge_##S(&best, &bi, pv[i], c->pidx[i]);     \
            else min_merge_##S(&best, &bi, pv[i], c->pidx[i]);               \
        }                                                                     \
        c->idx[c->a] = bi;                                                    \
        if (c->vals) ((T *)c->vals)[c->a] = best;                             \
        break;                                                                \
    }
        TH_FOR_NATIVE_DTYPES(ARG_MERGE)
#undef ARG_MERGE
    }
}

/* Extreme values (into vals, compute dtype, may be NULL) and indices of
 * contiguous x seen as (A, K, B), K >= 1. */
static int arg_run(const th_tensor *x, int64_t A, int64_t K, int64_t B,
                   int is_max, char *vals, int64_t *idx) {
    arg_ctx c;
    memset(&c, 0, sizeof c);
    c.x = th__ptr(x);
    c.vals = vals;
    c.idx = idx;
    c.A = A;
    c.K = K;
    c.B = B;
    c.dtype = x->dtype;
    c.is_max = is_max;
    c.item = th_dtype_itemsize(x->dtype);
    int nt = th_get_num_threads();
    if (B > 1) {
        c.nb = (B + COL_W - 1) / COL_W;
        th_parallel_for(A * c.nb, TH_MAX(1, TH_GRAIN / (K * TH_MIN(B, COL_W))),
                         arg_task, &c);
        return TH_OK;
    }
    if (nt == 1 || A >= nt || K < 2 * TH_GRAIN) {
        th_parallel_for(A, TH_MAX(1, TH_GRAIN / K), arg_task, &c);
        return TH_OK;
    }
    int64_t nch = TH_MIN(nt, K / TH_GRAIN);
    c.chunk_len = (K + nch - 1) / nch;
    c.pvals = th__alloc(nch * 8);
    c.pidx = th__alloc(nch * 8);
    if (!c.pvals || !c.pidx) {
        th__free(c.pvals);
        th__free(c.pidx);
        return th_last_status();
    }
    for (c.a = 0; c.a < A; c.a++) {
        th_parallel_for(nch, 1, arg_chunk_task, &c);
        arg_merge_chunks(&c, nch);
    }
    th__free(c.pvals);
    th__free(c.pidx);
    return TH_OK;
}

/* Contiguous compute copy of a and its (A, K, B) split around dim. */
static th_tensor *split_dim(const th_tensor *a, int dim, int cast_to,
                            int64_t *A, int64_t *K, int64_t *B) {
    *A = *K = *B = 1;
    for (int d = 0; d < a->ndim; d++) {
        if (d < dim) *A *= a->sizes[d];
        else if (d == dim) *K = a->sizes[d];
        else *B *= a->sizes[d];
    }
    th_tensor *x = compute_copy(a, cast_to);
    if (!x) return NULL;
    th_tensor *c = th_contiguous(x);
    th_tensor_release(x);
    return c;
}

/* Shared by th_minmax_dim and th_argminmax (want_values = 0). */
static int minmax_impl(const th_tensor *a, int dim, int keepdim, int is_max,
                       int want_values, const char *name, th_tensor **values,
                       th_tensor **indices) {
    if (th__refuse_complex(name, a->dtype)) return th_last_status();
    int flat = dim < -TH_MAX(a->ndim, 1);
    const th_tensor *src = a;
    th_tensor *flat_view = NULL;
    int64_t osz[TH_MAX_DIMS];
    int ondim = 0;
    if (flat) {
        if (th_numel(a) == 0)
            return th__error(TH_ERR_INDEX, "%s(): Expected reduction dim to be "
                             "specified for input.numel() == 0.", name);
        int64_t n = th_numel(a);
        flat_view = th_reshape(a, 1, &n);
        if (!flat_view) return th_last_status();
        src = flat_view;
        dim = 0;
        if (keepdim)
            for (int d = 0; d < a->ndim; d++) osz[ondim++] = 1;
    } else {
        if ((dim = th__wrap_dim(dim, a->ndim)) < 0) return th_last_status();
        if (a->ndim > 0 && a->sizes[dim] == 0)
            return th__error(TH_ERR_INDEX, "%s(): Expected reduction dim %d to "
                             "have non-zero size.", name, dim);
        for (int d = 0; d < a->ndim; d++) {
            if (d != dim) osz[ondim++] = a->sizes[d];
            else if (keepdim) osz[ondim++] = 1;
        }
    }
    int64_t A, K, B;
    th_tensor *x = NULL, *v = NULL, *vh = NULL;
    th_tensor *ix = th_empty(ondim, osz, TH_INT64);
    int rc = ix ? TH_OK : th_last_status();
    if (rc == TH_OK && th_numel(ix) > 0) {
        x = split_dim(src, src->ndim ? dim : 0, src->dtype, &A, &K, &B);
        if (!x) rc = th_last_status();
        if (rc == TH_OK && want_values) {
            v = th_empty(ondim, osz, x->dtype);
            if (!v) rc = th_last_status();
        }
        if (rc == TH_OK)
            rc = arg_run(x, A, K, B, is_max, v ? th__ptr(v) : NULL,
                         (int64_t *)th__ptr(ix));
    } else if (rc == TH_OK && want_values) {
        v = th_empty(ondim, osz, a->dtype);
        if (!v) rc = th_last_status();
    }
    if (rc == TH_OK && v && v->dtype != a->dtype) {
        vh = th_to_dtype(v, a->dtype); /* back to float16/bfloat16 */
        if (!vh) rc = th_last_status();
        th_tensor_release(v);
        v = vh;
    }
    th_tensor_release(x);
    th_tensor_release(flat_view);
    if (rc) {
        th_tensor_release(v);
        th_tensor_release(ix);
        return rc;
    }
    if (want_values) *values = v;
    *indices = ix;
    return TH_OK;
}

int th_minmax_dim(const th_tensor *a, int dim, int keepdim, int is_max,
                  th_tensor **values, th_tensor **indices) {
    if (!values || !indices)
        return th__error(TH_ERR_VALUE, "%s(): values and indices must not be "
                         "NULL", is_max ? "max" : "min");
    if (th__wrap_dim(dim, a->ndim) < 0) return th_last_status();
    return minmax_impl(a, dim, keepdim, is_max, 1, is_max ? "max" : "min",
                       values, indices);
}

th_tensor *th_argminmax(const th_tensor *a, int dim, int keepdim, int is_max) {
    const char *name = is_max ? "argmax" : "argmin";
    if (a->dtype == TH_BOOL)
        return th__error_null(TH_ERR_RUNTIME, "%s(): does not support bool "
                              "input", name);
    th_tensor *idx = NULL;
    if (minmax_impl(a, dim, keepdim, is_max, 0, name, NULL, &idx)) return NULL;
    return idx;
}

/* ---- cumsum / cumprod ----------------------------------------------- */
/* Tasks: rows a (B == 1) or (a, column block).  Floats accumulate in
 * double, integers in int64 and write int64. */
#define CUM_KERNEL(NAME, TI, TO, TA, LOAD, INIT, OPEQ)                        \
    static void NAME(const char *xp, char *op, int64_t t0, int64_t t1,        \
                     int64_t K, int64_t B, int64_t nb) {                     \
        const TI *x = (const TI *)xp;                                         \
        TO *o = (TO *)op;                                                     \
        TA acc[COL_W];                                                        \
        for (int64_t t = t0; t < t1; t++) {                                   \
            int64_t a = t / nb, b0 = (t % nb) * COL_W;                        \
            int64_t w = TH_MIN(COL_W, B - b0), base = a * K * B + b0;         \
            for (int64_t j = 0; j < w; j++) acc[j] = INIT;                    \
            for (int64_t k = 0; k < K; k++) {                                 \
                const TI *xr = x + base + k * B;                              \
                TO *orow = o + base + k * B;                                  \
                for (int64_t j = 0; j < w; j++) {                             \
                    acc[j] OPEQ LOAD(xr[j]);                                  \
                    orow[j] = (TO)acc[j];                                     \
                }                                                             \
            }                                                                 \
        }                                                                     \
    }

#define LOAD_D(v) ((double)(v))
#define LOAD_U(v) ((uint64_t)(int64_t)(v))
#define CUM_FLOAT(E, T, S)                                                    \
    CUM_KERNEL(cumsum_##S, T, T, double, LOAD_D, 0.0, +=)                     \
    CUM_KERNEL(cumprod_##S, T, T, double, LOAD_D, 1.0, *=)
#define CUM_INT(E, T, S)                                                      \
    CUM_KERNEL(cumsum_##S, T, int64_t, uint64_t, LOAD_U, 0, +=)               \
    CUM_KERNEL(cumprod_##S, T, int64_t, uint64_t, LOAD_U, 1, *=)
TH_FOR_FLOAT_DTYPES(CUM_FLOAT)
TH_FOR_INT_DTYPES(CUM_INT)
CUM_INT(TH_BOOL, th_bool_t, b8)
/* float16/bfloat16 accumulate in float, as PyTorch (overflows alike) */
CUM_KERNEL(cumsum_half, float, float, float, LOAD_D, 0.0f, +=)
CUM_KERNEL(cumprod_half, float, float, float, LOAD_D, 1.0f, *=)

typedef void (*cum_fn)(const char *, char *, int64_t, int64_t, int64_t,
                       int64_t, int64_t);
#define CUM_ENTRY(E, T, S) [E] = {cumsum_##S, cumprod_##S},
static const cum_fn cum_fns[TH_NUM_DTYPES][2] = {
    TH_FOR_NATIVE_DTYPES(CUM_ENTRY)};

typedef struct {
    cum_fn fn;
    const char *x;
    char *o;
    int64_t K, B, nb;
} cum_ctx;

static void cum_task(int64_t b, int64_t e, void *vc) {
    const cum_ctx *c = vc;
    c->fn(c->x, c->o, b, e, c->K, c->B, c->nb);
}

static th_tensor *cumulative(const th_tensor *a, int dim, int dtype,
                             int is_prod) {
    const char *name = is_prod ? "cumprod" : "cumsum";
    if (dtype >= TH_NUM_DTYPES)
        return th__error_null(TH_ERR_TYPE, "invalid dtype code %d", dtype);
    if (th__refuse_complex(name, a->dtype) || (dtype >= 0 && th__refuse_complex(name, dtype)))
        return NULL;
    if ((dim = th__wrap_dim(dim, a->ndim)) < 0) return NULL;
    if (dtype == TH_BOOL)
        return th__error_null(TH_ERR_NOT_IMPLEMENTED, "\"%s_out_cpu\" not "
                              "implemented for 'Bool'", name);
    int cd = dtype >= 0 ? dtype : a->dtype;
    int od = dtype >= 0 ? dtype : th_dtype_is_floating(a->dtype) ? a->dtype
                                                                 : TH_INT64;
    if (th_numel(a) == 0) return th_empty(a->ndim, a->sizes, od);
    int64_t A, K, B;
    th_tensor *x = split_dim(a, dim, cd, &A, &K, &B);
    if (!x) return NULL;
    int ct = x->dtype; /* compute dtype: integers produce int64 */
    th_tensor *o = th_empty(a->ndim, a->sizes,
                            th_dtype_is_floating(ct) ? ct : TH_INT64);
    if (!o) {
        th_tensor_release(x);
        return NULL;
    }
    cum_fn fn = cum_fns[ct][is_prod];
    if (th__is_half(cd)) fn = is_prod ? cumprod_half : cumsum_half;
    cum_ctx c = {fn, th__ptr(x), th__ptr(o), K, B, (B + COL_W - 1) / COL_W};
    th_parallel_for(A * c.nb, TH_MAX(1, TH_GRAIN / (K * TH_MIN(B, COL_W))),
                     cum_task, &c);
    th_tensor_release(x);
    if (o->dtype == od) return o;
    th_tensor *r = th_to_dtype(o, od);
    th_tensor_release(o);
    return r;
}

th_tensor *th_cumsum(const th_tensor *a, int dim, int dtype) {
    return cumulative(a, dim, dtype, 0);
}

th_tensor *th_cumprod(const th_tensor *a, int dim, int dtype) {
    return cumulative(a, dim, dtype, 1);
}
