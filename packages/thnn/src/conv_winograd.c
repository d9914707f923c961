/* Winograd F(2x2, 3x3) for conv2d's 3x3, stride-1 layers in float32.
 *
 * Each 2x2 block of outputs ("tile") comes from a 4x4 block of input:
 *   V = B^T d B (input transform, per tile and input channel),
 *   U = G g G^T (filter transform, per output and input channel),
 *   M_e = U_e @ V_e for each of the 16 positions e (one GEMM each,
 *         (O, C) @ (C, tiles): 16 products of 1/4 the output positions,
 *         2.25x fewer multiply-adds than the 9 taps of im2col + GEMM),
 *   y = A^T m A (output transform, per tile and output channel).
 * Tiles are taken a chunk at a time (about CHUNK_BYTES of V and M); chunks
 * are tasks on libTH's pool, each with its own V and M (its GEMMs run on
 * one thread inside the region).  The input gradient of a stride-1
 * convolution is a convolution of grad_output with the filters flipped and
 * transposed and padding 2 - p, so backward_input runs the same code
 * (`flip`); the weight gradient has its own products (below).  Rounding
 * differs from im2col's (the transforms add and halve values): about 1e-6
 * of the outputs' magnitude in float32.
 *
 * Loops over a chunk go channel by channel, each over all the chunk's tile
 * rows: the rows read and the runs written then follow each other in
 * memory (tile row by tile row, each channel's rows came from another
 * page, and the transforms took twice as long). */
#include <stdlib.h>
#include <string.h>

#include "conv_unfold.h"
#include "conv_winograd.h"

#define CHUNK_BYTES (4 << 20)
#define MIN_CHANNELS 16
#define MIN_POSITIONS 36
#define MIN_SAVED 4000.0

int thnn__winograd_fits(int dtype, int64_t N, int64_t C, int64_t O, int64_t kh, int64_t kw,
                        int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t groups,
                        int64_t ph, int64_t pw, int64_t OH, int64_t OW) {
    if (!(dtype == TH_FLOAT32 && kh == 3 && kw == 3 && sh == 1 && sw == 1 && dh == 1 &&
          dw == 1 && groups == 1 && ph <= 2 && pw <= 2 && C >= MIN_CHANNELS &&
          O >= MIN_CHANNELS && OH * OW >= MIN_POSITIONS && C <= INT32_MAX / 16 &&
          O <= INT32_MAX / 16))
        return 0;
    /* "0": never; "1": every convolution of the right form (tests, and
       measuring); unset: when it pays */
    const char *env = getenv("EMBER_CONV_WINOGRAD");
    if (env && strcmp(env, "0") == 0)
        return 0;
    const int always = env && strcmp(env, "1") == 0;
    /* multiply-adds saved per (output, input) channel pair against the
       filter transform's fixed cost per pair: at batch 8, ResNet-18's
       512-channel 7x7 layers (1480 saved) ran 1.05-1.25x slower than
       im2col, its 256-channel 14x14 ones (7840) 1.3x faster, its 28x28 and
       56x56 ones (31k, 125k) 1.3-2x faster */
    const double saved = (double)N * (9.0 * (double)(OH * OW) -
                                      16.0 * (double)((OH + 1) / 2) * (double)((OW + 1) / 2));
    return always || saved >= MIN_SAVED;
}

/* A buffer for one output channel's 16 rows of C values, each row padded:
 * 16 streams written or read O C floats apart in U or M (a power of two
 * for most layers) fall in the same cache sets and evict each other. */
#define ROW_PAD 16
static float *row_buffer(int64_t C) {
    return malloc((size_t)(16 * (C + ROW_PAD)) * sizeof(float));
}

typedef struct {
    float *U;
    const float *w;
    int64_t O, C;
    int flip, failed;
} filter_job;

/* U (16, O, C) rows for outputs [o0, o1) from w: (O, C, 3, 3), or with
 * flip (C, O, 3, 3) read as kernel[o][c][i][j] = w[c][o][2 - i][2 - j] */
static void filter_transform(int64_t o0, int64_t o1, void *ctx) {
    filter_job *f = ctx;
    const int64_t O = f->O, C = f->C, ld = C + ROW_PAD;
    float *buf = row_buffer(C);
    if (!buf) {
        __atomic_store_n(&f->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    for (int64_t o = o0; o < o1; o++) {
        for (int64_t c = 0; c < C; c++) {
            float g[3][3], t[4][3];
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    g[i][j] = f->flip ? f->w[(c * O + o) * 9 + (2 - i) * 3 + (2 - j)]
                                      : f->w[(o * C + c) * 9 + i * 3 + j];
            for (int j = 0; j < 3; j++) { /* t = G g */
                t[0][j] = g[0][j];
                t[1][j] = 0.5f * (g[0][j] + g[1][j] + g[2][j]);
                t[2][j] = 0.5f * (g[0][j] - g[1][j] + g[2][j]);
                t[3][j] = g[2][j];
            }
            for (int i = 0; i < 4; i++) { /* U = t G^T */
                float *b = buf + (i * 4) * ld + c;
                b[0] = t[i][0];
                b[ld] = 0.5f * (t[i][0] + t[i][1] + t[i][2]);
                b[2 * ld] = 0.5f * (t[i][0] - t[i][1] + t[i][2]);
                b[3 * ld] = t[i][2];
            }
        }
        for (int e = 0; e < 16; e++)
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
 * A tile row's 4 input rows are copied, zero-padded, into a buffer of
 * 2 tW + 2 columns; the column half of each transform runs over whole
 * rows and the row half over the tiles with a constant stride, so both
 * loops vectorise. */
#define TMP_LEN(j) (2 * (j)->tW + 2)

/* V[e][c][t] for input channels [c0, c1) and tile rows [r0, r0 + nr), tile
 * t of them at column t of rows ld floats apart; tmp holds 8 rows of
 * TMP_LEN floats */
THNN_VEC_CLONES static void input_transform(const wg_job *j, float *V, int64_t ld, int64_t c0,
                                            int64_t c1, int64_t r0, int64_t nr, float *tmp) {
    const int64_t H = j->H, W = j->W, tW = j->tW, L = TMP_LEN(j), cn = j->C * ld,
                  pw = j->pw;
    float *zero = tmp, *u = tmp + 4 * L; /* zero: the rows above and below */
    memset(zero, 0, (size_t)L * sizeof *zero);
    /* input columns [0, x_hi) land at u's columns [pw, pw + x_hi) */
    const int64_t x_hi = W < L - pw ? W : L - pw;
    float *restrict u0 = u, *restrict u1 = u + L, *restrict u2 = u + 2 * L,
                    *restrict u3 = u + 3 * L;
    for (int64_t k = 0; k < pw; k++) u0[k] = u1[k] = u2[k] = u3[k] = 0.0f;
    for (int64_t k = pw + x_hi; k < L; k++) u0[k] = u1[k] = u2[k] = u3[k] = 0.0f;
    /* channel by channel, so that the rows read (and the runs written)
       follow each other in memory */
    for (int64_t c = c0; c < c1; c++) {
        for (int64_t rr = 0; rr < nr; rr++) {
            const int64_t s = (r0 + rr) / j->tH, y0 = 2 * ((r0 + rr) % j->tH) - j->ph;
            const float *xp = j->x + (s * j->C + c) * H * W;
            const float *rows[4];
            for (int a = 0; a < 4; a++)
                rows[a] = y0 + a < 0 || y0 + a >= H ? zero : xp + (y0 + a) * W;
            const float *restrict d0 = rows[0], *restrict d1 = rows[1],
                        *restrict d2 = rows[2], *restrict d3 = rows[3];
            for (int64_t k = 0; k < x_hi; k++) { /* B^T d, column by column */
                u0[pw + k] = d0[k] - d2[k];
                u1[pw + k] = d1[k] + d2[k];
                u2[pw + k] = d2[k] - d1[k];
                u3[pw + k] = d1[k] - d3[k];
            }
            float *Vc = V + c * ld + rr * tW;
            for (int a = 0; a < 4; a++) { /* (B^T d) B, tile by tile */
                const float *restrict ua = u + a * L;
                float *restrict v0 = Vc + (a * 4) * cn, *restrict v1 = v0 + cn,
                                *restrict v2 = v1 + cn, *restrict v3 = v2 + cn;
                for (int64_t t = 0; t < tW; t++) {
                    const float e0 = ua[2 * t], e1 = ua[2 * t + 1], e2 = ua[2 * t + 2],
                                e3 = ua[2 * t + 3];
                    v0[t] = e0 - e2;
                    v1[t] = e1 + e2;
                    v2[t] = e2 - e1;
                    v3[t] = e1 - e3;
                }
            }
        }
    }
}

/* out's tile rows [r0, r0 + nr) from M[e][o][t] plus the bias; tmp holds
 * 2 rows of TMP_LEN floats and 8 of tW */
THNN_VEC_CLONES static void output_transform(const wg_job *j, const float *M, int64_t r0, int64_t nr,
                             float *tmp) {
    const int64_t tW = j->tW, n = nr * tW, on = j->O * n, plane = j->OH * j->OW;
    float *y = tmp, *u = tmp + 2 * TMP_LEN(j);
    for (int64_t o = 0; o < j->O; o++) {
        for (int64_t rr = 0; rr < nr; rr++) {
            const int64_t s = (r0 + rr) / j->tH, oy = 2 * ((r0 + rr) % j->tH);
            const float b = j->bias ? j->bias[o] : 0.0f;
            const float *m = M + o * n + rr * tW;
            for (int c = 0; c < 4; c++) { /* A^T m, column by column */
                const float *m0 = m + c * on, *m1 = m0 + 4 * on, *m2 = m1 + 4 * on,
                            *m3 = m2 + 4 * on;
                float *ua = u + c * tW, *ub = u + (4 + c) * tW;
                for (int64_t t = 0; t < tW; t++) {
                    ua[t] = m0[t] + m1[t] + m2[t];
                    ub[t] = m1[t] - m2[t] - m3[t];
                }
            }
            float *op = j->out + (s * j->O + o) * plane;
            for (int a = 0; a < 2 && oy + a < j->OH; a++) { /* (A^T m) A */
                const float *c0 = u + (4 * a) * tW, *c1 = c0 + tW, *c2 = c1 + tW,
                            *c3 = c2 + tW;
                for (int64_t t = 0; t < tW; t++) {
                    y[2 * t] = c0[t] + c1[t] + c2[t] + b;
                    y[2 * t + 1] = c1[t] - c2[t] - c3[t] + b;
                }
                memcpy(op + (oy + a) * j->OW, y, (size_t)j->OW * sizeof *y);
            }
        }
    }
}

/* chunks [c0, c1) of tile rows: each transforms its tiles, runs the 16
 * products, and writes its outputs */
static void run_chunks(int64_t c0, int64_t c1, void *ctx) {
    wg_job *j = ctx;
    const int64_t most = j->chunk_rows * j->tW;
    int64_t vs[1] = {16 * j->C * most}, ms[1] = {16 * j->O * most},
            ts[1] = {8 * TMP_LEN(j) + 8 * j->tW};
    th_tensor *V = th_empty(1, vs, TH_FLOAT32), *M = th_empty(1, ms, TH_FLOAT32),
              *T = th_empty(1, ts, TH_FLOAT32);
    int ok = V && M && T;
    for (int64_t ci = c0; ci < c1 && ok; ci++) {
        const int64_t r0 = ci * j->chunk_rows;
        const int64_t nr = r0 + j->chunk_rows <= j->rows ? j->chunk_rows : j->rows - r0;
        const int64_t n = nr * j->tW;
        input_transform(j, thnn__data(V), n, 0, j->C, r0, nr, thnn__data(T));
        for (int e = 0; e < 16 && ok; e++)
            ok = thnn__gemm_views("conv2d (Winograd)", thnn__mat(M, e * j->O * n, j->O, n, n, 1),
                                  thnn__mat(j->U, e * j->O * j->C, j->O, j->C, j->C, 1),
                                  thnn__mat(V, e * j->C * n, j->C, n, n, 1), 0.0) == TH_OK;
        if (ok) output_transform(j, thnn__data(M), r0, nr, thnn__data(T));
    }
    if (!ok) __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
    thnn__release(V); thnn__release(M); thnn__release(T);
}

int thnn__winograd_conv(float *out, const float *x, const float *w, const float *bias,
                        int64_t N, int64_t C, int64_t H, int64_t W, int64_t O, int64_t ph,
                        int64_t pw, int64_t OH, int64_t OW, int flip) {
    const int64_t tH = (OH + 1) / 2, tW = (OW + 1) / 2, rows = N * tH;
    int64_t chunk_rows = CHUNK_BYTES / (64 * (C + O) * tW);
    if (chunk_rows < 1) chunk_rows = 1;
    if (chunk_rows > rows) chunk_rows = rows;
    int64_t us[1] = {16 * O * C};
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
    const int64_t chunks = (rows + chunk_rows - 1) / chunk_rows;
    th_parallel_for(chunks, 1, run_chunks, &j);
    th_tensor_release(U);
    return j.failed ? thnn__error(TH_ERR_MEMORY, "conv2d: not enough memory for the "
                                  "Winograd transforms of a chunk of tiles") : TH_OK;
}

/* ---- the weight gradient ------------------------------------------------
 * y = A^T (U .* V) A with U = G g G^T, so for a loss L with dL/dy = dy,
 * dL/dU = (A dy A^T) .* V and dL/dg = G^T (dL/dU) G: per tile, the 2x2
 * block of grad_output is transformed to P = A dy A^T (4x4), and
 *   M_e = sum over tiles of P_e V_e^T   (one (O, C) GEMM per position e,
 *         over the tiles: 4 multiply-adds per output position and channel
 *         pair where im2col's product has 9),
 *   grad_weight[o][c] = G^T M[o][c] G.
 * Chunks of tile rows go one after another: their transforms are spread
 * over the pool by tile row, then the 16 products (added into M) by
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
 * [r0, r0 + nr), tile t at column t of rows ld apart; tmp holds 6 rows of
 * 2 tW floats */
THNN_VEC_CLONES static void grad_output_transform(const wg_grad_job *j, float *P, int64_t o0,
                                                  int64_t o1, int64_t r0, int64_t nr,
                                                  float *tmp) {
    const wg_job *g = &j->geo;
    const int64_t tW = g->tW, L = 2 * tW, on = g->O * j->ld, plane = g->OH * g->OW;
    float *d0 = tmp, *d1 = tmp + L, *u = tmp + 2 * L;
    for (int64_t o = o0; o < o1; o++) {
        for (int64_t rr = 0; rr < nr; rr++) {
            const int64_t s = (r0 + rr) / g->tH, oy = 2 * ((r0 + rr) % g->tH);
            const float *yp = j->gy + (s * g->O + o) * plane + oy * g->OW;
            /* rows oy and oy + 1, zero past the plane's last row and column */
            memcpy(d0, yp, (size_t)g->OW * sizeof *d0);
            if (oy + 1 < g->OH) memcpy(d1, yp + g->OW, (size_t)g->OW * sizeof *d1);
            else memset(d1, 0, (size_t)g->OW * sizeof *d1);
            if (L > g->OW) d0[L - 1] = d1[L - 1] = 0.0f;
            float *u0 = u, *u1 = u + L, *u2 = u + 2 * L, *u3 = u + 3 * L;
            for (int64_t k = 0; k < L; k++) { /* A dy, column by column */
                u0[k] = d0[k];
                u1[k] = d0[k] + d1[k];
                u2[k] = d0[k] - d1[k];
                u3[k] = -d1[k];
            }
            float *Po = P + o * j->ld + rr * tW;
            for (int a = 0; a < 4; a++) { /* (A dy) A^T, tile by tile */
                const float *ua = u + a * L;
                float *p0 = Po + (a * 4) * on, *p1 = p0 + on, *p2 = p1 + on, *p3 = p2 + on;
                for (int64_t t = 0; t < tW; t++) {
                    const float e0 = ua[2 * t], e1 = ua[2 * t + 1];
                    p0[t] = e0;
                    p1[t] = e0 + e1;
                    p2[t] = e0 - e1;
                    p3[t] = -e1;
                }
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
    float *tmp = malloc((size_t)(8 * TMP_LEN(&j->geo)) * sizeof *tmp);
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
static void grad_filter(int64_t o0, int64_t o1, void *ctx) {
    wg_grad_job *j = ctx;
    const int64_t O = j->geo.O, C = j->geo.C, ld = C + ROW_PAD;
    float *buf = row_buffer(C);
    if (!buf) {
        __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    for (int64_t o = o0; o < o1; o++) {
        for (int e = 0; e < 16; e++)
            memcpy(buf + e * ld, j->M + (e * O + o) * C, (size_t)C * sizeof *buf);
        for (int64_t c = 0; c < C; c++) {
            const float *m = buf + c;
            float t[3][4];
            for (int b = 0; b < 4; b++) { /* G^T m, column by column */
                const float m0 = m[b * ld], m1 = m[(4 + b) * ld], m2 = m[(8 + b) * ld],
                            m3 = m[(12 + b) * ld];
                t[0][b] = m0 + 0.5f * (m1 + m2);
                t[1][b] = 0.5f * (m1 - m2);
                t[2][b] = 0.5f * (m1 + m2) + m3;
            }
            float *gw = j->gw + (o * C + c) * 9;
            for (int i = 0; i < 3; i++) { /* (G^T m) G */
                gw[i * 3] = t[i][0] + 0.5f * (t[i][1] + t[i][2]);
                gw[i * 3 + 1] = 0.5f * (t[i][1] - t[i][2]);
                gw[i * 3 + 2] = 0.5f * (t[i][1] + t[i][2]) + t[i][3];
            }
        }
    }
    free(buf);
}

/* at least this many tiles per chunk, so that adding the chunk's products
 * into M (16 O C floats) costs little beside them */
#define GRAD_MIN_TILES 256

int thnn__winograd_weight_grad(float *gw, const float *x, const float *gy, int64_t N,
                               int64_t C, int64_t H, int64_t W, int64_t O, int64_t ph,
                               int64_t pw, int64_t OH, int64_t OW) {
    const int64_t tH = (OH + 1) / 2, tW = (OW + 1) / 2, rows = N * tH;
    int64_t chunk_rows = CHUNK_BYTES / (64 * (C + O) * tW);
    if (chunk_rows * tW < GRAD_MIN_TILES) chunk_rows = (GRAD_MIN_TILES + tW - 1) / tW;
    if (chunk_rows > rows) chunk_rows = rows;
    const int64_t ld = chunk_rows * tW;
    wg_grad_job j = {{NULL, x, NULL, NULL, N, C, H, W, O, ph, pw, OH, OW, tH, tW, rows,
                      chunk_rows, 0},
                     gy, NULL, NULL, NULL, NULL, NULL, NULL, gw, ld, 0, 0, 0.0, 0};
    int64_t vs[1] = {16 * C * ld}, ps[1] = {16 * O * ld}, ms[1] = {16 * O * C};
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
            if (!j.failed) th_parallel_for(16, 1, grad_products, &j);
        }
        if (!j.failed) th_parallel_for(O, 1, grad_filter, &j);
    } else {
        j.failed = 1;
    }
    thnn__release(V); thnn__release(P); thnn__release(M);
    return j.failed ? thnn__error(TH_ERR_MEMORY, "conv2d: not enough memory for the "
                                  "Winograd transforms of the weight gradient") : TH_OK;
}
