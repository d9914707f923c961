/* Spectral routines on batches of matrices: SVD (gesdd), the symmetric
 * eigendecomposition (syevd) and least squares (gelsd), through LAPACK
 * only: the TH_NO_BLAS build reports them as unavailable. */
#include "lapack_internal.h"

/* info reported for an input holding NaN or infinity (LAPACK's own infos
 * for these routines never exceed min(m, n)). */
#define NONFINITE INT_MAX

#ifdef TH_NO_BLAS
int th_linalg_svd(const th_tensor *A, int full_matrices, int compute_uv,
                  th_tensor **U, th_tensor **S, th_tensor **Vh) {
    (void)A; (void)full_matrices; (void)compute_uv; (void)U; (void)S; (void)Vh;
    return no_lapack("linalg.svd");
}
int th_linalg_eigh(const th_tensor *A, int upper, int compute_v,
                   th_tensor **W, th_tensor **V) {
    (void)A; (void)upper; (void)compute_v; (void)W; (void)V;
    return no_lapack("linalg.eigh");
}
int th_linalg_lstsq(const th_tensor *A, const th_tensor *B, double rcond,
                    th_tensor **X, th_tensor **rank, th_tensor **S) {
    (void)A; (void)B; (void)rcond; (void)X; (void)rank; (void)S;
    return no_lapack("linalg.lstsq");
}
int th_linalg_eig(const th_tensor *A, int compute_v, th_tensor **W, th_tensor **V) {
    (void)A; (void)compute_v; (void)W; (void)V;
    return no_lapack("linalg.eig");
}
#else

static void set_identity(int dtype, char *a, int rows, int cols) {
    int64_t item = th_dtype_itemsize(dtype);
    for (int c = 0; c < cols; c++)
        for (int r = 0; r < rows; r++)
            th__store_double(a + (r + (int64_t)c * rows) * item, dtype, r == c);
}

/* Raises the error for the first failed matrix, if any. */
static int convergence_error(const char *fn, const th_tensor *info, int ndim,
                             const char *what) {
    int64_t bad = first_failure(info);
    if (bad < 0) return TH_OK;
    char buf[64];
    const char *pre = batch_prefix(buf, sizeof buf, ndim, bad);
    int32_t code = ((const int32_t *)th__ptr(info))[bad];
    if (code == NONFINITE)
        return th__error(TH_ERR_RUNTIME, "%s: %sThe algorithm failed to "
                         "converge because the input matrix contained "
                         "non-finite values.", fn, pre);
    return th__error(TH_ERR_RUNTIME, "%s: %sThe algorithm failed to converge "
                     "because the input matrix is ill-conditioned or has too "
                     "many repeated %s (error code: %d).", fn, pre, what, code);
}

/* ---- SVD ----------------------------------------------------------- */
/* Slots: 0 A (destroyed), 1 S, 2 U, 3 Vh.  f[0]: jobz ('N', 'S', 'A'). */
static int svd_one(lp_job *j, int64_t b, void *work, int *iwork) {
    int f64 = is_f64(j), m = j->m, n = j->n, k = j->k, cplx = th_dtype_is_complex(j->dtype);
    char jobz = (char)j->f[0];
    int urows = m, vrows = jobz == 'A' ? n : k;
    char *a = mat(j, 0, b), *s = mat(j, 1, b);
    char *u = jobz == 'N' ? NULL : mat(j, 2, b);
    char *vt = jobz == 'N' ? NULL : mat(j, 3, b);
    if (m == 0 || n == 0) {
        if (jobz == 'A') {
            set_identity(j->dtype, u, m, m);
            set_identity(j->dtype, vt, n, n);
        }
        return 0;
    }
    if (has_nonfinite(f64, a, (int64_t)m * n * (cplx ? 2 : 1))) return NONFINITE;
    double dummy[2];
    if (jobz == 'N') { u = vt = (char *)dummy; urows = vrows = 1; }
    if (cplx) { /* gesdd: a real workspace too */
        int lw = (int)j->lwork;
        void *rwork = rwork_of(j, work);
        return f64 ? scipy_LAPACKE_zgesdd_work(COLMAJOR, jobz, m, n, a, m, s, u, urows, vt,
                                               lda_of(vrows), work, lw, rwork, iwork)
                   : scipy_LAPACKE_cgesdd_work(COLMAJOR, jobz, m, n, a, m, s, u, urows, vt,
                                               lda_of(vrows), work, lw, rwork, iwork);
    }
    int lwork = (int)j->lwork;
    return f64 ? scipy_LAPACKE_dgesdd_work(COLMAJOR, jobz, m, n, (double *)a, m,
                                           (double *)s, (double *)u, urows,
                                           (double *)vt, lda_of(vrows), work,
                                           lwork, iwork)
               : scipy_LAPACKE_sgesdd_work(COLMAJOR, jobz, m, n, (float *)a, m,
                                           (float *)s, (float *)u, urows,
                                           (float *)vt, lda_of(vrows), work,
                                           lwork, iwork);
}

int th_linalg_svd(const th_tensor *A, int full_matrices, int compute_uv,
                  th_tensor **U, th_tensor **S, th_tensor **Vh) {
    const char *fn = "linalg.svd";
    if (!S || (compute_uv && (!U || !Vh)))
        return th__error(TH_ERR_VALUE, "%s: outputs must not be NULL", fn);
    int rc = check_matrix(fn, "A", A, 0);
    if (rc) return rc;
    int nb = A->ndim - 2, f64 = A->dtype == TH_FLOAT64;
    int64_t m = A->sizes[nb], n = A->sizes[nb + 1], k = TH_MIN(m, n);
    char jobz = !compute_uv ? 'N' : full_matrices ? 'A' : 'S';
    int64_t ucols = jobz == 'A' ? m : k, vrows = jobz == 'A' ? n : k, e;
    if ((th__mul_ovf(m, ucols, &e) || e > INT_MAX) ||
        (th__mul_ovf(n, vrows, &e) || e > INT_MAX))
        return th__error(TH_ERR_RUNTIME, "%s: matrices too large for LAPACK", fn);
    th_tensor *t[5] = {colmajor(nb, A->sizes, m, n, A->dtype, A),
                       batched(nb, A->sizes, 1, &k, real_dtype(A->dtype)),
                       compute_uv ? colmajor(nb, A->sizes, m, ucols, A->dtype, NULL) : NULL,
                       compute_uv ? colmajor(nb, A->sizes, vrows, n, A->dtype, NULL) : NULL,
                       batched(nb, A->sizes, 0, NULL, TH_INT32)};
    if (!t[0] || !t[1] || !t[4] || (compute_uv && (!t[2] || !t[3]))) {
        release_all(t, 5);
        return th_last_status();
    }
    lp_job j = {.dtype = A->dtype, .nbatch = th_numel(t[4]), .m = (int)m,
                .n = (int)n, .k = (int)k, .f = {jobz}, .liwork = 8 * k,
                .fn = svd_one, .info = (int32_t *)th__ptr(t[4])};
    if (k > 0 && th_dtype_is_complex(A->dtype)) {
        double wq[2] = {0, 0}, dummy[2];
        int iq[1], mm = (int)m, nn = (int)n, ur = jobz == 'N' ? 1 : mm,
                   vr = jobz == 'N' ? 1 : (int)vrows;
        (A->dtype == TH_COMPLEX64 ? scipy_LAPACKE_cgesdd_work : scipy_LAPACKE_zgesdd_work)(
            COLMAJOR, jobz, mm, nn, dummy, mm, dummy, dummy, ur, dummy, vr, wq, -1, dummy, iq);
        /* the real workspace LAPACK documents for gesdd */
        int64_t big = TH_MAX(m, n);
        j.lwork = query_size(wq, A->dtype);
        j.lrwork = jobz == 'N' ? 7 * k : k * TH_MAX(5 * k + 7, 2 * big + 2 * k + 1);
    } else if (k > 0) {
        double wq = 0, dummy[1];
        float wqs = 0, dummys[1];
        int iq[1], mm = (int)m, nn = (int)n, ur = jobz == 'N' ? 1 : mm,
                   vr = jobz == 'N' ? 1 : (int)vrows;
        if (f64) scipy_LAPACKE_dgesdd_work(COLMAJOR, jobz, mm, nn, dummy, mm, dummy,
                                           dummy, ur, dummy, vr, &wq, -1, iq);
        else scipy_LAPACKE_sgesdd_work(COLMAJOR, jobz, mm, nn, dummys, mm, dummys,
                                       dummys, ur, dummys, vr, &wqs, -1, iq);
        j.lwork = (int64_t)(f64 ? wq : wqs) + 1;
    }
    bind(&j, 0, t[0], 2);
    bind(&j, 1, t[1], 1);
    if (compute_uv) {
        bind(&j, 2, t[2], 2);
        bind(&j, 3, t[3], 2);
    }
    rc = run(&j, fn, 4.0 * m * n * k);
    if (!rc) rc = convergence_error(fn, t[4], A->ndim, "singular values");
    if (rc) {
        release_all(t, 5);
        return rc;
    }
    th_tensor_release(t[0]);
    th_tensor_release(t[4]);
    *S = t[1];
    if (compute_uv) {
        *U = t[2];
        *Vh = t[3];
    }
    return TH_OK;
}

/* ---- symmetric eigendecomposition ----------------------------------- */
/* Slots: 0 A -> eigenvectors, 1 eigenvalues.  f[0]: jobz, f[1]: uplo. */
static int eigh_one(lp_job *j, int64_t b, void *work, int *iwork) {
    int f64 = is_f64(j), n = j->n, cplx = th_dtype_is_complex(j->dtype);
    char *a = mat(j, 0, b), *w = mat(j, 1, b);
    if (n == 0) return 0;
    if (has_nonfinite(f64, a, (int64_t)n * n * (cplx ? 2 : 1))) return NONFINITE;
    char jobz = (char)j->f[0], uplo = (char)j->f[1];
    if (cplx) { /* heevd: a real workspace too */
        int lw = (int)j->lwork, lrw = (int)j->lrwork;
        void *rwork = rwork_of(j, work);
        return f64 ? scipy_LAPACKE_zheevd_work(COLMAJOR, jobz, uplo, n, a, n, w, work, lw,
                                               rwork, lrw, iwork, (int)j->liwork)
                   : scipy_LAPACKE_cheevd_work(COLMAJOR, jobz, uplo, n, a, n, w, work, lw,
                                               rwork, lrw, iwork, (int)j->liwork);
    }
    return f64 ? scipy_LAPACKE_dsyevd_work(COLMAJOR, jobz, uplo, n, (double *)a,
                                           n, (double *)w, work, (int)j->lwork,
                                           iwork, (int)j->liwork)
               : scipy_LAPACKE_ssyevd_work(COLMAJOR, jobz, uplo, n, (float *)a,
                                           n, (float *)w, work, (int)j->lwork,
                                           iwork, (int)j->liwork);
}

int th_linalg_eigh(const th_tensor *A, int upper, int compute_v,
                   th_tensor **W, th_tensor **V) {
    const char *fn = "linalg.eigh";
    if (!W || (compute_v && !V))
        return th__error(TH_ERR_VALUE, "%s: outputs must not be NULL", fn);
    int rc = check_matrix(fn, "A", A, 1);
    if (rc) return rc;
    int nb = A->ndim - 2, f64 = A->dtype == TH_FLOAT64;
    int64_t n = A->sizes[nb];
    th_tensor *t[3] = {colmajor(nb, A->sizes, n, n, A->dtype, A),
                       batched(nb, A->sizes, 1, &n, real_dtype(A->dtype)),
                       batched(nb, A->sizes, 0, NULL, TH_INT32)};
    if (!t[0] || !t[1] || !t[2]) {
        release_all(t, 3);
        return th_last_status();
    }
    char jobz = compute_v ? 'V' : 'N', uplo = upper ? 'U' : 'L';
    lp_job j = {.dtype = A->dtype, .nbatch = th_numel(t[2]), .n = (int)n,
                .f = {jobz, uplo}, .fn = eigh_one,
                .info = (int32_t *)th__ptr(t[2])};
    if (n > 0 && th_dtype_is_complex(A->dtype)) {
        double wq[2] = {0, 0}, rq[1] = {0}, dummy[2];
        int iq = 0, c64 = A->dtype == TH_COMPLEX64;
        (c64 ? scipy_LAPACKE_cheevd_work : scipy_LAPACKE_zheevd_work)(
            COLMAJOR, jobz, uplo, (int)n, dummy, (int)n, dummy, wq, -1, rq, -1, &iq, -1);
        j.lwork = query_size(wq, A->dtype);
        j.lrwork = query_size(rq, A->dtype);
        j.liwork = TH_MAX(iq, 1);
    } else if (n > 0) {
        double wq = 0, dummy[1];
        float wqs = 0, dummys[1];
        int iq = 0;
        if (f64) scipy_LAPACKE_dsyevd_work(COLMAJOR, jobz, uplo, (int)n, dummy,
                                           (int)n, dummy, &wq, -1, &iq, -1);
        else scipy_LAPACKE_ssyevd_work(COLMAJOR, jobz, uplo, (int)n, dummys,
                                       (int)n, dummys, &wqs, -1, &iq, -1);
        j.lwork = (int64_t)(f64 ? wq : wqs) + 1;
        j.liwork = TH_MAX(iq, 1);
    }
    bind(&j, 0, t[0], 2);
    bind(&j, 1, t[1], 1);
    rc = run(&j, fn, 9.0 * n * n * n);
    if (!rc) rc = convergence_error(fn, t[2], A->ndim, "eigenvalues");
    if (rc) {
        release_all(t, 3);
        return rc;
    }
    th_tensor_release(t[2]);
    *W = t[1];
    if (compute_v) *V = t[0]; else th_tensor_release(t[0]);
    return TH_OK;
}

/* ---- general eigendecomposition -------------------------------------- */
/* Slots: 0 A (destroyed), 1 eigenvalues (complex), 2 eigenvectors
 * (complex, column-major).  f[0]: jobvr.  The workspace holds geev's own
 * (lwork - 2n - n^2 elements), then wr, wi and the real vectors. */
static int eig_one(lp_job *j, int64_t b, void *work, int *iwork) {
    (void)iwork;
    int f64 = is_f64(j), n = j->n;
    char *a = mat(j, 0, b), jobvr = (char)j->f[0];
    if (n == 0) return 0;
    if (th_dtype_is_complex(j->dtype)) { /* geev's complex results directly */
        if (has_nonfinite(f64, a, 2 * (int64_t)n * n)) return NONFINITE;
        int lw = (int)j->lwork;
        void *rwork = rwork_of(j, work);
        char *v = jobvr == 'V' ? mat(j, 2, b) : NULL;
        double dummy[2];
        return (f64 ? scipy_LAPACKE_zgeev_work : scipy_LAPACKE_cgeev_work)(
            COLMAJOR, 'N', jobvr, n, a, n, mat(j, 1, b), dummy, 1, v ? v : (char *)dummy,
            v ? n : 1, work, lw, rwork);
    }
    if (has_nonfinite(f64, a, (int64_t)n * n)) return NONFINITE;
    int64_t nn = (int64_t)n * n, lw = j->lwork - 2 * n - nn, item = f64 ? 8 : 4;
    char *wr = (char *)work + lw * item, *wi = wr + n * item, *vr = wi + n * item;
    int info = f64 ? scipy_LAPACKE_dgeev_work(COLMAJOR, 'N', jobvr, n, (double *)a, n,
                                              (double *)wr, (double *)wi, NULL, 1,
                                              (double *)vr, n, work, (int)lw)
                   : scipy_LAPACKE_sgeev_work(COLMAJOR, 'N', jobvr, n, (float *)a, n,
                                              (float *)wr, (float *)wi, NULL, 1,
                                              (float *)vr, n, work, (int)lw);
    if (info) return info;
#define PART(p, i) (f64 ? ((const double *)(p))[i] : (double)((const float *)(p))[i])
    char *w = mat(j, 1, b), *v = jobvr == 'V' ? mat(j, 2, b) : NULL;
    for (int c = 0; c < n; c++) {
        double re = PART(wr, c), im = PART(wi, c);
        th__store_complex(w + c * 2 * item, f64 ? TH_COMPLEX128 : TH_COMPLEX64, re, im);
        if (!v) continue;
        /* a real eigenvalue: column c; a pair (im > 0 first): columns c and
         * c + 1 hold the real and imaginary parts of the first vector, the
         * second is its conjugate */
        for (int r = 0; r < n; r++) {
            int64_t at = (int64_t)c * n + r;
            double x = PART(vr, at), y = 0;
            if (im > 0 && c + 1 < n) y = PART(vr, at + n);
            else if (im < 0 && c > 0) { x = PART(vr, at - n); y = -PART(vr, at); }
            th__store_complex(v + at * 2 * item, f64 ? TH_COMPLEX128 : TH_COMPLEX64, x, y);
        }
    }
#undef PART
    return 0;
}

int th_linalg_eig(const th_tensor *A, int compute_v, th_tensor **W, th_tensor **V) {
    const char *fn = "linalg.eig";
    if (!W || (compute_v && !V))
        return th__error(TH_ERR_VALUE, "%s: outputs must not be NULL", fn);
    int rc = check_matrix(fn, "A", A, 1);
    if (rc) return rc;
    int nb = A->ndim - 2, f64 = real_dtype(A->dtype) == TH_FLOAT64;
    int ct = f64 ? TH_COMPLEX128 : TH_COMPLEX64;
    int64_t n = A->sizes[nb];
    th_tensor *t[4] = {colmajor(nb, A->sizes, n, n, A->dtype, A),
                       batched(nb, A->sizes, 1, &n, ct),
                       colmajor(nb, A->sizes, compute_v ? n : 0, compute_v ? n : 0, ct,
                                NULL),
                       batched(nb, A->sizes, 0, NULL, TH_INT32)};
    if (!t[0] || !t[1] || !t[2] || !t[3]) {
        release_all(t, 4);
        return th_last_status();
    }
    char jobvr = compute_v ? 'V' : 'N';
    lp_job j = {.dtype = A->dtype, .nbatch = th_numel(t[3]), .n = (int)n,
                .f = {jobvr}, .fn = eig_one, .info = (int32_t *)th__ptr(t[3])};
    if (n > 0 && th_dtype_is_complex(A->dtype)) {
        double wq[2] = {0, 0}, dummy[2];
        (f64 ? scipy_LAPACKE_zgeev_work : scipy_LAPACKE_cgeev_work)(
            COLMAJOR, 'N', jobvr, (int)n, dummy, (int)n, dummy, dummy, 1, dummy, (int)n, wq,
            -1, dummy);
        j.lwork = query_size(wq, A->dtype);
        j.lrwork = 2 * n;
    } else if (n > 0) {
        double wq = 0, dummy[1];
        float wqs = 0, dummys[1];
        if (f64) scipy_LAPACKE_dgeev_work(COLMAJOR, 'N', jobvr, (int)n, dummy, (int)n,
                                          dummy, dummy, NULL, 1, dummy, (int)n, &wq, -1);
        else scipy_LAPACKE_sgeev_work(COLMAJOR, 'N', jobvr, (int)n, dummys, (int)n,
                                      dummys, dummys, NULL, 1, dummys, (int)n, &wqs, -1);
        /* n <= 46340 here (n * n fits in int: check_matrix) */
        j.lwork = (int64_t)(f64 ? wq : wqs) + 1 + 2 * n + n * n;
    }
    bind(&j, 0, t[0], 2);
    bind(&j, 1, t[1], 1);
    if (compute_v) bind(&j, 2, t[2], 2);
    rc = run(&j, fn, 25.0 * n * n * n);
    if (!rc) rc = convergence_error(fn, t[3], A->ndim, "eigenvalues");
    if (rc) {
        release_all(t, 4);
        return rc;
    }
    th_tensor_release(t[0]);
    th_tensor_release(t[3]);
    *W = t[1];
    if (compute_v) *V = t[2]; else th_tensor_release(t[2]);
    return TH_OK;
}

/* ---- least squares ------------------------------------------------- */
/* Slots: 0 A (destroyed), 1 B -> X (max(m, n) rows), 2 singular values,
 * 3 rank (int64). */
static int lstsq_one(lp_job *j, int64_t b, void *work, int *iwork) {
    int f64 = is_f64(j), m = j->m, n = j->n, k = j->k;
    int64_t *rank = (int64_t *)mat(j, 3, b);
    *rank = 0;
    if (m == 0 || n == 0) return 0;
    int r = 0, ldb = m > n ? m : n, info;
    if (th_dtype_is_complex(j->dtype)) { /* gelsd: a real workspace too */
        int lw = (int)j->lwork;
        void *rwork = rwork_of(j, work);
        info = f64 ? scipy_LAPACKE_zgelsd_work(COLMAJOR, m, n, k, mat(j, 0, b), m,
                                               mat(j, 1, b), ldb, (double *)mat(j, 2, b),
                                               j->rcond, &r, work, lw, rwork, iwork)
                   : scipy_LAPACKE_cgelsd_work(COLMAJOR, m, n, k, mat(j, 0, b), m,
                                               mat(j, 1, b), ldb, (float *)mat(j, 2, b),
                                               (float)j->rcond, &r, work, lw, rwork, iwork);
        *rank = r;
        return info;
    }
    if (f64)
        info = scipy_LAPACKE_dgelsd_work(COLMAJOR, m, n, k, (double *)mat(j, 0, b), m,
                                         (double *)mat(j, 1, b), ldb,
                                         (double *)mat(j, 2, b), j->rcond, &r,
                                         work, (int)j->lwork, iwork);
    else
        info = scipy_LAPACKE_sgelsd_work(COLMAJOR, m, n, k, (float *)mat(j, 0, b), m,
                                         (float *)mat(j, 1, b), ldb,
                                         (float *)mat(j, 2, b), (float)j->rcond,
                                         &r, work, (int)j->lwork, iwork);
    *rank = r;
    return info;
}

int th_linalg_lstsq(const th_tensor *A, const th_tensor *B, double rcond,
                    th_tensor **X, th_tensor **rank, th_tensor **S) {
    const char *fn = "linalg.lstsq";
    if (!X || !rank || !S)
        return th__error(TH_ERR_VALUE, "%s: outputs must not be NULL", fn);
    int rc = check_matrix(fn, "A", A, 0);
    if (!rc) rc = check_matrix(fn, "B", B, 0);
    if (!rc) rc = check_same_dtype(fn, A, B);
    if (rc) return rc;
    int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1];
    int64_t k = B->sizes[B->ndim - 1], mn = TH_MIN(m, n), mx = TH_MAX(m, n), e;
    if (B->sizes[B->ndim - 2] != m)
        return th__error(TH_ERR_RUNTIME, "torch.%s: input.size(-2) should "
                         "match other.size(-2)", fn);
    if (th__mul_ovf(mx, k, &e) || e > INT_MAX)
        return th__error(TH_ERR_RUNTIME, "%s: matrices too large for LAPACK", fn);
    int nb, f64 = real_dtype(A->dtype) == TH_FLOAT64;
    int64_t bsz[TH_MAX_DIMS];
    rc = broadcast_batch(A, B, &nb, bsz);
    if (rc) return rc;
    th_tensor *t[5] = {colmajor(nb, bsz, m, n, A->dtype, A),
                       colmajor(nb, bsz, mx, k, A->dtype, NULL),
                       batched(nb, bsz, 1, &mn, real_dtype(A->dtype)),
                       batched(nb, bsz, 0, NULL, TH_INT64),
                       batched(nb, bsz, 0, NULL, TH_INT32)};
    if (!t[0] || !t[1] || !t[2] || !t[3] || !t[4]) {
        release_all(t, 5);
        return th_last_status();
    }
    th_tensor *top = th_narrow(t[1], nb, 0, m);
    rc = top ? th_fill_double(t[1], 0) : th_last_status();
    if (!rc) rc = th_copy(top, B);
    th_tensor_release(top);
    lp_job j = {.dtype = A->dtype, .nbatch = th_numel(t[4]), .m = (int)m,
                .n = (int)n, .k = (int)k, .rcond = rcond, .fn = lstsq_one,
                .info = (int32_t *)th__ptr(t[4])};
    if (!rc && mn > 0 && th_dtype_is_complex(A->dtype)) {
        double wq[2] = {0, 0}, rq[1] = {0}, dummy[2];
        int iq = 0, r = 0, ldb = (int)mx;
        if (f64) scipy_LAPACKE_zgelsd_work(COLMAJOR, (int)m, (int)n, (int)k, dummy, (int)m,
                                           dummy, ldb, dummy, rcond, &r, wq, -1, rq, &iq);
        else scipy_LAPACKE_cgelsd_work(COLMAJOR, (int)m, (int)n, (int)k, dummy, (int)m,
                                       dummy, ldb, (float *)dummy, (float)rcond, &r, wq, -1,
                                       (float *)rq, &iq);
        j.lwork = query_size(wq, A->dtype);
        j.lrwork = query_size(rq, A->dtype);
        j.liwork = TH_MAX(iq, 1);
    } else if (!rc && mn > 0) {
        double wq = 0, dummy[1];
        float wqs = 0, dummys[1];
        int iq = 0, r = 0, ldb = (int)mx;
        if (f64) scipy_LAPACKE_dgelsd_work(COLMAJOR, (int)m, (int)n, (int)k, dummy,
                                           (int)m, dummy, ldb, dummy, rcond, &r,
                                           &wq, -1, &iq);
        else scipy_LAPACKE_sgelsd_work(COLMAJOR, (int)m, (int)n, (int)k, dummys,
                                       (int)m, dummys, ldb, dummys, (float)rcond,
                                       &r, &wqs, -1, &iq);
        j.lwork = (int64_t)(f64 ? wq : wqs) + 1;
        j.liwork = TH_MAX(iq, 1);
    }
    if (!rc) {
        for (int s = 0; s < 2; s++) bind(&j, s, t[s], 2);
        bind(&j, 2, t[2], 1);
        bind(&j, 3, t[3], 0);
        rc = run(&j, fn, 4.0 * m * n * mn + 2.0 * mx * mn * k);
    }
    if (!rc) rc = convergence_error(fn, t[4], nb + 2, "singular values");
    th_tensor *x = rc ? NULL : th_narrow(t[1], nb, 0, n);
    if (!x) {
        rc = rc ? rc : th_last_status();
        release_all(t, 5);
        return rc;
    }
    th_tensor_release(t[0]);
    th_tensor_release(t[1]);
    th_tensor_release(t[4]);
    *X = x;
    *rank = t[3];
    *S = t[2];
    return TH_OK;
}
#endif
