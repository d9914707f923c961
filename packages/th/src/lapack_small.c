/* Inverses of batches of matrices of order 1 to 4: Gauss-Jordan with
 * partial pivoting on a copy held in registers, read straight from the
 * input's strides and written column-major, one pass over the batch.  For
 * such matrices the general path (a column-major copy, an identity
 * right-hand side, LU then two triangular solves per matrix) spends more
 * time moving data than computing.
 *
 * The pivots are those of LU with partial pivoting (the same column
 * maxima, rows below the pivot updated alike), so `info` is getrf's: the
 * 1-based order of the first zero pivot. */
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

/* One matrix: load, invert (the order n made a constant for the
 * compiler), store column-major. */
#define INV_ONE(T, GJ)                                                       \
    static int inv_one_##GJ(const T *src, int64_t rs, int64_t cs, T *dst,   \
                            int n) {                                         \
        T a[16];                                                             \
        for (int i = 0; i < n; i++)                                          \
            for (int j = 0; j < n; j++) a[i * 4 + j] = src[i * rs + j * cs]; \
        int info;                                                            \
        switch (n) {                                                         \
        case 1: info = GJ(a, 1); break;                                      \
        case 2: info = GJ(a, 2); break;                                      \
        case 3: info = GJ(a, 3); break;                                      \
        default: info = GJ(a, 4); break;                                     \
        }                                                                    \
        for (int j = 0; j < n; j++)                                          \
            for (int i = 0; i < n; i++) dst[j * n + i] = a[i * 4 + j];       \
        return info;                                                         \
    }
INV_ONE(float, gj_s)
INV_ONE(double, gj_d)

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
    if (nbatch == 0) {
    } else if (nbatch <= 1024 || th_in_parallel())
        small_inv_range(0, nbatch, &j);
    else
        th_parallel_for(nbatch, 1024, small_inv_range, &j);
    *X = x;
    *info = inf;
    return TH_OK;
}
