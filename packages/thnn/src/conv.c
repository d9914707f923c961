/* conv2d: im2col / col2im + GEMM through libTH's th_gemm_out (OpenBLAS).
 *
 * Layout (chosen by measurement, see README): one sample at a time is
 * unfolded into col (C*kH*kW, L = OH*OW), and each group does one GEMM
 * straight into / out of the NCHW tensors, with no copies:
 *   forward:         out_n (O/g, L)   = W_g (O/g, K) @ col_g (K, L) + bias
 *   backward_input:  gcol_g (K, L)    = W_g^T @ gout_n (O/g, L), col2im
 *   backward_params: gW_g (O/g, K)   += gout_n @ col_g^T
 * (K = C/g*kH*kW).  Each sample is unfolded in bands of output rows
 * (col of about COL_TILE_BYTES, see tile_rows) so that col stays in cache
 * between the unfold and the GEMM that reads it.  Samples whose output
 * plane is small (fewer than BATCH_BELOW_L positions) are unfolded several
 * at a time into one wider col instead, see batch_samples; for large
 * planes that measured slower (col falls out of cache).
 *
 * Threads: a sample's GEMM big enough for BLAS's threads (SAMPLE_WORK
 * multiply-adds) runs them on libTH's thread pool (where OpenBLAS's
 * threads callback sends them), its unfold serial.  Smaller samples (LeNet,
 * small planes) run side by side instead when there are threads: blocks of
 * samples are tasks on the pool, each unfolding into its own col and
 * calling single-threaded GEMMs (libTH sets OpenBLAS to one thread inside
 * a region).  The weight gradient always sums per-block partials in block
 * order, and its blocks depend only on the batch size (also on one
 * thread), so results do not depend on the thread count. */
#include <string.h>

#include "conv_winograd.h"
#include "thnn_internal.h"

typedef struct conv_geom {
    int64_t N, C, H, W, O, kh, kw, OH, OW, G;
    int64_t sh, sw, ph, pw, dh, dw;
} conv_geom;

/* output positions ow in [lo, hi) read input column ow * stride + off
 * inside [0, W) */
static inline void valid_range(int64_t off, int64_t stride, int64_t W,
                               int64_t OW, int64_t *lo, int64_t *hi) {
    /* ceil(-off / stride) without -off + stride - 1 (stride may be huge) */
    int64_t l = off < 0 ? (-off - 1) / stride + 1 : 0;
    int64_t h = W - 1 - off >= 0 ? (W - 1 - off) / stride + 1 : 0;
    if (h > OW) h = OW;
    if (l > h) l = h;
    *lo = l;
    *hi = h;
}

/* ---- per-dtype inner loops (X-macro over float, double) --------------- */
#define DEFINE_IM2COL(T)                                                      \
    /* output rows [oh0, oh1) of nb samples: col (rows, nb * L_t).  The     \
       geometry is read into locals and each row's valid columns computed  \
       once (not per output row): with LeNet's 10-wide rows the per-row    \
       divisions and reloads cost more than the copies. */                 \
    THNN_VEC_CLONES static void im2col_##T(const T *x, T *col,                \
                                           const conv_geom *g, int64_t nb,    \
                                           int64_t oh0, int64_t oh1) {        \
        const int64_t OW = g->OW, H = g->H, W = g->W, sw = g->sw;             \
        const int64_t kk = g->kh * g->kw, L = (oh1 - oh0) * OW;               \
        const int64_t rows = g->C * kk, ncols = nb * L;                       \
        for (int64_t r = 0; r < rows; r++) {                                  \
            const int64_t c = r / kk, k = r % kk;                             \
            const int64_t ki = k / g->kw, kj = k % g->kw;                     \
            const int64_t off = kj * g->dw - g->pw;                           \
            const int64_t ih0 = ki * g->dh - g->ph;                           \
            int64_t lo, hi;                                                   \
            valid_range(off, sw, W, OW, &lo, &hi);                            \
            for (int64_t s = 0; s < nb; s++) {                                \
                const T *xp = x + (s * g->C + c) * H * W;                     \
                T *dst = col + r * ncols + s * L;                             \
                for (int64_t oh = oh0; oh < oh1; oh++, dst += OW) {           \
                    const int64_t ih = oh * g->sh + ih0;                      \
                    if (ih < 0 || ih >= H) {                                  \
                        for (int64_t ow = 0; ow < OW; ow++) dst[ow] = 0;      \
                        continue;                                             \
                    }                                                         \
                    const T *src = xp + ih * W; /* read at ow * sw + off */   \
                    for (int64_t ow = 0; ow < lo; ow++) dst[ow] = 0;          \
                    if (sw == 1 && hi - lo >= 16) /* ResNet's 56..14 */     \
                        memcpy(dst + lo, src + lo + off,                      \
                               (size_t)(hi - lo) * sizeof(T));                \
                    else if (sw == 1) /* LeNet's 10: a call costs more */     \
                        for (int64_t ow = lo; ow < hi; ow++)                  \
                            dst[ow] = src[ow + off];                          \
                    else if (sw == 2) /* a constant stride vectorises */  \
                        for (int64_t ow = lo; ow < hi; ow++)                  \
                            dst[ow] = src[ow * 2 + off];                      \
                    else                                                      \
                        for (int64_t ow = lo; ow < hi; ow++)                  \
                            dst[ow] = src[ow * sw + off];                     \
                    for (int64_t ow = hi; ow < OW; ow++) dst[ow] = 0;         \
                }                                                             \
            }                                                                 \
        }                                                                     \
    }                                                                         \
    /* adds col back into x (zeroed by the caller); one thread per (s, c)   \
       plane, so no two threads write the same element */                    \
    static void col2im_##T(T *x, const T *col, const conv_geom *g,            \
                           int64_t nb, int64_t oh0, int64_t oh1) {            \
        const int64_t OW = g->OW, H = g->H, W = g->W, sw = g->sw;             \
        const int64_t kk = g->kh * g->kw, L = (oh1 - oh0) * OW;               \
        const int64_t ncols = nb * L;                                         \
        for (int64_t sc = 0; sc < nb * g->C; sc++) {                          \
            const int64_t s = sc / g->C, c = sc % g->C;                       \
            T *xp = x + sc * H * W;                                           \
            for (int64_t k = 0; k < kk; k++) {                                \
                const int64_t ki = k / g->kw, kj = k % g->kw;                 \
                const int64_t off = kj * g->dw - g->pw;                       \
                const int64_t ih0 = ki * g->dh - g->ph;                       \
                int64_t lo, hi;                                               \
                valid_range(off, sw, W, OW, &lo, &hi);                        \
                const T *src = col + (c * kk + k) * ncols + s * L;            \
                for (int64_t oh = oh0; oh < oh1; oh++, src += OW) {           \
                    const int64_t ih = oh * g->sh + ih0;                      \
                    if (ih < 0 || ih >= H) continue;                          \
                    T *dst = xp + ih * W; /* written at ow * sw + off */      \
                    if (sw == 1)                                              \
                        for (int64_t ow = lo; ow < hi; ow++)                  \
                            dst[ow + off] += src[ow];                         \
                    else                                                      \
                        for (int64_t ow = lo; ow < hi; ow++)                  \
                            dst[ow * sw + off] += src[ow];                    \
                }                                                             \
            }                                                                 \
        }                                                                     \
    }
DEFINE_IM2COL(float)
DEFINE_IM2COL(double)

static void im2col_rows(const th_tensor *x, int64_t n0, th_tensor *col,
                        const conv_geom *g, int64_t nb, int64_t oh0, int64_t oh1) {
    int64_t off = n0 * g->C * g->H * g->W;
    if (x->dtype == TH_FLOAT32)
        im2col_float((const float *)thnn__data(x) + off, thnn__data(col), g, nb, oh0, oh1);
    else
        im2col_double((const double *)thnn__data(x) + off, thnn__data(col), g, nb, oh0,
                      oh1);
}

static void col2im_rows(th_tensor *x, int64_t n0, const th_tensor *col,
                        const conv_geom *g, int64_t nb, int64_t oh0, int64_t oh1) {
    int64_t off = n0 * g->C * g->H * g->W;
    if (x->dtype == TH_FLOAT32)
        col2im_float((float *)thnn__data(x) + off, thnn__data(col), g, nb, oh0, oh1);
    else
        col2im_double((double *)thnn__data(x) + off, thnn__data(col), g, nb, oh0, oh1);
}

/* ---- sample batches for small output planes ---------------------------
 * With few output positions per sample (ResNet's 14x14 and 7x7 stages) one
 * GEMM per sample is skinny (49 columns for 512 rows) and runs far below
 * BLAS speed; there nb samples are unfolded side by side into one
 * (K, nb * L) col and multiplied at once.  The GEMM's (O, nb * L) result
 * is not NCHW, so it goes through a small buffer moved to / from the
 * (N, O, L) tensors by the copies below. */
#define BATCH_BELOW_L 256   /* output positions per sample below which to batch */
#define BATCH_COLS 512      /* about this many columns per batched GEMM */

static int64_t batch_samples(const conv_geom *g) {
    const int64_t L = g->OH * g->OW;
    if (L >= BATCH_BELOW_L || g->N < 2) return 1;
    int64_t nb = BATCH_COLS / (L > 0 ? L : 1);
    return nb < 1 ? 1 : nb > g->N ? g->N : nb;
}

/* rows [r0, r0 + R) of samples n0.. n0+nb of t (N, O, L), and buf (R, nb * L):
   to_buf copies t into buf, else buf is added into t (add) or copied (!add) */
#define DEFINE_GATHER(T)                                                      \
    static void move_rows_##T(T *t, T *buf, int64_t n0, int64_t nb,          \
                              int64_t O, int64_t r0, int64_t R, int64_t L,    \
                              int to_buf, int add) {                          \
        for (int64_t s = 0; s < nb; s++)                                      \
            for (int64_t r = 0; r < R; r++) {                                 \
                T *tp = t + ((n0 + s) * O + r0 + r) * L;                      \
                T *bp = buf + r * nb * L + s * L;                             \
                if (to_buf) memcpy(bp, tp, (size_t)L * sizeof(T));            \
                else if (add) for (int64_t i = 0; i < L; i++) tp[i] += bp[i]; \
                else memcpy(tp, bp, (size_t)L * sizeof(T));                   \
            }                                                                 \
    }
DEFINE_GATHER(float)
DEFINE_GATHER(double)

static void move_rows(th_tensor *t, th_tensor *buf, int64_t n0, int64_t nb,
                      int64_t O, int64_t r0, int64_t R, int64_t L, int to_buf,
                      int add) {
    if (t->dtype == TH_FLOAT32)
        move_rows_float(thnn__data(t), thnn__data(buf), n0, nb, O, r0, R, L, to_buf, add);
    else
        move_rows_double(thnn__data(t), thnn__data(buf), n0, nb, O, r0, R, L, to_buf, add);
}

static th_tensor *new_mat(int64_t rows, int64_t cols, int dtype) {
    int64_t sz[2] = {rows, cols};
    th_tensor *t = th_empty(2, sz, dtype);
    if (!t) thnn__from_th("conv2d batch buffer");
    return t;
}

/* ---- argument checks ------------------------------------------------ */
static int conv_params(const char *fn, const int64_t *stride,
                       const int64_t *padding, const int64_t *dilation,
                       int64_t groups, conv_geom *g) {
    if (!stride || !padding || !dilation)
        return thnn__error(TH_ERR_VALUE, "%s: stride, padding and dilation "
                           "must not be NULL", fn);
    if (stride[0] < 1 || stride[1] < 1)
        return thnn__error(TH_ERR_RUNTIME, "%s: non-positive stride is not "
                           "supported", fn);
    if (padding[0] < 0 || padding[1] < 0)
        return thnn__error(TH_ERR_RUNTIME, "%s: negative padding is not "
                           "supported", fn);
    if (dilation[0] < 1 || dilation[1] < 1)
        return thnn__error(TH_ERR_RUNTIME, "%s: dilation should be greater "
                           "than zero", fn);
    if (groups < 1)
        return thnn__error(TH_ERR_RUNTIME, "%s: non-positive groups is not "
                           "supported", fn);
    g->sh = stride[0]; g->sw = stride[1];
    g->ph = padding[0]; g->pw = padding[1];
    g->dh = dilation[0]; g->dw = dilation[1];
    g->G = groups;
    return TH_OK;
}

/* fills g from the input and weight shapes; checks them as PyTorch does */
static int conv_geometry(const char *fn, const th_tensor *input,
                         const th_tensor *weight, conv_geom *g) {
    char a[256], b[256];
    int rc;
    if ((rc = thnn__check_float(fn, "input", input))) return rc;
    if ((rc = thnn__check_float(fn, "weight", weight))) return rc;
    if (weight->ndim != 4)
        return thnn__error(TH_ERR_RUNTIME, "%s: expected weight to be 4-D, but "
                           "got weight of size %s", fn, thnn__shape(weight, a));
    if (input->ndim != 4)
        return thnn__error(TH_ERR_RUNTIME, "Expected 4-dimensional input for "
                           "4-dimensional weight %s, but got %d-dimensional "
                           "input of size %s instead", thnn__shape(weight, a),
                           input->ndim, thnn__shape(input, b));
    if (input->dtype != weight->dtype)
        return thnn__error(TH_ERR_RUNTIME, "Input type (%s) and weight type (%s) "
                           "should be the same", thnn__dtype_name(input->dtype),
                           thnn__dtype_name(weight->dtype));
    g->N = input->sizes[0]; g->C = input->sizes[1];
    g->H = input->sizes[2]; g->W = input->sizes[3];
    g->O = weight->sizes[0];
    g->kh = weight->sizes[2]; g->kw = weight->sizes[3];
    if (g->O % g->G)
        return thnn__error(TH_ERR_RUNTIME, "%s: out_channels (%lld) must be "
                           "divisible by groups (%lld)", fn, (long long)g->O,
                           (long long)g->G);
    int64_t want_c;
    if (thnn__mul_ovf(weight->sizes[1], g->G, &want_c))
        return thnn__size_overflow(fn, "weight size 1 times groups");
    if (want_c != g->C)
        return thnn__error(TH_ERR_RUNTIME, "Given groups=%lld, weight of size "
                           "%s, expected input%s to have %lld channels, but got "
                           "%lld channels instead", (long long)g->G,
                           thnn__shape(weight, a), thnn__shape(input, b),
                           (long long)want_c, (long long)g->C);
    g->OH = thnn_window_output_size(g->H, g->kh, g->sh, g->ph, g->dh, 0);
    if (g->OH < 0) return thnn_last_status();
    g->OW = thnn_window_output_size(g->W, g->kw, g->sw, g->pw, g->dw, 0);
    if (g->OW < 0) return thnn_last_status();
    return TH_OK;
}


/* 2-d view (rows, cols) at element offset, row stride ld, col stride cs */
static th_tensor *mat(const th_tensor *t, int64_t offset, int64_t rows,
                      int64_t cols, int64_t ld, int64_t cs) {
    int64_t sz[2] = {rows, cols}, st[2] = {ld, cs};
    return thnn__view(t, offset, 2, sz, st);
}

/* c (m, n) = beta * c + A @ B with A, B, C as views; releases them */
static int gemm_views(th_tensor *c, th_tensor *a, th_tensor *b, double beta) {
    int rc;
    if (!c || !a || !b) rc = thnn_last_status();
    else if ((rc = th_gemm_out(c, a, b, beta, 1.0))) rc = thnn__from_th("conv2d gemm");
    thnn__release(a); thnn__release(b); thnn__release(c);
    return rc;
}

/* output rows per band: col of about COL_TILE_BYTES, whole rows */
#define COL_TILE_BYTES (2048 * 1024)
static int64_t tile_rows(const conv_geom *g, int dtype) {
    const int64_t row_bytes = g->C * g->kh * g->kw * g->OW *
                              (dtype == TH_FLOAT32 ? 4 : 8);
    int64_t band = row_bytes > 0 ? COL_TILE_BYTES / row_bytes : g->OH;
    return band < 1 ? 1 : band > g->OH ? g->OH : band;
}

/* col for nb whole samples (the bands use the first rows of it) */
static th_tensor *new_col(const conv_geom *g, int dtype, int64_t nb) {
    int64_t sz[2] = {g->C * g->kh * g->kw, nb * g->OH * g->OW};
    th_tensor *t = th_empty(2, sz, dtype);
    if (!t) thnn__from_th("conv2d column buffer");
    return t;
}

/* out (N, O, L) rows set to the bias */
#define DEFINE_FILL_BIAS(T)                                                   \
    static void fill_bias_##T(T *out, const T *bias, int64_t NO, int64_t O,   \
                              int64_t L) {                                    \
        for (int64_t r = 0; r < NO; r++) {                                    \
            const T b = bias[r % O];                                          \
            for (int64_t i = 0; i < L; i++) out[r * L + i] = b;               \
        }                                                                     \
    }
DEFINE_FILL_BIAS(float)
DEFINE_FILL_BIAS(double)

/* ---- samples side by side ---------------------------------------------- */
/* Multiply-adds per sample below which samples run side by side on the pool
 * (libTH runs products below 2^22 on one thread). */
#define SAMPLE_WORK (1 << 22)
/* blocks of samples of the weight gradient (its partial sums) */
#define PARAM_BLOCKS 8

static int samples_side_by_side(const conv_geom *g) {
    const double work = (double)(g->O / g->G) * (g->C / g->G * g->kh * g->kw) *
                        (double)(g->OH * g->OW) * g->G;
    return g->N >= 2 && work < SAMPLE_WORK;
}

/* forward and backward_input: worth it only with threads to spread over
 * (each block allocates its own buffers; the serial loop reuses one), for
 * small products, and for large ones when there are at least two GEMM
 * batches per thread: the unfolding then runs on every thread too (it ran
 * on one while OpenBLAS split each product: ResNet-18's stem and stride-2
 * layers ran 1.35x faster on 2 threads than on 1, now 1.7-1.9x) */
static int spread_samples(const conv_geom *g) {
    const int64_t threads = th_get_num_threads(), nb = batch_samples(g);
    return (samples_side_by_side(g) || (g->N + nb - 1) / nb >= 2 * threads) &&
           threads > 1 && !th_in_parallel();
}

/* the weight gradient: blocks of samples with their own partial sums for
 * small products, and for larger ones whose partials stay small (ResNet's
 * stem and stride-2 layers: its unfolding then runs on every thread, not
 * only its products); never by the thread count, so that the sums are the
 * same on any */
#define PARAM_PARTIAL_BYTES (8 << 20)
static int params_side_by_side(const conv_geom *g, int dtype) {
    const double partials = (double)g->O * (double)(g->C / g->G * g->kh * g->kw) *
                            PARAM_BLOCKS * (dtype == TH_FLOAT32 ? 4 : 8);
    return samples_side_by_side(g) || (g->N >= 2 && partials <= PARAM_PARTIAL_BYTES);
}

/* which part of the batch a task runs, and the first failure */
typedef int (*sample_fn)(void *job, int64_t n0, int64_t n1, int64_t block);
typedef struct {
    sample_fn fn;
    void *job;
    int64_t N, nb, blocks;
    int failed;
} sample_run;

/* Block b runs whole GEMM batches of nb samples, the same batches as one
 * thread would (a GEMM's sums can depend on its width). */
static void sample_blocks(int64_t b0, int64_t b1, void *ctx) {
    sample_run *r = ctx;
    const int64_t batches = (r->N + r->nb - 1) / r->nb;
    for (int64_t b = b0; b < b1; b++) {
        const int64_t n0 = batches * b / r->blocks * r->nb;
        int64_t n1 = batches * (b + 1) / r->blocks * r->nb;
        n1 = n1 < r->N ? n1 : r->N;
        if (n0 < n1 && !__atomic_load_n(&r->failed, __ATOMIC_RELAXED) &&
            r->fn(r->job, n0, n1, b))
            __atomic_store_n(&r->failed, 1, __ATOMIC_RELAXED);
    }
}

/* blocks for outputs that do not depend on the blocking: about 4 per
 * thread */
static int64_t sample_tasks(const conv_geom *g, int64_t nb) {
    const int64_t batches = (g->N + nb - 1) / nb, most = 4 * (int64_t)th_get_num_threads();
    return batches < most ? batches : most;
}

/* Runs fn over `blocks` blocks of the N samples on the pool.  A task can
 * only fail for memory (shapes were checked), reported here because the
 * task's own error message stays on its thread. */
static int run_samples(const char *fn_name, sample_fn fn, void *job, int64_t N,
                       int64_t nb, int64_t blocks) {
    sample_run r = {fn, job, N, nb, blocks, 0};
    th_parallel_for(blocks, 1, sample_blocks, &r);
    return r.failed ? thnn__error(TH_ERR_MEMORY, "%s: not enough memory for the "
                                  "unfolded input of a block of samples", fn_name)
                    : TH_OK;
}

/* ---- forward ---------------------------------------------------------- */
typedef struct {
    th_tensor *output;
    const th_tensor *x, *w;
    const conv_geom *g;
    int64_t nb;
    int has_bias;
} fwd_job;

/* output samples [n0, n1) (filled with the bias, or not when !has_bias),
 * nb samples per GEMM, with col as the unfold buffer */
static int forward_range(const fwd_job *j, th_tensor *col, int64_t n0, int64_t n1) {
    const conv_geom *g = j->g;
    const int64_t L = g->OH * g->OW, Og = g->O / g->G, K = g->C / g->G * g->kh * g->kw;
    int rc = TH_OK;
    if (j->nb > 1) {
        th_tensor *buf = new_mat(Og, j->nb * L, j->x->dtype);
        rc = buf ? TH_OK : thnn_last_status();
        for (int64_t n = n0; n < n1 && !rc; n += j->nb) {
            const int64_t m = n + j->nb <= n1 ? j->nb : n1 - n, cols = m * L;
            im2col_rows(j->x, n, col, g, m, 0, g->OH);
            for (int64_t gi = 0; gi < g->G && !rc; gi++) {
                rc = gemm_views(mat(buf, 0, Og, cols, cols, 1),
                                mat(j->w, gi * Og * K, Og, K, K, 1),
                                mat(col, gi * K * cols, K, cols, cols, 1), 0.0);
                if (!rc) move_rows(j->output, buf, n, m, g->O, gi * Og, Og, L, 0, j->has_bias);
            }
        }
        thnn__release(buf);
        return rc;
    }
    /* unfold a band of output rows at a time, small enough for col to stay
       in cache while the GEMM packs it: on 8x64x56x56 * 64x64x3x3 the whole
       (576, 3136) col read back from memory made the forward 2.5x slower
       than backward_input */
    const int64_t band = tile_rows(g, j->x->dtype);
    for (int64_t n = n0; n < n1 && !rc; n++) {
        for (int64_t oh0 = 0; oh0 < g->OH && !rc; oh0 += band) {
            const int64_t oh1 = oh0 + band < g->OH ? oh0 + band : g->OH;
            const int64_t Lt = (oh1 - oh0) * g->OW;
            im2col_rows(j->x, n, col, g, 1, oh0, oh1);
            for (int64_t gi = 0; gi < g->G && !rc; gi++)
                rc = gemm_views(mat(j->output, (n * g->O + gi * Og) * L + oh0 * g->OW, Og, Lt,
                                    L, 1),
                                mat(j->w, gi * Og * K, Og, K, K, 1),
                                mat(col, gi * K * Lt, K, Lt, Lt, 1), j->has_bias ? 1.0 : 0.0);
        }
    }
    return rc;
}

static int forward_block(void *job, int64_t n0, int64_t n1, int64_t block) {
    (void)block;
    const fwd_job *j = job;
    th_tensor *col = new_col(j->g, j->x->dtype, j->nb);
    int rc = col ? forward_range(j, col, n0, n1) : thnn_last_status();
    thnn__release(col);
    return rc;
}

THNN_API int thnn_conv2d_forward(th_tensor *output, const th_tensor *input,
                                 const th_tensor *weight, const th_tensor *bias,
                                 const int64_t *stride, const int64_t *padding,
                                 const int64_t *dilation, int64_t groups) {
    static const char fn[] = "conv2d_forward";
    conv_geom g;
    int rc;
    if ((rc = conv_params(fn, stride, padding, dilation, groups, &g))) return rc;
    if ((rc = conv_geometry(fn, input, weight, &g))) return rc;
    if ((rc = thnn__check_vec(fn, "bias", bias, g.O, input->dtype))) return rc;
    int64_t osz[4] = {g.N, g.O, g.OH, g.OW};
    if ((rc = thnn__check_out(fn, "output", output, 4, osz, input->dtype))) return rc;
    if (th_numel(output) == 0) return TH_OK;

    th_tensor *x = thnn__contig(input), *w = thnn__contig(weight);
    th_tensor *bc = bias ? thnn__contig(bias) : NULL, *col = NULL;
    if (!x || !w || (bias && !bc)) { rc = thnn_last_status(); goto done; }
    if (thnn__winograd_fits(input->dtype, g.N, g.C, g.O, g.kh, g.kw, g.sh, g.sw, g.dh, g.dw, g.G,
                            g.ph, g.pw, g.OH, g.OW)) {
        rc = thnn__winograd_conv(thnn__data(output), thnn__data(x), thnn__data(w),
                                 bc ? thnn__data(bc) : NULL, g.N, g.C, g.H, g.W, g.O, g.ph,
                                 g.pw, g.OH, g.OW, 0);
        goto done;
    }
    const int64_t L = g.OH * g.OW;
    if (bc) {
        if (input->dtype == TH_FLOAT32)
            fill_bias_float(thnn__data(output), thnn__data(bc), g.N * g.O, g.O, L);
        else
            fill_bias_double(thnn__data(output), thnn__data(bc), g.N * g.O, g.O, L);
    }
    fwd_job job = {output, x, w, &g, batch_samples(&g), bc != NULL};
    if (spread_samples(&g)) {
        rc = run_samples(fn, forward_block, &job, g.N, job.nb, sample_tasks(&g, job.nb));
        goto done;
    }
    if (!(col = new_col(&g, input->dtype, job.nb))) { rc = thnn_last_status(); goto done; }
    rc = forward_range(&job, col, 0, g.N);
done:
    thnn__release(x); thnn__release(w); thnn__release(bc); thnn__release(col);
    return rc;
}

/* grad_output must be (N, O, OH, OW) for the geometry */
static int check_grad_output(const char *fn, const th_tensor *gout,
                             const conv_geom *g, int dtype) {
    int64_t osz[4] = {g->N, g->O, g->OH, g->OW};
    char a[256];
    int rc = thnn__check_float(fn, "grad_output", gout);
    if (rc) return rc;
    int ok = gout->ndim == 4;
    for (int i = 0; ok && i < 4; i++) ok = gout->sizes[i] == osz[i];
    if (!ok)
        return thnn__error(TH_ERR_RUNTIME, "%s: expected grad_output of shape "
                           "[%lld, %lld, %lld, %lld] but got %s", fn,
                           (long long)g->N, (long long)g->O, (long long)g->OH,
                           (long long)g->OW, thnn__shape(gout, a));
    if (gout->dtype != dtype)
        return thnn__error(TH_ERR_RUNTIME, "%s: grad_output type (%s) and input "
                           "type (%s) should be the same", fn,
                           thnn__dtype_name(gout->dtype), thnn__dtype_name(dtype));
    return TH_OK;
}

/* ---- backward_input --------------------------------------------------- */
typedef struct {
    th_tensor *grad_input;
    const th_tensor *go, *w;
    const conv_geom *g;
    int64_t nb;
} bwd_input_job;

/* grad_input samples [n0, n1) (zeroed before), with col as the buffer */
static int backward_input_range(const bwd_input_job *j, th_tensor *col, int64_t n0,
                                int64_t n1) {
    const conv_geom *g = j->g;
    const int64_t L = g->OH * g->OW, Og = g->O / g->G, K = g->C / g->G * g->kh * g->kw;
    int rc = TH_OK;
    if (j->nb > 1) {
        th_tensor *buf = new_mat(Og, j->nb * L, j->w->dtype);
        rc = buf ? TH_OK : thnn_last_status();
        for (int64_t n = n0; n < n1 && !rc; n += j->nb) {
            const int64_t m = n + j->nb <= n1 ? j->nb : n1 - n, cols = m * L;
            for (int64_t gi = 0; gi < g->G && !rc; gi++) {
                move_rows((th_tensor *)j->go, buf, n, m, g->O, gi * Og, Og, L, 1, 0);
                rc = gemm_views(mat(col, gi * K * cols, K, cols, cols, 1),
                                mat(j->w, gi * Og * K, K, Og, 1, K),
                                mat(buf, 0, Og, cols, cols, 1), 0.0);
            }
            if (!rc) col2im_rows(j->grad_input, n, col, g, m, 0, g->OH);
        }
        thnn__release(buf);
        return rc;
    }
    const int64_t band = tile_rows(g, j->w->dtype);
    for (int64_t n = n0; n < n1 && !rc; n++) {
        for (int64_t oh0 = 0; oh0 < g->OH && !rc; oh0 += band) {
            const int64_t oh1 = oh0 + band < g->OH ? oh0 + band : g->OH;
            const int64_t Lt = (oh1 - oh0) * g->OW;
            for (int64_t gi = 0; gi < g->G && !rc; gi++)
                /* W_g^T: (K, Og) view of the (Og, K) block */
                rc = gemm_views(mat(col, gi * K * Lt, K, Lt, Lt, 1),
                                mat(j->w, gi * Og * K, K, Og, 1, K),
                                mat(j->go, (n * g->O + gi * Og) * L + oh0 * g->OW, Og, Lt, L, 1),
                                0.0);
            if (!rc) col2im_rows(j->grad_input, n, col, g, 1, oh0, oh1);
        }
    }
    return rc;
}

static int backward_input_block(void *job, int64_t n0, int64_t n1, int64_t block) {
    (void)block;
    const bwd_input_job *j = job;
    th_tensor *col = new_col(j->g, j->w->dtype, j->nb);
    int rc = col ? backward_input_range(j, col, n0, n1) : thnn_last_status();
    thnn__release(col);
    return rc;
}

THNN_API int thnn_conv2d_backward_input(th_tensor *grad_input,
                                        const th_tensor *grad_output,
                                        const th_tensor *weight,
                                        const int64_t *stride,
                                        const int64_t *padding,
                                        const int64_t *dilation, int64_t groups) {
    static const char fn[] = "conv2d_backward_input";
    conv_geom g;
    int rc;
    if ((rc = conv_params(fn, stride, padding, dilation, groups, &g))) return rc;
    if ((rc = thnn__check_float(fn, "grad_input", grad_input))) return rc;
    if ((rc = conv_geometry(fn, grad_input, weight, &g))) return rc;
    if ((rc = check_grad_output(fn, grad_output, &g, weight->dtype))) return rc;
    if ((rc = thnn__check_like(fn, "grad_input", grad_input, grad_input))) return rc;
    if (th_zero(grad_input)) return thnn__from_th(fn);
    if (th_numel(grad_input) == 0 || th_numel(grad_output) == 0) return TH_OK;

    th_tensor *go = thnn__contig(grad_output), *w = thnn__contig(weight), *col = NULL;
    if (!go || !w) { rc = thnn_last_status(); goto done; }
    /* stride 1: grad_input is grad_output convolved with the flipped,
       transposed filters and padding 2 - p */
    if (g.ph <= 2 && g.pw <= 2 &&
        thnn__winograd_fits(weight->dtype, g.N, g.O, g.C, g.kh, g.kw, g.sh, g.sw, g.dh, g.dw, g.G,
                            2 - g.ph, 2 - g.pw, g.H, g.W)) {
        rc = thnn__winograd_conv(thnn__data(grad_input), thnn__data(go), thnn__data(w), NULL,
                                 g.N, g.O, g.OH, g.OW, g.C, 2 - g.ph, 2 - g.pw, g.H, g.W, 1);
        goto done;
    }
    bwd_input_job job = {grad_input, go, w, &g, batch_samples(&g)};
    if (spread_samples(&g)) {
        rc = run_samples(fn, backward_input_block, &job, g.N, job.nb,
                         sample_tasks(&g, job.nb));
        goto done;
    }
    if (!(col = new_col(&g, weight->dtype, job.nb))) { rc = thnn_last_status(); goto done; }
    rc = backward_input_range(&job, col, 0, g.N);
done:
    thnn__release(go); thnn__release(w); thnn__release(col);
    return rc;
}

#define DEFINE_BIAS_GRAD(T)                                                   \
    static void bias_grad_##T(T *gb, const T *gy, int64_t N, int64_t O,       \
                              int64_t L) {                                    \
        for (int64_t o = 0; o < O; o++) {                                     \
            double s = 0;                                                     \
            for (int64_t n = 0; n < N; n++) {                                 \
                const T *p = gy + (n * O + o) * L;                            \
                T part = 0;                                                   \
                for (int64_t i = 0; i < L; i++) part += p[i];                 \
                s += part;                                                    \
            }                                                                 \
            gb[o] = (T)s;                                                     \
        }                                                                     \
    }
DEFINE_BIAS_GRAD(float)
DEFINE_BIAS_GRAD(double)

/* ---- backward_params -------------------------------------------------- */
typedef struct {
    th_tensor *gw;          /* the weight gradient, or the blocks' partials */
    const th_tensor *go, *x;
    const conv_geom *g;
    int64_t nb;
} bwd_params_job;

/* gW (G*Og, K) = sum over samples [n0, n1) (overwritten, not added to) */
static int backward_params_range(const bwd_params_job *j, th_tensor *gw, th_tensor *col,
                                 int64_t n0, int64_t n1) {
    const conv_geom *g = j->g;
    const int64_t L = g->OH * g->OW, Og = g->O / g->G, K = g->C / g->G * g->kh * g->kw;
    int rc = TH_OK;
    if (j->nb > 1) {
        th_tensor *buf = new_mat(Og, j->nb * L, j->x->dtype);
        rc = buf ? TH_OK : thnn_last_status();
        for (int64_t n = n0; n < n1 && !rc; n += j->nb) {
            const int64_t m = n + j->nb <= n1 ? j->nb : n1 - n, cols = m * L;
            im2col_rows(j->x, n, col, g, m, 0, g->OH);
            for (int64_t gi = 0; gi < g->G && !rc; gi++) {
                move_rows((th_tensor *)j->go, buf, n, m, g->O, gi * Og, Og, L, 1, 0);
                /* col_g^T: (cols, K) view of the (K, cols) block */
                rc = gemm_views(mat(gw, gi * Og * K, Og, K, K, 1),
                                mat(buf, 0, Og, cols, cols, 1),
                                mat(col, gi * K * cols, cols, K, 1, cols), n == n0 ? 0.0 : 1.0);
            }
        }
        thnn__release(buf);
        return rc;
    }
    const int64_t band = tile_rows(g, j->x->dtype);
    for (int64_t n = n0; n < n1 && !rc; n++) {
        for (int64_t oh0 = 0; oh0 < g->OH && !rc; oh0 += band) {
            const int64_t oh1 = oh0 + band < g->OH ? oh0 + band : g->OH;
            const int64_t Lt = (oh1 - oh0) * g->OW;
            im2col_rows(j->x, n, col, g, 1, oh0, oh1);
            for (int64_t gi = 0; gi < g->G && !rc; gi++)
                /* col_g^T: (Lt, K) view of the (K, Lt) block */
                rc = gemm_views(mat(gw, gi * Og * K, Og, K, K, 1),
                                mat(j->go, (n * g->O + gi * Og) * L + oh0 * g->OW, Og, Lt, L, 1),
                                mat(col, gi * K * Lt, Lt, K, 1, Lt),
                                n == n0 && oh0 == 0 ? 0.0 : 1.0);
        }
    }
    return rc;
}

/* block b's partial sum, into row b of the (blocks, G*Og*K) partials */
static int backward_params_block(void *job, int64_t n0, int64_t n1, int64_t block) {
    const bwd_params_job *j = job;
    const int64_t size = th_numel(j->gw) / j->gw->sizes[0];
    th_tensor *col = new_col(j->g, j->x->dtype, j->nb);
    th_tensor *part = thnn__view(j->gw, block * size, 2,
                                 (int64_t[]){j->g->O, size / j->g->O},
                                 (int64_t[]){size / j->g->O, 1});
    int rc = col && part ? backward_params_range(j, part, col, n0, n1) : thnn_last_status();
    thnn__release(part);
    thnn__release(col);
    return rc;
}

#define DEFINE_SUM_PARTIALS(T)                                                \
    static void sum_partials_##T(T *out, const T *part, int64_t blocks,       \
                                 int64_t size) {                              \
        for (int64_t i = 0; i < size; i++) {                                  \
            T s = part[i];                                                    \
            for (int64_t b = 1; b < blocks; b++) s += part[b * size + i];     \
            out[i] = s;                                                       \
        }                                                                     \
    }
DEFINE_SUM_PARTIALS(float)
DEFINE_SUM_PARTIALS(double)

THNN_API int thnn_conv2d_backward_params(th_tensor *grad_weight,
                                         th_tensor *grad_bias,
                                         const th_tensor *grad_output,
                                         const th_tensor *input,
                                         const int64_t *stride,
                                         const int64_t *padding,
                                         const int64_t *dilation,
                                         int64_t groups) {
    static const char fn[] = "conv2d_backward_params";
    conv_geom g;
    int rc;
    if ((rc = conv_params(fn, stride, padding, dilation, groups, &g))) return rc;
    if (!grad_weight && !grad_bias) return TH_OK;
    if ((rc = thnn__check_float(fn, "input", input))) return rc;
    if ((rc = thnn__check_float(fn, "grad_output", grad_output))) return rc;
    if (grad_output->ndim != 4 || input->ndim != 4)
        return thnn__error(TH_ERR_RUNTIME, "%s: expected 4-D input and "
                           "grad_output, got %d-D and %d-D", fn, input->ndim,
                           grad_output->ndim);
    if (grad_output->dtype != input->dtype || grad_output->sizes[0] != input->sizes[0])
        return thnn__error(TH_ERR_RUNTIME, "%s: grad_output and input do not "
                           "match in dtype or batch size", fn);
    if (grad_weight) {
        if ((rc = thnn__check_float(fn, "grad_weight", grad_weight))) return rc;
        if ((rc = conv_geometry(fn, input, grad_weight, &g))) return rc;
        if ((rc = check_grad_output(fn, grad_output, &g, input->dtype))) return rc;
        if ((rc = thnn__check_like(fn, "grad_weight", grad_weight, grad_weight))) return rc;
    }
    const int64_t O = grad_output->sizes[1];
    if (grad_bias && (rc = thnn__check_out(fn, "grad_bias", grad_bias, 1, &O, input->dtype)))
        return rc;
    th_tensor *go = thnn__contig(grad_output), *x = NULL, *col = NULL, *parts = NULL;
    if (!go) return thnn_last_status();
    if (grad_bias) {
        const int64_t N = go->sizes[0], L = go->sizes[2] * go->sizes[3];
        if (go->dtype == TH_FLOAT32)
            bias_grad_float(thnn__data(grad_bias), thnn__data(go), N, O, L);
        else
            bias_grad_double(thnn__data(grad_bias), thnn__data(go), N, O, L);
    }
    if (!grad_weight) goto done;
    if (th_numel(go) == 0 || th_numel(input) == 0) {
        if (th_zero(grad_weight)) rc = thnn__from_th(fn);
        goto done;
    }
    if (!(x = thnn__contig(input))) { rc = thnn_last_status(); goto done; }
    if (thnn__winograd_fits(input->dtype, g.N, g.C, g.O, g.kh, g.kw, g.sh, g.sw, g.dh, g.dw, g.G,
                            g.ph, g.pw, g.OH, g.OW) &&
        thnn__winograd_weight_grad_fits(g.N, g.OH, g.OW)) {
        rc = thnn__winograd_weight_grad(thnn__data(grad_weight), thnn__data(x), thnn__data(go),
                                        g.N, g.C, g.H, g.W, g.O, g.ph, g.pw, g.OH, g.OW);
        goto done;
    }
    bwd_params_job job = {grad_weight, go, x, &g, batch_samples(&g)};
    if (params_side_by_side(&g, input->dtype)) {
        /* PARAM_BLOCKS partial sums, whatever the thread count */
        const int64_t batches = (g.N + job.nb - 1) / job.nb;
        const int64_t blocks = batches < PARAM_BLOCKS ? batches : PARAM_BLOCKS;
        const int64_t size = th_numel(grad_weight);
        if (!(parts = new_mat(blocks, size, input->dtype))) {
            rc = thnn_last_status();
            goto done;
        }
        job.gw = parts;
        if ((rc = run_samples(fn, backward_params_block, &job, g.N, job.nb, blocks)))
            goto done;
        if (input->dtype == TH_FLOAT32)
            sum_partials_float(thnn__data(grad_weight), thnn__data(parts), blocks, size);
        else
            sum_partials_double(thnn__data(grad_weight), thnn__data(parts), blocks, size);
        goto done;
    }
    if (!(col = new_col(&g, input->dtype, job.nb))) { rc = thnn_last_status(); goto done; }
    rc = backward_params_range(&job, grad_weight, col, 0, g.N);
done:
    thnn__release(go); thnn__release(x); thnn__release(col); thnn__release(parts);
    return rc;
}

/* ---- conv1d: conv2d on (N, C, 1, L) views ------------------------------ */
static th_tensor *as_2d(const th_tensor *t) {
    if (!t) return NULL;
    if (t->ndim != 3) {
        char a[256];
        thnn__error(TH_ERR_RUNTIME, "conv1d: expected a 3-D tensor but got %s",
                    thnn__shape(t, a));
        return NULL;
    }
    th_tensor *v = th_unsqueeze(t, 2);
    if (!v) thnn__from_th("conv1d");
    return v;
}

static int conv1d_call(int which, th_tensor *o1, th_tensor *o2, const th_tensor *a,
                       const th_tensor *b, const th_tensor *bias, int64_t stride,
                       int64_t padding, int64_t dilation, int64_t groups) {
    const int64_t s[2] = {1, stride}, p[2] = {0, padding}, d[2] = {1, dilation};
    th_tensor *v1 = NULL, *v2 = NULL, *va = NULL, *vb = NULL;
    int rc = TH_OK;
    if ((o1 && !(v1 = as_2d(o1))) || (o2 && which != 2 && !(v2 = as_2d(o2))) ||
        !(va = as_2d(a)) || !(vb = as_2d(b))) {
        rc = thnn_last_status();
        goto done;
    }
    if (which == 0) rc = thnn_conv2d_forward(v1, va, vb, bias, s, p, d, groups);
    else if (which == 1) rc = thnn_conv2d_backward_input(v1, va, vb, s, p, d, groups);
    else rc = thnn_conv2d_backward_params(v1, o2, va, vb, s, p, d, groups);
done:
    thnn__release(v1); thnn__release(v2); thnn__release(va); thnn__release(vb);
    return rc;
}

THNN_API int thnn_conv1d_forward(th_tensor *output, const th_tensor *input,
                                 const th_tensor *weight, const th_tensor *bias,
                                 int64_t stride, int64_t padding,
                                 int64_t dilation, int64_t groups) {
    if (!output || !input || !weight)
        return thnn__error(TH_ERR_VALUE, "conv1d_forward: output, input and "
                           "weight must not be NULL");
    return conv1d_call(0, output, NULL, input, weight, bias, stride, padding,
                       dilation, groups);
}

THNN_API int thnn_conv1d_backward_input(th_tensor *grad_input,
                                        const th_tensor *grad_output,
                                        const th_tensor *weight, int64_t stride,
                                        int64_t padding, int64_t dilation,
                                        int64_t groups) {
    if (!grad_input || !grad_output || !weight)
        return thnn__error(TH_ERR_VALUE, "conv1d_backward_input: tensors must "
                           "not be NULL");
    return conv1d_call(1, grad_input, NULL, grad_output, weight, NULL, stride,
                       padding, dilation, groups);
}

THNN_API int thnn_conv1d_backward_params(th_tensor *grad_weight,
                                         th_tensor *grad_bias,
                                         const th_tensor *grad_output,
                                         const th_tensor *input, int64_t stride,
                                         int64_t padding, int64_t dilation,
                                         int64_t groups) {
    if (!grad_output || !input)
        return thnn__error(TH_ERR_VALUE, "conv1d_backward_params: grad_output "
                           "and input must not be NULL");
    if (!grad_weight) {  /* bias only: the kernel size does not matter */
        int64_t s[2] = {1, stride}, p[2] = {0, padding}, d[2] = {1, dilation};
        th_tensor *go = as_2d(grad_output), *x = as_2d(input);
        int rc = go && x ? thnn_conv2d_backward_params(NULL, grad_bias, go, x, s, p, d, groups)
                         : thnn_last_status();
        thnn__release(go); thnn__release(x);
        return rc;
    }
    return conv1d_call(2, grad_weight, grad_bias, grad_output, input, NULL,
                       stride, padding, dilation, groups);
}
