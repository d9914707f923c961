/* Dense linear algebra on batches of matrices: LU, solve, inverse,
 * determinants, Cholesky, QR, SVD, symmetric eigendecomposition, least
 * squares and triangular solves.
 *
 * Each routine copies its operands into fresh column-major matrices
 * (LAPACK's layout, and the layout PyTorch's results have), then runs one
 * LAPACK call per matrix.  A batch runs over libTH's thread pool with
 * OpenBLAS kept at one thread inside the region; a single matrix runs on
 * the caller and lets OpenBLAS use the pool.  LAPACK comes from the
 * scipy-openblas32 wheel (LAPACKE's column-major `_work` entry points, so
 * no Fortran string lengths are passed); the TH_NO_BLAS build uses the
 * portable kernels of lapack_portable.h for LU, Cholesky, QR and
 * triangular solves and reports the other routines as unavailable. */
#include "lapack_internal.h"

/* Matrices up to this order use the portable kernels in every build: for
 * them a LAPACK call's overhead exceeds the arithmetic (a batch of 4x4
 * inverses ran 3x faster). */
#define SMALL_ORDER 16

#define LP_T float
#define LP_F(name) name##_s
#include "lapack_portable.h"
#undef LP_T
#undef LP_F
#define LP_T double
#define LP_F(name) name##_d
#include "lapack_portable.h"
#undef LP_T
#undef LP_F

/* ---- per-dtype primitives ------------------------------------------ */
/* `dtype` picks the routine: float32/float64 (small orders on the portable
 * kernels), complex64/complex128 (LAPACK's c/z routines; the checks keep
 * complex matrices out of the TH_NO_BLAS build).  trans: the adjoint
 * (conjugate transpose for complex). */
static int x_getrf(int dtype, int m, int n, void *a, int *ipiv) {
    if (m == 0 || n == 0) return 0;
    int f64 = dtype == TH_FLOAT64;
#ifndef TH_NO_BLAS
    if (dtype == TH_COMPLEX64) return scipy_LAPACKE_cgetrf_work(COLMAJOR, m, n, a, m, ipiv);
    if (dtype == TH_COMPLEX128) return scipy_LAPACKE_zgetrf_work(COLMAJOR, m, n, a, m, ipiv);
    if (m > SMALL_ORDER || n > SMALL_ORDER)
        return f64 ? scipy_LAPACKE_dgetrf_work(COLMAJOR, m, n, a, m, ipiv)
                   : scipy_LAPACKE_sgetrf_work(COLMAJOR, m, n, a, m, ipiv);
#endif
    return f64 ? port_getrf_d(m, n, a, m, ipiv) : port_getrf_s(m, n, a, m, ipiv);
}

static int x_getrs(int dtype, int trans, int n, int nrhs, const void *lu,
                   const int *ipiv, void *b) {
    if (n == 0 || nrhs == 0) return 0;
    int f64 = dtype == TH_FLOAT64;
#ifndef TH_NO_BLAS
    char t = trans ? 'T' : 'N';
    if (dtype == TH_COMPLEX64 || dtype == TH_COMPLEX128) {
        t = trans ? 'C' : 'N';
        return dtype == TH_COMPLEX64
            ? scipy_LAPACKE_cgetrs_work(COLMAJOR, t, n, nrhs, lu, n, ipiv, b, n)
            : scipy_LAPACKE_zgetrs_work(COLMAJOR, t, n, nrhs, lu, n, ipiv, b, n);
    }
    if (n > SMALL_ORDER)
        return f64 ? scipy_LAPACKE_dgetrs_work(COLMAJOR, t, n, nrhs, lu, n, ipiv, b, n)
                   : scipy_LAPACKE_sgetrs_work(COLMAJOR, t, n, nrhs, lu, n, ipiv, b, n);
#endif
    if (f64) port_getrs_d(trans, n, nrhs, lu, n, ipiv, b, n);
    else port_getrs_s(trans, n, nrhs, lu, n, ipiv, b, n);
    return 0;
}

static int x_trsm(int dtype, int upper, int trans, int unit, int n, int nrhs,
                  const void *t, void *b) {
    if (n == 0 || nrhs == 0) return 0;
    int f64 = dtype == TH_FLOAT64;
#ifndef TH_NO_BLAS
    int u = upper ? CB_UPPER : CB_LOWER, tr = trans ? CB_TRANS : CB_NOTRANS,
        d = unit ? CB_UNIT : CB_NONUNIT;
    if (dtype == TH_COMPLEX64 || dtype == TH_COMPLEX128) {
        static const float one_c[2] = {1, 0};
        static const double one_z[2] = {1, 0};
        tr = trans ? CB_CONJTRANS : CB_NOTRANS;
        if (dtype == TH_COMPLEX64)
            scipy_cblas_ctrsm(COLMAJOR, CB_LEFT, u, tr, d, n, nrhs, one_c, t, n, b, n);
        else
            scipy_cblas_ztrsm(COLMAJOR, CB_LEFT, u, tr, d, n, nrhs, one_z, t, n, b, n);
        return 0;
    }
    if (n > SMALL_ORDER) {
        if (f64) scipy_cblas_dtrsm(COLMAJOR, CB_LEFT, u, tr, d, n, nrhs, 1.0, t, n, b, n);
        else scipy_cblas_strsm(COLMAJOR, CB_LEFT, u, tr, d, n, nrhs, 1.0f, t, n, b, n);
        return 0;
    }
#endif
    if (f64) port_trsm_d(upper, trans, unit, n, nrhs, t, n, b, n);
    else port_trsm_s(upper, trans, unit, n, nrhs, t, n, b, n);
    return 0;
}

static int x_potrf(int dtype, int upper, int n, void *a) {
    if (n == 0) return 0;
    int f64 = dtype == TH_FLOAT64;
#ifndef TH_NO_BLAS
    char u = upper ? 'U' : 'L';
    if (dtype == TH_COMPLEX64) return scipy_LAPACKE_cpotrf_work(COLMAJOR, u, n, a, n);
    if (dtype == TH_COMPLEX128) return scipy_LAPACKE_zpotrf_work(COLMAJOR, u, n, a, n);
    if (n > SMALL_ORDER)
        return f64 ? scipy_LAPACKE_dpotrf_work(COLMAJOR, u, n, a, n)
                   : scipy_LAPACKE_spotrf_work(COLMAJOR, u, n, a, n);
#endif
    return f64 ? port_potrf_d(upper, n, a, n) : port_potrf_s(upper, n, a, n);
}

/* QR: work holds tau (k elements) then LAPACK's workspace. */
static int x_geqrf(int dtype, int m, int n, void *a, void *tau, void *work,
                   int lwork) {
    if (m == 0 || n == 0) return 0;
    int f64 = dtype == TH_FLOAT64;
#ifndef TH_NO_BLAS
    if (dtype == TH_COMPLEX64)
        return scipy_LAPACKE_cgeqrf_work(COLMAJOR, m, n, a, m, tau, work, lwork);
    if (dtype == TH_COMPLEX128)
        return scipy_LAPACKE_zgeqrf_work(COLMAJOR, m, n, a, m, tau, work, lwork);
    return f64 ? scipy_LAPACKE_dgeqrf_work(COLMAJOR, m, n, a, m, tau, work, lwork)
               : scipy_LAPACKE_sgeqrf_work(COLMAJOR, m, n, a, m, tau, work, lwork);
#else
    (void)work; (void)lwork;
    if (f64) port_geqrf_d(m, n, a, m, tau); else port_geqrf_s(m, n, a, m, tau);
    return 0;
#endif
}

/* Q from reflectors: orgqr, ungqr for complex matrices. */
static int x_orgqr(int dtype, int m, int n, int k, void *a, const void *tau,
                   void *work, int lwork) {
    if (m == 0 || n == 0) return 0;
    int f64 = dtype == TH_FLOAT64;
#ifndef TH_NO_BLAS
    if (dtype == TH_COMPLEX64)
        return scipy_LAPACKE_cungqr_work(COLMAJOR, m, n, k, a, m, tau, work, lwork);
    if (dtype == TH_COMPLEX128)
        return scipy_LAPACKE_zungqr_work(COLMAJOR, m, n, k, a, m, tau, work, lwork);
    return f64 ? scipy_LAPACKE_dorgqr_work(COLMAJOR, m, n, k, a, m, tau, work, lwork)
               : scipy_LAPACKE_sorgqr_work(COLMAJOR, m, n, k, a, m, tau, work, lwork);
#else
    (void)work; (void)lwork;
    if (f64) port_orgqr_d(m, n, k, a, m, tau); else port_orgqr_s(m, n, k, a, m, tau);
    return 0;
#endif
}

/* The workspace (elements of dtype) geqrf of (m, n) and orgqr of (m, qc)
 * from k reflectors ask for (0 columns: not asked): workspace queries
 * (lwork = -1) read only the sizes.  1 in the TH_NO_BLAS build, whose
 * kernels need none. */
static int64_t qr_workspace(int dtype, int64_t m, int64_t n, int64_t qc, int64_t k) {
    int64_t lwork = 1;
#ifndef TH_NO_BLAS
    double wq[2] = {0, 0}; /* room for a complex answer */
    if (m > 0 && n > 0) {
        x_geqrf(dtype, (int)m, (int)n, NULL, NULL, wq, -1);
        lwork = TH_MAX(lwork, query_size(wq, dtype));
    }
    if (m > 0 && qc > 0) {
        x_orgqr(dtype, (int)m, (int)qc, (int)k, NULL, NULL, wq, -1);
        lwork = TH_MAX(lwork, query_size(wq, dtype));
    }
#else
    (void)dtype; (void)m; (void)n; (void)qc; (void)k;
#endif
    return lwork;
}

int th_has_lapack(void) {
#ifndef TH_NO_BLAS
    return 1;
#else
    return 0;
#endif
}

/* ---- LU ------------------------------------------------------------ */
static int lu_factor_one(lp_job *j, int64_t b, void *work, int *iwork) {
    (void)work; (void)iwork;
    return x_getrf(j->dtype, j->m, j->n, mat(j, 0, b), (int *)mat(j, 1, b));
}

int th_linalg_lu_factor(const th_tensor *A, th_tensor **LU, th_tensor **pivots,
                        th_tensor **info) {
    const char *fn = "linalg.lu_factor";
    if (!LU || !pivots || !info)
        return th__error(TH_ERR_VALUE, "%s: output pointers must not be NULL", fn);
    int rc = check_matrix(fn, "A", A, 0);
    if (rc) return rc;
    int nb = A->ndim - 2;
    int64_t m = A->sizes[nb], n = A->sizes[nb + 1], k = TH_MIN(m, n);
    th_tensor *t[3] = {colmajor(nb, A->sizes, m, n, A->dtype, A),
                       batched(nb, A->sizes, 1, &k, TH_INT32),
                       batched(nb, A->sizes, 0, NULL, TH_INT32)};
    if (!t[0] || !t[1] || !t[2]) {
        release_all(t, 3);
        return th_last_status();
    }
    lp_job j = {.dtype = A->dtype, .nbatch = th_numel(t[2]), .m = (int)m,
                .n = (int)n, .fn = lu_factor_one,
                .info = (int32_t *)th__ptr(t[2])};
    bind(&j, 0, t[0], 2);
    bind(&j, 1, t[1], 1);
    rc = run(&j, fn, (double)m * n * k);
    if (rc) {
        release_all(t, 3);
        return rc;
    }
    *LU = t[0];
    *pivots = t[1];
    *info = t[2];
    return TH_OK;
}

/* Solves with LU factors: slot 0 the factors, 1 the pivots, 2 B -> X. */
static int lu_solve_one(lp_job *j, int64_t b, void *work, int *iwork) {
    (void)work; (void)iwork;
    return x_getrs(j->dtype, j->f[0], j->n, j->k, mat(j, 0, b),
                   (const int *)mat(j, 1, b), mat(j, 2, b));
}

int th_linalg_lu_solve(const th_tensor *LU, const th_tensor *pivots,
                       const th_tensor *B, int trans, th_tensor **X) {
    const char *fn = "linalg.lu_solve";
    if (!X) return th__error(TH_ERR_VALUE, "%s: X must not be NULL", fn);
    int rc = check_matrix(fn, "LU", LU, 1);
    if (!rc) rc = check_matrix(fn, "B", B, 0);
    if (!rc) rc = check_same_dtype(fn, LU, B);
    if (rc) return rc;
    int64_t n = LU->sizes[LU->ndim - 1], k = B->sizes[B->ndim - 1];
    if (B->sizes[B->ndim - 2] != n)
        return th__error(TH_ERR_RUNTIME, "%s: Incompatible shapes of A and B "
                         "for the equation AX = B (%lldx%lld and %lldx%lld)",
                         fn, (long long)n, (long long)n,
                         (long long)B->sizes[B->ndim - 2], (long long)k);
    if (pivots->dtype != TH_INT32)
        return th__error(TH_ERR_RUNTIME, "%s: Expected pivots to be int32, "
                         "but got %s", fn, scalar_name(pivots->dtype));
    if (pivots->ndim != LU->ndim - 1 || pivots->sizes[pivots->ndim - 1] != n)
        return th__error(TH_ERR_RUNTIME, "%s: Expected pivots to have shape "
                         "LU.shape[:-1]", fn);
    int nb;
    int64_t bsz[TH_MAX_DIMS], psz[TH_MAX_DIMS];
    rc = broadcast_batch(LU, B, &nb, bsz);
    if (rc) return rc;
    for (int i = 0; i < nb; i++) psz[i] = bsz[i];
    psz[nb] = n;
    th_tensor *pv = th__expand_to(pivots, nb + 1, psz);
    th_tensor *t[3] = {pv ? colmajor(nb, bsz, n, n, LU->dtype, LU) : NULL,
                       pv ? batched(nb, bsz, 1, &n, TH_INT32) : NULL,
                       pv ? colmajor(nb, bsz, n, k, B->dtype, B) : NULL};
    rc = pv && t[0] && t[1] && t[2] ? th_copy(t[1], pv) : th_last_status();
    th_tensor_release(pv);
    if (!rc) {
        /* bad pivots would send LAPACK outside the matrix */
        const int32_t *p = (const int32_t *)th__ptr(t[1]);
        for (int64_t i = 0, e = th_numel(t[1]); i < e; i++)
            if (p[i] < 1 || p[i] > n) {
                rc = th__error(TH_ERR_RUNTIME, "%s: pivots must be between 1 "
                               "and %lld, but got %d", fn, (long long)n, p[i]);
                break;
            }
    }
    if (!rc) {
        lp_job j = {.dtype = LU->dtype, .nbatch = th__prod(nb, bsz),
                    .n = (int)n, .k = (int)k, .f = {trans ? 1 : 0},
                    .fn = lu_solve_one};
        bind(&j, 0, t[0], 2);
        bind(&j, 1, t[1], 1);
        bind(&j, 2, t[2], 2);
        rc = run(&j, fn, (double)n * n * k);
    }
    if (rc) {
        release_all(t, 3);
        return rc;
    }
    release_all(t, 2);
    *X = t[2];
    return TH_OK;
}

/* Factor slot 0 (pivots in iwork), then solve slot 1 in place. */
static int solve_one(lp_job *j, int64_t b, void *work, int *iwork) {
    (void)work;
    int info = x_getrf(j->dtype, j->n, j->n, mat(j, 0, b), iwork);
    if (info) return info;
    return x_getrs(j->dtype, 0, j->n, j->k, mat(j, 0, b), iwork, mat(j, 1, b));
}

/* PyTorch's error for the first singular matrix that `info` reports
 * (solve's message, or inv's), or TH_OK. */
static int singular_error(const char *fn, int solve, int ndim, const th_tensor *info) {
    int64_t bad = first_failure(info);
    if (bad < 0) return TH_OK;
    char buf[64];
    const char *pre = batch_prefix(buf, sizeof buf, ndim, bad);
    if (solve)
        return th__error(TH_ERR_RUNTIME, "torch.%s: %sThe solver failed "
                         "because the input matrix is singular.", fn, pre);
    return th__error(TH_ERR_RUNTIME, "%s: %sThe diagonal element %d is zero, "
                     "the inversion could not be completed because the input "
                     "matrix is singular.", fn, pre,
                     ((const int32_t *)th__ptr(info))[bad]);
}

/* solve and inv share everything but B and the message. */
static int solve_common(const char *fn, const th_tensor *A, const th_tensor *B,
                        int check_errors, th_tensor **X, th_tensor **info) {
    int nb, rc;
    int64_t bsz[TH_MAX_DIMS];
    int64_t n = A->sizes[A->ndim - 1], k = B ? B->sizes[B->ndim - 1] : n;
    if (B) {
        rc = broadcast_batch(A, B, &nb, bsz);
        if (rc) return rc;
    } else {
        nb = A->ndim - 2;
        for (int i = 0; i < nb; i++) bsz[i] = A->sizes[i];
    }
    th_tensor *eye = B ? NULL : th_eye(n, n, A->dtype);
    th_tensor *t[3] = {colmajor(nb, bsz, n, n, A->dtype, A),
                       B || eye ? colmajor(nb, bsz, n, k, A->dtype, B ? B : eye) : NULL,
                       batched(nb, bsz, 0, NULL, TH_INT32)};
    th_tensor_release(eye);
    if (!t[0] || !t[1] || !t[2]) {
        release_all(t, 3);
        return th_last_status();
    }
    lp_job j = {.dtype = A->dtype, .nbatch = th_numel(t[2]), .n = (int)n,
                .k = (int)k, .liwork = n, .fn = solve_one,
                .info = (int32_t *)th__ptr(t[2])};
    bind(&j, 0, t[0], 2);
    bind(&j, 1, t[1], 2);
    rc = run(&j, fn, (double)n * n * (n + k));
    if (!rc && check_errors) rc = singular_error(fn, B != NULL, nb + 2, t[2]);
    if (rc) {
        release_all(t, 3);
        return rc;
    }
    th_tensor_release(t[0]);
    *X = t[1];
    if (info) *info = t[2]; else th_tensor_release(t[2]);
    return TH_OK;
}

int th_linalg_solve(const th_tensor *A, const th_tensor *B, int check_errors,
                    th_tensor **X, th_tensor **info) {
    const char *fn = "linalg.solve";
    if (!X) return th__error(TH_ERR_VALUE, "%s: X must not be NULL", fn);
    int rc = check_matrix(fn, "A", A, 1);
    if (!rc) rc = check_matrix(fn, "B", B, 0);
    if (!rc) rc = check_same_dtype(fn, A, B);
    if (rc) return rc;
    int64_t n = A->sizes[A->ndim - 1];
    if (B->sizes[B->ndim - 2] != n)
        return th__error(TH_ERR_RUNTIME, "%s: Incompatible shapes of A and B "
                         "for the equation AX = B (%lldx%lld and %lldx%lld)",
                         fn, (long long)n, (long long)n,
                         (long long)B->sizes[B->ndim - 2],
                         (long long)B->sizes[B->ndim - 1]);
    return solve_common(fn, A, B, check_errors, X, info);
}

int th_linalg_inv(const th_tensor *A, int check_errors, th_tensor **X,
                  th_tensor **info) {
    const char *fn = "linalg.inv";
    if (!X) return th__error(TH_ERR_VALUE, "%s: X must not be NULL", fn);
    int rc = check_matrix(fn, "A", A, 1);
    if (rc) return rc;
    int64_t n = A->sizes[A->ndim - 1];
    if (n < 1 || n > 4 || th_dtype_is_complex(A->dtype)) /* order 1..4 real: in registers */
        return solve_common(fn, A, NULL, check_errors, X, info);
    th_tensor *x = NULL, *inf = NULL;
    rc = th__small_inv(A, &x, &inf);
    if (!rc && check_errors) rc = singular_error(fn, 0, A->ndim, inf);
    if (rc) {
        th_tensor_release(x);
        th_tensor_release(inf);
        return rc;
    }
    *X = x;
    if (info) *info = inf; else th_tensor_release(inf);
    return TH_OK;
}

/* ---- determinants -------------------------------------------------- */
/* LU of slot 0; slot 1 gets det (f[0] == 0) or sign, slot 2 log|det|. */
static int det_one(lp_job *j, int64_t b, void *work, int *iwork) {
    (void)work;
    int n = j->n, cplx = th_dtype_is_complex(j->dtype);
    char *a = mat(j, 0, b);
    int info = x_getrf(j->dtype, n, n, a, iwork);
    if (info < 0) return info;
    /* det = prod of U's diagonal, negated per row swap; sign = det / |det| */
    double pr = 1, pi = 0, sr = 1, si = 0, logabs = 0;
    for (int i = 0; i < n; i++) {
        double dr, di = 0;
        const char *e = a + (i + (int64_t)i * n) * th_dtype_itemsize(j->dtype);
        if (cplx) th__load_complex(e, j->dtype, &dr, &di);
        else dr = th__load_double(e, j->dtype);
        if (iwork[i] != i + 1) { pr = -pr; pi = -pi; sr = -sr; si = -si; }
        double t = pr * dr - pi * di;
        pi = pr * di + pi * dr;
        pr = t;
        double mag = hypot(dr, di);
        logabs += log(mag);
        if (mag > 0) {
            t = (sr * dr - si * di) / mag;
            si = (sr * di + si * dr) / mag;
            sr = t;
        }
    }
    if (info > 0) { sr = si = 0; logabs = -INFINITY; pr = pi = 0; }
    if (j->f[0] == 0) {
        th__store_complex(mat(j, 1, b), j->dtype, pr, pi);
    } else {
        th__store_complex(mat(j, 1, b), j->dtype, sr, si);
        th__store_double(mat(j, 2, b), j->f[1], logabs);
    }
    return 0;
}

static int det_common(const char *fn, const th_tensor *A, th_tensor **first,
                      th_tensor **second) {
    int rc = check_matrix(fn, "A", A, 1);
    if (rc) return rc;
    int nb = A->ndim - 2;
    int64_t n = A->sizes[nb];
    int real = A->dtype == TH_COMPLEX128 ? TH_FLOAT64 :
               A->dtype == TH_COMPLEX64 ? TH_FLOAT32 : A->dtype; /* log|det|'s dtype */
    th_tensor *t[3] = {colmajor(nb, A->sizes, n, n, A->dtype, A),
                       batched(nb, A->sizes, 0, NULL, A->dtype),
                       second ? batched(nb, A->sizes, 0, NULL, real) : NULL};
    if (!t[0] || !t[1] || (second && !t[2])) {
        release_all(t, 3);
        return th_last_status();
    }
    lp_job j = {.dtype = A->dtype, .nbatch = th_numel(t[1]), .n = (int)n,
                .liwork = n, .f = {second ? 1 : 0, real}, .fn = det_one};
    bind(&j, 0, t[0], 2);
    bind(&j, 1, t[1], 0);
    if (second) bind(&j, 2, t[2], 0);
    rc = run(&j, fn, (double)n * n * n);
    if (rc) {
        release_all(t, 3);
        return rc;
    }
    th_tensor_release(t[0]);
    *first = t[1];
    if (second) *second = t[2];
    return TH_OK;
}

int th_linalg_det(const th_tensor *A, th_tensor **det) {
    if (!det) return th__error(TH_ERR_VALUE, "linalg.det: det must not be NULL");
    return det_common("linalg.det", A, det, NULL);
}

int th_linalg_slogdet(const th_tensor *A, th_tensor **sign,
                      th_tensor **logabsdet) {
    if (!sign || !logabsdet)
        return th__error(TH_ERR_VALUE, "linalg.slogdet: outputs must not be NULL");
    return det_common("linalg.slogdet", A, sign, logabsdet);
}

/* ---- Cholesky ------------------------------------------------------ */
static int cholesky_one(lp_job *j, int64_t b, void *work, int *iwork) {
    (void)work; (void)iwork;
    int n = j->n, upper = j->f[0];
    int64_t item = th_dtype_itemsize(j->dtype);
    char *a = mat(j, 0, b);
    int info = x_potrf(j->dtype, upper, n, a);
    /* the other triangle still holds the input: zero it */
    for (int c = 0; c < n; c++)
        for (int r = 0; r < n; r++)
            if (upper ? r > c : r < c)
                memset(a + (r + (int64_t)c * n) * item, 0, (size_t)item);
    return info;
}

int th_linalg_cholesky(const th_tensor *A, int upper, int check_errors,
                       th_tensor **L, th_tensor **info) {
    const char *fn = "linalg.cholesky";
    if (!L) return th__error(TH_ERR_VALUE, "%s: L must not be NULL", fn);
    int rc = check_matrix(fn, "A", A, 1);
    if (rc) return rc;
    int nb = A->ndim - 2;
    int64_t n = A->sizes[nb];
    th_tensor *t[2] = {colmajor(nb, A->sizes, n, n, A->dtype, A),
                       batched(nb, A->sizes, 0, NULL, TH_INT32)};
    if (!t[0] || !t[1]) {
        release_all(t, 2);
        return th_last_status();
    }
    lp_job j = {.dtype = A->dtype, .nbatch = th_numel(t[1]), .n = (int)n,
                .f = {upper ? 1 : 0}, .fn = cholesky_one,
                .info = (int32_t *)th__ptr(t[1])};
    bind(&j, 0, t[0], 2);
    rc = run(&j, fn, (double)n * n * n / 3);
    int64_t bad = rc || !check_errors ? -1 : first_failure(t[1]);
    if (bad >= 0) {
        char buf[64];
        rc = th__error(TH_ERR_RUNTIME, "%s: %sThe factorization could not be "
                       "completed because the input is not positive-definite "
                       "(the leading minor of order %d is not "
                       "positive-definite).", fn,
                       batch_prefix(buf, sizeof buf, A->ndim, bad),
                       ((const int32_t *)th__ptr(t[1]))[bad]);
    }
    if (rc) {
        release_all(t, 2);
        return rc;
    }
    *L = t[0];
    if (info) *info = t[1]; else th_tensor_release(t[1]);
    return TH_OK;
}

/* ---- triangular solve ---------------------------------------------- */
static int trsm_one(lp_job *j, int64_t b, void *work, int *iwork) {
    (void)work; (void)iwork;
    return x_trsm(j->dtype, j->f[0], j->f[1], j->f[2], j->n, j->k,
                  mat(j, 0, b), mat(j, 1, b));
}

int th_linalg_solve_triangular(const th_tensor *A, const th_tensor *B,
                               int upper, int trans, int unitriangular,
                               th_tensor **X) {
    const char *fn = "linalg.solve_triangular";
    if (!X) return th__error(TH_ERR_VALUE, "%s: X must not be NULL", fn);
    int rc = check_matrix(fn, "A", A, 1);
    if (!rc) rc = check_matrix(fn, "B", B, 0);
    if (!rc) rc = check_same_dtype(fn, A, B);
    if (rc) return rc;
    int64_t n = A->sizes[A->ndim - 1], k = B->sizes[B->ndim - 1];
    if (B->sizes[B->ndim - 2] != n)
        return th__error(TH_ERR_RUNTIME, "%s: Incompatible shapes of A and B "
                         "for the equation AX = B (%lldx%lld and %lldx%lld)",
                         fn, (long long)n, (long long)n,
                         (long long)B->sizes[B->ndim - 2], (long long)k);
    int nb;
    int64_t bsz[TH_MAX_DIMS];
    rc = broadcast_batch(A, B, &nb, bsz);
    if (rc) return rc;
    th_tensor *t[2] = {colmajor(nb, bsz, n, n, A->dtype, A),
                       colmajor(nb, bsz, n, k, A->dtype, B)};
    if (!t[0] || !t[1]) {
        release_all(t, 2);
        return th_last_status();
    }
    lp_job j = {.dtype = A->dtype, .nbatch = th__prod(nb, bsz), .n = (int)n,
                .k = (int)k, .f = {upper ? 1 : 0, trans ? 1 : 0,
                                   unitriangular ? 1 : 0},
                .fn = trsm_one};
    bind(&j, 0, t[0], 2);
    bind(&j, 1, t[1], 2);
    rc = run(&j, fn, (double)n * n * k);
    if (rc) {
        release_all(t, 2);
        return rc;
    }
    th_tensor_release(t[0]);
    *X = t[1];
    return TH_OK;
}

/* ---- QR ------------------------------------------------------------ */
/* Slot 0: the (m, wc) work matrix whose first n columns hold A; slot 1:
 * R (rr, n).  f[0]: mode; k = min(m, n); f[1]: Q's columns; f[2]: R's rows. */
static int qr_one(lp_job *j, int64_t b, void *work, int *iwork) {
    (void)iwork;
    int m = j->m, n = j->n, k = j->k, qc = j->f[1], rr = j->f[2];
    int64_t item = th_dtype_itemsize(j->dtype);
    char *a = mat(j, 0, b), *r = mat(j, 1, b);
    char *tau = work, *w = (char *)work + (int64_t)TH_MAX(k, 1) * item;
    int lwork = (int)(j->lwork - TH_MAX(k, 1));
    int info = x_geqrf(j->dtype, m, n, a, tau, w, lwork);
    if (info < 0) return info;
    for (int c = 0; c < n; c++)
        for (int i = 0; i < rr; i++) {
            char *to = r + (i + (int64_t)c * rr) * item;
            if (i <= c) memcpy(to, a + (i + (int64_t)c * m) * item, (size_t)item);
            else memset(to, 0, (size_t)item);
        }
    if (j->f[0] == 2) return 0;
    return x_orgqr(j->dtype, m, qc, k, a, tau, w, lwork);
}

int th_linalg_qr(const th_tensor *A, int mode, th_tensor **Q, th_tensor **R) {
    const char *fn = "linalg.qr";
    if (!Q || !R) return th__error(TH_ERR_VALUE, "%s: outputs must not be NULL", fn);
    if (mode < 0 || mode > 2)
        return th__error(TH_ERR_RUNTIME, "qr received unrecognized mode %d but "
                         "expected one of 'reduced' (0), 'complete' (1) or "
                         "'r' (2)", mode);
    int rc = check_matrix(fn, "A", A, 0);
    if (rc) return rc;
    int nb = A->ndim - 2;
    int64_t m = A->sizes[nb], n = A->sizes[nb + 1], k = TH_MIN(m, n);
    int64_t qc = mode == 1 ? m : k, rr = mode == 1 ? m : k;
    int64_t wc = TH_MAX(n, qc), mw;
    if (th__mul_ovf(m, wc, &mw) || mw > INT_MAX)
        return th__error(TH_ERR_RUNTIME, "%s: matrices too large for LAPACK", fn);
    th_tensor *t[3] = {colmajor(nb, A->sizes, m, wc, A->dtype, NULL),
                       colmajor(nb, A->sizes, rr, n, A->dtype, NULL), NULL};
    if (t[0] && t[1]) {
        t[2] = th_narrow(t[0], nb + 1, 0, n);
        rc = t[2] ? th_copy(t[2], A) : th_last_status();
        th_tensor_release(t[2]);
        t[2] = NULL;
    } else {
        rc = th_last_status();
    }
    lp_job j = {.dtype = A->dtype, .nbatch = th__prod(nb, A->sizes),
                .m = (int)m, .n = (int)n, .k = (int)k,
                .f = {mode, (int)qc, (int)rr}, .fn = qr_one};
    if (!rc) {
        int64_t lwork = qr_workspace(A->dtype, m, n, mode == 2 ? 0 : TH_MAX(qc, 1), k);
        j.lwork = lwork + TH_MAX(k, 1);
        bind(&j, 0, t[0], 2);
        bind(&j, 1, t[1], 2);
        rc = run(&j, fn, 2.0 * m * n * k);
    }
    if (rc) {
        release_all(t, 3);
        return rc;
    }
    if (mode == 2) {
        int64_t zero = 0;
        *Q = th_empty(1, &zero, A->dtype);
    } else {
        *Q = th_narrow(t[0], nb + 1, 0, qc);
    }
    th_tensor_release(t[0]);
    if (!*Q) {
        th_tensor_release(t[1]);
        return th_last_status();
    }
    *R = t[1];
    return TH_OK;
}


/* ---- Householder product (orgqr) ----------------------------------- */
/* Slot 0: the (m, n) reflectors, overwritten by Q; slot 1: tau (k). */
static int householder_one(lp_job *j, int64_t b, void *work, int *iwork) {
    (void)iwork;
    return x_orgqr(j->dtype, j->m, j->n, j->k, mat(j, 0, b), mat(j, 1, b), work,
                   (int)j->lwork);
}

int th_linalg_householder_product(const th_tensor *A, const th_tensor *tau,
                                  th_tensor **Q) {
    const char *fn = "torch.linalg.householder_product";
    if (!Q) return th__error(TH_ERR_VALUE, "%s: Q must not be NULL", fn);
    if (A->ndim < 2)
        return th__error(TH_ERR_RUNTIME, "%s: input must have at least 2 "
                         "dimensions.", fn);
    int rc = check_matrix(fn, "input", A, 0);
    if (rc) return rc;
    int nb = A->ndim - 2;
    int64_t m = A->sizes[nb], n = A->sizes[nb + 1];
    if (m < n)
        return th__error(TH_ERR_RUNTIME, "%s: input.shape[-2] must be greater "
                         "than or equal to input.shape[-1]", fn);
    if (tau->ndim != A->ndim - 1)
        return th__error(TH_ERR_RUNTIME, "%s: Expected tau to have one dimension "
                         "less than input, but got tau.ndim equal to %d and "
                         "input.ndim is equal to %d", fn, tau->ndim, A->ndim);
    int64_t k = tau->sizes[tau->ndim - 1];
    if (n < k)
        return th__error(TH_ERR_RUNTIME, "%s: input.shape[-1] must be greater "
                         "than or equal to tau.shape[-1]", fn);
    for (int i = 0; i < nb; i++)
        if (tau->sizes[i] != A->sizes[i]) {
            char got[256] = "";
            for (int d = 0, len = 0; d < nb && len < 200; d++)
                len += snprintf(got + len, sizeof got - len, d ? ", %lld" : "%lld",
                                (long long)tau->sizes[d]);
            return th__error(TH_ERR_RUNTIME, "%s: Expected batch dimensions of "
                             "tau to be equal to input.shape[:-2], but got [%s]",
                             fn, got);
        }
    if (tau->dtype != A->dtype)
        return th__error(TH_ERR_RUNTIME, "%s: tau dtype %s does not match input "
                         "dtype %s", fn, scalar_name(tau->dtype),
                         scalar_name(A->dtype));
    th_tensor *t[2] = {colmajor(nb, A->sizes, m, n, A->dtype, A),
                       batched(nb, A->sizes, 1, &k, A->dtype)};
    rc = t[0] && t[1] ? th_copy(t[1], tau) : th_last_status();
    lp_job j = {.dtype = A->dtype, .nbatch = th__prod(nb, A->sizes), .m = (int)m,
                .n = (int)n, .k = (int)k, .fn = householder_one};
    if (!rc) {
        int64_t lwork = n > 0 ? qr_workspace(A->dtype, m, 0, n, k) : 1;
        j.lwork = TH_MAX(lwork, 1);
        bind(&j, 0, t[0], 2);
        bind(&j, 1, t[1], 1);
        rc = run(&j, fn, 4.0 * m * n * k);
    }
    if (rc) {
        release_all(t, 2);
        return rc;
    }
    th_tensor_release(t[1]);
    *Q = t[0];
    return TH_OK;
}

/* ---- geqrf: QR as Householder reflectors --------------------------- */
/* Slot 0: A, overwritten by R and the reflectors; slot 1: tau (k). */
static int geqrf_one(lp_job *j, int64_t b, void *work, int *iwork) {
    (void)iwork;
    return x_geqrf(j->dtype, j->m, j->n, mat(j, 0, b), mat(j, 1, b), work,
                   (int)j->lwork);
}

int th_linalg_geqrf(const th_tensor *A, th_tensor **QR, th_tensor **tau) {
    const char *fn = "torch.geqrf";
    if (!QR || !tau) return th__error(TH_ERR_VALUE, "%s: outputs must not be NULL", fn);
    if (A->ndim < 2)
        return th__error(TH_ERR_RUNTIME, "%s: input must have at least 2 "
                         "dimensions.", fn);
    int rc = check_matrix(fn, "input", A, 0);
    if (rc) return rc;
    int nb = A->ndim - 2;
    int64_t m = A->sizes[nb], n = A->sizes[nb + 1], k = TH_MIN(m, n);
    th_tensor *t[2] = {colmajor(nb, A->sizes, m, n, A->dtype, A),
                       batched(nb, A->sizes, 1, &k, A->dtype)};
    if (!t[0] || !t[1]) {
        release_all(t, 2);
        return th_last_status();
    }
    int64_t lwork = qr_workspace(A->dtype, m, n, 0, k);
    lp_job j = {.dtype = A->dtype, .nbatch = th__prod(nb, A->sizes), .m = (int)m,
                .n = (int)n, .k = (int)k, .lwork = TH_MAX(lwork, 1), .fn = geqrf_one};
    bind(&j, 0, t[0], 2);
    bind(&j, 1, t[1], 1);
    rc = run(&j, fn, 2.0 * m * n * k);
    if (rc) {
        release_all(t, 2);
        return rc;
    }
    *QR = t[0];
    *tau = t[1];
    return TH_OK;
}
