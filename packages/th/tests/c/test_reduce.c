/* Reductions through the public C API: th_reduce, th_var, th_norm,
 * th_minmax_dim, th_argminmax, th_cumsum, th_cumprod. */
#include <string.h>
#include "check.h"

/* A tensor of `dtype` holding vals (row-major), built in float64 and
 * converted. */
static th_tensor *mk(int ndim, const int64_t *sizes, int dtype,
                     const double *vals) {
    th_tensor *t = th_empty(ndim, sizes, TH_FLOAT64);
    if (!t) return NULL;
    int64_t n = th_numel(t);
    for (int64_t i = 0; i < n; i++) ((double *)th_data_ptr(t))[i] = vals[i];
    if (dtype == TH_FLOAT64) return t;
    th_tensor *r = th_to_dtype(t, dtype);
    th_tensor_release(t);
    return r;
}

static th_tensor *mk1(int64_t n, int dtype, const double *vals) {
    return mk(1, &n, dtype, vals);
}

static th_tensor *mk2(int64_t r, int64_t c, int dtype, const double *vals) {
    int64_t s[2] = {r, c};
    return mk(2, s, dtype, vals);
}

static double at(const th_tensor *t, int64_t i) {
    double v = NAN;
    if (th_get_double(t, i, &v) != TH_OK) return -12345.0;
    return v;
}

static int64_t iat(const th_tensor *t, int64_t i) {
    int64_t v = -12345;
    th_get_int64(t, i, &v);
    return v;
}

/* t has this dtype, shape and values (NaN matches NaN); releases t. */
static void expect(th_tensor *t, int dtype, int ndim, const int64_t *sizes,
                   const double *vals, double tol, int line) {
    int ok = t != NULL;
    if (ok) ok = t->dtype == dtype && t->ndim == ndim;
    for (int d = 0; ok && d < ndim; d++) ok = t->sizes[d] == sizes[d];
    int64_t n = ok ? th_numel(t) : 0;
    for (int64_t i = 0; ok && i < n; i++) {
        double v = at(t, i), w = vals[i];
        ok = (isnan(w) && isnan(v)) || v == w || fabs(v - w) <= tol;
        if (!ok)
            fprintf(stderr, "line %d: element %lld is %.17g, expected %.17g\n",
                    line, (long long)i, v, w);
    }
    check_count++;
    if (!ok) {
        check_failures++;
        fprintf(stderr, "line %d: unexpected result (dtype %d ndim %d; "
                "last error: %s)\n", line, t ? t->dtype : -1,
                t ? t->ndim : -1, th_last_error());
    }
    th_tensor_release(t);
}
#define EXPECT(t, dtype, ndim, sizes, vals, tol) \
    expect((t), (dtype), (ndim), (sizes), (vals), (tol), __LINE__)
#define SC(v) ((const double[]){v})

/* A failed call: NULL (or status != 0), this status, message contains s. */
#define EXPECT_ERR(failed, status, s)                                        \
    do {                                                                     \
        CHECK(failed);                                                       \
        CHECK(th_last_status() == (status));                                 \
        CHECK(strstr(th_last_error(), (s)) != NULL);                         \
    } while (0)

static const int64_t S0[1] = {0};
static const double M23[6] = {1, 2, 3, 4, 5, 6};

static void test_sum(void) {
    th_tensor *a = mk2(2, 3, TH_FLOAT32, M23);
    int d0 = 0, d1 = 1, dm1 = -1, both[2] = {1, 0};
    EXPECT(th_reduce(TH_RED_SUM, a, 0, NULL, 0, -1), TH_FLOAT32, 0, S0,
           SC(21), 0);
    EXPECT(th_reduce(TH_RED_SUM, a, 1, &d0, 0, -1), TH_FLOAT32, 1,
           ((int64_t[]){3}), ((double[]){5, 7, 9}), 0);
    EXPECT(th_reduce(TH_RED_SUM, a, 1, &d1, 0, -1), TH_FLOAT32, 1,
           ((int64_t[]){2}), ((double[]){6, 15}), 0);
    EXPECT(th_reduce(TH_RED_SUM, a, 1, &dm1, 1, -1), TH_FLOAT32, 2,
           ((int64_t[]){2, 1}), ((double[]){6, 15}), 0);
    EXPECT(th_reduce(TH_RED_SUM, a, 2, both, 1, -1), TH_FLOAT32, 2,
           ((int64_t[]){1, 1}), SC(21), 0);
    EXPECT(th_reduce(TH_RED_SUM, a, 0, NULL, 0, TH_FLOAT64), TH_FLOAT64, 0,
           S0, SC(21), 0);
    /* non-contiguous: transposed, flipped, broadcast */
    th_tensor *t = th_transpose(a, 0, 1);
    EXPECT(th_reduce(TH_RED_SUM, t, 1, &d0, 0, -1), TH_FLOAT32, 1,
           ((int64_t[]){2}), ((double[]){6, 15}), 0);
    EXPECT(th_reduce(TH_RED_SUM, t, 1, &d1, 0, -1), TH_FLOAT32, 1,
           ((int64_t[]){3}), ((double[]){5, 7, 9}), 0);
    th_tensor *f = th_flip_view(a, 1, &d1);
    EXPECT(th_reduce(TH_RED_AMAX, f, 1, &d0, 0, -1), TH_FLOAT32, 1,
           ((int64_t[]){3}), ((double[]){6, 5, 4}), 0);
    th_tensor *row = th_select(a, 0, 1);
    th_tensor *e = th_expand(row, 2, (int64_t[]){4, 3});
    EXPECT(th_reduce(TH_RED_SUM, e, 1, &d0, 0, -1), TH_FLOAT32, 1,
           ((int64_t[]){3}), ((double[]){16, 20, 24}), 0);
    th_tensor_release(e);
    th_tensor_release(row);
    th_tensor_release(f);
    th_tensor_release(t);
    /* input left untouched */
    CHECK(at(a, 0) == 1 && at(a, 5) == 6);
    th_tensor_release(a);

    /* integers and bool give int64; int8 does not overflow */
    th_tensor *i = mk2(2, 3, TH_INT32, M23);
    EXPECT(th_reduce(TH_RED_SUM, i, 0, NULL, 0, -1), TH_INT64, 0, S0, SC(21),
           0);
    EXPECT(th_reduce(TH_RED_PROD, i, 0, NULL, 0, -1), TH_INT64, 0, S0,
           SC(720), 0);
    EXPECT(th_reduce(TH_RED_SUM, i, 1, &d0, 0, TH_INT16), TH_INT16, 1,
           ((int64_t[]){3}), ((double[]){5, 7, 9}), 0);
    th_tensor_release(i);
    th_tensor *i8 = mk1(3, TH_INT8, (double[]){100, 100, 100});
    EXPECT(th_reduce(TH_RED_SUM, i8, 0, NULL, 0, -1), TH_INT64, 0, S0,
           SC(300), 0);
    th_tensor_release(i8);
    th_tensor *b = mk1(4, TH_BOOL, (double[]){1, 0, 1, 1});
    EXPECT(th_reduce(TH_RED_SUM, b, 0, NULL, 0, -1), TH_INT64, 0, S0, SC(3),
           0);
    EXPECT(th_reduce(TH_RED_PROD, b, 0, NULL, 0, -1), TH_INT64, 0, S0, SC(0),
           0);
    th_tensor_release(b);
    /* int64 sums wrap like PyTorch */
    th_tensor *big = th_empty(1, (int64_t[]){2}, TH_INT64);
    ((int64_t *)th_data_ptr(big))[0] = INT64_MAX;
    ((int64_t *)th_data_ptr(big))[1] = 1;
    th_tensor *w = th_reduce(TH_RED_SUM, big, 0, NULL, 0, -1);
    CHECK(w && iat(w, 0) == INT64_MIN);
    th_tensor_release(w);
    th_tensor_release(big);

    /* (2, 3, 4) arange over dims 0 and 2: no copy needed */
    th_tensor *r = th_arange(0, 24, 1, TH_FLOAT64);
    th_tensor *r3 = th_view(r, 3, (int64_t[]){2, 3, 4});
    int d02[2] = {0, 2};
    EXPECT(th_reduce(TH_RED_SUM, r3, 2, d02, 0, -1), TH_FLOAT64, 1,
           ((int64_t[]){3}), ((double[]){60, 92, 124}), 0);
    EXPECT(th_reduce(TH_RED_MEAN, r3, 2, d02, 1, -1), TH_FLOAT64, 3,
           ((int64_t[]){1, 3, 1}), ((double[]){7.5, 11.5, 15.5}), 0);
    th_tensor_release(r3);
    th_tensor_release(r);

    /* float16 / bfloat16 keep their dtype */
    th_tensor *h = mk1(3, TH_FLOAT16, (double[]){1, 2, 3.5});
    EXPECT(th_reduce(TH_RED_SUM, h, 0, NULL, 0, -1), TH_FLOAT16, 0, S0,
           SC(6.5), 0);
    th_tensor_release(h);
    th_tensor *bf = mk1(3, TH_BFLOAT16, (double[]){1, 2, 3.5});
    EXPECT(th_reduce(TH_RED_MEAN, bf, 0, NULL, 0, -1), TH_BFLOAT16, 0, S0,
           ((double[]){6.5 / 3}), 0.01);
    th_tensor_release(bf);
}

/* Large inputs take the threaded paths; values are exact in float32. */
static void test_large(void) {
    int saved = th_get_num_threads();
    for (int nt = 1; nt <= 4; nt += 3) {
        th_set_num_threads(nt);
        int64_t n = (1 << 20) + 3;
        th_tensor *ones = th_empty(1, &n, TH_FLOAT32);
        th_fill_double(ones, 1.0);
        EXPECT(th_reduce(TH_RED_SUM, ones, 0, NULL, 0, -1), TH_FLOAT32, 0,
               S0, ((double[]){(double)n}), 0);
        th_tensor_release(ones);

        int d0 = 0, d1 = 1, d02[2] = {0, 2};
        th_tensor *r = th_arange(0, 210000, 1, TH_FLOAT32);
        th_tensor *cols = th_view(r, 2, (int64_t[]){70000, 3});
        th_tensor *m = th_reduce(TH_RED_AMAX, cols, 1, &d0, 0, -1);
        EXPECT(m, TH_FLOAT32, 1, ((int64_t[]){3}),
               ((double[]){209997, 209998, 209999}), 0);
        th_tensor *mn = th_reduce(TH_RED_AMIN, cols, 1, &d0, 0, -1);
        EXPECT(mn, TH_FLOAT32, 1, ((int64_t[]){3}), ((double[]){0, 1, 2}), 0);
        th_tensor *rows = th_view(r, 2, (int64_t[]){3, 70000});
        th_tensor *c = th_reduce(TH_RED_COUNT_NONZERO, rows, 1, &d1, 0, -1);
        EXPECT(c, TH_INT64, 1, ((int64_t[]){3}),
               ((double[]){69999, 70000, 70000}), 0);
        th_tensor *ri = th_to_dtype(r, TH_INT64);
        th_tensor *cube = th_view(ri, 3, (int64_t[]){3, 70000, 1});
        th_tensor *b3 = th_view(ri, 3, (int64_t[]){2, 3, 35000});
        /* sum of k over the (a, k) with j fixed: 35000 * ... exact in int64 */
        th_tensor *s3 = th_reduce(TH_RED_SUM, b3, 2, d02, 0, -1);
        double e3[3];
        for (int j = 0; j < 3; j++) {
            double s = 0;
            for (int i = 0; i < 2; i++)
                s += 35000.0 * (i * 105000 + j * 35000) + 35000.0 * 34999 / 2;
            e3[j] = s;
        }
        EXPECT(s3, TH_INT64, 1, ((int64_t[]){3}), e3, 0);
        th_tensor *s2 = th_reduce(TH_RED_SUM, cube, 1, &d1, 0, -1);
        EXPECT(s2, TH_INT64, 2, ((int64_t[]){3, 1}),
               ((double[]){70000.0 * 69999 / 2,
                           70000.0 * 70000 + 70000.0 * 69999 / 2,
                           140000.0 * 70000 + 70000.0 * 69999 / 2}), 0);
        th_tensor_release(b3);
        th_tensor_release(cube);
        th_tensor_release(ri);
        th_tensor_release(rows);
        th_tensor_release(cols);

        /* argmax over a long row: first occurrence, then a NaN */
        float *p = th_data_ptr(r);
        p[150000] = 1e9f;
        p[170000] = 1e9f;
        th_tensor *am = th_argminmax(r, -100, 0, 1);
        CHECK(am && am->ndim == 0 && iat(am, 0) == 150000);
        th_tensor_release(am);
        p[190000] = NAN;
        p[200000] = NAN;
        am = th_argminmax(r, 0, 0, 1);
        CHECK(am && iat(am, 0) == 190000);
        th_tensor_release(am);
        th_tensor *mx = th_reduce(TH_RED_AMAX, r, 0, NULL, 0, -1);
        CHECK(mx && isnan(at(mx, 0)));
        th_tensor_release(mx);
        th_tensor_release(r);
    }
    th_set_num_threads(saved);
}

static void test_ops(void) {
    th_tensor *a = mk1(4, TH_FLOAT32, (double[]){1, 2, 3, 4});
    EXPECT(th_reduce(TH_RED_PROD, a, 0, NULL, 0, -1), TH_FLOAT32, 0, S0,
           SC(24), 0);
    EXPECT(th_reduce(TH_RED_MEAN, a, 0, NULL, 0, -1), TH_FLOAT32, 0, S0,
           SC(2.5), 0);
    th_tensor_release(a);

    /* empty reductions: identities, mean is nan */
    int64_t zero = 0;
    th_tensor *z = th_empty(1, &zero, TH_FLOAT32);
    EXPECT(th_reduce(TH_RED_SUM, z, 0, NULL, 0, -1), TH_FLOAT32, 0, S0,
           SC(0), 0);
    EXPECT(th_reduce(TH_RED_PROD, z, 0, NULL, 0, -1), TH_FLOAT32, 0, S0,
           SC(1), 0);
    EXPECT(th_reduce(TH_RED_MEAN, z, 0, NULL, 0, -1), TH_FLOAT32, 0, S0,
           SC(NAN), 0);
    EXPECT(th_reduce(TH_RED_ALL, z, 0, NULL, 0, -1), TH_BOOL, 0, S0, SC(1), 0);
    EXPECT(th_reduce(TH_RED_ANY, z, 0, NULL, 0, -1), TH_BOOL, 0, S0, SC(0), 0);
    EXPECT(th_reduce(TH_RED_COUNT_NONZERO, z, 0, NULL, 0, -1), TH_INT64, 0,
           S0, SC(0), 0);
    EXPECT(th_reduce(TH_RED_LOGSUMEXP, z, 0, NULL, 0, -1), TH_FLOAT32, 0, S0,
           SC(-INFINITY), 0);
    int d1 = 1;
    th_tensor *z2 = th_empty(2, (int64_t[]){2, 0}, TH_FLOAT32);
    EXPECT(th_reduce(TH_RED_SUM, z2, 1, &d1, 1, -1), TH_FLOAT32, 2,
           ((int64_t[]){2, 1}), ((double[]){0, 0}), 0);
    th_tensor_release(z2);
    th_tensor_release(z);

    /* NaN handling */
    th_tensor *n = mk1(4, TH_FLOAT64, (double[]){1, NAN, 0, 2});
    EXPECT(th_reduce(TH_RED_SUM, n, 0, NULL, 0, -1), TH_FLOAT64, 0, S0,
           SC(NAN), 0);
    EXPECT(th_reduce(TH_RED_NANSUM, n, 0, NULL, 0, -1), TH_FLOAT64, 0, S0,
           SC(3), 0);
    EXPECT(th_reduce(TH_RED_COUNT_NONZERO, n, 0, NULL, 0, -1), TH_INT64, 0,
           S0, SC(3), 0);
    EXPECT(th_reduce(TH_RED_ALL, n, 0, NULL, 0, -1), TH_BOOL, 0, S0, SC(0), 0);
    EXPECT(th_reduce(TH_RED_ANY, n, 0, NULL, 0, -1), TH_BOOL, 0, S0, SC(1), 0);
    EXPECT(th_reduce(TH_RED_AMAX, n, 0, NULL, 0, -1), TH_FLOAT64, 0, S0,
           SC(NAN), 0);
    EXPECT(th_reduce(TH_RED_AMIN, n, 0, NULL, 0, -1), TH_FLOAT64, 0, S0,
           SC(NAN), 0);
    th_tensor_release(n);

    /* all/any: bool result, but uint8 keeps uint8 (as PyTorch) */
    th_tensor *u = mk1(3, TH_UINT8, (double[]){1, 2, 0});
    EXPECT(th_reduce(TH_RED_ALL, u, 0, NULL, 0, -1), TH_UINT8, 0, S0, SC(0),
           0);
    EXPECT(th_reduce(TH_RED_ANY, u, 0, NULL, 0, -1), TH_UINT8, 0, S0, SC(1),
           0);
    th_tensor_release(u);
    th_tensor *i16 = mk2(2, 2, TH_INT16, (double[]){3, -1, 7, 2});
    int d0 = 0;
    EXPECT(th_reduce(TH_RED_ALL, i16, 1, &d0, 0, -1), TH_BOOL, 1,
           ((int64_t[]){2}), ((double[]){1, 1}), 0);
    EXPECT(th_reduce(TH_RED_AMAX, i16, 0, NULL, 0, -1), TH_INT16, 0, S0,
           SC(7), 0);
    EXPECT(th_reduce(TH_RED_AMIN, i16, 1, &d0, 0, -1), TH_INT16, 1,
           ((int64_t[]){2}), ((double[]){3, -1}), 0);
    th_tensor_release(i16);
    th_tensor *bb = mk1(3, TH_BOOL, (double[]){0, 1, 0});
    EXPECT(th_reduce(TH_RED_AMAX, bb, 0, NULL, 0, -1), TH_BOOL, 0, S0, SC(1),
           0);
    th_tensor_release(bb);

    /* mean: float16 result, integer input with an explicit dtype */
    th_tensor *im = mk1(4, TH_INT64, (double[]){1, 2, 3, 4});
    EXPECT(th_reduce(TH_RED_MEAN, im, 0, NULL, 0, TH_FLOAT64), TH_FLOAT64, 0,
           S0, SC(2.5), 0);
    EXPECT(th_reduce(TH_RED_MEAN, im, 0, NULL, 0, TH_FLOAT16), TH_FLOAT16, 0,
           S0, SC(2.5), 0);
    th_tensor_release(im);

    /* logsumexp */
    th_tensor *l = mk1(2, TH_FLOAT64, (double[]){0, log(3.0)});
    EXPECT(th_reduce(TH_RED_LOGSUMEXP, l, 0, NULL, 0, -1), TH_FLOAT64, 0, S0,
           SC(log(4.0)), 1e-15);
    th_tensor_release(l);
    th_tensor *li = mk1(2, TH_INT32, (double[]){1, 2});
    EXPECT(th_reduce(TH_RED_LOGSUMEXP, li, 0, NULL, 0, -1), TH_FLOAT32, 0, S0,
           SC(2.3132617), 1e-6);
    th_tensor_release(li);
    th_tensor *inf = mk2(3, 2, TH_FLOAT32,
                         (double[]){-INFINITY, -INFINITY, INFINITY, 1, NAN, 1});
    EXPECT(th_reduce(TH_RED_LOGSUMEXP, inf, 1, &d1, 0, -1), TH_FLOAT32, 1,
           ((int64_t[]){3}), ((double[]){-INFINITY, INFINITY, NAN}), 0);
    th_tensor_release(inf);
    th_tensor *big = mk1(2, TH_FLOAT32, (double[]){1000, 1000});
    EXPECT(th_reduce(TH_RED_LOGSUMEXP, big, 0, NULL, 0, -1), TH_FLOAT32, 0,
           S0, SC(1000 + log(2.0)), 1e-3);
    th_tensor_release(big);
}

static void test_var_norm(void) {
    th_tensor *a = mk1(4, TH_FLOAT64, (double[]){1, 2, 3, 4});
    EXPECT(th_var(a, 0, NULL, 1, 0, 0), TH_FLOAT64, 0, S0, SC(5.0 / 3), 1e-15);
    EXPECT(th_var(a, 0, NULL, 0, 0, 0), TH_FLOAT64, 0, S0, SC(1.25), 1e-15);
    EXPECT(th_var(a, 0, NULL, 1, 0, 1), TH_FLOAT64, 0, S0,
           SC(sqrt(5.0 / 3)), 1e-15);
    EXPECT(th_var(a, 0, NULL, 4, 0, 0), TH_FLOAT64, 0, S0, SC(INFINITY), 0);
    th_tensor_release(a);
    th_tensor *b = mk1(3, TH_FLOAT32, (double[]){1, 2, 4});
    EXPECT(th_var(b, 0, NULL, 0.5, 0, 0), TH_FLOAT32, 0, S0,
           SC(42.0 / 9 / 2.5), 1e-6);
    th_tensor_release(b);
    th_tensor *one = mk1(1, TH_FLOAT32, (double[]){3});
    EXPECT(th_var(one, 0, NULL, 1, 0, 0), TH_FLOAT32, 0, S0, SC(NAN), 0);
    th_tensor_release(one);
    /* rows, columns (no copy) and transposed */
    th_tensor *m = mk2(2, 3, TH_FLOAT32, M23);
    int d0 = 0, d1 = 1;
    EXPECT(th_var(m, 1, &d1, 1, 0, 0), TH_FLOAT32, 1, ((int64_t[]){2}),
           ((double[]){1, 1}), 1e-6);
    EXPECT(th_var(m, 1, &d0, 1, 1, 0), TH_FLOAT32, 2, ((int64_t[]){1, 3}),
           ((double[]){4.5, 4.5, 4.5}), 1e-6);
    th_tensor *t = th_transpose(m, 0, 1);
    EXPECT(th_var(t, 1, &d0, 1, 0, 1), TH_FLOAT32, 1, ((int64_t[]){2}),
           ((double[]){1, 1}), 1e-6);
    th_tensor_release(t);
    th_tensor_release(m);
    th_tensor *h = mk1(4, TH_FLOAT16, (double[]){1, 2, 3, 4});
    EXPECT(th_var(h, 0, NULL, 0, 0, 0), TH_FLOAT16, 0, S0, SC(1.25), 0);
    th_tensor_release(h);
    int64_t zero = 0;
    th_tensor *z = th_empty(1, &zero, TH_FLOAT64);
    EXPECT(th_var(z, 0, NULL, 1, 0, 0), TH_FLOAT64, 0, S0, SC(NAN), 0);

    /* norms */
    th_tensor *v = mk1(2, TH_FLOAT64, (double[]){3, -4});
    EXPECT(th_norm(v, 2, 0, NULL, 0), TH_FLOAT64, 0, S0, SC(5), 1e-15);
    EXPECT(th_norm(v, 1, 0, NULL, 0), TH_FLOAT64, 0, S0, SC(7), 0);
    EXPECT(th_norm(v, INFINITY, 0, NULL, 0), TH_FLOAT64, 0, S0, SC(4), 0);
    EXPECT(th_norm(v, -INFINITY, 0, NULL, 0), TH_FLOAT64, 0, S0, SC(3), 0);
    EXPECT(th_norm(v, 0, 0, NULL, 0), TH_FLOAT64, 0, S0, SC(2), 0);
    EXPECT(th_norm(v, 3, 0, NULL, 1), TH_FLOAT64, 1, ((int64_t[]){1}),
           SC(cbrt(91.0)), 1e-12);
    EXPECT(th_norm(v, 0.5, 0, NULL, 0), TH_FLOAT64, 0, S0,
           SC(pow(sqrt(3.0) + 2, 2)), 1e-12);
    th_tensor_release(v);
    th_tensor *nm = mk2(2, 2, TH_BFLOAT16, (double[]){3, 0, 4, 1});
    EXPECT(th_norm(nm, 2, 1, &d0, 0), TH_BFLOAT16, 1, ((int64_t[]){2}),
           ((double[]){5, 1}), 0);
    th_tensor_release(nm);
    th_tensor *nn = mk1(2, TH_FLOAT32, (double[]){1, NAN});
    EXPECT(th_norm(nn, INFINITY, 0, NULL, 0), TH_FLOAT32, 0, S0, SC(NAN), 0);
    th_tensor_release(nn);
    EXPECT(th_norm(z, 2, 0, NULL, 0), TH_FLOAT64, 0, S0, SC(0), 0);
    th_tensor_release(z);
}

static void test_minmax(void) {
    th_tensor *a = mk2(2, 3, TH_FLOAT32, (double[]){1, 5, 5, 7, 2, 7});
    th_tensor *v = NULL, *i = NULL;
    CHECK(th_minmax_dim(a, 1, 0, 1, &v, &i) == TH_OK);
    EXPECT(v, TH_FLOAT32, 1, ((int64_t[]){2}), ((double[]){5, 7}), 0);
    EXPECT(i, TH_INT64, 1, ((int64_t[]){2}), ((double[]){1, 0}), 0);
    CHECK(th_minmax_dim(a, 0, 1, 0, &v, &i) == TH_OK);
    EXPECT(v, TH_FLOAT32, 2, ((int64_t[]){1, 3}), ((double[]){1, 2, 5}), 0);
    EXPECT(i, TH_INT64, 2, ((int64_t[]){1, 3}), ((double[]){0, 1, 0}), 0);
    th_tensor *t = th_transpose(a, 0, 1); /* (3, 2) */
    CHECK(th_minmax_dim(t, -1, 0, 1, &v, &i) == TH_OK);
    EXPECT(v, TH_FLOAT32, 1, ((int64_t[]){3}), ((double[]){7, 5, 7}), 0);
    EXPECT(i, TH_INT64, 1, ((int64_t[]){3}), ((double[]){1, 0, 1}), 0);
    th_tensor_release(t);
    /* argmax/argmin: flattened (keepdim gives all-ones shape) and per dim */
    EXPECT(th_argminmax(a, -3, 0, 1), TH_INT64, 0, S0, SC(3), 0);
    EXPECT(th_argminmax(a, -3, 1, 0), TH_INT64, 2, ((int64_t[]){1, 1}),
           SC(0), 0);
    EXPECT(th_argminmax(a, 0, 1, 0), TH_INT64, 2, ((int64_t[]){1, 3}),
           ((double[]){0, 1, 0}), 0);
    th_tensor_release(a);

    /* NaN is the max and the min; its first index is returned */
    th_tensor *n = mk1(4, TH_FLOAT64, (double[]){1, NAN, 3, NAN});
    CHECK(th_minmax_dim(n, 0, 0, 0, &v, &i) == TH_OK);
    EXPECT(v, TH_FLOAT64, 0, S0, SC(NAN), 0);
    EXPECT(i, TH_INT64, 0, S0, SC(1), 0);
    EXPECT(th_argminmax(n, -2, 0, 1), TH_INT64, 0, S0, SC(1), 0);
    th_tensor_release(n);
    th_tensor *nc = mk2(2, 2, TH_FLOAT32, (double[]){1, NAN, NAN, 2});
    CHECK(th_minmax_dim(nc, 0, 0, 1, &v, &i) == TH_OK);
    EXPECT(v, TH_FLOAT32, 1, ((int64_t[]){2}), ((double[]){NAN, NAN}), 0);
    EXPECT(i, TH_INT64, 1, ((int64_t[]){2}), ((double[]){1, 0}), 0);
    th_tensor_release(nc);

    /* other dtypes */
    th_tensor *b = mk1(3, TH_BOOL, (double[]){0, 1, 1});
    CHECK(th_minmax_dim(b, 0, 0, 1, &v, &i) == TH_OK);
    EXPECT(v, TH_BOOL, 0, S0, SC(1), 0);
    EXPECT(i, TH_INT64, 0, S0, SC(1), 0);
    th_tensor_release(b);
    th_tensor *h = mk1(3, TH_FLOAT16, (double[]){0.5, -2, 0.25});
    CHECK(th_minmax_dim(h, 0, 0, 0, &v, &i) == TH_OK);
    EXPECT(v, TH_FLOAT16, 0, S0, SC(-2), 0);
    EXPECT(i, TH_INT64, 0, S0, SC(1), 0);
    th_tensor_release(h);
    th_tensor *u8 = mk2(2, 2, TH_UINT8, (double[]){9, 200, 3, 255});
    EXPECT(th_argminmax(u8, 1, 0, 1), TH_INT64, 1, ((int64_t[]){2}),
           ((double[]){1, 1}), 0);
    th_tensor_release(u8);

    /* 0-d: value itself, index 0 */
    th_tensor *s = th_scalar_double(4.5, TH_FLOAT32);
    CHECK(th_minmax_dim(s, -1, 1, 1, &v, &i) == TH_OK);
    EXPECT(v, TH_FLOAT32, 0, S0, SC(4.5), 0);
    EXPECT(i, TH_INT64, 0, S0, SC(0), 0);
    EXPECT(th_argminmax(s, 0, 0, 0), TH_INT64, 0, S0, SC(0), 0);
    th_tensor_release(s);

    /* empty output is fine; an empty reduced dim is not */
    th_tensor *e = th_empty(2, (int64_t[]){0, 3}, TH_FLOAT32);
    CHECK(th_minmax_dim(e, 1, 0, 1, &v, &i) == TH_OK);
    EXPECT(v, TH_FLOAT32, 1, ((int64_t[]){0}), NULL, 0);
    EXPECT(i, TH_INT64, 1, ((int64_t[]){0}), NULL, 0);
    v = i = NULL;
    EXPECT_ERR(th_minmax_dim(e, 0, 0, 1, &v, &i) != TH_OK, TH_ERR_INDEX,
               "max(): Expected reduction dim 0 to have non-zero size.");
    CHECK(v == NULL && i == NULL);
    EXPECT_ERR(th_argminmax(e, 0, 0, 0) == NULL, TH_ERR_INDEX,
               "argmin(): Expected reduction dim 0 to have non-zero size.");
    EXPECT_ERR(th_argminmax(e, -5, 0, 1) == NULL, TH_ERR_INDEX,
               "argmax(): Expected reduction dim to be specified for "
               "input.numel() == 0.");
    EXPECT_ERR(th_minmax_dim(e, 2, 0, 1, &v, &i) != TH_OK, TH_ERR_INDEX,
               "Dimension out of range");
    th_tensor_release(e);
    th_tensor *bo = mk1(2, TH_BOOL, (double[]){1, 0});
    EXPECT_ERR(th_argminmax(bo, 0, 0, 1) == NULL, TH_ERR_RUNTIME,
               "argmax(): does not support bool input");
    th_tensor_release(bo);
}

static void test_cumulative(void) {
    th_tensor *a = mk1(4, TH_FLOAT32, (double[]){1, 2, 3, 4});
    EXPECT(th_cumsum(a, 0, -1), TH_FLOAT32, 1, ((int64_t[]){4}),
           ((double[]){1, 3, 6, 10}), 0);
    EXPECT(th_cumprod(a, -1, -1), TH_FLOAT32, 1, ((int64_t[]){4}),
           ((double[]){1, 2, 6, 24}), 0);
    EXPECT(th_cumsum(a, 0, TH_FLOAT64), TH_FLOAT64, 1, ((int64_t[]){4}),
           ((double[]){1, 3, 6, 10}), 0);
    th_tensor_release(a);
    /* float32 accumulates in double */
    th_tensor *c = mk1(4, TH_FLOAT32, (double[]){1e8, 1, -1e8, 1});
    EXPECT(th_cumsum(c, 0, -1), TH_FLOAT32, 1, ((int64_t[]){4}),
           ((double[]){1e8, 1e8, 1, 2}), 0);
    th_tensor_release(c);
    th_tensor *m = mk2(2, 3, TH_INT8, M23);
    EXPECT(th_cumsum(m, 0, -1), TH_INT64, 2, ((int64_t[]){2, 3}),
           ((double[]){1, 2, 3, 5, 7, 9}), 0);
    EXPECT(th_cumsum(m, 1, -1), TH_INT64, 2, ((int64_t[]){2, 3}),
           ((double[]){1, 3, 6, 4, 9, 15}), 0);
    EXPECT(th_cumprod(m, 1, TH_INT16), TH_INT16, 2, ((int64_t[]){2, 3}),
           ((double[]){1, 2, 6, 4, 20, 120}), 0);
    th_tensor *t = th_transpose(m, 0, 1); /* (3, 2) */
    EXPECT(th_cumsum(t, 1, -1), TH_INT64, 2, ((int64_t[]){3, 2}),
           ((double[]){1, 5, 2, 7, 3, 9}), 0);
    th_tensor_release(t);
    th_tensor_release(m);
    th_tensor *b = mk1(3, TH_BOOL, (double[]){1, 1, 0});
    EXPECT(th_cumprod(b, 0, -1), TH_INT64, 1, ((int64_t[]){3}),
           ((double[]){1, 1, 0}), 0);
    EXPECT_ERR(th_cumsum(b, 0, TH_BOOL) == NULL, TH_ERR_NOT_IMPLEMENTED,
               "not implemented for 'Bool'");
    th_tensor_release(b);
    th_tensor *h = mk1(3, TH_FLOAT16, (double[]){0.5, 0.25, 2});
    EXPECT(th_cumsum(h, 0, -1), TH_FLOAT16, 1, ((int64_t[]){3}),
           ((double[]){0.5, 0.75, 2.75}), 0);
    th_tensor_release(h);
    th_tensor *s = th_scalar_double(3, TH_INT32);
    EXPECT(th_cumprod(s, 0, -1), TH_INT64, 0, S0, SC(3), 0);
    EXPECT_ERR(th_cumsum(s, 1, -1) == NULL, TH_ERR_INDEX,
               "Dimension out of range (expected to be in range of [-1, 0], "
               "but got 1)");
    th_tensor_release(s);
    th_tensor *e = th_empty(2, (int64_t[]){0, 3}, TH_FLOAT32);
    EXPECT(th_cumsum(e, 1, -1), TH_FLOAT32, 2, ((int64_t[]){0, 3}), NULL, 0);
    th_tensor_release(e);
}

static void test_errors(void) {
    th_tensor *a = mk2(2, 3, TH_FLOAT32, M23);
    int dup[2] = {0, -2}, bad = 2;
    EXPECT_ERR(th_reduce(TH_RED_SUM, a, 2, dup, 0, -1) == NULL,
               TH_ERR_RUNTIME,
               "dim 0 appears multiple times in the list of dims");
    EXPECT_ERR(th_var(a, 2, dup, 1, 0, 0) == NULL, TH_ERR_RUNTIME,
               "appears multiple times");
    EXPECT_ERR(th_norm(a, 2, 2, dup, 0) == NULL, TH_ERR_RUNTIME,
               "appears multiple times");
    EXPECT_ERR(th_reduce(TH_RED_SUM, a, 1, &bad, 0, -1) == NULL, TH_ERR_INDEX,
               "Dimension out of range (expected to be in range of [-2, 1], "
               "but got 2)");
    EXPECT_ERR(th_reduce(TH_NUM_REDUCE_OPS, a, 0, NULL, 0, -1) == NULL,
               TH_ERR_VALUE, "invalid reduction op");
    EXPECT_ERR(th_reduce(TH_RED_AMAX, a, 0, NULL, 0, TH_FLOAT64) == NULL,
               TH_ERR_TYPE, "amax() got an unexpected keyword argument");
    EXPECT_ERR(th_reduce(TH_RED_MEAN, a, 0, NULL, 0, TH_INT64) == NULL,
               TH_ERR_RUNTIME,
               "mean(): could not infer output dtype. Optional dtype must be "
               "either a floating point or complex dtype. Got: Long");
    CHECK(at(a, 0) == 1 && at(a, 5) == 6);
    th_tensor_release(a);

    th_tensor *i = mk1(2, TH_INT64, (double[]){1, 2});
    EXPECT_ERR(th_reduce(TH_RED_MEAN, i, 0, NULL, 0, -1) == NULL,
               TH_ERR_RUNTIME,
               "mean(): could not infer output dtype. Input dtype must be "
               "either a floating point or complex dtype. Got: Long");
    EXPECT_ERR(th_var(i, 0, NULL, 1, 0, 0) == NULL, TH_ERR_RUNTIME,
               "std and var only support floating point and complex dtypes");
    EXPECT_ERR(th_norm(i, 2, 0, NULL, 0) == NULL, TH_ERR_RUNTIME,
               "linalg.vector_norm: Expected a floating point or complex "
               "tensor as input. Got Long");
    th_tensor_release(i);

    /* max-like reductions of nothing */
    th_tensor *e = th_empty(2, (int64_t[]){0, 3}, TH_FLOAT32);
    int d0 = 0, d1 = 1;
    EXPECT_ERR(th_reduce(TH_RED_AMAX, e, 0, NULL, 0, -1) == NULL,
               TH_ERR_RUNTIME,
               "amax(): Expected reduction dim to be specified for "
               "input.numel() == 0.");
    EXPECT_ERR(th_reduce(TH_RED_AMIN, e, 1, &d0, 0, -1) == NULL, TH_ERR_INDEX,
               "amin(): Expected reduction dim 0 to have non-zero size.");
    EXPECT(th_reduce(TH_RED_AMAX, e, 1, &d1, 0, -1), TH_FLOAT32, 1,
           ((int64_t[]){0}), NULL, 0);
    EXPECT_ERR(th_norm(e, INFINITY, 0, NULL, 0) == NULL, TH_ERR_RUNTIME,
               "cannot compute the inf norm on an empty tensor");
    EXPECT_ERR(th_norm(e, -1, 1, &d0, 0) == NULL, TH_ERR_RUNTIME,
               "cannot compute the -1 norm on the dimension 0");
    EXPECT(th_norm(e, -INFINITY, 1, &d1, 0), TH_FLOAT32, 1, ((int64_t[]){0}),
           NULL, 0);
    th_tensor_release(e);

    /* 0-d tensors reduce over dim 0 / -1 */
    th_tensor *s = th_scalar_double(2.5, TH_FLOAT64);
    int m1 = -1, one = 1, zz[2] = {0, 0};
    EXPECT(th_reduce(TH_RED_SUM, s, 1, &m1, 1, -1), TH_FLOAT64, 0, S0,
           SC(2.5), 0);
    EXPECT(th_var(s, 0, NULL, 0, 0, 0), TH_FLOAT64, 0, S0, SC(0), 0);
    EXPECT_ERR(th_reduce(TH_RED_SUM, s, 1, &one, 0, -1) == NULL, TH_ERR_INDEX,
               "Dimension out of range (expected to be in range of [-1, 0], "
               "but got 1)");
    EXPECT_ERR(th_reduce(TH_RED_SUM, s, 2, zz, 0, -1) == NULL, TH_ERR_RUNTIME,
               "dim 0 appears multiple times");
    th_tensor_release(s);
}

int main(void) {
    test_sum();
    test_large();
    test_ops();
    test_var_norm();
    test_minmax();
    test_cumulative();
    test_errors();
    return check_report("test_reduce");
}
