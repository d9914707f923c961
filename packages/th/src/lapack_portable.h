/* Portable C99 versions of the LAPACK routines libTH needs most: LU with
 * partial pivoting (getrf/getrs), Cholesky (potrf) and Householder QR
 * (geqrf/orgqr), plus a triangular solve.  Unblocked, column-major, with
 * LAPACK's argument conventions (1-based pivots, `info` > 0 for a zero
 * pivot or a non-positive minor).  The TH_NO_BLAS build uses them for
 * everything, the LAPACK build for LU, Cholesky and triangular solves of
 * small matrices.
 *
 * Included twice by lapack.c, once per element type:
 *   #define LP_T float / double   the element type
 *   #define LP_F(name) name##_s / name##_d
 */
#ifndef LP_UNUSED
/* QR is only used by the TH_NO_BLAS build. */
#define LP_UNUSED __attribute__((unused))
#endif

/* A = P L U in place; ipiv[i] is the 1-based row swapped with row i. */
static int LP_F(port_getrf)(int m, int n, LP_T *a, int lda, int *ipiv) {
    int k = m < n ? m : n, info = 0;
    for (int j = 0; j < k; j++) {
        LP_T *cj = a + (int64_t)j * lda;
        int p = j;
        LP_T best = cj[j] < 0 ? -cj[j] : cj[j];
        for (int i = j + 1; i < m; i++) {
            LP_T v = cj[i] < 0 ? -cj[i] : cj[i];
            if (v > best) { best = v; p = i; }
        }
        ipiv[j] = p + 1;
        if (cj[p] == 0) {
            if (!info) info = j + 1;
            continue;
        }
        if (p != j)
            for (int c = 0; c < n; c++) {
                LP_T *col = a + (int64_t)c * lda;
                LP_T t = col[j]; col[j] = col[p]; col[p] = t;
            }
        LP_T inv = 1 / cj[j];
        for (int i = j + 1; i < m; i++) cj[i] *= inv;
        for (int c = j + 1; c < n; c++) {
            LP_T *col = a + (int64_t)c * lda;
            LP_T f = col[j];
            if (f != 0)
                for (int i = j + 1; i < m; i++) col[i] -= cj[i] * f;
        }
    }
    return info;
}

/* Solves op(T) X = B for triangular n x n T (col-major), B n x nrhs.
 * Row by row, every right-hand side at once, with one reciprocal of the
 * diagonal per row. */
static void LP_F(port_trsm)(int upper, int trans, int unit, int n, int nrhs,
                            const LP_T *t, int ldt, LP_T *b, int ldb) {
    /* op(T) is upper when (upper xor trans): back substitution */
    int back = upper ^ trans;
    for (int s = 0; s < n; s++) {
        int i = back ? n - 1 - s : s;
        int j0 = back ? i + 1 : 0, j1 = back ? n : i; /* solved entries row i reads */
        LP_T d = unit ? 1 : 1 / t[i + (int64_t)i * ldt];
        /* element j of row i of op(T): T[i, j], or T[j, i] transposed */
        int64_t step = trans ? 1 : ldt;
        const LP_T *row = trans ? t + (int64_t)i * ldt : t + i;
        for (int c = 0; c < nrhs; c++) {
            LP_T *x = b + (int64_t)c * ldb;
            LP_T v = x[i];
            for (int j = j0; j < j1; j++) v -= row[j * step] * x[j];
            x[i] = unit ? v : v * d;
        }
    }
}

/* Solves A X = B (trans 0) or A^T X = B (trans 1) from getrf's factors. */
static void LP_F(port_getrs)(int trans, int n, int nrhs, const LP_T *lu,
                             int lda, const int *ipiv, LP_T *b, int ldb) {
    if (!trans) {
        for (int i = 0; i < n; i++)
            if (ipiv[i] - 1 != i)
                for (int c = 0; c < nrhs; c++) {
                    LP_T *x = b + (int64_t)c * ldb, t = x[i];
                    x[i] = x[ipiv[i] - 1]; x[ipiv[i] - 1] = t;
                }
        LP_F(port_trsm)(0, 0, 1, n, nrhs, lu, lda, b, ldb);
        LP_F(port_trsm)(1, 0, 0, n, nrhs, lu, lda, b, ldb);
    } else {
        LP_F(port_trsm)(1, 1, 0, n, nrhs, lu, lda, b, ldb);
        LP_F(port_trsm)(0, 1, 1, n, nrhs, lu, lda, b, ldb);
        for (int i = n - 1; i >= 0; i--)
            if (ipiv[i] - 1 != i)
                for (int c = 0; c < nrhs; c++) {
                    LP_T *x = b + (int64_t)c * ldb, t = x[i];
                    x[i] = x[ipiv[i] - 1]; x[ipiv[i] - 1] = t;
                }
    }
}

/* Cholesky of the lower (or upper) triangle in place; info = order of
 * the first leading minor that is not positive-definite. */
static int LP_F(port_potrf)(int upper, int n, LP_T *a, int lda) {
    for (int j = 0; j < n; j++) {
        /* work on L (lower); the upper case reads A^T through the index */
#define LP_AT(i, k) a[upper ? (k) + (int64_t)(i) * lda : (i) + (int64_t)(k) * lda]
        LP_T d = LP_AT(j, j);
        for (int k = 0; k < j; k++) d -= LP_AT(j, k) * LP_AT(j, k);
        if (!(d > 0)) return j + 1;
        d = (LP_T)sqrt((double)d);
        LP_AT(j, j) = d;
        for (int i = j + 1; i < n; i++) {
            LP_T v = LP_AT(i, j);
            for (int k = 0; k < j; k++) v -= LP_AT(i, k) * LP_AT(j, k);
            LP_AT(i, j) = v / d;
        }
#undef LP_AT
    }
    return 0;
}

/* Householder QR in place: R in the upper triangle, the reflectors
 * v (v[0] = 1 implied) below it, their scales in tau (LAPACK's form). */
LP_UNUSED static void LP_F(port_geqrf)(int m, int n, LP_T *a, int lda, LP_T *tau) {
    int k = m < n ? m : n;
    for (int j = 0; j < k; j++) {
        LP_T *cj = a + (int64_t)j * lda;
        double norm2 = 0;
        for (int i = j + 1; i < m; i++) norm2 += (double)cj[i] * cj[i];
        if (norm2 == 0) { tau[j] = 0; continue; }
        double alpha = cj[j];
        double beta = -copysign(sqrt(alpha * alpha + norm2), alpha);
        tau[j] = (LP_T)((beta - alpha) / beta);
        LP_T scale = (LP_T)(1 / (alpha - beta));
        for (int i = j + 1; i < m; i++) cj[i] *= scale;
        cj[j] = (LP_T)beta;
        /* apply H = I - tau v v^T to the columns on the right */
        for (int c = j + 1; c < n; c++) {
            LP_T *col = a + (int64_t)c * lda;
            double s = col[j];
            for (int i = j + 1; i < m; i++) s += (double)cj[i] * col[i];
            s *= tau[j];
            col[j] -= (LP_T)s;
            for (int i = j + 1; i < m; i++) col[i] -= (LP_T)(s * cj[i]);
        }
    }
}

/* Overwrites the m x n matrix a (n <= m; its first k columns hold
 * geqrf's reflectors) with the first n columns of Q = H1 ... Hk. */
LP_UNUSED static void LP_F(port_orgqr)(int m, int n, int k, LP_T *a, int lda,
                             const LP_T *tau) {
    for (int j = n - 1; j >= 0; j--) {
        LP_T *cj = a + (int64_t)j * lda;
        if (j < k) {
            /* columns right of j: apply H_j */
            for (int c = j + 1; c < n; c++) {
                LP_T *col = a + (int64_t)c * lda;
                double s = col[j];
                for (int i = j + 1; i < m; i++) s += (double)cj[i] * col[i];
                s *= tau[j];
                col[j] -= (LP_T)s;
                for (int i = j + 1; i < m; i++) col[i] -= (LP_T)(s * cj[i]);
            }
            /* column j becomes H_j e_j */
            for (int i = j + 1; i < m; i++) cj[i] = -tau[j] * cj[i];
            cj[j] = 1 - tau[j];
        } else {
            for (int i = 0; i < m; i++) cj[i] = i == j;
        }
        for (int i = 0; i < j; i++) cj[i] = 0;
    }
}
