/* Winograd F(4x4, 3x3) for conv2d's 3x3, stride-1 layers in float32.
 *
 * Each 4x4 block of outputs ("tile") comes from a 6x6 block of input:
 *   V = B^T d B (input transform, per tile and input channel),
 *   U = G g G^T (filter transform, per output and input channel),
 *   M_e = U_e @ V_e for each of the 36 positions e (one GEMM each,
 *         (O, C) @ (C, tiles): 36 products of 1/16 the output positions,
 *         4x fewer multiply-adds than the 9 taps of im2col + GEMM),
 *   y = A^T m A (output transform, per tile and output channel),
 * with the interpolation points 0, 1, -1, 2, -2 and infinity:
 *   B^T = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0; 0 -2 -1 2 1 0;
 *          0 2 -1 -2 1 0; 0 4 0 -5 0 1],
 *   G = [1/4 0 0; -1/6 -1/6 -1/6; -1/6 1/6 -1/6; 1/24 1/12 1/6;
 *        1/24 -1/12 1/6; 0 0 1],
 *   A^T = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1].
 * F(2x2, 3x3) (4x4 input tiles, 16 products of 1/4 the positions) ran
 * ResNet-18's 56x56 and 28x28 layers 1.3-1.8x slower per pass: its
 * products and its transforms' traffic (4 transformed values per output,
 * here 2.25) were both larger.
 *
 * Tiles are taken a chunk at a time (about CHUNK_BYTES of V and M); chunks
 * are tasks on libTH's pool, each with its own V and M (its GEMMs run on
 * one thread inside the region).  The input gradient of a stride-1
 * convolution is a convolution of grad_output with the filters flipped and
 * transposed and padding 2 - p, so backward_input runs the same code
 * (`flip`); the weight gradient has its own products (below).  Rounding
 * differs from im2col's (the transforms scale values by up to 8 and 1/24):
 * a few 1e-6 of the outputs' magnitude in float32, about 1e-5 of the
 * weight gradient's (summed over every tile; im2col's: 4e-7).
 *
 * Loops over a chunk go channel by channel, each over all the chunk's tile
 * rows: the rows read and the runs written then follow each other in
 * memory (tile row by tile row, each channel's rows came from another
 * page, and the transforms took twice as long). */
#include <stdlib.h>
#include <string.h>

#include "conv_unfold.h"
#include "conv_winograd.h"

#define NPOS 36 /* positions of a transformed 6x6 tile */
#define CHUNK_BYTES (4 << 20)
#define MIN_CHANNELS 16
#define MIN_POSITIONS 36
#define MIN_SAVED 4000.0
/* the weight gradient: at least GRAD_FIT_TILES tiles in all (its products
 * run over them), and GRAD_MIN_TILES per chunk (so that adding a chunk's
 * products into M, 36 O C floats, costs little beside them) */
#define GRAD_FIT_TILES 128
#define GRAD_MIN_TILES 256

/* G (the filter transform's matrix, and the weight gradient's) */
static const float GM[6][3] = {{1.0f / 4, 0, 0},
                               {-1.0f / 6, -1.0f / 6, -1.0f / 6},
                               {-1.0f / 6, 1.0f / 6, -1.0f / 6},
                               {1.0f / 24, 1.0f / 12, 1.0f / 6},
                               {1.0f / 24, -1.0f / 12, 1.0f / 6},
                               {0, 0, 1}};

int thnn__winograd_fits(int dtype, int64_t N, int64_t C, int64_t O, int64_t kh, int64_t kw,
                        int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t groups,
                        int64_t ph, int64_t pw, int64_t OH, int64_t OW) {
    if (!(dtype == TH_FLOAT32 && kh == 3 && kw == 3 && sh == 1 && sw == 1 && dh == 1 &&
          dw == 1 && groups == 1 && ph <= 2 && pw <= 2 && C >= MIN_CHANNELS &&
          O >= MIN_CHANNELS && OH * OW >= MIN_POSITIONS && C <= INT32_MAX / NPOS &&
          O <= INT32_MAX / NPOS))
        return 0;
    /* "0": never; "1": every convolution of the right form (tests, and
       measuring); unset: when it pays */
    const char *env = getenv("EMBER_CONV_WINOGRAD");
    if (env && strcmp(env, "0") == 0)
        return 0;
    const int always = env && strcmp(env, "1") == 0;
    /* multiply-adds saved per (output, input) channel pair against the
       filter transform's fixed cost per pair: at batch 8, ResNet-18's
       512-channel 7x7 layers (2376 saved) ran 1.2-1.8x slower than
       im2col, its 256-channel 14x14 ones (9504) 1.35-1.45x faster, its 28x28
       and 56x56 ones (42k, 169k) 1.7-2.4x faster */
    const double saved = (double)N * (9.0 * (double)(OH * OW) -
                                      NPOS * (double)((OH + 3) / 4) * (double)((OW + 3) / 4));
    return always || saved >= MIN_SAVED;
}

int thnn__winograd_weight_grad_fits(int64_t N, int64_t OH, int64_t OW) {
    /* the weight gradient's products run over the tiles: ResNet-18's
       14x14 layers at batch 8 (128 tiles) beat im2col, 10.0 ms to 14.6 */
    const char *env = getenv("EMBER_CONV_WINOGRAD");
    return (env && strcmp(env, "1") == 0) ||
           (double)N * (double)((OH + 3) / 4) * (double)((OW + 3) / 4) >= GRAD_FIT_TILES;
}

/* A buffer for one output channel's 36 rows of C values, each row padded:
 * 36 streams written or read O C floats apart in U or M (a power of two
 * for most layers) fall in the same cache sets and evict each other. */
#define ROW_PAD 16
/* 36 such rows and `extra` more, of C + ROW_PAD floats each */
static float *row_buffer(int64_t C, int extra) {
    return malloc((size_t)((NPOS + extra) * (C + ROW_PAD)) * sizeof(float));
}

/* out = a0 x0 + a1 x1 + a2 x2 over n values: the filter transforms work
 * on whole rows of input channels, which vectorise (a channel pair at a
 * time, their 162 multiply-adds were scalar: 5 ms of a 512-channel
 * layer's forward) */
static inline void combine3(float *restrict out, float a0, const float *restrict x0, float a1,
                            const float *restrict x1, float a2, const float *restrict x2,
                            int64_t n) {
    for (int64_t k = 0; k < n; k++) out[k] = a0 * x0[k] + a1 * x1[k] + a2 * x2[k];
}

/* out = a0 x0 + ... + a5 x5, the x_i `ld` floats apart */
static inline void combine6(float *restrict out, const float *a, const float *restrict x,
                            int64_t ld, int64_t n) {
    for (int64_t k = 0; k < n; k++)
        out[k] = a[0] * x[k] + a[1] * x[ld + k] + a[2] * x[2 * ld + k] + a[3] * x[3 * ld + k] +
                 a[4] * x[4 * ld + k] + a[5] * x[5 * ld + k];
}

typedef struct {
    float *U;
    const float *w;
    int64_t O, C;
    int flip, failed;
} filter_job;

/* U (36, O, C) rows for outputs [o0, o1) from w: (O, C, 3, 3), or with
 * flip (C, O, 3, 3) read as kernel[o][c][i][j] = w[c][o][2 - i][2 - j] */
THNN_VEC_CLONES static void filter_transform(int64_t o0, int64_t o1, void *ctx) {
    filter_job *f = ctx;
    const int64_t O = f->O, C = f->C, ld = C + ROW_PAD;
    /* buf: U's 36 rows for one output channel, then g's 9 taps and
       t = G g's 18 rows, each a row over the input channels */
    float *buf = row_buffer(C, 27);
    if (!buf) {
        __atomic_store_n(&f->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    float *g = buf + NPOS * ld, *t = g + 9 * ld;
    for (int64_t o = o0; o < o1; o++) {
        for (int64_t c = 0; c < C; c++)
            for (int k = 0; k < 9; k++)
                g[k * ld + c] = f->flip ? f->w[(c * O + o) * 9 + 8 - k] : f->w[(o * C + c) * 9 + k];
        for (int i = 0; i < 6; i++) /* t = G g */
            for (int j = 0; j < 3; j++)
                combine3(t + (i * 3 + j) * ld, GM[i][0], g + j * ld, GM[i][1], g + (3 + j) * ld,
                         GM[i][2], g + (6 + j) * ld, C);
        for (int i = 0; i < 6; i++) /* U = t G^T */
            for (int j = 0; j < 6; j++)
                combine3(buf + (i * 6 + j) * ld, GM[j][0], t + (i * 3) * ld, GM[j][1],
                         t + (i * 3 + 1) * ld, GM[j][2], t + (i * 3 + 2) * ld, C);
        for (int e = 0; e < NPOS; e++)
            memcpy(f->U + (e * O + o) * C, buf + e * ld, (size_t)C * sizeof *buf);
    }
    free(buf);
}

typedef struct {
    th_tensor *U;
    const float *x, *bias;
    float *out;
    int64_t N, C, H, W, O, ph, pw, OH, OW, tH, tW, rows, chunk_rows;
    int failed;
} wg_job;

/* Tiles go by whole rows of tiles (row r: sample r / tH, tile row r % tH).
 * The column half of each transform runs over whole rows of 4 tW + 2
 * columns and the row half over the tiles with a constant stride, so both
 * loops vectorise.  TMP_FLOATS: the work buffer of one task. */
#define ROW_LEN(j) (4 * (j)->tW + 2)
#define TMP_FLOATS(j) (10 * ROW_LEN(j))

/* The transforms' loops, as functions of restrict parameters: GCC does not
 * vectorise them as loops over block-scope pointers (it would check 6 x 6
 * pointer pairs for overlap, over its limit, and gives up). */

/* B^T d over columns: the six rows u from the six input rows d */
static inline void bt_columns(float *restrict u0, float *restrict u1, float *restrict u2,
                              float *restrict u3, float *restrict u4, float *restrict u5,
                              const float *restrict d0, const float *restrict d1,
                              const float *restrict d2, const float *restrict d3,
                              const float *restrict d4, const float *restrict d5, int64_t n) {
    for (int64_t k = 0; k < n; k++) {
        u0[k] = 4.0f * d0[k] - 5.0f * d2[k] + d4[k];
        u1[k] = -4.0f * (d1[k] + d2[k]) + d3[k] + d4[k];
        u2[k] = 4.0f * (d1[k] - d2[k]) - d3[k] + d4[k];
        u3[k] = 2.0f * (d3[k] - d1[k]) - d2[k] + d4[k];
        u4[k] = 2.0f * (d1[k] - d3[k]) - d2[k] + d4[k];
        u5[k] = 4.0f * d1[k] - 5.0f * d3[k] + d5[k];
    }
}

/* (B^T d) B along a row: tile t reads u[4t .. 4t + 5] */
static inline void bt_tiles(float *restrict v0, float *restrict v1, float *restrict v2,
                            float *restrict v3, float *restrict v4, float *restrict v5,
                            const float *restrict u, int64_t tW) {
    for (int64_t t = 0; t < tW; t++) {
        const float *e = u + 4 * t;
        v0[t] = 4.0f * e[0] - 5.0f * e[2] + e[4];
        v1[t] = -4.0f * (e[1] + e[2]) + e[3] + e[4];
        v2[t] = 4.0f * (e[1] - e[2]) - e[3] + e[4];
        v3[t] = 2.0f * (e[3] - e[1]) - e[2] + e[4];
        v4[t] = 2.0f * (e[1] - e[3]) - e[2] + e[4];
        v5[t] = 4.0f * e[1] - 5.0f * e[3] + e[5];
    }
}

/* A^T m over the six rows m of one column: the four rows q */
static inline void at_columns(float *restrict q0, float *restrict q1, float *restrict q2,
                              float *restrict q3, const float *restrict m0,
                              const float *restrict m1, const float *restrict m2,
                              const float *restrict m3, const float *restrict m4,
                              const float *restrict m5, int64_t n) {
    for (int64_t t = 0; t < n; t++) {
        const float p12 = m1[t] + m2[t], n12 = m1[t] - m2[t];
        const float p34 = m3[t] + m4[t], n34 = m3[t] - m4[t];
        q0[t] = m0[t] + p12 + p34;
        q1[t] = n12 + 2.0f * n34;
        q2[t] = p12 + 4.0f * p34;
        q3[t] = n12 + 8.0f * n34 + m5[t];
    }
}

/* (A^T m) A along a row: tile t writes y[4t .. 4t + 3], plus b */
static inline void at_tiles(float *restrict y, const float *restrict c0,
                            const float *restrict c1, const float *restrict c2,
                            const float *restrict c3, const float *restrict c4,
                            const float *restrict c5, float b, int64_t tW) {
    for (int64_t t = 0; t < tW; t++) {
        const float p12 = c1[t] + c2[t], n12 = c1[t] - c2[t];
        const float p34 = c3[t] + c4[t], n34 = c3[t] - c4[t];
        y[4 * t] = c0[t] + p12 + p34 + b;
        y[4 * t + 1] = n12 + 2.0f * n34 + b;
        y[4 * t + 2] = p12 + 4.0f * p34 + b;
        y[4 * t + 3] = n12 + 8.0f * n34 + c5[t] + b;
    }
}

/* A dy over columns: the six rows u from grad_output's four rows d */
static inline void a_columns(float *restrict u0, float *restrict u1, float *restrict u2,
                             float *restrict u3, float *restrict u4, float *restrict u5,
                             const float *restrict d0, const float *restrict d1,
                             const float *restrict d2, const float *restrict d3, int64_t n) {
    for (int64_t k = 0; k < n; k++) {
        const float p02 = d0[k] + d2[k], p13 = d1[k] + d3[k];
        u0[k] = d0[k];
        u1[k] = p02 + p13;
        u2[k] = p02 - p13;
        u3[k] = d0[k] + 2.0f * d1[k] + 4.0f * d2[k] + 8.0f * d3[k];
        u4[k] = d0[k] - 2.0f * d1[k] + 4.0f * d2[k] - 8.0f * d3[k];
        u5[k] = d3[k];
    }
}

/* (A dy) A^T along a row: tile t reads u[4t .. 4t + 3] */
static inline void a_tiles(float *restrict p0, float *restrict p1, float *restrict p2,
                           float *restrict p3, float *restrict p4, float *restrict p5,
                           const float *restrict u, int64_t tW) {
    for (int64_t t = 0; t < tW; t++) {
        const float *e = u + 4 * t;
        const float e02 = e[0] + e[2], e13 = e[1] + e[3];
        p0[t] = e[0];
        p1[t] = e02 + e13;
        p2[t] = e02 - e13;
        p3[t] = e[0] + 2.0f * e[1] + 4.0f * e[2] + 8.0f * e[3];
        p4[t] = e[0] - 2.0f * e[1] + 4.0f * e[2] - 8.0f * e[3];
        p5[t] = e[3];
    }
}

/* V[e][c][t] for input channels [c0, c1) and tile rows [r0, r0 + nr), tile
 * t of them at column t of rows ld floats apart */
THNN_VEC_CLONES static void input_transform(const wg_job *j, float *V, int64_t ld, int64_t c0,
                                            int64_t c1, int64_t r0, int64_t nr, float *tmp) {
    const int64_t H = j->H, W = j->W, tW = j->tW, L = ROW_LEN(j), cn = j->C * ld,
                  pw = j->pw;
    float *zero = tmp, *u = tmp + L; /* zero: the rows above and below */
    memset(zero, 0, (size_t)L * sizeof *zero);
    /* input columns [0, x_hi) land at u's columns [pw, pw + x_hi) */
    const int64_t x_hi = W < L - pw ? W : L - pw;
    for (int a = 0; a < 6; a++) {
        float *ua = u + a * L;
        for (int64_t k = 0; k < pw; k++) ua[k] = 0.0f;
        for (int64_t k = pw + x_hi; k < L; k++) ua[k] = 0.0f;
    }
    /* channel by channel, so that the rows read (and the runs written)
       follow each other in memory */
    for (int64_t c = c0; c < c1; c++) {
        for (int64_t rr = 0; rr < nr; rr++) {
            const int64_t s = (r0 + rr) / j->tH, y0 = 4 * ((r0 + rr) % j->tH) - j->ph;
            const float *xp = j->x + (s * j->C + c) * H * W;
            const float *d[6];
            for (int a = 0; a < 6; a++)
                d[a] = y0 + a < 0 || y0 + a >= H ? zero : xp + (y0 + a) * W;
            bt_columns(u + pw, u + L + pw, u + 2 * L + pw, u + 3 * L + pw, u + 4 * L + pw,
                       u + 5 * L + pw, d[0], d[1], d[2], d[3], d[4], d[5], x_hi);
            float *Vc = V + c * ld + rr * tW;
            for (int a = 0; a < 6; a++) {
                float *v = Vc + (a * 6) * cn;
                bt_tiles(v, v + cn, v + 2 * cn, v + 3 * cn, v + 4 * cn, v + 5 * cn, u + a * L,
                         tW);
            }
        }
    }
}

/* out's tile rows [r0, r0 + nr) from M[e][o][t] plus the bias */
THNN_VEC_CLONES static void output_transform(const wg_job *j, const float *M, int64_t r0,
                                             int64_t nr, float *tmp) {
    const int64_t tW = j->tW, n = nr * tW, on = j->O * n, plane = j->OH * j->OW;
    float *y = tmp, *u = tmp + 4 * tW; /* u: 4 x 6 rows of tW */
    for (int64_t o = 0; o < j->O; o++) {
        const float b = j->bias ? j->bias[o] : 0.0f;
        for (int64_t rr = 0; rr < nr; rr++) {
            const int64_t s = (r0 + rr) / j->tH, oy = 4 * ((r0 + rr) % j->tH);
            const float *m = M + o * n + rr * tW;
            for (int c = 0; c < 6; c++) { /* A^T m, column by column */
                const float *mc = m + c * on;
                float *q = u + c * tW;
                at_columns(q, q + 6 * tW, q + 12 * tW, q + 18 * tW, mc, mc + 6 * on,
                           mc + 12 * on, mc + 18 * on, mc + 24 * on, mc + 30 * on, tW);
            }
            float *op = j->out + (s * j->O + o) * plane;
            for (int a = 0; a < 4 && oy + a < j->OH; a++) { /* (A^T m) A */
                const float *q = u + (6 * a) * tW;
                at_tiles(y, q, q + tW, q + 2 * tW, q + 3 * tW, q + 4 * tW, q + 5 * tW, b, tW);
                memcpy(op + (oy + a) * j->OW, y, (size_t)j->OW * sizeof *y);
            }
        }
    }
}

/* chunks [c0, c1) of tile rows: each transforms its tiles, runs the 36
 * products, and writes its outputs */
static void run_chunks(int64_t c0, int64_t c1, void *ctx) {
    wg_job *j = ctx;
    const int64_t most = j->chunk_rows * j->tW;
    int64_t vs[1] = {NPOS * j->C * most}, ms[1] = {NPOS * j->O * most},
            ts[1] = {TMP_FLOATS(j)};
    th_tensor *V = th_empty(1, vs, TH_FLOAT32), *M = th_empty(1, ms, TH_FLOAT32),
              *T = th_empty(1, ts, TH_FLOAT32);
    int ok = V && M && T;
    for (int64_t ci = c0; ci < c1 && ok; ci++) {
        const int64_t r0 = ci * j->chunk_rows;
        const int64_t nr = r0 + j->chunk_rows <= j->rows ? j->chunk_rows : j->rows - r0;
        const int64_t n = nr * j->tW;
        input_transform(j, thnn__data(V), n, 0, j->C, r0, nr, thnn__data(T));
        for (int e = 0; e < NPOS && ok; e++)
            ok = thnn__gemm_views("conv2d (Winograd)", thnn__mat(M, e * j->O * n, j->O, n, n, 1),
                                  thnn__mat(j->U, e * j->O * j->C, j->O, j->C, j->C, 1),
                                  thnn__mat(V, e * j->C * n, j->C, n, n, 1), 0.0) == TH_OK;
        if (ok) output_transform(j, thnn__data(M), r0, nr, thnn__data(T));
    }
    if (!ok) __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
    thnn__release(V); thnn__release(M); thnn__release(T);
}

/* tile rows per chunk: about CHUNK_BYTES of V and M, at least min_tiles */
static int64_t chunk_rows_for(int64_t C, int64_t O, int64_t tW, int64_t rows,
                              int64_t min_tiles) {
    int64_t r = CHUNK_BYTES / (NPOS * 4 * (C + O) * tW);
    if (r * tW < min_tiles) r = (min_tiles + tW - 1) / tW;
    if (r < 1) r = 1;
    return r > rows ? rows : r;
}

int thnn__winograd_conv(float *out, const float *x, const float *w, const float *bias,
                        int64_t N, int64_t C, int64_t H, int64_t W, int64_t O, int64_t ph,
                        int64_t pw, int64_t OH, int64_t OW, int flip) {
    const int64_t tH = (OH + 3) / 4, tW = (OW + 3) / 4, rows = N * tH;
    int64_t chunk_rows = chunk_rows_for(C, O, tW, rows, 1);
    /* a few chunks: as many per thread (3 chunks on 2 threads left one
       idle a third of the time) */
    const int64_t threads = th_in_parallel() ? 1 : th_get_num_threads();
    int64_t chunks = (rows + chunk_rows - 1) / chunk_rows;
    if (threads > 1 && chunks < 4 * threads && chunks % threads) {
        chunks += threads - chunks % threads;
        chunk_rows = (rows + chunks - 1) / chunks;
    }
    int64_t us[1] = {NPOS * O * C};
    th_tensor *U = th_empty(1, us, TH_FLOAT32);
    if (!U) return thnn__from_th("conv2d (Winograd) filter transform");
    filter_job f = {thnn__data(U), w, O, C, flip, 0};
    th_parallel_for(O, 1, filter_transform, &f);
    if (f.failed) {
        th_tensor_release(U);
        return thnn__error(TH_ERR_MEMORY, "conv2d: not enough memory for the Winograd "
                           "filter transform");
    }
    wg_job j = {U, x, bias, out, N, C, H, W, O, ph, pw, OH, OW, tH, tW, rows, chunk_rows, 0};
    th_parallel_for((rows + chunk_rows - 1) / chunk_rows, 1, run_chunks, &j);
    th_tensor_release(U);
    return j.failed ? thnn__error(TH_ERR_MEMORY, "conv2d: not enough memory for the "
                                  "Winograd transforms of a chunk of tiles") : TH_OK;
}

/* ---- the weight gradient ------------------------------------------------
 * y = A^T (U .* V) A with U = G g G^T, so for a loss L with dL/dy = dy,
 * dL/dU = (A dy A^T) .* V and dL/dg = G^T (dL/dU) G: per tile, the 4x4
 * block of grad_output is transformed to P = A dy A^T (6x6), and
 *   M_e = sum over tiles of P_e V_e^T   (one (O, C) GEMM per position e,
 *         over the tiles),
 *   grad_weight[o][c] = G^T M[o][c] G.
 * Chunks of tile rows go one after another: their transforms are spread
 * over the pool by channel, then the 36 products (added into M) by
 * position, so every sum is taken in the same order whatever the thread
 * count. */
typedef struct {
    wg_job geo; /* geometry, and the input x for input_transform */
    const float *gy;
    th_tensor *Vt, *Pt, *Mt; /* the buffers, and their data below */
    float *V, *P, *M, *gw;
    int64_t ld, r0; /* tiles per chunk (V's and P's row length); chunk's first row */
    int64_t n;      /* tiles in this chunk */
    double beta;
    int failed;
} wg_grad_job;

/* P[e][o][t] = (A dy A^T)_e for output channels [o0, o1) and tile rows
 * [r0, r0 + nr), tile t at column t of rows ld apart */
THNN_VEC_CLONES static void grad_output_transform(const wg_grad_job *j, float *P, int64_t o0,
                                                  int64_t o1, int64_t r0, int64_t nr,
                                                  float *tmp) {
    const wg_job *g = &j->geo;
    const int64_t tW = g->tW, L = 4 * tW, on = g->O * j->ld, plane = g->OH * g->OW;
    float *d = tmp, *u = tmp + 4 * L;
    for (int64_t o = o0; o < o1; o++) {
        for (int64_t rr = 0; rr < nr; rr++) {
            const int64_t s = (r0 + rr) / g->tH, oy = 4 * ((r0 + rr) % g->tH);
            const float *yp = j->gy + (s * g->O + o) * plane + oy * g->OW;
            /* rows oy..oy + 3, zero past the plane's last row and column */
            for (int a = 0; a < 4; a++) {
                float *da = d + a * L;
                if (oy + a < g->OH) memcpy(da, yp + a * g->OW, (size_t)g->OW * sizeof *da);
                else memset(da, 0, (size_t)g->OW * sizeof *da);
                for (int64_t k = g->OW; k < L; k++) da[k] = 0.0f;
            }
            a_columns(u, u + L, u + 2 * L, u + 3 * L, u + 4 * L, u + 5 * L, d, d + L,
                      d + 2 * L, d + 3 * L, L);
            float *Po = P + o * j->ld + rr * tW;
            for (int a = 0; a < 6; a++) {
                float *p = Po + (a * 6) * on;
                a_tiles(p, p + on, p + 2 * on, p + 3 * on, p + 4 * on, p + 5 * on, u + a * L, tW);
            }
        }
    }
}

/* the chunk's transforms for channels [u0, u1) of the C input channels
 * followed by the O output channels (by channel, not by tile row: a task's
 * reads then run along each channel's plane) */
static void grad_transforms(int64_t u0, int64_t u1, void *ctx) {
    wg_grad_job *j = ctx;
    const int64_t C = j->geo.C, nr = j->n / j->geo.tW;
    float *tmp = malloc((size_t)TMP_FLOATS(&j->geo) * sizeof *tmp);
    if (!tmp) {
        __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    if (u0 < C)
        input_transform(&j->geo, j->V, j->ld, u0, u1 < C ? u1 : C, j->r0, nr, tmp);
    if (u1 > C)
        grad_output_transform(j, j->P, u0 > C ? u0 - C : 0, u1 - C, j->r0, nr, tmp);
    free(tmp);
}

/* M_e (+)= P_e V_e^T for positions [e0, e1) */
static void grad_products(int64_t e0, int64_t e1, void *ctx) {
    wg_grad_job *j = ctx;
    const int64_t O = j->geo.O, C = j->geo.C, ld = j->ld, n = j->n;
    int ok = 1;
    for (int64_t e = e0; e < e1 && ok; e++)
        ok = thnn__gemm_views("conv2d weight gradient (Winograd)",
                              thnn__mat(j->Mt, e * O * C, O, C, C, 1),
                              thnn__mat(j->Pt, e * O * ld, O, n, ld, 1),
                              thnn__mat(j->Vt, e * C * ld, n, C, 1, ld), j->beta) == TH_OK;
    if (!ok) __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
}

/* grad_weight[o][c] = G^T M[o][c] G for output channels [o0, o1) */
THNN_VEC_CLONES static void grad_filter(int64_t o0, int64_t o1, void *ctx) {
    wg_grad_job *j = ctx;
    const int64_t O = j->geo.O, C = j->geo.C, ld = C + ROW_PAD;
    /* buf: M's 36 rows for one output channel, then t = G^T m's 18 rows
       and the 9 taps, each a row over the input channels */
    float *buf = row_buffer(C, 27);
    if (!buf) {
        __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    float *t = buf + NPOS * ld, *taps = t + 18 * ld;
    float gt[3][6]; /* G^T */
    for (int i = 0; i < 3; i++)
        for (int a = 0; a < 6; a++) gt[i][a] = GM[a][i];
    for (int64_t o = o0; o < o1; o++) {
        for (int e = 0; e < NPOS; e++)
            memcpy(buf + e * ld, j->M + (e * O + o) * C, (size_t)C * sizeof *buf);
        for (int i = 0; i < 3; i++) /* t = G^T m: row b of t from column b of m */
            for (int b = 0; b < 6; b++)
                combine6(t + (i * 6 + b) * ld, gt[i], buf + b * ld, 6 * ld, C);
        for (int i = 0; i < 3; i++) /* (G^T m) G */
            for (int k = 0; k < 3; k++)
                combine6(taps + (i * 3 + k) * ld, gt[k], t + (i * 6) * ld, ld, C);
        float *gw = j->gw + o * C * 9;
        for (int64_t c = 0; c < C; c++)
            for (int k = 0; k < 9; k++) gw[c * 9 + k] = taps[k * ld + c];
    }
    free(buf);
}

int thnn__winograd_weight_grad(float *gw, const float *x, const float *gy, int64_t N,
                               int64_t C, int64_t H, int64_t W, int64_t O, int64_t ph,
                               int64_t pw, int64_t OH, int64_t OW) {
    const int64_t tH = (OH + 3) / 4, tW = (OW + 3) / 4, rows = N * tH;
    const int64_t chunk_rows = chunk_rows_for(C, O, tW, rows, GRAD_MIN_TILES);
    const int64_t ld = chunk_rows * tW;
    wg_grad_job j = {{NULL, x, NULL, NULL, N, C, H, W, O, ph, pw, OH, OW, tH, tW, rows,
                      chunk_rows, 0},
                     gy, NULL, NULL, NULL, NULL, NULL, NULL, gw, ld, 0, 0, 0.0, 0};
    int64_t vs[1] = {NPOS * C * ld}, ps[1] = {NPOS * O * ld}, ms[1] = {NPOS * O * C};
    th_tensor *V = th_empty(1, vs, TH_FLOAT32), *P = th_empty(1, ps, TH_FLOAT32),
              *M = th_empty(1, ms, TH_FLOAT32);
    if (V && P && M) {
        j.Vt = V;
        j.Pt = P;
        j.Mt = M;
        j.V = thnn__data(V);
        j.P = thnn__data(P);
        j.M = thnn__data(M);
        for (int64_t r0 = 0; r0 < rows && !j.failed; r0 += chunk_rows) {
            const int64_t nr = r0 + chunk_rows <= rows ? chunk_rows : rows - r0;
            j.r0 = r0;
            j.n = nr * tW;
            j.beta = r0 == 0 ? 0.0 : 1.0;
            th_parallel_for(C + O, 1, grad_transforms, &j);
            if (!j.failed) th_parallel_for(NPOS, 1, grad_products, &j);
        }
        if (!j.failed) th_parallel_for(O, 1, grad_filter, &j);
    } else {
        j.failed = 1;
    }
    thnn__release(V); thnn__release(P); thnn__release(M);
    return j.failed ? thnn__error(TH_ERR_MEMORY, "conv2d: not enough memory for the "
                                  "Winograd transforms of the weight gradient") : TH_OK;
}
