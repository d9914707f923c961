/* Reductions: sum/prod/mean/amax/amin/all/any/count_nonzero/logsumexp/
 * nansum, var/std, vector norms: dims, layouts and the driver.  The
 * kernels are in reduce_kernels.c; max/min with indices, argmax/argmin
 * and cumsum/cumprod in reduce_index.c.
 *
 * A reduction runs on a dense block of the input, in some order of its
 * dims, seen as A kept x K1 reduced x M kept x K2 reduced elements (see
 * make_layout): contiguous runs are reduced by "row" kernels, while a
 * leading reduced dim (sum(dim=0) of a matrix) accumulates whole rows with
 * "column" kernels, so neither needs a copy.  Inputs whose layout does not
 * fit get their reduced dims permuted to the end and copied.
 *
 * Accumulators are double for floating inputs (float32 sums use NumPy's
 * pairwise float summation on contiguous runs) and int64 for integers and
 * bool (wrapping like PyTorch's int64 arithmetic).  float16/bfloat16
 * inputs are converted to float32 first and results converted back. */
#include "reduce_internal.h"

static int acc_kind(int dtype) {
    return th_dtype_is_floating(dtype) ? ACC_D : ACC_I;
}

/* ---- dims and shapes ------------------------------------------------ */
/* mask[d] = 1 for each reduced dim; all dims when dims is NULL/empty. */
static int parse_dims(const th_tensor *a, int ndims, const int *dims,
                      int *mask) {
    for (int d = 0; d < TH_MAX_DIMS; d++) mask[d] = 0;
    if (ndims < 0 || ndims > TH_MAX_DIMS)
        return th__error(TH_ERR_VALUE, "invalid number of reduction dims %d",
                         ndims);
    if (!dims || ndims == 0) {
        for (int d = 0; d < a->ndim; d++) mask[d] = 1;
        return TH_OK;
    }
    for (int i = 0; i < ndims; i++) {
        int d = th__wrap_dim(dims[i], a->ndim);
        if (d < 0) return th_last_status();
        if (mask[d])
            return th__error(TH_ERR_RUNTIME,
                             "dim %d appears multiple times in the list of "
                             "dims", d);
        mask[d] = 1;
    }
    return TH_OK;
}

static int out_shape(const th_tensor *a, const int *mask, int keepdim,
                     int64_t *sizes) {
    int n = 0;
    for (int d = 0; d < a->ndim; d++) {
        if (!mask[d]) sizes[n++] = a->sizes[d];
        else if (keepdim) sizes[n++] = 1;
    }
    return n;
}

static const char *dtype_title(int dtype) { return th__dtype_title(dtype); }

/* ---- layout: the dense block (A, K1, M, K2) ------------------------- */
/* In some dense order the data is A kept x K1 reduced x M kept x K2
 * reduced elements (output index a * M + m), in one of three modes:
 *   rows    (A = K1 = 1, K2 > 1): M runs of K2 contiguous elements;
 *   columns (K2 = 1):             per a, K1 rows of M elements;
 *   mixed   (K1, K2 > 1):         per a and k1, M runs of K2 elements
 *                                 (e.g. dims 0, 2, 3 of an NCHW tensor). */
typedef struct {
    th_tensor *hold; /* keeps the data alive (may be a copy) */
    const char *base;
    int64_t A, K1, M, K2;
    int dtype;
} layout;

static void layout_free(layout *L) { th_tensor_release(L->hold); }

static void set_rows(layout *L, int64_t rows, int64_t n) {
    L->A = L->K1 = 1;
    L->M = rows;
    L->K2 = n;
}

/* Finds a dense order of x (by decreasing stride) of the form above with
 * the kept dims in their own order; else copies x with the reduced dims
 * moved last (rows mode). */
static int make_layout(const th_tensor *x, const int *mask, layout *L) {
    int nd = x->ndim;
    int64_t Mt = 1, Kt = 1;
    for (int d = 0; d < nd; d++) {
        if (mask[d]) Kt *= x->sizes[d];
        else Mt *= x->sizes[d];
    }
    L->dtype = x->dtype;
    L->hold = NULL;
    L->base = NULL;
    set_rows(L, Mt, Kt);
    if (Mt == 0 || Kt == 0) return TH_OK; /* no data is read */
    int order[TH_MAX_DIMS], n = 0;
    for (int d = 0; d < nd; d++)
        if (x->sizes[d] != 1) order[n++] = d;
    for (int i = 1; i < n; i++) /* stable sort, larger stride first */
        for (int j = i;
             j > 0 && x->strides[order[j]] > x->strides[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    int ok = 1, last_kept = -1;
    int64_t expected = 1, part[4] = {1, 1, 1, 1}; /* A, K1, M, K2 */
    for (int i = n - 1; i >= 0 && ok; i--) {
        ok = x->strides[order[i]] == expected;
        expected *= x->sizes[order[i]];
    }
    /* state: the part being filled; kept dims go to parts 0 and 2,
     * reduced ones to parts 1 and 3 */
    int state = 0;
    for (int i = 0; i < n && ok; i++) {
        int d = order[i], red = mask[d];
        if (red && (state == 0 || state == 2)) state++;
        if (!red && state == 1) state = 2;
        if (!red && state == 3) ok = 0;
        if (!red) {
            if (d < last_kept) ok = 0;
            last_kept = d;
        }
        part[state] *= x->sizes[d];
    }
    if (ok) {
        th_tensor_retain((th_tensor *)x);
        L->hold = (th_tensor *)x;
        L->base = th__ptr(x);
        if (part[3] == 1 && part[2] == 1) {
            set_rows(L, part[0], part[1]);
        } else if (part[3] == 1) {
            L->A = part[0];
            L->K1 = part[1];
            L->M = part[2];
            L->K2 = 1;
        } else if (part[1] == 1) {
            set_rows(L, part[0] * part[2], part[3]);
        } else {
            L->A = part[0];
            L->K1 = part[1];
            L->M = part[2];
            L->K2 = part[3];
        }
        return TH_OK;
    }
    int perm[TH_MAX_DIMS], p = 0;
    for (int d = 0; d < nd; d++) if (!mask[d]) perm[p++] = d;
    for (int d = 0; d < nd; d++) if (mask[d]) perm[p++] = d;
    th_tensor *v = th_permute(x, nd, perm);
    th_tensor *c = v ? th_contiguous(v) : NULL;
    th_tensor_release(v);
    if (!c) return th_last_status();
    L->hold = c;
    L->base = th__ptr(c);
    return TH_OK;
}

/* ---- running a kernel over a layout --------------------------------- */
#define RED_COL_W 16384 /* columns per task: reductions (heap accumulators) */

typedef struct {
    const layout *L;
    row_fn row;
    col_fn col;
    const kparam *kp;
    int kop, kind;
    int64_t item, nb, nch, chunk_len;
    char *acc;      /* A * M accumulators */
    char *partial;  /* per-chunk accumulators */
    int64_t a;      /* row being split (rows mode) */
} run_ctx;

static void init_acc(int kop, int kind, void *acc, int64_t n) {
    if (kind == ACC_D) {
        double v = init_d(kop), *p = acc;
        for (int64_t i = 0; i < n; i++) p[i] = v;
    } else {
        int64_t v = init_i(kop), *p = acc;
        for (int64_t i = 0; i < n; i++) p[i] = v;
    }
}

/* acc[i] = comb(acc[i], other[i]) */
static void comb_acc(int kop, int kind, void *acc, const void *other,
                     int64_t n) {
    if (kind == ACC_D) {
        double *p = acc;
        const double *q = other;
        for (int64_t i = 0; i < n; i++) p[i] = comb_d(kop, p[i], q[i]);
    } else {
        int64_t *p = acc;
        const int64_t *q = other;
        for (int64_t i = 0; i < n; i++) p[i] = comb_i(kop, p[i], q[i]);
    }
}

/* Combines nch partial arrays of n accumulators into acc, in order. */
static void comb_partials(const run_ctx *c, int64_t n) {
    for (int64_t i = 0; i < c->nch; i++)
        comb_acc(c->kop, c->kind, c->acc, c->partial + i * n * 8, n);
}

/* rows mode: rows [b, e) */
static void rows_task(int64_t b, int64_t e, void *vc) {
    run_ctx *c = vc;
    int64_t K = c->L->K2;
    c->row(c->L->base + b * K * c->item, e - b, K, c->kp, b,
           c->acc + b * 8);
}

/* rows mode, one long row c->a split in chunks: chunk i -> partial[i] */
static void row_chunks_task(int64_t b, int64_t e, void *vc) {
    run_ctx *c = vc;
    int64_t K = c->L->K2;
    const char *row = c->L->base + c->a * K * c->item;
    for (int64_t i = b; i < e; i++) {
        int64_t k0 = i * c->chunk_len, k1 = TH_MIN(K, k0 + c->chunk_len);
        c->row(row + k0 * c->item, 1, k1 - k0, c->kp, c->a,
               c->partial + i * 8);
    }
}

/* columns mode: rows [k0, k1) of output block t = (a, column block) */
static void col_block(run_ctx *c, int64_t t, int64_t k0, int64_t k1,
                      char *acc) {
    const layout *L = c->L;
    int64_t a = t / c->nb, b0 = (t % c->nb) * RED_COL_W;
    int64_t w = TH_MIN(RED_COL_W, L->M - b0), out0 = a * L->M + b0;
    c->col(L->base + ((a * L->K1 + k0) * L->M + b0) * c->item, k1 - k0,
           L->M * c->item, w, c->kp, out0, acc + out0 * 8);
}

static void cols_task(int64_t b, int64_t e, void *vc) {
    run_ctx *c = vc;
    for (int64_t t = b; t < e; t++) col_block(c, t, 0, c->L->K1, c->acc);
}

/* mixed mode: outputs [o0, o1) over rows [k0, k1) of K1 */
static void mixed_block(run_ctx *c, int64_t o0, int64_t o1, int64_t k0,
                        int64_t k1, char *acc) {
    const layout *L = c->L;
    while (o0 < o1) {
        int64_t a = o0 / L->M, m0 = o0 % L->M;
        int64_t m1 = TH_MIN(L->M, m0 + (o1 - o0));
        for (int64_t k = k0; k < k1; k++)
            c->row(L->base + ((a * L->K1 + k) * L->M + m0) * L->K2 * c->item,
                   m1 - m0, L->K2, c->kp, o0, acc + o0 * 8);
        o0 += m1 - m0;
    }
}

static void mixed_task(int64_t b, int64_t e, void *vc) {
    run_ctx *c = vc;
    mixed_block(c, b, e, 0, c->L->K1, c->acc);
}

/* columns or mixed mode, reduced rows split in chunks over K1 */
static void k1_chunks_task(int64_t b, int64_t e, void *vc) {
    run_ctx *c = vc;
    const layout *L = c->L;
    int64_t n = L->A * L->M;
    for (int64_t i = b; i < e; i++) {
        int64_t k0 = i * c->chunk_len, k1 = TH_MIN(L->K1, k0 + c->chunk_len);
        char *part = c->partial + i * n * 8;
        if (L->K2 == 1)
            for (int64_t t = 0; t < L->A * c->nb; t++)
                col_block(c, t, k0, k1, part);
        else
            mixed_block(c, 0, n, k0, k1, part);
    }
}

/* Splits K1 into chunks with private accumulators, then combines them. */
static int run_k1_chunks(run_ctx *c, int64_t nch) {
    int64_t n = c->L->A * c->L->M;
    c->nch = nch;
    c->chunk_len = (c->L->K1 + nch - 1) / nch;
    c->partial = th__alloc(nch * n * 8);
    if (!c->partial) return th_last_status();
    init_acc(c->kop, c->kind, c->partial, nch * n);
    th_parallel_for(nch, 1, k1_chunks_task, c);
    comb_partials(c, n);
    th__free(c->partial);
    return TH_OK;
}

/* Fewer outputs than this split their reduced elements into chunks of
 * about TH_GRAIN (at most RED_MAX_CHUNKS), whatever the thread count. */
#define RED_FEW 4
#define RED_MAX_CHUNKS 64

/* Fills acc (A * M accumulators of 8 bytes) with the reduction of L. */
static int run_kernel(const layout *L, int kop, const kparam *kp, void *acc) {
    run_ctx c;
    memset(&c, 0, sizeof c);
    c.L = L;
    c.kp = kp;
    c.kop = kop;
    c.kind = acc_kind(L->dtype);
    c.item = th_dtype_itemsize(L->dtype);
    c.acc = acc;
    c.row = th__red_row_fns[kop][L->dtype];
    c.col = th__red_col_fns[kop][L->dtype];
    int64_t nout = L->A * L->M, K = L->K1 * L->K2;
    if (!c.row || !c.col) /* before any early return: its accumulators are unset */
        return th__error(TH_ERR_TYPE, "reduction not supported for %s",
                         th_dtype_name(L->dtype));
    init_acc(kop, c.kind, acc, nout);
    if (nout == 0 || K == 0) return TH_OK;
    /* How the work is split (and so the order of float additions) depends
     * on the shape only, never on the thread count, so results are the
     * same bits on any number of threads. */
    int big = nout * K >= 2 * TH_GRAIN;
    if (L->K1 == 1) { /* rows */
        if (!big || nout >= RED_FEW || K < 2 * TH_GRAIN) {
            th_parallel_for(nout, TH_MAX(1, TH_GRAIN / K), rows_task, &c);
            return TH_OK;
        }
        /* few long rows: split each row across threads */
        c.nch = TH_MIN(RED_MAX_CHUNKS, K / TH_GRAIN);
        c.chunk_len = (K + c.nch - 1) / c.nch;
        c.partial = th__alloc(c.nch * 8);
        if (!c.partial) return th_last_status();
        char *all = c.acc;
        for (c.a = 0; c.a < nout; c.a++) {
            init_acc(kop, c.kind, c.partial, c.nch);
            th_parallel_for(c.nch, 1, row_chunks_task, &c);
            c.acc = all + c.a * 8;
            comb_partials(&c, 1);
            c.acc = all;
        }
        th__free(c.partial);
        return TH_OK;
    }
    if (L->K2 == 1) { /* columns */
        c.nb = (L->M + RED_COL_W - 1) / RED_COL_W;
        int64_t tasks = L->A * c.nb;
        if (!big || tasks >= RED_FEW || L->K1 < 2 * RED_FEW)
            th_parallel_for(tasks, TH_MAX(1, TH_GRAIN / (L->K1 *
                                           TH_MIN(L->M, RED_COL_W))),
                             cols_task, &c);
        else /* few column blocks: split the reduced rows */
            return run_k1_chunks(&c, TH_MIN(TH_MIN(RED_MAX_CHUNKS, L->K1),
                                            nout * K / TH_GRAIN));
        return TH_OK;
    }
    /* mixed */
    if (!big || nout >= RED_FEW || L->K1 < RED_FEW)
        th_parallel_for(nout, TH_MAX(1, TH_GRAIN / K), mixed_task, &c);
    else
        return run_k1_chunks(&c, TH_MIN(TH_MIN(RED_MAX_CHUNKS, L->K1),
                                        nout * K / TH_GRAIN));
    return TH_OK;
}

/* ---- writing results ------------------------------------------------ */
#define FROM_D_f32(v) ((float)(v))
#define FROM_D_f64(v) (v)
#define FROM_D_i8(v) ((int8_t)(int64_t)(v))
#define FROM_D_u8(v) ((uint8_t)(int64_t)(v))
#define FROM_D_i16(v) ((int16_t)(int64_t)(v))
#define FROM_D_i32(v) ((int32_t)(int64_t)(v))
#define FROM_D_i64(v) ((int64_t)(v))
#define FROM_D_b8(v) ((th_bool_t)((v) != 0))
#define FROM_I_f32(v) ((float)(v))
#define FROM_I_f64(v) ((double)(v))
#define FROM_I_i8(v) ((int8_t)(v))
#define FROM_I_u8(v) ((uint8_t)(v))
#define FROM_I_i16(v) ((int16_t)(v))
#define FROM_I_i32(v) ((int32_t)(v))
#define FROM_I_i64(v) (v)
#define FROM_I_b8(v) ((th_bool_t)((v) != 0))

/* Converts n accumulators into the (contiguous) output tensor. */
static void write_acc(th_tensor *out, int kind, const void *acc, int64_t n) {
    char *o = th__ptr(out);
    const double *vd = acc;
    const int64_t *vi = acc;
    int bf = out->dtype == TH_BFLOAT16;
    switch (out->dtype) {
#define WRITE(E, T, S)                                                        \
    case E:                                                                   \
        if (kind == ACC_D)                                                    \
            for (int64_t i = 0; i < n; i++) ((T *)o)[i] = FROM_D_##S(vd[i]);  \
        else                                                                  \
            for (int64_t i = 0; i < n; i++) ((T *)o)[i] = FROM_I_##S(vi[i]);  \
        break;
        TH_FOR_NATIVE_DTYPES(WRITE)
#undef WRITE
    case TH_FLOAT16:
    case TH_BFLOAT16:
        for (int64_t i = 0; i < n; i++) {
            float f = kind == ACC_D ? (float)vd[i] : (float)vi[i];
            ((th_half_t *)o)[i] = bf ? th__float_to_bf16(f)
                                     : th__float_to_half(f);
        }
        break;
    }
}

/* ---- the shared driver ---------------------------------------------- */
typedef struct {
    int mask[TH_MAX_DIMS];
    int out_ndim;
    int64_t out_sizes[TH_MAX_DIMS];
    int64_t M, K;
} plan;

static int make_plan(const th_tensor *a, int ndims, const int *dims,
                     int keepdim, plan *P) {
    if (parse_dims(a, ndims, dims, P->mask)) return th_last_status();
    P->out_ndim = out_shape(a, P->mask, keepdim, P->out_sizes);
    P->M = P->K = 1;
    for (int d = 0; d < a->ndim; d++) {
        if (P->mask[d]) P->K *= a->sizes[d];
        else P->M *= a->sizes[d];
    }
    return TH_OK;
}

/* Casts a for computing, builds the layout and allocates M accumulators.
 * On success the caller frees *acc and the layout. */
static int prepare(const th_tensor *a, const plan *P, int cast_to, layout *L,
                   void **acc) {
    th_tensor *x = compute_copy(a, cast_to);
    if (!x) return th_last_status();
    int rc = make_layout(x, P->mask, L);
    th_tensor_release(x);
    if (rc) return rc;
    *acc = th__alloc(TH_MAX(P->M, 1) * 8);
    if (!*acc) {
        layout_free(L);
        return th_last_status();
    }
    return TH_OK;
}

static th_tensor *finish(const plan *P, int out_dtype, int kind, void *acc,
                         layout *L) {
    th_tensor *out = th_empty(P->out_ndim, P->out_sizes, out_dtype);
    if (out) write_acc(out, kind, acc, P->M);
    th__free(acc);
    layout_free(L);
    return out;
}

/* A single reduction kop of a (cast to cast_to) into out_dtype. */
static th_tensor *simple_reduce(const th_tensor *a, const plan *P, int kop,
                                int cast_to, int out_dtype, double scale) {
    if (P->M == 0) return th_empty(P->out_ndim, P->out_sizes, out_dtype);
    layout L;
    void *acc;
    if (prepare(a, P, cast_to, &L, &acc)) return NULL;
    kparam kp = {0, NULL};
    if (run_kernel(&L, kop, &kp, acc)) {
        th__free(acc);
        layout_free(&L);
        return NULL;
    }
    int kind = acc_kind(L.dtype);
    if (scale != 1.0) { /* mean: kind is ACC_D */
        double *v = acc;
        for (int64_t i = 0; i < P->M; i++) v[i] *= scale;
    }
    return finish(P, out_dtype, kind, acc, &L);
}

static th_tensor *logsumexp(const th_tensor *a, const plan *P, int dtype) {
    if (P->M == 0) return th_empty(P->out_ndim, P->out_sizes, dtype);
    layout L;
    void *acc;
    if (prepare(a, P, dtype, &L, &acc)) return NULL;
    double *m = acc, *s = th__alloc(P->M * 8);
    kparam kp = {0, NULL};
    int rc = s ? run_kernel(&L, K_MAX, &kp, m) : th_last_status();
    if (rc == TH_OK) {
        /* shift by the max, but not by an infinite one (as PyTorch) */
        for (int64_t i = 0; i < P->M; i++)
            if (isinf(m[i])) m[i] = 0;
        kp.shift = m;
        rc = run_kernel(&L, K_SUMEXP, &kp, s);
    }
    if (rc) {
        th__free(s);
        th__free(acc);
        layout_free(&L);
        return NULL;
    }
    for (int64_t i = 0; i < P->M; i++) m[i] = log(s[i]) + m[i];
    th__free(s);
    return finish(P, dtype, ACC_D, acc, &L);
}

th_tensor *th_reduce(int op, const th_tensor *a, int ndims, const int *dims,
                     int keepdim, int dtype) {
    if (op < 0 || op >= TH_NUM_REDUCE_OPS)
        return th__error_null(TH_ERR_VALUE, "invalid reduction op %d", op);
    if (dtype >= TH_NUM_DTYPES)
        return th__error_null(TH_ERR_TYPE, "invalid dtype code %d", dtype);
    const char *name = th__op_name(TH_OP_REDUCE, op);
    /* complex sum/mean are the binding's (over the real pairs) */
    if (th__refuse_complex(name, a->dtype) || (dtype >= 0 && th__refuse_complex(name, dtype)))
        return NULL;
    int takes_dtype = (th__op_flags(TH_OP_REDUCE, op) & TH_OPF_TAKES_DTYPE) != 0;
    if (dtype >= 0 && !takes_dtype)
        return th__error_null(TH_ERR_TYPE, "%s() got an unexpected keyword "
                              "argument 'dtype'", name);
    plan P;
    if (make_plan(a, ndims, dims, keepdim, &P)) return NULL;
    int in = a->dtype, fl = th_dtype_is_floating(in);
    switch (op) {
    case TH_RED_SUM:
    case TH_RED_PROD:
    case TH_RED_NANSUM: {
        int cd = dtype >= 0 ? dtype : in;
        int od = dtype >= 0 ? dtype : fl ? in : TH_INT64;
        int kop = op == TH_RED_PROD ? K_PROD
                  : op == TH_RED_NANSUM ? K_NANSUM : K_SUM;
        return simple_reduce(a, &P, kop, cd, od, 1.0);
    }
    case TH_RED_MEAN:
        if (dtype >= 0 && !th_dtype_is_floating(dtype))
            return th__error_null(TH_ERR_RUNTIME,
                                  "mean(): could not infer output dtype. "
                                  "Optional dtype must be either a floating "
                                  "point or complex dtype. Got: %s",
                                  dtype_title(dtype));
        if (dtype < 0 && !fl)
            return th__error_null(TH_ERR_RUNTIME,
                                  "mean(): could not infer output dtype. "
                                  "Input dtype must be either a floating "
                                  "point or complex dtype. Got: %s",
                                  dtype_title(in));
        if (dtype < 0) dtype = in;
        /* a float16 result is computed from the float32 values (PyTorch) */
        return simple_reduce(a, &P, K_SUM,
                             th__is_half(dtype) && in != dtype ? TH_FLOAT32
                                                               : dtype,
                             dtype, P.K ? 1.0 / (double)P.K : NAN);
    case TH_RED_AMAX:
    case TH_RED_AMIN:
        if (th_numel(a) == 0) {
            if (!dims || ndims == 0)
                return th__error_null(TH_ERR_RUNTIME,
                                      "%s(): Expected reduction dim to be "
                                      "specified for input.numel() == 0. "
                                      "Specify the reduction dim with the "
                                      "'dim' argument.", name);
            for (int d = 0; d < a->ndim; d++)
                if (P.mask[d] && a->sizes[d] == 0)
                    return th__error_null(TH_ERR_INDEX,
                                          "%s(): Expected reduction dim %d to "
                                          "have non-zero size.", name, d);
        }
        return simple_reduce(a, &P, op == TH_RED_AMAX ? K_MAX : K_MIN, in, in,
                             1.0);
    case TH_RED_ALL:
    case TH_RED_ANY:
        /* uint8 keeps its dtype, as in PyTorch */
        return simple_reduce(a, &P, op == TH_RED_ALL ? K_ALL : K_ANY, in,
                             in == TH_UINT8 ? TH_UINT8 : TH_BOOL, 1.0);
    case TH_RED_COUNT_NONZERO:
        return simple_reduce(a, &P, K_COUNT, in, TH_INT64, 1.0);
    case TH_RED_LOGSUMEXP:
        return logsumexp(a, &P, fl ? in : th_get_default_dtype());
    }
    return NULL;
}

/* ---- var / std ------------------------------------------------------ */
th_tensor *th_var(const th_tensor *a, int ndims, const int *dims,
                  double correction, int keepdim, int take_sqrt) {
    if (th__refuse_complex(take_sqrt ? "std" : "var", a->dtype)) return NULL;
    plan P;
    if (make_plan(a, ndims, dims, keepdim, &P)) return NULL;
    if (!th_dtype_is_floating(a->dtype))
        return th__error_null(TH_ERR_RUNTIME, "std and var only support "
                              "floating point and complex dtypes");
    if (P.M == 0) return th_empty(P.out_ndim, P.out_sizes, a->dtype);
    layout L;
    void *acc;
    if (prepare(a, &P, a->dtype, &L, &acc)) return NULL;
    double *mean = acc, *m2 = th__alloc(P.M * 8);
    kparam kp = {0, NULL};
    /* two passes in double: the mean, then squared deviations from it */
    int rc = m2 ? run_kernel(&L, K_SUMD, &kp, mean) : th_last_status();
    if (rc == TH_OK) {
        for (int64_t i = 0; i < P.M; i++) mean[i] /= (double)P.K;
        kp.shift = mean;
        rc = run_kernel(&L, K_SQDEV, &kp, m2);
    }
    if (rc) {
        th__free(m2);
        th__free(acc);
        layout_free(&L);
        return NULL;
    }
    /* as PyTorch: divide by max(0, N - correction), giving inf or nan */
    double n = (double)P.K;
    double div = n > correction ? n - correction : 0.0;
    for (int64_t i = 0; i < P.M; i++) {
        double v = m2[i] / div;
        mean[i] = take_sqrt ? sqrt(v) : v;
    }
    th__free(m2);
    return finish(&P, a->dtype, ACC_D, acc, &L);
}

/* ---- vector norms --------------------------------------------------- */
th_tensor *th_norm(const th_tensor *a, double p, int ndims, const int *dims,
                   int keepdim) {
    plan P;
    if (th__refuse_complex("linalg_vector_norm", a->dtype)) return NULL;
    if (make_plan(a, ndims, dims, keepdim, &P)) return NULL;
    if (!th_dtype_is_floating(a->dtype))
        return th__error_null(TH_ERR_RUNTIME, "linalg.vector_norm: Expected a "
                              "floating point or complex tensor as input. "
                              "Got %s", dtype_title(a->dtype));
    if ((p < 0 || isinf(p)) && th_numel(a) == 0) {
        /* max/min-like norms have no identity */
        if (!dims || ndims == 0)
            return th__error_null(TH_ERR_RUNTIME, "linalg.vector_norm cannot "
                                  "compute the %g norm on an empty tensor "
                                  "because the operation does not have an "
                                  "identity", p);
        for (int d = 0; d < a->ndim; d++)
            if (P.mask[d] && a->sizes[d] == 0)
                return th__error_null(TH_ERR_RUNTIME, "linalg.vector_norm "
                                      "cannot compute the %g norm on the "
                                      "dimension %d because this dimension "
                                      "is empty and the operation does not "
                                      "have an identity", p, d);
    }
    int kop = p == 2 ? K_SUMSQ : p == 1 ? K_SUMABS : p == 0 ? K_COUNT
              : p == INFINITY ? K_MAXABS : p == -INFINITY ? K_MINABS
              : K_SUMPOW;
    if (P.M == 0) return th_empty(P.out_ndim, P.out_sizes, a->dtype);
    layout L;
    void *acc;
    if (prepare(a, &P, a->dtype, &L, &acc)) return NULL;
    kparam kp = {p, NULL};
    if (run_kernel(&L, kop, &kp, acc)) {
        th__free(acc);
        layout_free(&L);
        return NULL;
    }
    double *v = acc;
    if (kop == K_SUMSQ)
        for (int64_t i = 0; i < P.M; i++) v[i] = sqrt(v[i]);
    else if (kop == K_SUMPOW)
        for (int64_t i = 0; i < P.M; i++) v[i] = pow(v[i], 1.0 / p);
    return finish(&P, a->dtype, ACC_D, acc, &L);
}
