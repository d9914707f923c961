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
 * (`flip`).  Rounding differs from im2col's (the transforms add and halve
 * values): about 1e-6 of the outputs' magnitude in float32. */
#include <stdlib.h>
#include <string.h>

#include "conv_unfold.h"
#include "conv_winograd.h"

#define CHUNK_BYTES (4 << 20)
#define MIN_CHANNELS 16
#define MIN_POSITIONS 36
#define MIN_SAVED 16000.0

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
       filter transform's fixed cost per pair: ResNet-18's 512-channel 7x7
       layers at batch 8 (1480 saved) ran 1.5x slower, its 256-channel
       14x14 ones (7840) even, its 28x28 and 56x56 ones (31k, 125k) faster */
    const double saved = (double)N * (9.0 * (double)(OH * OW) -
                                      16.0 * (double)((OH + 1) / 2) * (double)((OW + 1) / 2));
    return always || saved >= MIN_SAVED;
}

/* U (16, O, C) from w: (O, C, 3, 3), or with flip (C, O, 3, 3) read as
 * kernel[o][c][i][j] = w[c][o][2 - i][2 - j] */
static void filter_transform(float *U, const float *w, int64_t O, int64_t C, int flip) {
    for (int64_t o = 0; o < O; o++)
        for (int64_t c = 0; c < C; c++) {
            float g[3][3], t[4][3];
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    g[i][j] = flip ? w[(c * O + o) * 9 + (2 - i) * 3 + (2 - j)]
                                   : w[(o * C + c) * 9 + i * 3 + j];
            for (int j = 0; j < 3; j++) { /* t = G g */
                t[0][j] = g[0][j];
                t[1][j] = 0.5f * (g[0][j] + g[1][j] + g[2][j]);
                t[2][j] = 0.5f * (g[0][j] - g[1][j] + g[2][j]);
                t[3][j] = g[2][j];
            }
            for (int i = 0; i < 4; i++) { /* U = t G^T */
                float u[4] = {t[i][0], 0.5f * (t[i][0] + t[i][1] + t[i][2]),
                              0.5f * (t[i][0] - t[i][1] + t[i][2]), t[i][2]};
                for (int j = 0; j < 4; j++)
                    U[((int64_t)(i * 4 + j) * O + o) * C + c] = u[j];
            }
        }
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

/* V[e][c][t] for tile rows [r0, r0 + nr) (n = nr * tW tiles); tmp holds
 * 8 rows of TMP_LEN floats */
static void input_transform(const wg_job *j, float *V, int64_t r0, int64_t nr, float *tmp) {
    const int64_t H = j->H, W = j->W, tW = j->tW, L = TMP_LEN(j), n = nr * tW,
                  cn = j->C * n;
    float *d = tmp, *u = tmp + 4 * L;
    for (int64_t rr = 0; rr < nr; rr++) {
        const int64_t s = (r0 + rr) / j->tH, y0 = 2 * ((r0 + rr) % j->tH) - j->ph;
        /* input columns [x_lo, x_hi) land at tmp columns [x_lo + pw, ...) */
        const int64_t x_hi = W < L - j->pw ? W : L - j->pw;
        for (int64_t c = 0; c < j->C; c++) {
            const float *xp = j->x + (s * j->C + c) * H * W;
            for (int a = 0; a < 4; a++) {
                float *da = d + a * L;
                const int64_t y = y0 + a;
                if (y < 0 || y >= H) {
                    memset(da, 0, (size_t)L * sizeof *da);
                    continue;
                }
                memset(da, 0, (size_t)j->pw * sizeof *da);
                memcpy(da + j->pw, xp + y * W, (size_t)x_hi * sizeof *da);
                for (int64_t k = j->pw + x_hi; k < L; k++) da[k] = 0.0f;
            }
            const float *d0 = d, *d1 = d + L, *d2 = d + 2 * L, *d3 = d + 3 * L;
            float *u0 = u, *u1 = u + L, *u2 = u + 2 * L, *u3 = u + 3 * L;
            for (int64_t k = 0; k < L; k++) { /* B^T d, column by column */
                u0[k] = d0[k] - d2[k];
                u1[k] = d1[k] + d2[k];
                u2[k] = d2[k] - d1[k];
                u3[k] = d1[k] - d3[k];
            }
            float *Vc = V + c * n + rr * tW;
            for (int a = 0; a < 4; a++) { /* (B^T d) B, tile by tile */
                const float *ua = u + a * L;
                float *v0 = Vc + (a * 4) * cn, *v1 = v0 + cn, *v2 = v1 + cn, *v3 = v2 + cn;
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
static void output_transform(const wg_job *j, const float *M, int64_t r0, int64_t nr,
                             float *tmp) {
    const int64_t tW = j->tW, n = nr * tW, on = j->O * n, plane = j->OH * j->OW;
    float *y = tmp, *u = tmp + 2 * TMP_LEN(j);
    for (int64_t rr = 0; rr < nr; rr++) {
        const int64_t s = (r0 + rr) / j->tH, oy = 2 * ((r0 + rr) % j->tH);
        for (int64_t o = 0; o < j->O; o++) {
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
        input_transform(j, thnn__data(V), r0, nr, thnn__data(T));
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
    filter_transform(thnn__data(U), w, O, C, flip);
    wg_job j = {U, x, bias, out, N, C, H, W, O, ph, pw, OH, OW, tH, tW, rows, chunk_rows, 0};
    const int64_t chunks = (rows + chunk_rows - 1) / chunk_rows;
    th_parallel_for(chunks, 1, run_chunks, &j);
    th_tensor_release(U);
    return j.failed ? thnn__error(TH_ERR_MEMORY, "conv2d: not enough memory for the "
                                  "Winograd transforms of a chunk of tiles") : TH_OK;
}
