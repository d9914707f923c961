/* Linear algebra (dot, mv, mm, bmm, matmul, outer, add* forms, gemm_out)
 * through the public C API: hand-computed values, layouts, dtypes,
 * empty shapes and every error path. */
#include <string.h>
#include "check.h"

/* ---- helpers ------------------------------------------------------- */
static th_tensor *from_f64(int ndim, const int64_t *sizes, const double *v,
                           int dtype) {
    th_tensor *t = th_empty(ndim, sizes, TH_FLOAT64);
    int64_t n = th_numel(t);
    memcpy(th_data_ptr(t), v, (size_t)n * sizeof(double));
    th_tensor *r = th_to_dtype(t, dtype);
    th_tensor_release(t);
    return r;
}

/* Deterministic small integers in [-4, 4] (exact in every dtype). */
static th_tensor *ints(int ndim, const int64_t *sizes, int seed, int dtype) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= sizes[i];
    double *v = malloc((size_t)(n ? n : 1) * sizeof(double));
    for (int64_t i = 0; i < n; i++)
        v[i] = (double)((i * 7 + seed * 13 + (i / 5) * 3) % 9 - 4);
    th_tensor *t = from_f64(ndim, sizes, v, dtype);
    free(v);
    return t;
}

/* Smooth pseudo-random floats in [-1, 1]. */
static th_tensor *floats(int ndim, const int64_t *sizes, int seed, int dtype) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= sizes[i];
    double *v = malloc((size_t)(n ? n : 1) * sizeof(double));
    for (int64_t i = 0; i < n; i++) v[i] = sin(0.37 * (double)i + seed);
    th_tensor *t = from_f64(ndim, sizes, v, dtype);
    free(v);
    return t;
}

static double *to_array(const th_tensor *t) {
    int64_t n = th_numel(t);
    double *v = malloc((size_t)(n ? n : 1) * sizeof(double));
    for (int64_t i = 0; i < n; i++) th_get_double(t, i, &v[i]);
    return v;
}

/* max |r - a @ b| for 2-d a, b (values read through any layout) */
static double mm_err(const th_tensor *r, const th_tensor *a,
                     const th_tensor *b, double beta, const double *c0,
                     double alpha) {
    int64_t m = a->sizes[0], k = a->sizes[1], n = b->sizes[1];
    double *av = to_array(a), *bv = to_array(b), *rv = to_array(r);
    double err = 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t l = 0; l < k; l++) s += av[i * k + l] * bv[l * n + j];
            double want = alpha * s + (c0 ? beta * c0[i * n + j] : 0);
            err = fmax(err, fabs(rv[i * n + j] - want));
        }
    free(av);
    free(bv);
    free(rv);
    return err;
}

static int has_shape(const th_tensor *t, int ndim, const int64_t *sizes) {
    if (!t || t->ndim != ndim) return 0;
    for (int i = 0; i < ndim; i++)
        if (t->sizes[i] != sizes[i]) return 0;
    return 1;
}

static int values_are(const th_tensor *t, const double *want, double tol) {
    int64_t n = th_numel(t);
    for (int64_t i = 0; i < n; i++) {
        double v;
        if (th_get_double(t, i, &v) != TH_OK) return 0;
        if (!(fabs(v - want[i]) <= tol)) return 0;
    }
    return 1;
}

static int error_is(int status, const char *fragment) {
    return th_last_status() == status &&
           strstr(th_last_error(), fragment) != NULL;
}

static const int all_dtypes[] = {TH_FLOAT32, TH_FLOAT64, TH_FLOAT16,
                                 TH_BFLOAT16, TH_INT8,   TH_UINT8,
                                 TH_INT16,   TH_INT32,   TH_INT64};

/* ---- mm / addmm / gemm_out ----------------------------------------- */
static void test_mm_values(void) {
    /* [[1,2,3],[4,5,6]] @ [[1,0],[0,1],[2,3]] = [[7,11],[16,23]] */
    const double av[] = {1, 2, 3, 4, 5, 6}, bv[] = {1, 0, 0, 1, 2, 3};
    const double want[] = {7, 11, 16, 23};
    for (size_t d = 0; d < sizeof all_dtypes / sizeof *all_dtypes; d++) {
        int dt = all_dtypes[d];
        th_tensor *a = from_f64(2, (int64_t[]){2, 3}, av, dt);
        th_tensor *b = from_f64(2, (int64_t[]){3, 2}, bv, dt);
        th_tensor *r = th_mm(a, b);
        CHECK(has_shape(r, 2, (int64_t[]){2, 2}) && r->dtype == dt);
        CHECK(r && values_are(r, want, 0));
        th_tensor_release(r);
        /* transposed operands: (b^T @ a^T)^T */
        th_tensor *at = th_transpose(a, 0, 1), *bt = th_transpose(b, 0, 1);
        r = th_mm(bt, at);
        const double want_t[] = {7, 16, 11, 23};
        CHECK(r && values_are(r, want_t, 0));
        th_tensor_release(r);
        th_tensor_release(at);
        th_tensor_release(bt);
        th_tensor_release(a);
        th_tensor_release(b);
    }
    /* bool: OR over AND */
    const double ab[] = {1, 0, 0, 0, 1, 1}, bb[] = {0, 1, 1, 0, 0, 0};
    th_tensor *a = from_f64(2, (int64_t[]){2, 3}, ab, TH_BOOL);
    th_tensor *b = from_f64(2, (int64_t[]){3, 2}, bb, TH_BOOL);
    th_tensor *r = th_mm(a, b);
    CHECK(r && r->dtype == TH_BOOL &&
          values_are(r, (double[]){0, 1, 1, 0}, 0));
    th_tensor_release(r);
    th_tensor_release(a);
    th_tensor_release(b);
    /* int8 wraps like PyTorch: 2 * 100 * 100 = 20000 = 78 * 256 + 32 */
    a = from_f64(2, (int64_t[]){1, 2}, (double[]){100, 100}, TH_INT8);
    b = from_f64(2, (int64_t[]){2, 1}, (double[]){100, 100}, TH_INT8);
    r = th_mm(a, b);
    CHECK(r && values_are(r, (double[]){32}, 0));
    th_tensor_release(r);
    th_tensor_release(a);
    th_tensor_release(b);
    /* int32 wraps modulo 2^32: 65536 * 65536 + 3 * 65536 */
    a = from_f64(2, (int64_t[]){1, 2}, (double[]){65536, 3}, TH_INT32);
    b = from_f64(2, (int64_t[]){2, 1}, (double[]){65536, 65536}, TH_INT32);
    r = th_mm(a, b);
    CHECK(r && values_are(r, (double[]){196608}, 0));
    th_tensor_release(r);
    /* integer alpha and beta: 2 * [7] - 1 * (65536 * 65536 + 3 * 65536) */
    th_tensor *seven = th_scalar_int64(7, TH_INT32);
    r = th_addmm(seven, a, b, 2, -1);
    CHECK(r && values_are(r, (double[]){14 - 196608}, 0));
    th_tensor_release(r);
    th_tensor_release(seven);
    th_tensor_release(a);
    th_tensor_release(b);
    /* int64 stays exact beyond 2^53 */
    th_tensor *big = th_empty(2, (int64_t[]){1, 1}, TH_INT64);
    *(int64_t *)th_data_ptr(big) = ((int64_t)1 << 53) + 1;
    th_tensor *one = th_empty(2, (int64_t[]){1, 1}, TH_INT64);
    *(int64_t *)th_data_ptr(one) = 3;
    r = th_mm(big, one);
    CHECK(r && *(int64_t *)th_data_ptr(r) == 3 * (((int64_t)1 << 53) + 1));
    th_tensor_release(r);
    th_tensor_release(big);
    th_tensor_release(one);
}

/* Sizes that cross the blocking edges and the threading threshold, for
 * several layouts of the operands. */
static void test_mm_layouts(void) {
    const int64_t shapes[][3] = {{37, 53, 300}, {64, 64, 64}, {1, 70, 90},
                                 {90, 1, 70},   {5, 6, 7},    {130, 97, 33}};
    const int fdt[] = {TH_FLOAT32, TH_FLOAT64};
    for (int f = 0; f < 2; f++) {
        double tol = fdt[f] == TH_FLOAT32 ? 2e-4 : 1e-11;
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
            int64_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
            th_tensor *a = floats(2, (int64_t[]){m, k}, 1, fdt[f]);
            th_tensor *b = floats(2, (int64_t[]){k, n}, 2, fdt[f]);
            /* contiguous */
            th_tensor *r = th_mm(a, b);
            CHECK(r && mm_err(r, a, b, 0, NULL, 1) < tol);
            th_tensor_release(r);
            /* column-major copies (transposes of contiguous) */
            th_tensor *at0 = floats(2, (int64_t[]){k, m}, 1, fdt[f]);
            th_tensor *bt0 = floats(2, (int64_t[]){n, k}, 2, fdt[f]);
            th_tensor *at = th_transpose(at0, 0, 1);
            th_tensor *bt = th_transpose(bt0, 0, 1);
            r = th_mm(at, bt);
            CHECK(r && mm_err(r, at, bt, 0, NULL, 1) < tol);
            th_tensor_release(r);
            r = th_mm(a, bt);
            CHECK(r && mm_err(r, a, bt, 0, NULL, 1) < tol);
            th_tensor_release(r);
            /* every other row and column of bigger tensors (copy path) */
            th_tensor *a2 = floats(2, (int64_t[]){2 * m, 2 * k}, 3, fdt[f]);
            th_tensor *as1 = th_slice(a2, 0, 0, 2 * m, 2);
            th_tensor *as = th_slice(as1, 1, 0, 2 * k, 2);
            /* reversed rows (negative stride) */
            th_tensor *bf = th_flip_view(b, 1, (int[]){0});
            r = th_mm(as, bf);
            CHECK(r && mm_err(r, as, bf, 0, NULL, 1) < tol);
            th_tensor_release(r);
            /* a broadcast row (zero stride) */
            th_tensor *row = th_narrow(a, 0, 0, 1);
            th_tensor *ae = th_expand(row, 2, (int64_t[]){m, k});
            r = th_mm(ae, b);
            CHECK(r && mm_err(r, ae, b, 0, NULL, 1) < tol);
            th_tensor_release(r);
            th_tensor *objs[] = {a, b, at0, bt0, at, bt, a2, as1, as, bf,
                                 row, ae};
            for (size_t i = 0; i < sizeof objs / sizeof *objs; i++)
                th_tensor_release(objs[i]);
        }
    }
}

static void test_addmm(void) {
    const double av[] = {1, 2, 3, 4, 5, 6}, bv[] = {1, 0, 0, 1, 2, 3};
    for (int dt = 0; dt < TH_BOOL; dt++) { /* the numeric real dtypes */
        th_tensor *a = from_f64(2, (int64_t[]){2, 3}, av, dt);
        th_tensor *b = from_f64(2, (int64_t[]){3, 2}, bv, dt);
        /* a row vector input broadcasts over rows */
        th_tensor *in = from_f64(1, (int64_t[]){2}, (double[]){10, 20}, dt);
        th_tensor *r = th_addmm(in, a, b, 2, 3);
        /* 2 * [10, 20] + 3 * [[7, 11], [16, 23]] */
        CHECK(r && r->dtype == dt &&
              values_are(r, (double[]){41, 73, 68, 109}, 0));
        th_tensor_release(r);
        th_tensor_release(in);
        th_tensor_release(a);
        th_tensor_release(b);
    }
    th_tensor *a = floats(2, (int64_t[]){40, 30}, 1, TH_FLOAT64);
    th_tensor *b = floats(2, (int64_t[]){30, 20}, 2, TH_FLOAT64);
    /* beta == 0 ignores NaN in input */
    th_tensor *in = th_empty(2, (int64_t[]){40, 20}, TH_FLOAT64);
    th_fill_double(in, NAN);
    th_tensor *r = th_addmm(in, a, b, 0, 1.5);
    CHECK(r && mm_err(r, a, b, 0, NULL, 1.5) < 1e-12);
    th_tensor_release(r);
    /* alpha == 0: only beta * input */
    th_fill_double(in, 2.0);
    r = th_addmm(in, a, b, 0.5, 0);
    CHECK(r);
    double v;
    CHECK(r && th_get_double(r, 17, &v) == TH_OK && v == 1.0);
    th_tensor_release(r);
    /* 0-d input */
    th_tensor *s = th_scalar_double(1.0, TH_FLOAT64);
    r = th_addmm(s, a, b, -1, 1);
    double *ones = malloc(40 * 20 * sizeof(double));
    for (int i = 0; i < 800; i++) ones[i] = 1;
    CHECK(r && mm_err(r, a, b, -1, ones, 1) < 1e-12);
    free(ones);
    th_tensor_release(r);
    th_tensor_release(s);
    th_tensor_release(in);
    th_tensor_release(a);
    th_tensor_release(b);
}

static void test_gemm_out(void) {
    const int64_t m = 33, n = 21, k = 45;
    for (int f = 0; f < 2; f++) {
        int dt = f ? TH_FLOAT64 : TH_FLOAT32;
        double tol = f ? 1e-12 : 1e-4;
        th_tensor *a = floats(2, (int64_t[]){m, k}, 1, dt);
        th_tensor *b = floats(2, (int64_t[]){k, n}, 2, dt);
        th_tensor *c0 = floats(2, (int64_t[]){m, n}, 3, dt);
        double *c0v = to_array(c0);
        /* contiguous out, beta and alpha */
        th_tensor *out = th_clone(c0);
        CHECK(th_gemm_out(out, a, b, 0.5, 2) == TH_OK);
        CHECK(mm_err(out, a, b, 0.5, c0v, 2) < tol);
        th_tensor_release(out);
        /* column-major out (transpose of an (n, m) tensor) */
        th_tensor *o0 = th_empty(2, (int64_t[]){n, m}, dt);
        out = th_transpose(o0, 0, 1);
        th_copy(out, c0);
        CHECK(th_gemm_out(out, a, b, -1, 1) == TH_OK);
        CHECK(mm_err(out, a, b, -1, c0v, 1) < tol);
        th_tensor_release(out);
        th_tensor_release(o0);
        /* out with no unit stride (every other column of a wider one) */
        o0 = th_empty(2, (int64_t[]){m, 2 * n}, dt);
        th_fill_double(o0, 7);
        out = th_slice(o0, 1, 0, 2 * n, 2);
        th_copy(out, c0);
        CHECK(th_gemm_out(out, a, b, 1, 1) == TH_OK);
        CHECK(mm_err(out, a, b, 1, c0v, 1) < tol);
        double v;
        CHECK(th_get_double(o0, 1, &v) == TH_OK && v == 7); /* untouched */
        th_tensor_release(out);
        th_tensor_release(o0);
        /* beta == 0 ignores NaN already in out */
        out = th_empty(2, (int64_t[]){m, n}, dt);
        th_fill_double(out, NAN);
        CHECK(th_gemm_out(out, a, b, 0, 1) == TH_OK);
        CHECK(mm_err(out, a, b, 0, NULL, 1) < tol);
        th_tensor_release(out);
        /* out of another dtype: computed in float, then converted */
        out = th_to_dtype(c0, TH_FLOAT64 - f); /* the other float type */
        CHECK(th_gemm_out(out, a, b, 1, 1) == TH_OK && out->dtype != dt);
        CHECK(mm_err(out, a, b, 1, c0v, 1) < 1e-4);
        th_tensor_release(out);
        free(c0v);
        th_tensor_release(c0);
        th_tensor_release(a);
        th_tensor_release(b);
    }
    /* out aliases an operand: x = x @ w */
    th_tensor *x = floats(2, (int64_t[]){20, 20}, 4, TH_FLOAT64);
    th_tensor *w = floats(2, (int64_t[]){20, 20}, 5, TH_FLOAT64);
    th_tensor *want = th_mm(x, w);
    CHECK(th_gemm_out(x, x, w, 0, 1) == TH_OK);
    double *wv = to_array(want), *xv = to_array(x), err = 0;
    for (int i = 0; i < 400; i++) err = fmax(err, fabs(wv[i] - xv[i]));
    CHECK(err < 1e-12);
    free(wv);
    free(xv);
    /* out aliases the second operand, transposed */
    th_tensor *xt = th_transpose(x, 0, 1);
    th_tensor *want2 = th_mm(w, xt);
    CHECK(th_gemm_out(x, w, xt, 0, 1) == TH_OK);
    wv = to_array(want2);
    xv = to_array(x);
    err = 0;
    for (int i = 0; i < 400; i++) err = fmax(err, fabs(wv[i] - xv[i]));
    CHECK(err < 1e-12);
    free(wv);
    free(xv);
    th_tensor_release(want2);
    th_tensor_release(xt);
    th_tensor_release(want);
    th_tensor_release(x);
    th_tensor_release(w);
    /* errors are caught before out is touched */
    th_tensor *a = ints(2, (int64_t[]){2, 3}, 1, TH_FLOAT32);
    th_tensor *b = ints(2, (int64_t[]){3, 4}, 2, TH_FLOAT32);
    th_tensor *out = th_empty(2, (int64_t[]){2, 5}, TH_FLOAT32);
    th_fill_double(out, 9);
    CHECK(th_gemm_out(out, a, b, 0, 1) == TH_ERR_RUNTIME);
    CHECK(error_is(TH_ERR_RUNTIME, "expected out of shape [2, 4]"));
    double v;
    CHECK(th_get_double(out, 3, &v) == TH_OK && v == 9);
    th_tensor *row = th_empty(2, (int64_t[]){1, 4}, TH_FLOAT32);
    th_tensor *bc = th_expand(row, 2, (int64_t[]){2, 4});
    CHECK(th_gemm_out(bc, a, b, 0, 1) == TH_ERR_RUNTIME);
    CHECK(error_is(TH_ERR_RUNTIME, "more than one element"));
    th_tensor *bd = th_to_dtype(b, TH_FLOAT64);
    th_tensor *o2 = th_empty(2, (int64_t[]){2, 4}, TH_FLOAT32);
    CHECK(th_gemm_out(o2, a, bd, 0, 1) == TH_ERR_RUNTIME);
    CHECK(error_is(TH_ERR_RUNTIME, "float != double"));
    th_tensor *objs[] = {a, b, out, row, bc, bd, o2};
    for (size_t i = 0; i < sizeof objs / sizeof *objs; i++)
        th_tensor_release(objs[i]);
}

static void test_mm_errors(void) {
    th_tensor *a = ints(2, (int64_t[]){2, 3}, 1, TH_FLOAT32);
    th_tensor *b = ints(2, (int64_t[]){4, 5}, 2, TH_FLOAT32);
    th_tensor *v = ints(1, (int64_t[]){3}, 3, TH_FLOAT32);
    th_tensor *bd = ints(2, (int64_t[]){3, 5}, 2, TH_FLOAT64);
    CHECK(th_mm(a, b) == NULL);
    CHECK(error_is(TH_ERR_RUNTIME,
                   "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"));
    CHECK(th_mm(a, bd) == NULL);
    CHECK(error_is(TH_ERR_RUNTIME,
                   "expected m1 and m2 to have the same dtype, but got: "
                   "float != double"));
    CHECK(th_mm(v, a) == NULL);
    CHECK(error_is(TH_ERR_RUNTIME, "mat1 must be a matrix, got 1-D tensor"));
    CHECK(th_mm(a, v) == NULL);
    CHECK(error_is(TH_ERR_RUNTIME, "mat2 must be a matrix, got 1-D tensor"));
    /* addmm: input that does not broadcast, input of another dtype */
    th_tensor *b35 = ints(2, (int64_t[]){3, 5}, 2, TH_FLOAT32);
    th_tensor *in = ints(1, (int64_t[]){3}, 4, TH_FLOAT32);
    CHECK(th_addmm(in, a, b35, 1, 1) == NULL);
    CHECK(error_is(TH_ERR_RUNTIME, "expanded size"));
    th_tensor *ind = ints(1, (int64_t[]){5}, 4, TH_FLOAT64);
    CHECK(th_addmm(ind, a, b35, 1, 1) == NULL);
    CHECK(error_is(TH_ERR_RUNTIME,
                   "self and mat2 must have the same dtype, but got Double "
                   "and Float"));
    th_tensor *objs[] = {a, b, v, bd, b35, in, ind};
    for (size_t i = 0; i < sizeof objs / sizeof *objs; i++)
        th_tensor_release(objs[i]);
}

/* ---- mv / addmv / dot / outer -------------------------------------- */
static void test_mv(void) {
    /* [[1,2,3],[4,5,6]] @ [1,-1,2] = [5, 11] */
    const double av[] = {1, 2, 3, 4, 5, 6}, xv[] = {1, -1, 2};
    for (int dt = 0; dt < TH_BOOL; dt++) { /* the numeric real dtypes */
        th_tensor *a = from_f64(2, (int64_t[]){2, 3}, av, dt);
        th_tensor *x = from_f64(1, (int64_t[]){3}, xv, dt);
        th_tensor *r = th_mv(a, x);
        /* (uint8 wraps -1 to 255, and the sums wrap back to 5, 11) */
        CHECK(has_shape(r, 1, (int64_t[]){2}) && r->dtype == dt &&
              values_are(r, (double[]){5, 11}, 0));
        th_tensor_release(r);
        /* addmv with a 0-d input: 2 * 1 + 3 * [5, 11] */
        th_tensor *s = th_scalar_double(1, dt);
        r = th_addmv(s, a, x, 2, 3);
        CHECK(r && values_are(r, (double[]){17, 35}, 0));
        th_tensor_release(r);
        th_tensor_release(s);
        th_tensor_release(a);
        th_tensor_release(x);
    }
    for (int f = 0; f < 2; f++) {
        int dt = f ? TH_FLOAT64 : TH_FLOAT32;
        double tol = f ? 1e-12 : 1e-4;
        const int64_t m = 300, k = 200;
        th_tensor *a = floats(2, (int64_t[]){m, k}, 1, dt);
        th_tensor *at0 = floats(2, (int64_t[]){k, m}, 1, dt);
        th_tensor *at = th_transpose(at0, 0, 1); /* column-major */
        th_tensor *x2 = floats(1, (int64_t[]){2 * k}, 2, dt);
        th_tensor *xs = th_slice(x2, 0, 0, 2 * k, 2); /* stride 2 */
        th_tensor *xf = th_flip_view(xs, 1, (int[]){0}); /* stride -2 */
        th_tensor *one = th_narrow(x2, 0, 3, 1);
        th_tensor *xe = th_expand(one, 1, (int64_t[]){k}); /* stride 0 */
        const th_tensor *mats[] = {a, at};
        const th_tensor *vecs[] = {xs, xf, xe};
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++) {
                th_tensor *r = th_mv(mats[i], vecs[j]);
                th_tensor *col = th_unsqueeze(vecs[j], 1);
                th_tensor *r2 = r ? th_unsqueeze(r, 1) : NULL;
                CHECK(r2 && mm_err(r2, mats[i], col, 0, NULL, 1) < tol);
                th_tensor_release(r2);
                th_tensor_release(col);
                th_tensor_release(r);
            }
        /* addmv: beta == 0 ignores NaN in input */
        th_tensor *in = th_empty(1, (int64_t[]){m}, dt);
        th_fill_double(in, NAN);
        th_tensor *r = th_addmv(in, at, xs, 0, 1);
        th_tensor *col = th_unsqueeze(xs, 1), *r2 = r ? th_unsqueeze(r, 1) : 0;
        CHECK(r2 && mm_err(r2, at, col, 0, NULL, 1) < tol);
        th_tensor_release(r2);
        th_tensor_release(col);
        th_tensor_release(r);
        th_tensor_release(in);
        th_tensor *objs[] = {a, at0, at, x2, xs, xf, one, xe};
        for (size_t i = 0; i < sizeof objs / sizeof *objs; i++)
            th_tensor_release(objs[i]);
    }
    /* errors */
    th_tensor *a = ints(2, (int64_t[]){2, 3}, 1, TH_FLOAT32);
    th_tensor *x4 = ints(1, (int64_t[]){4}, 2, TH_FLOAT32);
    th_tensor *x3 = ints(1, (int64_t[]){3}, 2, TH_FLOAT32);
    th_tensor *x3d = ints(1, (int64_t[]){3}, 2, TH_FLOAT64);
    CHECK(th_mv(a, x4) == NULL);
    CHECK(error_is(TH_ERR_RUNTIME,
                   "size mismatch, got input (2), mat (2x3), vec (4)"));
    CHECK(th_mv(x3, x3) == NULL);
    CHECK(error_is(TH_ERR_RUNTIME,
                   "vector + matrix @ vector expected, got 1, 1, 1"));
    CHECK(th_mv(a, x3d) == NULL);
    CHECK(error_is(TH_ERR_RUNTIME, "float != double"));
    th_tensor *in3 = ints(1, (int64_t[]){3}, 2, TH_FLOAT32);
    CHECK(th_addmv(in3, a, x3, 1, 1) == NULL);
    CHECK(error_is(TH_ERR_RUNTIME,
                   "size mismatch, got input (3), mat (2x3), vec (3)"));
    CHECK(th_addmv(a, a, x3, 1, 1) == NULL);
    CHECK(error_is(TH_ERR_RUNTIME,
                   "vector + matrix @ vector expected, got 2, 2, 1"));
    th_tensor *objs[] = {a, x4, x3, x3d, in3};
    for (size_t i = 0; i < sizeof objs / sizeof *objs; i++)
        th_tensor_release(objs[i]);
}

static void test_dot(void) {
    const double xv[] = {1, 2, 3}, yv[] = {4, -5, 6};
    for (int dt = 0; dt < TH_BOOL; dt++) { /* the numeric real dtypes */
        th_tensor *x = from_f64(1, (int64_t[]){3}, xv, dt);
        th_tensor *y = from_f64(1, (int64_t[]){3}, yv, dt);
        th_tensor *r = th_dot(x, y);
        double v;
        CHECK(r && r->ndim == 0 && r->dtype == dt);
        CHECK(r && th_get_double(r, 0, &v) == TH_OK && v == 12);
        th_tensor_release(r);
        th_tensor_release(x);
        th_tensor_release(y);
    }
    th_tensor *b1 = from_f64(1, (int64_t[]){3}, (double[]){0, 1, 1}, TH_BOOL);
    th_tensor *b2 = from_f64(1, (int64_t[]){3}, (double[]){1, 0, 1}, TH_BOOL);
    th_tensor *b3 = from_f64(1, (int64_t[]){3}, (double[]){1, 0, 0}, TH_BOOL);
    th_tensor *r = th_dot(b1, b2);
    double v;
    CHECK(r && r->dtype == TH_BOOL && th_get_double(r, 0, &v) == TH_OK &&
          v == 1);
    th_tensor_release(r);
    r = th_dot(b1, b3);
    CHECK(r && th_get_double(r, 0, &v) == TH_OK && v == 0);
    th_tensor_release(r);
    th_tensor_release(b1);
    th_tensor_release(b2);
    th_tensor_release(b3);
    /* long strided / reversed vectors */
    for (int f = 0; f < 2; f++) {
        int dt = f ? TH_FLOAT64 : TH_FLOAT32;
        th_tensor *x = floats(1, (int64_t[]){2000}, 1, dt);
        th_tensor *xs = th_slice(x, 0, 1, 2000, 2);
        th_tensor *xf = th_flip_view(xs, 1, (int[]){0});
        r = th_dot(xs, xf);
        double *a = to_array(xs), *b = to_array(xf), want = 0;
        for (int i = 0; i < 1000; i++) want += a[i] * b[i];
        CHECK(r && th_get_double(r, 0, &v) == TH_OK &&
              fabs(v - want) < (f ? 1e-12 : 1e-3));
        free(a);
        free(b);
        th_tensor_release(r);
        th_tensor_release(xf);
        th_tensor_release(xs);
        th_tensor_release(x);
    }
    /* empty: 0 */
    th_tensor *e = th_empty(1, (int64_t[]){0}, TH_FLOAT32);
    r = th_dot(e, e);
    CHECK(r && th_get_double(r, 0, &v) == TH_OK && v == 0);
    th_tensor_release(r);
    /* errors */
    th_tensor *m = ints(2, (int64_t[]){2, 2}, 1, TH_FLOAT32);
    th_tensor *x3 = ints(1, (int64_t[]){3}, 1, TH_FLOAT32);
    th_tensor *x4 = ints(1, (int64_t[]){4}, 1, TH_FLOAT32);
    th_tensor *x3d = ints(1, (int64_t[]){3}, 1, TH_FLOAT64);
    CHECK(th_dot(m, x3) == NULL);
    CHECK(error_is(TH_ERR_RUNTIME,
                   "1D tensors expected, but got 2D and 1D tensors"));
    CHECK(th_dot(x3, x4) == NULL);
    CHECK(error_is(TH_ERR_RUNTIME,
                   "inconsistent tensor size, expected tensor [3] and src "
                   "[4] to have the same number of elements, but got 3 and "
                   "4 elements respectively"));
    CHECK(th_dot(x3, x3d) == NULL);
    CHECK(error_is(TH_ERR_RUNTIME, "found Float and Double"));
    th_tensor *objs[] = {e, m, x3, x4, x3d};
    for (size_t i = 0; i < sizeof objs / sizeof *objs; i++)
        th_tensor_release(objs[i]);
}

static void test_outer(void) {
    th_tensor *a = from_f64(1, (int64_t[]){2}, (double[]){1, 2}, TH_INT32);
    th_tensor *b = from_f64(1, (int64_t[]){3}, (double[]){0.5, 1, -1},
                            TH_FLOAT32);
    th_tensor *r = th_outer(a, b);
    CHECK(has_shape(r, 2, (int64_t[]){2, 3}) && r->dtype == TH_FLOAT32);
    CHECK(r && values_are(r, (double[]){0.5, 1, -1, 1, 2, -2}, 0));
    th_tensor_release(r);
    r = th_outer(a, a);
    CHECK(r && r->dtype == TH_INT32 &&
          values_are(r, (double[]){1, 2, 2, 4}, 0));
    th_tensor_release(r);
    /* larger, strided, half */
    th_tensor *x = floats(1, (int64_t[]){200}, 1, TH_FLOAT32);
    th_tensor *xs = th_slice(x, 0, 0, 200, 3);
    th_tensor *xh = th_to_dtype(x, TH_BFLOAT16);
    r = th_outer(xs, xh);
    th_tensor *c1 = th_unsqueeze(xs, 1), *c2 = th_unsqueeze(xh, 0);
    th_tensor *c2f = th_to_dtype(c2, TH_FLOAT32);
    CHECK(r && r->dtype == TH_FLOAT32 && mm_err(r, c1, c2f, 0, NULL, 1) < 1e-6);
    th_tensor_release(r);
    th_tensor *m = ints(2, (int64_t[]){2, 2}, 1, TH_FLOAT32);
    CHECK(th_outer(m, a) == NULL);
    CHECK(error_is(TH_ERR_RUNTIME, "outer: Expected 1-D argument self, but "
                                   "got 2-D"));
    CHECK(th_outer(a, m) == NULL);
    CHECK(error_is(TH_ERR_RUNTIME, "Expected 1-D argument vec2"));
    th_tensor *objs[] = {a, b, x, xs, xh, c1, c2, c2f, m};
    for (size_t i = 0; i < sizeof objs / sizeof *objs; i++)
        th_tensor_release(objs[i]);
}

/* ---- bmm / baddbmm / addbmm ---------------------------------------- */
/* max |r[t] - beta * c0[t] - alpha * a[t] @ b[t]| over the batch */
static double bmm_err(const th_tensor *r, const th_tensor *a,
                      const th_tensor *b, double beta, const th_tensor *c0,
                      double alpha) {
    double err = 0;
    for (int64_t t = 0; t < a->sizes[0]; t++) {
        th_tensor *rt = th_select(r, 0, t), *at = th_select(a, 0, t);
        th_tensor *bt = th_select(b, 0, t);
        th_tensor *ct = c0 ? th_select(c0, 0, t) : NULL;
        double *cv = ct ? to_array(ct) : NULL;
        err = fmax(err, mm_err(rt, at, bt, beta, cv, alpha));
        free(cv);
        th_tensor_release(rt);
        th_tensor_release(at);
        th_tensor_release(bt);
        th_tensor_release(ct);
    }
    return err;
}

static void test_bmm(void) {
    for (int dt = 0; dt < TH_NUM_REAL_DTYPES; dt++) {
        th_tensor *a = ints(3, (int64_t[]){3, 4, 5}, 1, dt);
        th_tensor *b = ints(3, (int64_t[]){3, 5, 2}, 2, dt);
        th_tensor *r = th_bmm(a, b);
        CHECK(has_shape(r, 3, (int64_t[]){3, 4, 2}) && r->dtype == dt);
        if (dt != TH_BOOL && dt != TH_UINT8 && dt != TH_INT8)
            CHECK(r && bmm_err(r, a, b, 0, NULL, 1) == 0);
        th_tensor_release(r);
        th_tensor_release(a);
        th_tensor_release(b);
    }
    for (int f = 0; f < 2; f++) {
        int dt = f ? TH_FLOAT64 : TH_FLOAT32;
        double tol = f ? 1e-12 : 1e-4;
        /* many small products (batch-parallel) and a few large ones */
        const int64_t shapes[][4] = {{64, 6, 7, 5}, {3, 70, 40, 90},
                                     {5, 1, 30, 20}, {4, 30, 1, 20}};
        for (int s = 0; s < 4; s++) {
            int64_t B = shapes[s][0], m = shapes[s][1], n = shapes[s][2];
            int64_t k = shapes[s][3];
            th_tensor *a = floats(3, (int64_t[]){B, m, k}, 1, dt);
            th_tensor *b0 = floats(3, (int64_t[]){B, n, k}, 2, dt);
            th_tensor *b = th_transpose(b0, 1, 2);
            th_tensor *r = th_bmm(a, b);
            CHECK(r && bmm_err(r, a, b, 0, NULL, 1) < tol);
            th_tensor_release(r);
            /* baddbmm with an input broadcast over the batch */
            th_tensor *in = floats(2, (int64_t[]){m, n}, 3, dt);
            th_tensor *ine = th_expand(in, 3, (int64_t[]){B, m, n});
            r = th_baddbmm(in, a, b, 0.5, -2);
            CHECK(r && bmm_err(r, a, b, 0.5, ine, -2) < tol);
            th_tensor_release(r);
            th_tensor_release(ine);
            th_tensor_release(in);
            th_tensor_release(a);
            th_tensor_release(b);
            th_tensor_release(b0);
        }
    }
    /* addbmm: beta * input + alpha * sum_t a[t] @ b[t] */
    const double av[] = {1, 2, 3, 4}, bv[] = {1, 0, 0, 1, 2, 0, 0, 2};
    for (int dt = 0; dt < TH_BOOL; dt++) { /* the numeric real dtypes */
        th_tensor *a = from_f64(3, (int64_t[]){2, 1, 2}, av, dt);
        th_tensor *b = from_f64(3, (int64_t[]){2, 2, 2}, bv, dt);
        th_tensor *in = from_f64(1, (int64_t[]){2}, (double[]){1, 2}, dt);
        /* [1,2]@I + [3,4]@2I = [7, 10]; 3*[1,2] + 2*[7,10] */
        th_tensor *r = th_addbmm(in, a, b, 3, 2);
        CHECK(has_shape(r, 2, (int64_t[]){1, 2}) &&
              values_are(r, (double[]){17, 26}, 0));
        th_tensor_release(r);
        th_tensor_release(in);
        th_tensor_release(a);
        th_tensor_release(b);
    }
    /* empty batch: beta * input only; NaN input ignored when beta == 0 */
    th_tensor *a0 = th_empty(3, (int64_t[]){0, 2, 3}, TH_FLOAT32);
    th_tensor *b0 = th_empty(3, (int64_t[]){0, 3, 4}, TH_FLOAT32);
    th_tensor *in = th_empty(2, (int64_t[]){2, 4}, TH_FLOAT32);
    th_fill_double(in, 5);
    th_tensor *r = th_addbmm(in, a0, b0, 2, 1);
    double ten[8] = {10, 10, 10, 10, 10, 10, 10, 10}, zero[8] = {0};
    CHECK(has_shape(r, 2, (int64_t[]){2, 4}) && values_are(r, ten, 0));
    th_tensor_release(r);
    th_fill_double(in, NAN);
    r = th_addbmm(in, a0, b0, 0, 1);
    CHECK(r && values_are(r, zero, 0));
    th_tensor_release(r);
    r = th_bmm(a0, b0);
    CHECK(has_shape(r, 3, (int64_t[]){0, 2, 4}));
    th_tensor_release(r);
    /* errors */
    th_tensor *a = ints(3, (int64_t[]){2, 3, 4}, 1, TH_FLOAT32);
    th_tensor *b = ints(3, (int64_t[]){2, 5, 6}, 1, TH_FLOAT32);
    th_tensor *b3 = ints(3, (int64_t[]){3, 4, 6}, 1, TH_FLOAT32);
    th_tensor *bd = ints(3, (int64_t[]){2, 4, 6}, 1, TH_FLOAT64);
    th_tensor *m2 = ints(2, (int64_t[]){4, 6}, 1, TH_FLOAT32);
    CHECK(th_bmm(a, b) == NULL);
    CHECK(error_is(TH_ERR_RUNTIME,
                   "Expected size for first two dimensions of batch2 tensor "
                   "to be: [2, 4] but got: [2, 5]."));
    CHECK(th_bmm(m2, a) == NULL);
    CHECK(error_is(TH_ERR_RUNTIME, "batch1 must be a 3D tensor"));
    CHECK(th_bmm(a, m2) == NULL);
    CHECK(error_is(TH_ERR_RUNTIME, "batch2 must be a 3D tensor"));
    CHECK(th_bmm(a, bd) == NULL);
    CHECK(error_is(TH_ERR_RUNTIME, "expected scalar type Float but found "
                                   "Double"));
    th_tensor *in36 = ints(2, (int64_t[]){3, 6}, 1, TH_FLOAT32);
    CHECK(th_addbmm(in36, a, b3, 1, 1) == NULL);
    CHECK(error_is(TH_ERR_RUNTIME, "batch1 and batch2 must have same number "
                                   "of batches, got 2 and 3"));
    CHECK(th_addbmm(in36, a, b, 1, 1) == NULL);
    CHECK(error_is(TH_ERR_RUNTIME,
                   "Incompatible matrix sizes for bmm (3x4 and 5x6)"));
    th_tensor *in24 = ints(2, (int64_t[]){2, 4}, 1, TH_FLOAT32);
    th_tensor *b46 = ints(3, (int64_t[]){2, 4, 6}, 1, TH_FLOAT32);
    CHECK(th_baddbmm(in24, a, b46, 1, 1) == NULL);
    CHECK(error_is(TH_ERR_RUNTIME, "expanded size"));
    th_tensor *objs[] = {a0, b0, in, a, b, b3, bd, m2, in36, in24, b46};
    for (size_t i = 0; i < sizeof objs / sizeof *objs; i++)
        th_tensor_release(objs[i]);
}

/* ---- matmul -------------------------------------------------------- */
static th_tensor *mk_seq(int ndim, const int64_t *sizes, int dt) {
    return ints(ndim, sizes, ndim, dt);
}

/* checks matmul(a, b) against mm of the matching 2-d slices */
static void check_matmul(int da, const int64_t *sa, int db, const int64_t *sb,
                         int dr, const int64_t *want_shape) {
    th_tensor *a = mk_seq(da, sa, TH_FLOAT64), *b = mk_seq(db, sb, TH_FLOAT64);
    th_tensor *r = th_matmul(a, b);
    CHECK(has_shape(r, dr, want_shape));
    if (!r) goto done;
    /* reference: promote to >= 2-d, broadcast, compare each batch */
    {
        th_tensor *a2 = da == 1 ? th_unsqueeze(a, 0) : th_alias(a);
        th_tensor *b2 = db == 1 ? th_unsqueeze(b, 1) : th_alias(b);
        int64_t batch[TH_MAX_DIMS];
        int nb = th_broadcast_shapes(a2->ndim - 2, a2->sizes, b2->ndim - 2,
                                     b2->sizes, batch);
        int64_t ea[TH_MAX_DIMS], eb[TH_MAX_DIMS], er[TH_MAX_DIMS];
        memcpy(ea, batch, sizeof(int64_t) * nb);
        memcpy(eb, batch, sizeof(int64_t) * nb);
        memcpy(er, batch, sizeof(int64_t) * nb);
        ea[nb] = a2->sizes[a2->ndim - 2];
        ea[nb + 1] = a2->sizes[a2->ndim - 1];
        eb[nb] = b2->sizes[b2->ndim - 2];
        eb[nb + 1] = b2->sizes[b2->ndim - 1];
        er[nb] = ea[nb];
        er[nb + 1] = eb[nb + 1];
        int64_t nbatch = 1;
        for (int i = 0; i < nb; i++) nbatch *= batch[i];
        th_tensor *ax = th_expand(a2, nb + 2, ea);
        th_tensor *bx = th_expand(b2, nb + 2, eb);
        int64_t s3a[3] = {nbatch, ea[nb], ea[nb + 1]};
        int64_t s3b[3] = {nbatch, eb[nb], eb[nb + 1]};
        int64_t s3r[3] = {nbatch, er[nb], er[nb + 1]};
        th_tensor *a3 = th_reshape(ax, 3, s3a);
        th_tensor *b3 = th_reshape(bx, 3, s3b);
        th_tensor *r3 = th_reshape(r, 3, s3r);
        CHECK(r3 && bmm_err(r3, a3, b3, 0, NULL, 1) == 0);
        th_tensor *objs[] = {a2, b2, ax, bx, a3, b3, r3};
        for (size_t i = 0; i < sizeof objs / sizeof *objs; i++)
            th_tensor_release(objs[i]);
    }
done:
    th_tensor_release(r);
    th_tensor_release(a);
    th_tensor_release(b);
}

static void test_matmul(void) {
    check_matmul(1, (int64_t[]){3}, 1, (int64_t[]){3}, 0, NULL);
    check_matmul(2, (int64_t[]){2, 3}, 1, (int64_t[]){3}, 1, (int64_t[]){2});
    check_matmul(1, (int64_t[]){3}, 2, (int64_t[]){3, 4}, 1, (int64_t[]){4});
    check_matmul(2, (int64_t[]){2, 3}, 2, (int64_t[]){3, 4}, 2,
                 (int64_t[]){2, 4});
    check_matmul(3, (int64_t[]){5, 2, 3}, 2, (int64_t[]){3, 4}, 3,
                 (int64_t[]){5, 2, 4});
    check_matmul(4, (int64_t[]){2, 5, 2, 3}, 1, (int64_t[]){3}, 3,
                 (int64_t[]){2, 5, 2});
    check_matmul(1, (int64_t[]){3}, 3, (int64_t[]){5, 3, 4}, 2,
                 (int64_t[]){5, 4});
    check_matmul(2, (int64_t[]){2, 3}, 3, (int64_t[]){5, 3, 4}, 3,
                 (int64_t[]){5, 2, 4});
    check_matmul(4, (int64_t[]){2, 1, 2, 3}, 3, (int64_t[]){4, 3, 5}, 4,
                 (int64_t[]){2, 4, 2, 5});
    check_matmul(3, (int64_t[]){1, 2, 3}, 4, (int64_t[]){3, 1, 3, 2}, 4,
                 (int64_t[]){3, 1, 2, 2});
    check_matmul(3, (int64_t[]){4, 2, 3}, 1, (int64_t[]){3}, 2,
                 (int64_t[]){4, 2});
    /* empty batch and empty inner dim */
    check_matmul(3, (int64_t[]){0, 2, 3}, 3, (int64_t[]){1, 3, 4}, 3,
                 (int64_t[]){0, 2, 4});
    check_matmul(3, (int64_t[]){2, 2, 0}, 3, (int64_t[]){2, 0, 4}, 3,
                 (int64_t[]){2, 2, 4});
    /* a transposed 3-d operand that cannot be folded without a copy */
    th_tensor *a0 = mk_seq(3, (int64_t[]){3, 4, 2}, TH_FLOAT32);
    th_tensor *a = th_transpose(a0, 1, 2); /* (3, 2, 4) */
    th_tensor *b = mk_seq(2, (int64_t[]){4, 5}, TH_FLOAT32);
    th_tensor *r = th_matmul(a, b);
    th_tensor *bb = th_expand(b, 3, (int64_t[]){3, 4, 5});
    CHECK(has_shape(r, 3, (int64_t[]){3, 2, 5}) &&
          bmm_err(r, a, bb, 0, NULL, 1) == 0);
    th_tensor_release(r);
    th_tensor_release(bb);
    /* half precision goes through float32 */
    th_tensor *ah = th_to_dtype(a, TH_FLOAT16);
    th_tensor *bh = th_to_dtype(b, TH_FLOAT16);
    r = th_matmul(ah, bh);
    th_tensor *rf = th_matmul(a, b);
    CHECK(r && r->dtype == TH_FLOAT16 && rf);
    if (r && rf) {
        double *x = to_array(r), *y = to_array(rf);
        int same = 1;
        for (int i = 0; i < 30; i++) same &= x[i] == y[i]; /* small ints */
        CHECK(same);
        free(x);
        free(y);
    }
    th_tensor_release(rf);
    th_tensor_release(r);
    th_tensor_release(ah);
    th_tensor_release(bh);
    /* errors */
    th_tensor *s = th_scalar_double(1, TH_FLOAT32);
    CHECK(th_matmul(s, b) == NULL);
    CHECK(error_is(TH_ERR_RUNTIME, "both arguments to matmul need to be at "
                                   "least 1D, but they are 0D and 2D"));
    th_tensor *c = mk_seq(3, (int64_t[]){2, 5, 4}, TH_FLOAT32);
    CHECK(th_matmul(a, c) == NULL); /* batch 3 vs 2 */
    CHECK(error_is(TH_ERR_RUNTIME, "must match the size of tensor b"));
    th_tensor *d = mk_seq(3, (int64_t[]){3, 5, 4}, TH_FLOAT32);
    CHECK(th_matmul(a, d) == NULL);
    CHECK(error_is(TH_ERR_RUNTIME, "Expected size for first two dimensions "
                                   "of batch2 tensor to be: [3, 4] but got: "
                                   "[3, 5]."));
    th_tensor *e = mk_seq(2, (int64_t[]){5, 5}, TH_FLOAT32);
    CHECK(th_matmul(a, e) == NULL);
    CHECK(error_is(TH_ERR_RUNTIME,
                   "mat1 and mat2 shapes cannot be multiplied (6x4 and 5x5)"));
    th_tensor *objs[] = {a0, a, b, s, c, d, e};
    for (size_t i = 0; i < sizeof objs / sizeof *objs; i++)
        th_tensor_release(objs[i]);
}

/* ---- empty shapes -------------------------------------------------- */
static void test_empty(void) {
    for (int dt = 0; dt < TH_NUM_REAL_DTYPES; dt++) {
        th_tensor *a = th_empty(2, (int64_t[]){0, 3}, dt);
        th_tensor *b = th_empty(2, (int64_t[]){3, 4}, dt);
        th_tensor *r = th_mm(a, b);
        CHECK(has_shape(r, 2, (int64_t[]){0, 4}));
        th_tensor_release(r);
        /* k == 0: zeros */
        th_tensor *a0 = th_empty(2, (int64_t[]){2, 0}, dt);
        th_tensor *b0 = th_empty(2, (int64_t[]){0, 3}, dt);
        r = th_mm(a0, b0);
        double zero[6] = {0};
        CHECK(has_shape(r, 2, (int64_t[]){2, 3}) && values_are(r, zero, 0));
        th_tensor_release(r);
        /* k == 0 with addmm: beta * input */
        th_tensor *in = th_scalar_double(2, dt);
        r = th_addmm(in, a0, b0, 3, 1);
        double six[6] = {6, 6, 6, 6, 6, 6};
        if (dt == TH_BOOL) for (int i = 0; i < 6; i++) six[i] = 1;
        CHECK(r && values_are(r, six, 0));
        th_tensor_release(r);
        th_tensor *v0 = th_empty(1, (int64_t[]){0}, dt);
        r = th_mv(a0, v0);
        CHECK(has_shape(r, 1, (int64_t[]){2}) && values_are(r, zero, 0));
        th_tensor_release(r);
        r = th_outer(v0, v0);
        CHECK(has_shape(r, 2, (int64_t[]){0, 0}));
        th_tensor_release(r);
        th_tensor *objs[] = {a, b, a0, b0, in, v0};
        for (size_t i = 0; i < sizeof objs / sizeof *objs; i++)
            th_tensor_release(objs[i]);
    }
}

/* The same products on one and two threads agree. */
static void test_threads(void) {
    int saved = th_get_num_threads();
    th_tensor *a = floats(3, (int64_t[]){40, 9, 11}, 1, TH_FLOAT64);
    th_tensor *b = floats(3, (int64_t[]){40, 11, 8}, 2, TH_FLOAT64);
    th_tensor *x = ints(2, (int64_t[]){80, 60}, 3, TH_INT32);
    th_tensor *y = ints(2, (int64_t[]){60, 70}, 4, TH_INT32);
    th_tensor *p = floats(2, (int64_t[]){150, 120}, 5, TH_FLOAT32);
    th_tensor *q = floats(2, (int64_t[]){120, 110}, 6, TH_FLOAT32);
    th_tensor *r1[3], *r2[3];
    th_set_num_threads(1);
    r1[0] = th_bmm(a, b);
    r1[1] = th_mm(x, y);
    r1[2] = th_mm(p, q);
    th_set_num_threads(2);
    r2[0] = th_bmm(a, b);
    r2[1] = th_mm(x, y);
    r2[2] = th_mm(p, q);
    th_set_num_threads(saved);
    for (int i = 0; i < 3; i++) {
        CHECK(r1[i] && r2[i]);
        if (!r1[i] || !r2[i]) continue;
        double *u = to_array(r1[i]), *v = to_array(r2[i]), err = 0;
        for (int64_t j = 0; j < th_numel(r1[i]); j++)
            err = fmax(err, fabs(u[j] - v[j]));
        CHECK(err < 1e-4);
        free(u);
        free(v);
        th_tensor_release(r1[i]);
        th_tensor_release(r2[i]);
    }
    th_tensor *objs[] = {a, b, x, y, p, q};
    for (size_t i = 0; i < sizeof objs / sizeof *objs; i++)
        th_tensor_release(objs[i]);
}

int main(void) {
    test_mm_values();
    test_mm_layouts();
    test_mm_errors();
    test_addmm();
    test_gemm_out();
    test_mv();
    test_dot();
    test_outer();
    test_bmm();
    test_matmul();
    test_empty();
    test_threads();
    return check_report("test_linalg");
}
