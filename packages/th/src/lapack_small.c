/* Inverses of batches of matrices of order 1 to 4, in registers, read
 * straight from the input's strides and written column-major in one pass
 * over the batch.  For such matrices the general path (a column-major
 * copy, an identity right-hand side, LU then two triangular solves per
 * matrix) spends more time moving data than computing.
 *
 * Orders 2-4 use the closed form adj(A) / det(A) when A is far from
 * singular: |det A| at least 2^-10 times Hadamard's bound (the product of
 * the rows' norms, which |det A| reaches for orthogonal rows), so its
 * error stays that of a well-conditioned solve.  Other matrices (and
 * order 1) go through Gauss-Jordan with partial pivoting, whose pivots
 * are LU's (the same column maxima, rows below the pivot updated alike):
 * `info` is getrf's, the 1-based order of the first zero pivot. */
#include "lapack_internal.h"

typedef struct {
    const char *src;
    char *dst;
    int32_t *info;
    int nb, n, f64;
    int64_t sizes[TH_MAX_DIMS], strides[TH_MAX_DIMS]; /* batch dims, elements */
    int64_t rs, cs;                                     /* a matrix's strides */
} small_inv_job;

/* Inverts the n x n row-major matrix a (row stride 4) in place; returns
 * the first zero pivot (1-based) or 0.  Rows are swapped as pivoted, so
 * the inverse's columns come out swapped: undone at the end in reverse. */
#define GJ_INVERT(T, NAME)                                                   \
    static inline __attribute__((always_inline)) int NAME(T *a, const int n) { \
        int piv[4];                                                          \
        for (int k = 0; k < n; k++) {                                        \
            int p = k;                                                       \
            T best = a[k * 4 + k] < 0 ? -a[k * 4 + k] : a[k * 4 + k];        \
            for (int i = k + 1; i < n; i++) {                                \
                T v = a[i * 4 + k] < 0 ? -a[i * 4 + k] : a[i * 4 + k];       \
                if (v > best) { best = v; p = i; }                           \
            }                                                                \
            if (a[p * 4 + k] == 0) return k + 1;                             \
            piv[k] = p;                                                      \
            if (p != k)                                                      \
                for (int j = 0; j < n; j++) {                                \
                    T t = a[k * 4 + j]; a[k * 4 + j] = a[p * 4 + j];         \
                    a[p * 4 + j] = t;                                        \
                }                                                            \
            T inv = 1 / a[k * 4 + k];                                        \
            a[k * 4 + k] = 1;                                                \
            for (int j = 0; j < n; j++) a[k * 4 + j] *= inv;                 \
            for (int i = 0; i < n; i++) {                                    \
                if (i == k) continue;                                        \
                T f = a[i * 4 + k];                                          \
                a[i * 4 + k] = 0;                                            \
                for (int j = 0; j < n; j++) a[i * 4 + j] -= f * a[k * 4 + j]; \
            }                                                                \
        }                                                                    \
        for (int k = n - 1; k >= 0; k--)                                     \
            if (piv[k] != k)                                                 \
                for (int i = 0; i < n; i++) {                                \
                    T t = a[i * 4 + k]; a[i * 4 + k] = a[i * 4 + piv[k]];    \
                    a[i * 4 + piv[k]] = t;                                   \
                }                                                            \
        return 0;                                                            \
    }
GJ_INVERT(float, gj_s)
GJ_INVERT(double, gj_d)

/* adj(A) / det(A) into r (row stride 4) for the n x n row-major a (row
 * stride 4), n = 2..4; 0 when A is too close to singular for it. */
#define CLOSED_FORM(T, NAME)                                                 \
    static inline __attribute__((always_inline)) int NAME(const T *m, T *r, \
                                                          const int n) {   \
        T det;                                                               \
        if (n == 2) {                                                        \
            det = m[0] * m[5] - m[1] * m[4];                                 \
            r[0] = m[5]; r[1] = -m[1]; r[4] = -m[4]; r[5] = m[0];            \
        } else if (n == 3) {                                                 \
            r[0] = m[5] * m[10] - m[6] * m[9];                               \
            r[1] = m[2] * m[9] - m[1] * m[10];                               \
            r[2] = m[1] * m[6] - m[2] * m[5];                                \
            r[4] = m[6] * m[8] - m[4] * m[10];                               \
            r[5] = m[0] * m[10] - m[2] * m[8];                               \
            r[6] = m[2] * m[4] - m[0] * m[6];                                \
            r[8] = m[4] * m[9] - m[5] * m[8];                                \
            r[9] = m[1] * m[8] - m[0] * m[9];                                \
            r[10] = m[0] * m[5] - m[1] * m[4];                               \
            det = m[0] * r[0] + m[1] * r[4] + m[2] * r[8];                   \
        } else {                                                             \
            /* 2x2 minors of the top rows (s) and of the bottom rows (c) */  \
            T s0 = m[0] * m[5] - m[4] * m[1], s1 = m[0] * m[6] - m[4] * m[2]; \
            T s2 = m[0] * m[7] - m[4] * m[3], s3 = m[1] * m[6] - m[5] * m[2]; \
            T s4 = m[1] * m[7] - m[5] * m[3], s5 = m[2] * m[7] - m[6] * m[3]; \
            T c5 = m[10] * m[15] - m[14] * m[11], c4 = m[9] * m[15] - m[13] * m[11]; \
            T c3 = m[9] * m[14] - m[13] * m[10], c2 = m[8] * m[15] - m[12] * m[11]; \
            T c1 = m[8] * m[14] - m[12] * m[10], c0 = m[8] * m[13] - m[12] * m[9]; \
            det = s0 * c5 - s1 * c4 + s2 * c3 + s3 * c2 - s4 * c1 + s5 * c0; \
            r[0] = m[5] * c5 - m[6] * c4 + m[7] * c3;                        \
            r[1] = -m[1] * c5 + m[2] * c4 - m[3] * c3;                       \
            r[2] = m[13] * s5 - m[14] * s4 + m[15] * s3;                     \
            r[3] = -m[9] * s5 + m[10] * s4 - m[11] * s3;                     \
            r[4] = -m[4] * c5 + m[6] * c2 - m[7] * c1;                       \
            r[5] = m[0] * c5 - m[2] * c2 + m[3] * c1;                        \
            r[6] = -m[12] * s5 + m[14] * s2 - m[15] * s1;                    \
            r[7] = m[8] * s5 - m[10] * s2 + m[11] * s1;                      \
            r[8] = m[4] * c4 - m[5] * c2 + m[7] * c0;                        \
            r[9] = -m[0] * c4 + m[1] * c2 - m[3] * c0;                       \
            r[10] = m[12] * s4 - m[13] * s2 + m[15] * s0;                    \
            r[11] = -m[8] * s4 + m[9] * s2 - m[11] * s0;                     \
            r[12] = -m[4] * c3 + m[5] * c1 - m[6] * c0;                      \
            r[13] = m[0] * c3 - m[1] * c1 + m[2] * c0;                       \
            r[14] = -m[12] * s3 + m[13] * s1 - m[14] * s0;                   \
            r[15] = m[8] * s3 - m[9] * s1 + m[10] * s0;                      \
        }                                                                    \
        double bound = 1;                                                    \
        for (int i = 0; i < n; i++) {                                        \
            double row = 0;                                                  \
            for (int j = 0; j < n; j++)                                      \
                row += (double)m[i * 4 + j] * m[i * 4 + j];                  \
            bound *= row;                                                    \
        }                                                                    \
        double d = det;                                                      \
        if (!(d * d > 0x1p-20 * bound) || !isfinite(d) || !isfinite(bound))  \
            return 0;                                                        \
        T inv = 1 / det;                                                     \
        for (int i = 0; i < n; i++)                                          \
            for (int j = 0; j < n; j++) r[i * 4 + j] *= inv;                 \
        return 1;                                                            \
    }
CLOSED_FORM(float, closed_s)
CLOSED_FORM(double, closed_d)

/* One matrix: load, invert (the order n made a constant for the
 * compiler), store column-major. */
#define INV_ONE(T, GJ, CLOSED)                                               \
    static inline __attribute__((always_inline)) int inv_n_##GJ(T *a, const int n) { \
        T r[16];                                                             \
        if (n > 1 && CLOSED(a, r, n)) {                                      \
            for (int i = 0; i < n; i++)                                      \
                for (int j = 0; j < n; j++) a[i * 4 + j] = r[i * 4 + j];     \
            return 0;                                                        \
        }                                                                    \
        return GJ(a, n);                                                     \
    }                                                                        \
    static int inv_one_##GJ(const T *src, int64_t rs, int64_t cs, T *dst,   \
                            int n) {                                         \
        T a[16];                                                             \
        for (int i = 0; i < n; i++)                                          \
            for (int j = 0; j < n; j++) a[i * 4 + j] = src[i * rs + j * cs]; \
        int info;                                                            \
        switch (n) {                                                         \
        case 1: info = inv_n_##GJ(a, 1); break;                              \
        case 2: info = inv_n_##GJ(a, 2); break;                              \
        case 3: info = inv_n_##GJ(a, 3); break;                              \
        default: info = inv_n_##GJ(a, 4); break;                             \
        }                                                                    \
        for (int j = 0; j < n; j++)                                          \
            for (int i = 0; i < n; i++) dst[j * n + i] = a[i * 4 + j];       \
        return info;                                                         \
    }
INV_ONE(float, gj_s, closed_s)
INV_ONE(double, gj_d, closed_d)

static void small_inv_range(int64_t begin, int64_t end, void *vctx) {
    const small_inv_job *j = vctx;
    int64_t idx[TH_MAX_DIMS], rem = begin, per = (int64_t)j->n * j->n;
    for (int i = j->nb - 1; i >= 0; i--) {
        idx[i] = rem % j->sizes[i];
        rem /= j->sizes[i];
    }
    for (int64_t b = begin; b < end; b++) {
        int64_t off = 0;
        for (int i = 0; i < j->nb; i++) off += idx[i] * j->strides[i];
        j->info[b] = j->f64
            ? inv_one_gj_d((const double *)j->src + off, j->rs, j->cs,
                           (double *)j->dst + b * per, j->n)
            : inv_one_gj_s((const float *)j->src + off, j->rs, j->cs,
                           (float *)j->dst + b * per, j->n);
        for (int i = j->nb - 1; i >= 0; i--) { /* next batch index */
            if (++idx[i] < j->sizes[i]) break;
            idx[i] = 0;
        }
    }
}

/* X (column-major, fresh) and info (batch shape, int32) for A of order
 * 1..4; the caller has checked A. */
int th__small_inv(const th_tensor *A, th_tensor **X, th_tensor **info) {
    int nb = A->ndim - 2;
    int64_t n = A->sizes[nb];
    th_tensor *x = colmajor(nb, A->sizes, n, n, A->dtype, NULL);
    th_tensor *inf = batched(nb, A->sizes, 0, NULL, TH_INT32);
    if (!x || !inf) {
        th_tensor_release(x);
        th_tensor_release(inf);
        return th_last_status();
    }
    small_inv_job j = {.src = th__ptr(A), .dst = th__ptr(x),
                       .info = (int32_t *)th__ptr(inf), .nb = nb, .n = (int)n,
                       .f64 = A->dtype == TH_FLOAT64,
                       .rs = A->strides[nb], .cs = A->strides[nb + 1]};
    for (int i = 0; i < nb; i++) {
        j.sizes[i] = A->sizes[i];
        j.strides[i] = A->strides[i];
    }
    int64_t nbatch = th_numel(inf);
    if (nbatch > 0 && (nbatch <= 8192 || th_in_parallel())) {
        /* tens of nanoseconds a matrix: below ~0.2 ms of work, waking
         * the pool costs more than it saves */
        small_inv_range(0, nbatch, &j);
    } else if (nbatch > 0) {
        th_parallel_for(nbatch, 4096, small_inv_range, &j);
    }
    *X = x;
    *info = inf;
    return TH_OK;
}
