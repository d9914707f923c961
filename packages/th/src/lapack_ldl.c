/* LDL^T of symmetric indefinite matrices (Bunch-Kaufman pivoting, LAPACK
 * sytrf) and solves from it (sytrs), on batches; the lower triangle is
 * read and LD holds L below the diagonal and the blocks of D (1x1, or
 * 2x2 with their off-diagonal entry under the diagonal) on it, as
 * PyTorch's linalg.ldl_factor.  Complex matrices: LDL^H of Hermitian ones
 * (hetrf/hetrs) when `hermitian`, else LDL^T of complex symmetric ones
 * (the complex sytrf/sytrs).  Not in the TH_NO_BLAS build. */
#include "lapack_internal.h"

#ifndef TH_NO_BLAS
/* The complex routine for dtype and `hermitian`: sytrf or hetrf, sytrs or
 * hetrs. */
typedef int (*ctrf_fn)(int, char, int, void *, int, int *, void *, int);
typedef int (*ctrs_fn)(int, char, int, int, const void *, int, const int *, void *, int);
static ctrf_fn complex_trf(int dtype, int hermitian) {
    if (dtype == TH_COMPLEX64)
        return hermitian ? scipy_LAPACKE_chetrf_work : scipy_LAPACKE_csytrf_work;
    return hermitian ? scipy_LAPACKE_zhetrf_work : scipy_LAPACKE_zsytrf_work;
}
static ctrs_fn complex_trs(int dtype, int hermitian) {
    if (dtype == TH_COMPLEX64)
        return hermitian ? scipy_LAPACKE_chetrs_work : scipy_LAPACKE_csytrs_work;
    return hermitian ? scipy_LAPACKE_zhetrs_work : scipy_LAPACKE_zsytrs_work;
}

/* Slot 0: A -> LD (upper triangle zeroed), slot 1: pivots (n). */
static int ldl_factor_one(lp_job *j, int64_t b, void *work, int *iwork) {
    (void)iwork;
    int n = j->n, f64 = is_f64(j);
    int64_t item = th_dtype_itemsize(j->dtype);
    char *a = mat(j, 0, b);
    int *ipiv = (int *)mat(j, 1, b), lwork = (int)j->lwork;
    if (n == 0) return 0;
    int info = th_dtype_is_complex(j->dtype)
        ? complex_trf(j->dtype, j->f[0])(COLMAJOR, 'L', n, a, n, ipiv, work, lwork)
        : f64 ? scipy_LAPACKE_dsytrf_work(COLMAJOR, 'L', n, (double *)a, n, ipiv, work, lwork)
              : scipy_LAPACKE_ssytrf_work(COLMAJOR, 'L', n, (float *)a, n, ipiv, work, lwork);
    for (int c = 1; c < n; c++)
        for (int r = 0; r < c; r++)
            memset(a + (r + (int64_t)c * n) * item, 0, (size_t)item);
    return info;
}

static int ldl_solve_one(lp_job *j, int64_t b, void *work, int *iwork) {
    (void)work; (void)iwork;
    int n = j->n, k = j->k;
    if (n == 0 || k == 0) return 0;
    const int *ipiv = (const int *)mat(j, 1, b);
    if (th_dtype_is_complex(j->dtype))
        return complex_trs(j->dtype, j->f[0])(COLMAJOR, 'L', n, k, mat(j, 0, b), n, ipiv,
                                              mat(j, 2, b), n);
    return is_f64(j)
        ? scipy_LAPACKE_dsytrs_work(COLMAJOR, 'L', n, k, (const double *)mat(j, 0, b), n,
                                    ipiv, (double *)mat(j, 2, b), n)
        : scipy_LAPACKE_ssytrs_work(COLMAJOR, 'L', n, k, (const float *)mat(j, 0, b), n,
                                    ipiv, (float *)mat(j, 2, b), n);
}

/* 0 when every matrix's pivots are sytrf's kind (lower): k > 0 a row
 * swap with row k, or a 2x2 block -k, -k on two consecutive entries. */
static int64_t bad_pivot(const int32_t *p, int64_t nmat, int n) {
    for (int64_t m = 0; m < nmat; m++, p += n)
        for (int i = 0; i < n; i++) {
            int v = p[i];
            if (v > 0 && v <= n) continue;
            if (v < 0 && -v <= n && i + 1 < n && p[i + 1] == v) {
                i++;
                continue;
            }
            return m * n + i + 1;
        }
    return 0;
}
#endif

int th_linalg_ldl_factor(const th_tensor *A, int hermitian, int check_errors,
                         th_tensor **LD, th_tensor **pivots, th_tensor **info) {
    const char *fn = "torch.linalg.ldl_factor_ex";
    /* hermitian: real matrices, symmetric and Hermitian agree */
    if (!LD || !pivots)
        return th__error(TH_ERR_VALUE, "%s: outputs must not be NULL", fn);
    int rc = check_matrix(fn, "A", A, 1);
    if (rc) return rc;
#ifdef TH_NO_BLAS
    (void)check_errors; (void)info; (void)hermitian;
    return no_lapack("linalg.ldl_factor");
#else
    int nb = A->ndim - 2;
    int64_t n = A->sizes[nb];
    th_tensor *t[3] = {colmajor(nb, A->sizes, n, n, A->dtype, A),
                       batched(nb, A->sizes, 1, &n, TH_INT32),
                       batched(nb, A->sizes, 0, NULL, TH_INT32)};
    if (!t[0] || !t[1] || !t[2]) {
        release_all(t, 3);
        return th_last_status();
    }
    int64_t lwork = 1;
    if (n > 0 && th_dtype_is_complex(A->dtype)) { /* a workspace query reads only the sizes */
        double wq[2] = {0, 0};
        complex_trf(A->dtype, hermitian)(COLMAJOR, 'L', (int)n, NULL, (int)n, NULL, wq, -1);
        lwork = query_size(wq, A->dtype);
    } else if (n > 0) {
        if (A->dtype == TH_FLOAT64) {
            double wq;
            scipy_LAPACKE_dsytrf_work(COLMAJOR, 'L', (int)n, NULL, (int)n, NULL, &wq, -1);
            lwork = (int64_t)wq;
        } else {
            float wq;
            scipy_LAPACKE_ssytrf_work(COLMAJOR, 'L', (int)n, NULL, (int)n, NULL, &wq, -1);
            lwork = (int64_t)wq;
        }
    }
    lp_job j = {.dtype = A->dtype, .nbatch = th_numel(t[2]), .n = (int)n,
                .f = {hermitian != 0}, .lwork = TH_MAX(lwork, 1), .fn = ldl_factor_one,
                .info = (int32_t *)th__ptr(t[2])};
    bind(&j, 0, t[0], 2);
    bind(&j, 1, t[1], 1);
    rc = run(&j, fn, (double)n * n * n / 3);
    int64_t bad = rc || !check_errors ? -1 : first_failure(t[2]);
    if (bad >= 0) {
        char buf[64];
        int d = ((const int32_t *)th__ptr(t[2]))[bad];
        rc = th__error(TH_ERR_RUNTIME, "torch.linalg.ldl_factor: %sThe factorization "
                       "could not be completed because the input is singular: "
                       "D[%d,%d] is zero. Call linalg.ldl_factor_ex to get the "
                       "factors anyway.", batch_prefix(buf, sizeof buf, A->ndim, bad),
                       d, d);
    }
    if (rc) {
        release_all(t, 3);
        return rc;
    }
    *LD = t[0];
    *pivots = t[1];
    if (info) *info = t[2]; else th_tensor_release(t[2]);
    return TH_OK;
#endif
}

int th_linalg_ldl_solve(const th_tensor *LD, const th_tensor *pivots,
                        const th_tensor *B, int hermitian, th_tensor **X) {
    const char *fn = "torch.linalg.ldl_solve";
    if (!X) return th__error(TH_ERR_VALUE, "%s: X must not be NULL", fn);
    int rc = check_matrix(fn, "LD", LD, 1);
    if (!rc) rc = check_matrix(fn, "B", B, 0);
    if (!rc) rc = check_same_dtype(fn, LD, B);
    if (rc) return rc;
    int64_t n = LD->sizes[LD->ndim - 1], k = B->sizes[B->ndim - 1];
    if (B->sizes[B->ndim - 2] != n)
        return th__error(TH_ERR_RUNTIME, "Incompatible matrix sizes for %s: each A "
                         "matrix is %lld by %lld but each b matrix is %lld by %lld", fn,
                         (long long)n, (long long)n, (long long)B->sizes[B->ndim - 2],
                         (long long)k);
    if (pivots->dtype != TH_INT32)
        return th__error(TH_ERR_RUNTIME, "%s: Expected pivots to be int32, but got %s",
                         fn, scalar_name(pivots->dtype));
    if (pivots->ndim != LD->ndim - 1 || pivots->sizes[pivots->ndim - 1] != n)
        return th__error(TH_ERR_RUNTIME, "%s: Expected LD.shape[:-1] and pivots.shape "
                         "to be the same", fn);
#ifdef TH_NO_BLAS
    (void)hermitian;
    return no_lapack("linalg.ldl_solve");
#else
    int nb;
    int64_t bsz[TH_MAX_DIMS], psz[TH_MAX_DIMS];
    rc = broadcast_batch(LD, B, &nb, bsz);
    if (rc) return rc;
    for (int i = 0; i < nb; i++) psz[i] = bsz[i];
    psz[nb] = n;
    th_tensor *pv = th__expand_to(pivots, nb + 1, psz);
    th_tensor *t[3] = {pv ? colmajor(nb, bsz, n, n, LD->dtype, LD) : NULL,
                       pv ? batched(nb, bsz, 1, &n, TH_INT32) : NULL,
                       pv ? colmajor(nb, bsz, n, k, B->dtype, B) : NULL};
    rc = pv && t[0] && t[1] && t[2] ? th_copy(t[1], pv) : th_last_status();
    th_tensor_release(pv);
    int64_t nmat = th__prod(nb, bsz);
    int64_t bad = rc || n == 0 ? 0 : bad_pivot((const int32_t *)th__ptr(t[1]), nmat, (int)n);
    if (bad) /* bad pivots would send LAPACK outside the matrix */
        rc = th__error(TH_ERR_RUNTIME, "%s: invalid pivots: pivots must be between 1 and "
                       "%lld, or equal negative pairs for 2x2 blocks, as ldl_factor "
                       "returns them", fn, (long long)n);
    if (!rc) {
        lp_job j = {.dtype = LD->dtype, .nbatch = nmat, .n = (int)n, .k = (int)k,
                    .f = {hermitian != 0}, .fn = ldl_solve_one};
        bind(&j, 0, t[0], 2);
        bind(&j, 1, t[1], 1);
        bind(&j, 2, t[2], 2);
        rc = run(&j, fn, 2.0 * n * n * k);
    }
    if (rc) {
        release_all(t, 3);
        return rc;
    }
    release_all(t, 2);
    *X = t[2];
    return TH_OK;
#endif
}
