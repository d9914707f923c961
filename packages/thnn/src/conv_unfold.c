/* vol2col / col2vol and the GEMM-on-views helpers shared by the
 * convolutions (see conv_unfold.h).  The loops are serial, between two
 * BLAS calls (see conv.c's "Threads"). */
#include <string.h>

#include "conv_unfold.h"

/* window positions o in [lo, hi) read image index o * stride + off inside
 * [0, n) */
static inline void valid_range(int64_t off, int64_t stride, int64_t n,
                               int64_t outs, int64_t *lo, int64_t *hi) {
    /* ceil(-off / stride) without -off + stride - 1 (stride may be huge) */
    int64_t l = off < 0 ? (-off - 1) / stride + 1 : 0;
    int64_t h = n - 1 - off >= 0 ? (n - 1 - off) / stride + 1 : 0;
    if (h > outs) h = outs;
    if (l > h) l = h;
    *lo = l;
    *hi = h;
}

/* Each row of col is one (channel, kernel offset); along it the window
 * positions (od, oh, ow) of rows q = od*OH + oh in [r0, r1).  A run of OW
 * positions maps to one image row, read with stride sw from column
 * ow * sw + off. */
#define DEFINE_UNFOLD(T)                                                      \
    static void vol2col_##T(const T *x, T *col, const thnn_unfold *u,         \
                            int64_t r0, int64_t r1) {                         \
        const int64_t kk = u->kd * u->kh * u->kw, rows = u->C * kk;           \
        const int64_t L = (r1 - r0) * u->OW, plane = u->D * u->H * u->W;      \
        for (int64_t r = 0; r < rows; r++) {                                  \
            const int64_t c = r / kk, k = r % kk;                             \
            const int64_t kz = k / (u->kh * u->kw);                           \
            const int64_t ki = (k / u->kw) % u->kh, kj = k % u->kw;           \
            const int64_t off = kj * u->dw - u->pw;                           \
            int64_t lo, hi;                                                   \
            valid_range(off, u->sw, u->W, u->OW, &lo, &hi);                   \
            const T *xc = x + c * plane;                                      \
            T *cp = col + r * L;                                              \
            for (int64_t q = r0; q < r1; q++) {                               \
                const int64_t od = q / u->OH, oh = q % u->OH;                 \
                const int64_t id = od * u->sd - u->pd + kz * u->dd;           \
                const int64_t ih = oh * u->sh - u->ph + ki * u->dh;           \
                T *dst = cp + (q - r0) * u->OW;                               \
                if (id < 0 || id >= u->D || ih < 0 || ih >= u->H) {           \
                    memset(dst, 0, (size_t)u->OW * sizeof(T));                \
                    continue;                                                 \
                }                                                             \
                const T *src = xc + (id * u->H + ih) * u->W;                  \
                for (int64_t ow = 0; ow < lo; ow++) dst[ow] = 0;              \
                if (u->sw == 1)                                               \
                    memcpy(dst + lo, src + lo + off,                          \
                           (size_t)(hi - lo) * sizeof(T));                    \
                else                                                          \
                    for (int64_t ow = lo; ow < hi; ow++)                      \
                        dst[ow] = src[ow * u->sw + off];                      \
                for (int64_t ow = hi; ow < u->OW; ow++) dst[ow] = 0;          \
            }                                                                 \
        }                                                                     \
    }                                                                         \
    static void col2vol_##T(T *x, const T *col, const thnn_unfold *u,         \
                            int64_t r0, int64_t r1) {                         \
        const int64_t kk = u->kd * u->kh * u->kw, rows = u->C * kk;           \
        const int64_t L = (r1 - r0) * u->OW, plane = u->D * u->H * u->W;      \
        for (int64_t r = 0; r < rows; r++) {                                  \
            const int64_t c = r / kk, k = r % kk;                             \
            const int64_t kz = k / (u->kh * u->kw);                           \
            const int64_t ki = (k / u->kw) % u->kh, kj = k % u->kw;           \
            const int64_t off = kj * u->dw - u->pw;                           \
            int64_t lo, hi;                                                   \
            valid_range(off, u->sw, u->W, u->OW, &lo, &hi);                   \
            T *xc = x + c * plane;                                            \
            const T *cp = col + r * L;                                        \
            for (int64_t q = r0; q < r1; q++) {                               \
                const int64_t od = q / u->OH, oh = q % u->OH;                 \
                const int64_t id = od * u->sd - u->pd + kz * u->dd;           \
                const int64_t ih = oh * u->sh - u->ph + ki * u->dh;           \
                if (id < 0 || id >= u->D || ih < 0 || ih >= u->H) continue;   \
                T *dst = xc + (id * u->H + ih) * u->W;                        \
                const T *src = cp + (q - r0) * u->OW;                         \
                if (u->sw == 1)                                               \
                    for (int64_t ow = lo; ow < hi; ow++)                      \
                        dst[ow + off] += src[ow];                             \
                else                                                          \
                    for (int64_t ow = lo; ow < hi; ow++)                      \
                        dst[ow * u->sw + off] += src[ow];                     \
            }                                                                 \
        }                                                                     \
    }
DEFINE_UNFOLD(float)
DEFINE_UNFOLD(double)

void thnn__vol2col(int dtype, const void *x, void *col, const thnn_unfold *u,
                   int64_t r0, int64_t r1) {
    if (dtype == TH_FLOAT32) vol2col_float(x, col, u, r0, r1);
    else vol2col_double(x, col, u, r0, r1);
}

void thnn__col2vol(int dtype, void *x, const void *col, const thnn_unfold *u,
                   int64_t r0, int64_t r1) {
    if (dtype == TH_FLOAT32) col2vol_float(x, col, u, r0, r1);
    else col2vol_double(x, col, u, r0, r1);
}

int64_t thnn__band_rows(const thnn_unfold *u, int dtype) {
    const int64_t row_bytes = u->C * u->kd * u->kh * u->kw * u->OW *
                              (int64_t)th_dtype_itemsize(dtype);
    const int64_t rows = u->OD * u->OH;
    int64_t band = row_bytes > 0 ? THNN_COL_BAND_BYTES / row_bytes : rows;
    return band < 1 ? 1 : band > rows ? rows : band;
}

th_tensor *thnn__col_buffer(int64_t rows, int64_t cols, int dtype) {
    int64_t sz[2] = {rows, cols};
    th_tensor *t = th_empty(2, sz, dtype);
    if (!t) thnn__from_th("convolution column buffer");
    return t;
}

th_tensor *thnn__mat(const th_tensor *t, int64_t offset, int64_t rows,
                     int64_t cols, int64_t ld, int64_t cs) {
    int64_t sz[2] = {rows, cols}, st[2] = {ld, cs};
    return thnn__view(t, offset, 2, sz, st);
}

int thnn__gemm_views(const char *where, th_tensor *c, th_tensor *a,
                     th_tensor *b, double beta) {
    int rc;
    if (!c || !a || !b) rc = thnn_last_status();
    else if ((rc = th_gemm_out(c, a, b, beta, 1.0))) rc = thnn__from_th(where);
    thnn__release(a); thnn__release(b); thnn__release(c);
    return rc;
}

#define DEFINE_BIAS(T)                                                        \
    static void fill_bias_##T(T *out, const T *bias, int64_t NO, int64_t O,   \
                              int64_t L) {                                    \
        for (int64_t r = 0; r < NO; r++) {                                    \
            const T b = bias[r % O];                                          \
            for (int64_t i = 0; i < L; i++) out[r * L + i] = b;               \
        }                                                                     \
    }                                                                         \
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
DEFINE_BIAS(float)
DEFINE_BIAS(double)

void thnn__fill_bias(int dtype, void *out, const void *bias, int64_t NO,
                     int64_t O, int64_t L) {
    if (dtype == TH_FLOAT32) fill_bias_float(out, bias, NO, O, L);
    else fill_bias_double(out, bias, NO, O, L);
}

void thnn__bias_grad(int dtype, void *gb, const void *gy, int64_t N,
                     int64_t O, int64_t L) {
    if (dtype == TH_FLOAT32) bias_grad_float(gb, gy, N, O, L);
    else bias_grad_double(gb, gy, N, O, L);
}
