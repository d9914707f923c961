/* The LAPACK routines (th_linalg_*) through the public C API: hand-computed
 * small cases in float64 and float32, info codes, and the error paths
 * (NULL outputs, shapes, dtypes, bad pivots, routines a TH_NO_BLAS build
 * lacks). */
#include <string.h>
#include "check.h"

static th_tensor *make(int ndim, const int64_t *sizes, const double *v, int dtype) {
    th_tensor *t = th_empty(ndim, sizes, TH_FLOAT64);
    memcpy(th_data_ptr(t), v, (size_t)th_numel(t) * sizeof(double));
    th_tensor *r = th_to_dtype(t, dtype);
    th_tensor_release(t);
    return r;
}

/* 1 if t (any layout) has the shape and values within tol. */
static int near(const th_tensor *t, int ndim, const int64_t *sizes,
                const double *want, double tol) {
    if (!t || t->ndim != ndim) return 0;
    for (int i = 0; i < ndim; i++)
        if (t->sizes[i] != sizes[i]) return 0;
    for (int64_t i = 0; i < th_numel(t); i++) {
        double v;
        if (th_get_double(t, i, &v) != TH_OK || fabs(v - want[i]) > tol) {
            fprintf(stderr, "  element %lld: got %g, want %g\n", (long long)i, v, want[i]);
            return 0;
        }
    }
    return 1;
}

static void test_solve_inv_det(int dtype, double tol) {
    /* A = [[4, 7], [2, 6]]: det 10, inverse [[0.6, -0.7], [-0.2, 0.4]] */
    th_tensor *a = make(2, SZ(2, 2), DV(4, 7, 2, 6), dtype);
    th_tensor *b = make(2, SZ(2, 1), DV(1, 2), dtype);
    th_tensor *x = NULL, *info = NULL, *d = NULL, *s = NULL, *l = NULL;
    CHECK(th_linalg_solve(a, b, 1, &x, &info) == TH_OK);
    CHECK(near(x, 2, SZ(2, 1), DV(-0.8, 0.6), tol));
    CHECK(near(info, 0, SZ(0), DV(0), 0));
    th_tensor_release(x);
    th_tensor_release(info);
    CHECK(th_linalg_inv(a, 1, &x, NULL) == TH_OK);
    CHECK(near(x, 2, SZ(2, 2), DV(0.6, -0.7, -0.2, 0.4), tol));
    CHECK(x && x->strides[0] == 1 && x->strides[1] == 2); /* column-major */
    th_tensor_release(x);
    CHECK(th_linalg_det(a, &d) == TH_OK && near(d, 0, SZ(0), DV(10), tol * 10));
    CHECK(th_linalg_slogdet(a, &s, &l) == TH_OK);
    CHECK(near(s, 0, SZ(0), DV(1), 0) && near(l, 0, SZ(0), DV(log(10.0)), tol));
    th_tensor *objs[] = {a, b, d, s, l};
    for (size_t i = 0; i < sizeof objs / sizeof *objs; i++) th_tensor_release(objs[i]);
}

static void test_lu(void) {
    th_tensor *a = make(2, SZ(2, 2), DV(1, 2, 3, 4), TH_FLOAT64);
    th_tensor *lu = NULL, *piv = NULL, *info = NULL, *x = NULL;
    CHECK(th_linalg_lu_factor(a, &lu, &piv, &info) == TH_OK);
    /* rows swapped: P A = [[3, 4], [1, 2]] = [[1, 0], [1/3, 1]] [[3, 4], [0, 2/3]] */
    CHECK(near(lu, 2, SZ(2, 2), DV(3, 4, 1.0 / 3, 2.0 / 3), 1e-12));
    CHECK(piv && piv->dtype == TH_INT32 && near(piv, 1, SZ(2), DV(2, 2), 0));
    th_tensor *b = make(2, SZ(2, 1), DV(5, 11), TH_FLOAT64);
    CHECK(th_linalg_lu_solve(lu, piv, b, 0, &x) == TH_OK);
    CHECK(near(x, 2, SZ(2, 1), DV(1, 2), 1e-12));
    th_tensor_release(x);
    CHECK(th_linalg_lu_solve(lu, piv, b, 1, &x) == TH_OK); /* A^T x = b */
    CHECK(near(x, 2, SZ(2, 1), DV(6.5, -0.5), 1e-12));
    th_tensor_release(x);
    /* pivots outside [1, n] are refused before LAPACK sees them */
    int32_t *p = th_data_ptr(piv);
    p[0] = 3;
    x = NULL;
    ERR(th_linalg_lu_solve(lu, piv, b, 0, &x), TH_ERR_RUNTIME, "pivots must be between 1 and 2");
    CHECK(x == NULL);
    th_tensor *objs[] = {a, lu, piv, info, b};
    for (size_t i = 0; i < sizeof objs / sizeof *objs; i++) th_tensor_release(objs[i]);
}

static void test_cholesky_and_triangular(int dtype, double tol) {
    /* [[4, 2], [2, 3]] = L L^T with L = [[2, 0], [1, sqrt 2]] */
    th_tensor *a = make(2, SZ(2, 2), DV(4, 2, 2, 3), dtype);
    th_tensor *l = NULL, *u = NULL, *info = NULL, *x = NULL;
    CHECK(th_linalg_cholesky(a, 0, 1, &l, &info) == TH_OK);
    CHECK(near(l, 2, SZ(2, 2), DV(2, 0, 1, sqrt(2.0)), tol));
    CHECK(th_linalg_cholesky(a, 1, 1, &u, NULL) == TH_OK);
    CHECK(near(u, 2, SZ(2, 2), DV(2, 1, 0, sqrt(2.0)), tol));
    th_tensor *b = make(2, SZ(2, 1), DV(2, 1 + sqrt(2.0)), dtype);
    CHECK(th_linalg_solve_triangular(l, b, 0, 0, 0, &x) == TH_OK);
    CHECK(near(x, 2, SZ(2, 1), DV(1, 1), tol));
    th_tensor_release(x);
    th_tensor *c = make(2, SZ(2, 2), DV(1, 2, 2, 1), dtype); /* not positive-definite */
    th_tensor *l2 = NULL, *info2 = NULL;
    CHECK(th_linalg_cholesky(c, 0, 0, &l2, &info2) == TH_OK);
    CHECK(near(info2, 0, SZ(0), DV(2), 0));
    th_tensor *l3 = NULL;
    ERR(th_linalg_cholesky(c, 0, 1, &l3, NULL), TH_ERR_RUNTIME,
        "linalg.cholesky: The factorization could not be completed because the input is not "
        "positive-definite (the leading minor of order 2 is not positive-definite).");
    CHECK(l3 == NULL);
    th_tensor *objs[] = {a, l, u, info, b, c, l2, info2};
    for (size_t i = 0; i < sizeof objs / sizeof *objs; i++) th_tensor_release(objs[i]);
}

static void test_qr(void) {
    /* A = [[3, 1], [4, 2], [0, 0]]: R = [[-5, -2.2], [0, -0.4]] up to signs */
    th_tensor *a = make(2, SZ(3, 2), DV(3, 1, 4, 2, 0, 0), TH_FLOAT64);
    th_tensor *q = NULL, *r = NULL;
    CHECK(th_linalg_qr(a, 0, &q, &r) == TH_OK);
    CHECK(q && r && q->sizes[0] == 3 && q->sizes[1] == 2 && r->sizes[0] == 2);
    if (q && r) {
        th_tensor *qr = th_matmul(q, r);
        CHECK(near(qr, 2, SZ(3, 2), DV(3, 1, 4, 2, 0, 0), 1e-12));
        double r00, r01, r10, r11;
        th_get_double(r, 0, &r00);
        th_get_double(r, 1, &r01);
        th_get_double(r, 2, &r10);
        th_get_double(r, 3, &r11);
        CHECK_CLOSE(fabs(r00), 5, 1e-12);
        CHECK_CLOSE(fabs(r01), 2.2, 1e-12);
        CHECK(r10 == 0);
        CHECK_CLOSE(fabs(r11), 0.4, 1e-12);
        th_tensor_release(qr);
    }
    th_tensor_release(q);
    th_tensor_release(r);
    ERR(th_linalg_qr(a, 3, &q, &r), TH_ERR_RUNTIME, "qr received unrecognized mode 3");
    th_tensor_release(a);
}

static void test_spectral(void) {
    th_tensor *a = make(2, SZ(2, 2), DV(2, 1, 1, 2), TH_FLOAT64); /* eigenvalues 1, 3 */
    th_tensor *w = NULL, *v = NULL, *u = NULL, *s = NULL, *vh = NULL;
    th_tensor *x = NULL, *rank = NULL, *sv = NULL;
    if (!th_has_lapack()) {
        ERR(th_linalg_eigh(a, 0, 1, &w, &v), TH_ERR_NOT_IMPLEMENTED, "TH_NO_BLAS=1");
        ERR(th_linalg_svd(a, 0, 1, &u, &s, &vh), TH_ERR_NOT_IMPLEMENTED, "linalg.svd");
        ERR(th_linalg_lstsq(a, a, -1, &x, &rank, &sv), TH_ERR_NOT_IMPLEMENTED, "linalg.lstsq");
        th_tensor_release(a);
        return;
    }
    CHECK(th_linalg_eigh(a, 0, 1, &w, &v) == TH_OK && near(w, 1, SZ(2), DV(1, 3), 1e-12));
    CHECK(th_linalg_svd(a, 0, 0, NULL, &s, NULL) == TH_OK && near(s, 1, SZ(2), DV(3, 1), 1e-12));
    th_tensor *b = make(2, SZ(2, 1), DV(3, 3), TH_FLOAT64);
    CHECK(th_linalg_lstsq(a, b, -1, &x, &rank, &sv) == TH_OK);
    CHECK(near(x, 2, SZ(2, 1), DV(1, 1), 1e-12) && near(rank, 0, SZ(0), DV(2), 0));
    th_tensor *objs[] = {a, w, v, s, b, x, rank, sv};
    for (size_t i = 0; i < sizeof objs / sizeof *objs; i++) th_tensor_release(objs[i]);
}

static void test_errors(void) {
    th_tensor *a = make(2, SZ(3, 4), DV(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12), TH_FLOAT64);
    th_tensor *ai = th_to_dtype(a, TH_INT64), *x = NULL, *info = NULL;
    ERR(th_linalg_inv(a, 1, &x, &info), TH_ERR_RUNTIME,
        "linalg.inv: A must be batches of square matrices, but they are 3 by 4 matrices");
    ERR(th_linalg_det(ai, &x), TH_ERR_RUNTIME,
        "linalg.det: Expected a floating point or complex tensor as input. Got Long");
    ERR(th_linalg_inv(a, 1, NULL, NULL), TH_ERR_VALUE, "must not be NULL");
    th_tensor *z = make(2, SZ(2, 2), DV(0, 0, 0, 0), TH_FLOAT32);
    th_tensor *one = make(2, SZ(2, 1), DV(1, 1), TH_FLOAT32);
    ERR(th_linalg_solve(z, one, 1, &x, NULL), TH_ERR_RUNTIME,
        "torch.linalg.solve: The solver failed because the input matrix is singular.");
    CHECK(x == NULL);
    th_tensor *a32 = th_to_dtype(a, TH_FLOAT32);
    ERR(th_linalg_solve(z, a32, 1, &x, NULL), TH_ERR_RUNTIME,
        "linalg.solve: Incompatible shapes of A and B for the equation AX = B (2x2 and 3x4)");
    ERR(th_linalg_solve(z, a, 1, &x, NULL), TH_ERR_RUNTIME,
        "linalg.solve: Expected A and B to have the same dtype, but found A of type Float and "
        "B of type Double instead");
    th_tensor *objs[] = {a, ai, z, one, a32};
    for (size_t i = 0; i < sizeof objs / sizeof *objs; i++) th_tensor_release(objs[i]);
}

static void test_householder_and_geqrf(void) {
    /* geqrf's reflectors give back Q: Q R = A; one reflector v = (1, 1),
     * tau = 1 gives I - v v^T = [[0, -1], [-1, 0]] */
    th_tensor *a = make(2, SZ(3, 2), DV(3, 1, 4, 2, 0, 5), TH_FLOAT64);
    th_tensor *h = NULL, *tau = NULL, *q = NULL;
    CHECK(th_linalg_geqrf(a, &h, &tau) == TH_OK);
    CHECK(h && tau && tau->ndim == 1 && tau->sizes[0] == 2);
    CHECK(th_linalg_householder_product(h, tau, &q) == TH_OK);
    if (q && h) {
        th_tensor *r = th_triu(h, 0);
        th_tensor *r2 = r ? th_narrow(r, 0, 0, 2) : NULL;
        th_tensor *qr = r2 ? th_matmul(q, r2) : NULL;
        CHECK(near(qr, 2, SZ(3, 2), DV(3, 1, 4, 2, 0, 5), 1e-12));
        th_tensor *objs[] = {r, r2, qr};
        for (size_t i = 0; i < sizeof objs / sizeof *objs; i++) th_tensor_release(objs[i]);
    }
    th_tensor_release(q);
    th_tensor *v = make(2, SZ(2, 2), DV(7, 0, 1, 7), TH_FLOAT32);
    th_tensor *t1 = make(1, SZ(1), DV(1), TH_FLOAT32), *t3 = make(1, SZ(3), DV(1, 1, 1), TH_FLOAT32);
    CHECK(th_linalg_householder_product(v, t1, &q) == TH_OK);
    CHECK(near(q, 2, SZ(2, 2), DV(0, -1, -1, 0), 1e-6));
    th_tensor_release(q);
    ERR(th_linalg_householder_product(v, t3, &q), TH_ERR_RUNTIME,
        "input.shape[-1] must be greater than or equal to tau.shape[-1]");
    ERR(th_linalg_householder_product(v, tau, &q), TH_ERR_RUNTIME,
        "tau dtype Double does not match input dtype Float");
    ERR(th_linalg_householder_product(tau, tau, &q), TH_ERR_RUNTIME,
        "input must have at least 2 dimensions.");
    ERR(th_linalg_geqrf(a, NULL, &tau), TH_ERR_VALUE, "must not be NULL");
    th_tensor *objs[] = {a, h, tau, v, t1, t3};
    for (size_t i = 0; i < sizeof objs / sizeof *objs; i++) th_tensor_release(objs[i]);
}

static void test_small_inverse(void) {
    /* order 3 with a zero leading entry (a row swap) and a singular one */
    th_tensor *a = make(3, SZ(2, 3, 3), DV(0, 1, 0, 1, 0, 0, 0, 0, 2,
                                            1, 2, 3, 2, 4, 6, 1, 1, 1), TH_FLOAT64);
    th_tensor *x = NULL, *info = NULL;
    CHECK(th_linalg_inv(a, 0, &x, &info) == TH_OK);
    CHECK(info && ((const int32_t *)th_data_ptr(info))[0] == 0);
    CHECK(info && ((const int32_t *)th_data_ptr(info))[1] == 3);
    th_tensor *x0 = x ? th_select(x, 0, 0) : NULL;
    CHECK(near(x0, 2, SZ(3, 3), DV(0, 1, 0, 1, 0, 0, 0, 0, 0.5), 1e-15));
    th_tensor *objs[] = {x, x0, info};
    for (size_t i = 0; i < sizeof objs / sizeof *objs; i++) th_tensor_release(objs[i]);
    x = info = NULL;
    ERR(th_linalg_inv(a, 1, &x, &info), TH_ERR_RUNTIME,
        "linalg.inv: (Batch element 1): The diagonal element 3 is zero");
    CHECK(x == NULL && info == NULL);
    th_tensor_release(a);
}

static void test_ldl(void) {
    /* a zero diagonal: one 2x2 block (rows 1 and 3 swapped), then a 1x1 */
    th_tensor *a = make(2, SZ(3, 3), DV(0, 1, 2, 1, 0, 3, 2, 3, 1), TH_FLOAT64);
    th_tensor *ld = NULL, *piv = NULL, *info = NULL, *x = NULL;
    th_tensor *b = make(2, SZ(3, 1), DV(3, 4, 6), TH_FLOAT64); /* A (1, 1, 1) */
    if (!th_has_lapack()) {
        ERR(th_linalg_ldl_factor(a, 0, 1, &ld, &piv, &info), TH_ERR_NOT_IMPLEMENTED,
            "TH_NO_BLAS=1");
    } else {
        CHECK(th_linalg_ldl_factor(a, 0, 1, &ld, &piv, &info) == TH_OK);
        CHECK(near(ld, 2, SZ(3, 3), DV(0, 0, 0, 2, 1, 0, 1.25, 0.5, -2.75), 1e-15));
        CHECK(near(piv, 1, SZ(3), DV(-3, -3, 3), 0) && near(info, 0, SZ(0), DV(0), 0));
        CHECK(th_linalg_ldl_solve(ld, piv, b, 0, &x) == TH_OK);
        CHECK(near(x, 2, SZ(3, 1), DV(1, 1, 1), 1e-14));
        if (piv) ((int32_t *)th_data_ptr(piv))[1] = 3; /* breaks the 2x2 pair */
        th_tensor_release(x);
        x = NULL;
        ERR(th_linalg_ldl_solve(ld, piv, b, 0, &x), TH_ERR_RUNTIME, "invalid pivots");
        CHECK(x == NULL);
    }
    th_tensor *objs[] = {a, ld, piv, info, b};
    for (size_t i = 0; i < sizeof objs / sizeof *objs; i++) th_tensor_release(objs[i]);
}

int main(void) {
    test_solve_inv_det(TH_FLOAT64, 1e-12);
    test_solve_inv_det(TH_FLOAT32, 1e-5);
    test_lu();
    test_cholesky_and_triangular(TH_FLOAT64, 1e-12);
    test_cholesky_and_triangular(TH_FLOAT32, 1e-6);
    test_qr();
    test_spectral();
    test_errors();
    test_householder_and_geqrf();
    test_small_inverse();
    test_ldl();
    return check_report("test_lapack");
}
