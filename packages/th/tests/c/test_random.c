/* Random sampling: the Philox stream, reproducibility across seeds and
 * thread counts, moments, ranges and every error path. */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include "check.h"

#define ERR_HAS(s) (strstr(th_last_error(), (s)) != NULL)

static th_tensor *vec(int64_t n, int dtype) { return th_empty(1, &n, dtype); }

/* Mean, (population) variance, min and max of a tensor's elements. */
static void stats(const th_tensor *t, double *mean, double *var, double *lo,
                  double *hi) {
    int64_t n = th_numel(t);
    double s = 0, s2 = 0, v;
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        th_get_double(t, i, &v);
        s += v;
        s2 += v * v;
        if (v < *lo) *lo = v;
        if (v > *hi) *hi = v;
    }
    *mean = s / (double)n;
    *var = s2 / (double)n - *mean * *mean;
}

static void minmax(const th_tensor *t, double *lo, double *hi) {
    double m, v;
    stats(t, &m, &v, lo, hi);
}

/* Same shape, dtype and bytes (both contiguous). */
static int same_values(const th_tensor *a, const th_tensor *b) {
    if (th_numel(a) != th_numel(b) || a->dtype != b->dtype) return 0;
    if (th_is_contiguous(a) && th_is_contiguous(b))
        return memcmp(th_data_ptr(a), th_data_ptr(b),
                      (size_t)(th_numel(a) * th_dtype_itemsize(a->dtype))) == 0;
    for (int64_t i = 0; i < th_numel(a); i++) {
        double x, y;
        th_get_double(a, i, &x);
        th_get_double(b, i, &y);
        if (x != y) return 0;
    }
    return 1;
}

static void test_generator(void) {
    th_generator *d = th_default_generator();
    CHECK(d && d == th_default_generator());
    CHECK(d->seed == 67280421310721ULL);
    th_generator *g = th_generator_new(42);
    CHECK(g && g->seed == 42 && g->offset == 0);
    th_tensor *t = vec(10, TH_FLOAT32);
    CHECK(th_uniform_(t, 0, 1, g) == TH_OK && g->offset == 3); /* 4/block */
    th_tensor *u = vec(3, TH_FLOAT64);
    CHECK(th_normal_(u, 0, 1, g) == TH_OK && g->offset == 5); /* 2/block */
    th_tensor *e = vec(0, TH_FLOAT32);
    CHECK(th_uniform_(e, 0, 1, g) == TH_OK && g->offset == 5);
    th_generator_set_seed(g, 7);
    CHECK(g->seed == 7 && g->offset == 0);
    th_generator_free(g);
    th_generator_free(NULL);
    th_generator_free(d); /* the default one is never freed */
    CHECK(th_default_generator()->seed == 67280421310721ULL);
    th_tensor_release(t);
    th_tensor_release(u);
    th_tensor_release(e);
}

/* Known answer: Philox4x32-10 with key 0, counter 0 is
 * 6627e8d5 e169c58d bc57ac4c 9b00dbd8 (Random123 test vectors). */
static void test_known_answer(void) {
    th_generator *g = th_generator_new(0);
    th_tensor *t = vec(2, TH_INT64);
    /* range 2^32: the value is the high word of each 64-bit pair */
    CHECK(th_randint_(t, 0, INT64_C(1) << 32, g) == TH_OK);
    int64_t *p = th_data_ptr(t);
    CHECK(p[0] == 0xe169c58d && p[1] == 0x9b00dbd8);
    th_generator_set_seed(g, 0);
    th_tensor *f = vec(4, TH_FLOAT32);
    CHECK(th_uniform_(f, 0, 1, g) == TH_OK);
    float *q = th_data_ptr(f);
    CHECK(q[0] == (float)(0x6627e8d5u >> 8) * 0x1p-24f);
    CHECK(q[3] == (float)(0x9b00dbd8u >> 8) * 0x1p-24f);
    th_generator_set_seed(g, 0);
    th_tensor *d = vec(2, TH_FLOAT64);
    CHECK(th_uniform_(d, 0, 1, g) == TH_OK);
    uint64_t w = 0x6627e8d5u | ((uint64_t)0xe169c58du << 32);
    CHECK(((double *)th_data_ptr(d))[0] == (double)(w >> 11) * 0x1p-53);
    th_generator_set_seed(g, 0);
    th_tensor *b = vec(4, TH_BOOL);
    CHECK(th_bernoulli_(b, NULL, 0.5, g) == TH_OK);
    uint8_t *bb = th_data_ptr(b); /* 1 where word < 2^31 */
    CHECK(bb[0] == 1 && bb[1] == 0 && bb[2] == 0 && bb[3] == 0);
    th_generator_free(g);
    th_tensor_release(t);
    th_tensor_release(f);
    th_tensor_release(d);
    th_tensor_release(b);
}

/* Fills a fresh tensor with each sampler under a given seed. */
typedef th_tensor *(*sampler)(th_generator *g);
static th_tensor *s_uniform32(th_generator *g) {
    th_tensor *t = vec(100003, TH_FLOAT32);
    th_uniform_(t, -1, 1, g);
    return t;
}
static th_tensor *s_uniform64(th_generator *g) {
    th_tensor *t = vec(50003, TH_FLOAT64);
    th_uniform_(t, -1, 1, g);
    return t;
}
static th_tensor *s_normal32(th_generator *g) {
    th_tensor *t = vec(20001, TH_FLOAT32);
    th_normal_(t, 0, 1, g);
    return t;
}
static th_tensor *s_normal64(th_generator *g) {
    th_tensor *t = vec(20001, TH_FLOAT64);
    th_normal_(t, 0, 1, g);
    return t;
}
static th_tensor *s_normal_bf16(th_generator *g) {
    th_tensor *t = vec(20001, TH_BFLOAT16);
    th_normal_(t, 0, 1, g);
    return t;
}
static th_tensor *s_bernoulli(th_generator *g) {
    th_tensor *t = vec(100003, TH_UINT8);
    th_bernoulli_(t, NULL, 0.25, g);
    return t;
}
static th_tensor *s_randint(th_generator *g) {
    th_tensor *t = vec(100003, TH_INT32);
    th_randint_(t, -1000, 1000, g);
    return t;
}
static th_tensor *s_randperm(th_generator *g) { return th_randperm(70001, TH_INT64, g); }
static th_tensor *s_multi_repl(th_generator *g) {
    th_tensor *p = th_arange(1, 11, 1, TH_FLOAT32);
    th_tensor *t = th_multinomial(p, 20000, 1, g);
    th_tensor_release(p);
    return t;
}
static th_tensor *s_multi_norepl(th_generator *g) {
    th_tensor *p = th_arange(1, 20001, 1, TH_FLOAT64);
    th_tensor *v = th_view(p, 2, (int64_t[]){200, 100});
    th_tensor *t = th_multinomial(v, 10, 0, g);
    th_tensor_release(v);
    th_tensor_release(p);
    return t;
}

static void test_reproducible(void) {
    sampler fns[] = {s_uniform32, s_uniform64, s_normal32, s_normal64,
                     s_normal_bf16, s_bernoulli, s_randint, s_randperm,
                     s_multi_repl, s_multi_norepl};
    int nfns = (int)(sizeof fns / sizeof fns[0]);
    int threads0 = th_get_num_threads();
    for (int k = 0; k < nfns; k++) {
        th_generator *g = th_generator_new(1234);
        th_set_num_threads(1);
        th_tensor *a = fns[k](g);
        uint64_t used = g->offset;
        th_tensor *next = fns[k](g); /* the stream moves on */
        th_generator_set_seed(g, 1234);
        th_set_num_threads(3);
        th_tensor *b = fns[k](g);
        th_set_num_threads(2);
        th_generator_set_seed(g, 1234);
        th_tensor *c = fns[k](g);
        CHECK(a && b && c && next);
        CHECK(g->offset == used);
        CHECK(same_values(a, b));
        CHECK(same_values(a, c));
        CHECK(!same_values(a, next));
        th_generator_set_seed(g, 99);
        th_tensor *other = fns[k](g);
        CHECK(!same_values(a, other));
        th_tensor_release(a);
        th_tensor_release(b);
        th_tensor_release(c);
        th_tensor_release(next);
        th_tensor_release(other);
        th_generator_free(g);
    }
    th_set_num_threads(threads0);
}

/* A strided output gets the values of a contiguous one, element by
 * element in row-major order. */
static void test_noncontiguous(void) {
    th_generator *g = th_generator_new(5);
    th_tensor *base = th_empty(2, (int64_t[]){7, 5}, TH_FLOAT32);
    th_tensor *tr = th_transpose(base, 0, 1); /* (5, 7), strided */
    th_tensor *ref = th_empty(2, (int64_t[]){5, 7}, TH_FLOAT32);
    CHECK(th_normal_(tr, 2, 3, g) == TH_OK);
    th_generator_set_seed(g, 5);
    CHECK(th_normal_(ref, 2, 3, g) == TH_OK);
    CHECK(same_values(tr, ref));
    th_generator_set_seed(g, 5);
    CHECK(th_randint_(tr, 0, 100, g) == TH_OK);
    th_generator_set_seed(g, 5);
    CHECK(th_randint_(ref, 0, 100, g) == TH_OK);
    CHECK(same_values(tr, ref));
    /* a slice with a step: the untouched elements stay put */
    th_tensor *v = vec(10, TH_INT64);
    th_zero(v);
    th_tensor *s = th_slice(v, 0, 0, 10, 2);
    CHECK(th_randint_(s, 1, 5, g) == TH_OK);
    int64_t *pv = th_data_ptr(v);
    for (int i = 0; i < 10; i++)
        CHECK(i % 2 ? pv[i] == 0 : pv[i] >= 1 && pv[i] < 5);
    /* 0-d */
    th_tensor *z = th_scalar_double(0, TH_FLOAT64);
    CHECK(th_uniform_(z, 3, 4, g) == TH_OK);
    double zv = ((double *)th_data_ptr(z))[0];
    CHECK(zv >= 3 && zv < 4);
    th_tensor_release(z);
    th_tensor_release(s);
    th_tensor_release(v);
    th_tensor_release(ref);
    th_tensor_release(tr);
    th_tensor_release(base);
    th_generator_free(g);
}

static void test_uniform(void) {
    th_generator *g = th_generator_new(11);
    int dts[] = {TH_FLOAT32, TH_FLOAT64, TH_FLOAT16, TH_BFLOAT16};
    for (int k = 0; k < 4; k++) {
        th_tensor *t = vec(100000, dts[k]);
        CHECK(th_uniform_(t, 2, 5, g) == TH_OK);
        double m, v, lo, hi;
        stats(t, &m, &v, &lo, &hi);
        CHECK_CLOSE(m, 3.5, 0.02);
        CHECK_CLOSE(v, 0.75, 0.02);
        CHECK(lo >= 2 && hi < 5);
        CHECK(lo < 2.01 && hi > 4.95);
        th_tensor_release(t);
    }
    /* values that round up to `high` step down below it */
    th_tensor *h = vec(100000, TH_FLOAT16);
    CHECK(th_uniform_(h, 0, 1, g) == TH_OK);
    double lo, hi;
    minmax(h, &lo, &hi);
    CHECK(lo >= 0 && hi < 1 && hi == 1.0 - 0x1p-11);
    th_tensor *b = vec(1000, TH_BFLOAT16); /* next bfloat16 after 1 */
    CHECK(th_uniform_(b, 1, 1.0078125, g) == TH_OK);
    minmax(b, &lo, &hi);
    CHECK(lo == 1 && hi == 1);
    th_tensor *f = vec(1000, TH_FLOAT32);
    CHECK(th_uniform_(f, 1, 1 + 0x1p-30, g) == TH_OK);
    minmax(f, &lo, &hi);
    CHECK(lo == 1 && hi == 1); /* float32 cannot hold 1 + 2^-30 */
    CHECK(th_uniform_(f, -3, -3, g) == TH_OK); /* empty range: low */
    minmax(f, &lo, &hi);
    CHECK(lo == -3 && hi == -3);
    th_tensor_release(f);
    th_tensor_release(b);
    th_tensor_release(h);
    th_generator_free(g);
}

static void test_normal(void) {
    th_generator *g = th_generator_new(12);
    int dts[] = {TH_FLOAT32, TH_FLOAT64, TH_FLOAT16, TH_BFLOAT16};
    double tol[] = {0.05, 0.05, 0.05, 0.12};
    for (int k = 0; k < 4; k++) {
        th_tensor *t = vec(100000, dts[k]);
        CHECK(th_normal_(t, 1, 2, g) == TH_OK);
        double m, v, lo, hi;
        stats(t, &m, &v, &lo, &hi);
        CHECK_CLOSE(m, 1, 0.03);
        CHECK_CLOSE(v, 4, 4 * tol[k]);
        th_tensor_release(t);
    }
    /* std 0 gives the mean exactly; the default generator works too */
    th_tensor *t = vec(5, TH_FLOAT64);
    CHECK(th_normal_(t, 7, 0, NULL) == TH_OK);
    double lo, hi;
    minmax(t, &lo, &hi);
    CHECK(lo == 7 && hi == 7);
    th_tensor_release(t);

    /* normal_tensor_: mean per column (shape [3]) and a 0-d std */
    th_tensor *out = th_empty(2, (int64_t[]){40000, 3}, TH_FLOAT32);
    th_tensor *mean = th_arange(0, 30, 10, TH_FLOAT64);
    th_tensor *sd0 = th_scalar_double(0, TH_FLOAT32);
    CHECK(th_normal_tensor_(out, mean, sd0, g) == TH_OK);
    float *po = th_data_ptr(out);
    CHECK(po[0] == 0 && po[1] == 10 && po[5] == 20 && po[119999] == 20);
    th_tensor *sd = th_arange(1, 4, 1, TH_INT64); /* std 1, 2, 3 */
    CHECK(th_normal_tensor_(out, mean, sd, g) == TH_OK);
    for (int col = 0; col < 3; col++) {
        th_tensor *c = th_select(out, 1, col);
        double m, v, lo, hi;
        stats(c, &m, &v, &lo, &hi);
        CHECK_CLOSE(m, 10.0 * col, 0.05 * (col + 1));
        CHECK_CLOSE(v, (col + 1.0) * (col + 1.0), 0.05 * (col + 1) * (col + 1));
        th_tensor_release(c);
    }
    /* normal_tensor_ draws the same z stream as normal_ */
    th_tensor *a = vec(9, TH_FLOAT64), *b = vec(9, TH_FLOAT64);
    th_tensor *m0 = th_scalar_double(1.5, TH_FLOAT64);
    th_tensor *s2 = th_scalar_double(2, TH_FLOAT64);
    th_generator_set_seed(g, 3);
    CHECK(th_normal_(a, 1.5, 2, g) == TH_OK);
    th_generator_set_seed(g, 3);
    CHECK(th_normal_tensor_(b, m0, s2, g) == TH_OK);
    CHECK(same_values(a, b));
    th_tensor_release(a);
    th_tensor_release(b);
    th_tensor_release(m0);
    th_tensor_release(s2);
    th_tensor_release(sd);
    th_tensor_release(sd0);
    th_tensor_release(mean);
    th_tensor_release(out);
    th_generator_free(g);
}

static void test_bernoulli(void) {
    th_generator *g = th_generator_new(13);
    for (int d = 0; d < TH_NUM_REAL_DTYPES; d++) {
        int64_t n = d == TH_FLOAT32 ? 100000 : 20000;
        th_tensor *t = vec(n, d);
        CHECK(th_bernoulli_(t, NULL, 0.3, g) == TH_OK);
        double m, v, lo, hi;
        stats(t, &m, &v, &lo, &hi);
        CHECK_CLOSE(m, 0.3, 4 * sqrt(0.21 / (double)n));
        CHECK_CLOSE(v, 0.21, 0.01);
        CHECK(lo == 0 && hi == 1);
        th_tensor_release(t);
    }
    th_tensor *t = vec(1000, TH_FLOAT32);
    double lo, hi;
    CHECK(th_bernoulli_(t, NULL, 0, g) == TH_OK);
    minmax(t, &lo, &hi);
    CHECK(lo == 0 && hi == 0);
    CHECK(th_bernoulli_(t, NULL, 1, g) == TH_OK);
    minmax(t, &lo, &hi);
    CHECK(lo == 1 && hi == 1);
    th_tensor_release(t);
    /* p of shape [2, 1] broadcast over rows of [2, 50000] */
    th_tensor *out = th_empty(2, (int64_t[]){2, 50000}, TH_BOOL);
    th_tensor *p = th_empty(2, (int64_t[]){2, 1}, TH_FLOAT16);
    th_fill_double(p, 0.2);
    th_tensor *p1 = th_select(p, 0, 1);
    th_fill_double(p1, 0.9);
    CHECK(th_bernoulli_(out, p, 0, g) == TH_OK);
    for (int r = 0; r < 2; r++) {
        th_tensor *row = th_select(out, 0, r);
        double m, v, lo, hi;
        stats(row, &m, &v, &lo, &hi);
        CHECK_CLOSE(m, r ? 0.9 : 0.2, 0.01);
        th_tensor_release(row);
    }
    th_tensor_release(p1);
    th_tensor_release(p);
    th_tensor_release(out);
    th_generator_free(g);
}

static void test_randint(void) {
    th_generator *g = th_generator_new(14);
    for (int d = 0; d < TH_NUM_REAL_DTYPES; d++) {
        int64_t low = d == TH_BOOL ? 0 : d == TH_UINT8 ? 3 : -5;
        int64_t high = d == TH_BOOL ? 2 : 5;
        int64_t n = d == TH_INT64 ? 100000 : 20000;
        th_tensor *t = vec(n, d);
        CHECK(th_randint_(t, low, high, g) == TH_OK);
        double m, v, lo, hi, k = (double)(high - low);
        stats(t, &m, &v, &lo, &hi);
        CHECK(lo == (double)low && hi == (double)(high - 1));
        CHECK_CLOSE(m, (low + high - 1) / 2.0, 4 * sqrt((k * k - 1) / 12 / (double)n));
        CHECK_CLOSE(v, (k * k - 1) / 12, 0.05 * (k * k - 1) / 12);
        th_tensor_release(t);
    }
    /* every value of a small range shows up about equally often */
    th_tensor *t = vec(60000, TH_INT16);
    CHECK(th_randint_(t, 10, 16, g) == TH_OK);
    int counts[6] = {0};
    int16_t *p = th_data_ptr(t);
    for (int i = 0; i < 60000; i++) counts[p[i] - 10]++;
    for (int k = 0; k < 6; k++) CHECK(counts[k] > 9500 && counts[k] < 10500);
    th_tensor_release(t);
    /* the full int64 range and dtype limits */
    th_tensor *w = vec(1000, TH_INT64);
    CHECK(th_randint_(w, INT64_MIN, INT64_MAX, g) == TH_OK);
    int negatives = 0;
    for (int i = 0; i < 1000; i++) negatives += ((int64_t *)th_data_ptr(w))[i] < 0;
    CHECK(negatives > 400 && negatives < 600);
    th_tensor *i8 = vec(1000, TH_INT8);
    CHECK(th_randint_(i8, -128, 128, g) == TH_OK);
    th_tensor *f = vec(1000, TH_FLOAT64);
    CHECK(th_randint_(f, INT64_C(1) << 40, (INT64_C(1) << 40) + 3, g) == TH_OK);
    double lo, hi;
    minmax(f, &lo, &hi);
    CHECK(lo == 0x1p40 && hi == 0x1p40 + 2);
    th_tensor_release(f);
    th_tensor_release(i8);
    th_tensor_release(w);
    th_generator_free(g);
}

static int is_permutation(const th_tensor *t, int64_t n) {
    if (th_numel(t) != n) return 0;
    char *seen = calloc((size_t)n + 1, 1);
    int ok = 1;
    for (int64_t i = 0; i < n && ok; i++) {
        double v;
        th_get_double(t, i, &v);
        if (v < 0 || v >= (double)n || seen[(int64_t)v]) ok = 0;
        else seen[(int64_t)v] = 1;
    }
    free(seen);
    return ok;
}

static void test_randperm(void) {
    th_generator *g = th_generator_new(15);
    for (int d = 0; d < TH_NUM_REAL_DTYPES; d++) {
        int64_t n = d == TH_BOOL ? 2 : d == TH_BFLOAT16 ? 257 : 100;
        th_tensor *t = th_randperm(n, d, g);
        CHECK(t && t->dtype == d && t->ndim == 1 && is_permutation(t, n));
        th_tensor_release(t);
    }
    th_tensor *big = th_randperm(100000, TH_INT64, g);
    CHECK(big && is_permutation(big, 100000));
    th_tensor_release(big);
    th_tensor *e = th_randperm(0, TH_INT64, NULL);
    CHECK(e && th_numel(e) == 0);
    th_tensor_release(e);
    th_tensor *one = th_randperm(1, TH_INT32, g);
    CHECK(one && ((int32_t *)th_data_ptr(one))[0] == 0);
    th_tensor_release(one);
    /* all 6 orders of 3 items about equally often */
    int counts[9] = {0};
    for (int k = 0; k < 6000; k++) {
        th_tensor *t = th_randperm(3, TH_INT64, g);
        int64_t *p = th_data_ptr(t);
        counts[p[0] * 3 + p[1]]++;
        th_tensor_release(t);
    }
    int orders = 0;
    for (int k = 0; k < 9; k++) {
        if (counts[k]) {
            orders++;
            CHECK(counts[k] > 850 && counts[k] < 1150);
        }
    }
    CHECK(orders == 6);
    th_generator_free(g);
}

static void test_multinomial(void) {
    th_generator *g = th_generator_new(16);
    /* with replacement: frequencies follow the weights, 0 never drawn */
    double w[5] = {1, 2, 0, 3, 0};
    th_tensor *p = vec(5, TH_FLOAT64);
    memcpy(th_data_ptr(p), w, sizeof w);
    th_tensor *s = th_multinomial(p, 60000, 1, g);
    CHECK(s && s->dtype == TH_INT64 && s->ndim == 1 && s->sizes[0] == 60000);
    int counts[5] = {0};
    for (int i = 0; i < 60000; i++) counts[((int64_t *)th_data_ptr(s))[i]]++;
    CHECK(counts[2] == 0 && counts[4] == 0);
    CHECK_CLOSE(counts[0], 10000, 400);
    CHECK_CLOSE(counts[1], 20000, 500);
    CHECK_CLOSE(counts[3], 30000, 500);
    th_tensor_release(s);
    /* without replacement: distinct categories, all positive ones */
    s = th_multinomial(p, 3, 0, g);
    CHECK(s && s->sizes[0] == 3);
    int got = 0;
    for (int i = 0; i < 3; i++) got |= 1 << ((int64_t *)th_data_ptr(s))[i];
    CHECK(got == (1 | 2 | 8));
    th_tensor_release(s);
    /* first draw without replacement follows the weights */
    int first[5] = {0};
    for (int k = 0; k < 6000; k++) {
        th_tensor *r = th_multinomial(p, 2, 0, g);
        int64_t *q = th_data_ptr(r);
        first[q[0]]++;
        CHECK(q[0] != q[1]);
        th_tensor_release(r);
    }
    CHECK_CLOSE(first[0], 1000, 150);
    CHECK_CLOSE(first[3], 3000, 200);
    /* 2-d, strided, float16 rows */
    th_tensor *m = th_empty(2, (int64_t[]){4, 3}, TH_FLOAT16);
    th_zero(m);
    th_tensor *col = th_select(m, 1, 1);
    th_fill_double(col, 1);
    th_tensor *mt = th_transpose(m, 0, 1); /* (3, 4): row 1 is all ones */
    th_tensor *one = th_select(mt, 0, 0);
    th_fill_double(one, 0.5); /* rows 0 and 1 positive, row 2 still zero */
    th_tensor *rows = th_narrow(mt, 0, 0, 2);
    s = th_multinomial(rows, 4, 0, g);
    CHECK(s && s->ndim == 2 && s->sizes[0] == 2 && s->sizes[1] == 4);
    for (int r = 0; r < 2 && s; r++) {
        int mask = 0;
        for (int k = 0; k < 4; k++) mask |= 1 << ((int64_t *)th_data_ptr(s))[r * 4 + k];
        CHECK(mask == 15);
    }
    th_tensor_release(s);
    s = th_multinomial(rows, 7, 1, g);
    CHECK(s && s->sizes[0] == 2 && s->sizes[1] == 7);
    th_tensor_release(s);
    /* a row of zeros fails, leaving the generator where it was */
    uint64_t before = g->offset;
    s = th_multinomial(mt, 1, 1, g);
    CHECK(s == NULL && th_last_status() == TH_ERR_RUNTIME);
    CHECK(ERR_HAS("invalid multinomial distribution (sum of probabilities <= 0)"));
    CHECK(g->offset == before);
    /* no rows: an empty result */
    th_tensor *none = th_narrow(mt, 0, 0, 0);
    s = th_multinomial(none, 2, 1, g);
    CHECK(s && s->ndim == 2 && s->sizes[0] == 0 && s->sizes[1] == 2);
    th_tensor_release(s);
    th_tensor_release(none);
    th_tensor_release(rows);
    th_tensor_release(one);
    th_tensor_release(mt);
    th_tensor_release(col);
    th_tensor_release(m);
    th_tensor_release(p);
    th_generator_free(g);
}

static void test_errors(void) {
    th_generator *g = th_generator_new(17);
    th_tensor *f = vec(4, TH_FLOAT32);
    th_fill_double(f, 9);
    th_tensor *i = vec(4, TH_INT32);
    th_tensor *h = vec(2, TH_FLOAT16);

    CHECK(th_uniform_(f, 2, 1, g) == TH_ERR_RUNTIME);
    CHECK(ERR_HAS("uniform_ expects to return a [from, to) range, but found from=2 > to=1"));
    CHECK(th_uniform_(f, 0, INFINITY, g) == TH_ERR_RUNTIME);
    CHECK(ERR_HAS("to=inf is out of bounds for float32"));
    CHECK(th_uniform_(f, NAN, 1, g) == TH_ERR_RUNTIME);
    CHECK(ERR_HAS("from=nan is out of bounds"));
    CHECK(th_uniform_(h, 0, 70000, g) == TH_ERR_RUNTIME);
    CHECK(th_uniform_(h, -60000, 60000, g) == TH_ERR_RUNTIME);
    CHECK(ERR_HAS("to-from"));
    CHECK(th_uniform_(i, 0, 1, g) == TH_ERR_TYPE && ERR_HAS("floating point"));

    CHECK(th_normal_(f, 0, -1, g) == TH_ERR_RUNTIME);
    CHECK(ERR_HAS("normal expects std >= 0.0, but found std -1"));
    CHECK(th_normal_(f, 0, NAN, g) == TH_ERR_RUNTIME);
    CHECK(th_normal_(i, 0, 1, g) == TH_ERR_TYPE);
    th_tensor *neg = th_arange(-1, 3, 1, TH_FLOAT32); /* std -1, 0, 1, 2 */
    th_tensor *zero = th_scalar_double(0, TH_FLOAT32);
    CHECK(th_normal_tensor_(f, zero, neg, g) == TH_ERR_RUNTIME);
    CHECK(ERR_HAS("normal expects all elements of std >= 0.0"));
    th_tensor *three = vec(3, TH_FLOAT32);
    CHECK(th_normal_tensor_(f, three, zero, g) == TH_ERR_RUNTIME);
    CHECK(ERR_HAS("cannot be broadcast"));
    CHECK(th_normal_tensor_(i, zero, zero, g) == TH_ERR_TYPE);

    CHECK(th_bernoulli_(f, NULL, 1.5, g) == TH_ERR_RUNTIME);
    CHECK(ERR_HAS("bernoulli_ expects p to be in [0, 1], but got p=1.5"));
    CHECK(th_bernoulli_(f, NULL, NAN, g) == TH_ERR_RUNTIME);
    CHECK(th_bernoulli_(i, neg, 0, g) == TH_ERR_RUNTIME && ERR_HAS("p=-1"));
    CHECK(th_bernoulli_(f, three, 0, g) == TH_ERR_RUNTIME);
    CHECK(ERR_HAS("cannot be broadcast"));

    CHECK(th_randint_(i, 5, 5, g) == TH_ERR_RUNTIME);
    CHECK(ERR_HAS("random_ expects 'from' to be less than 'to', but got from=5 >= to=5"));
    th_tensor *i8 = vec(2, TH_INT8);
    CHECK(th_randint_(i8, -129, 0, g) == TH_ERR_RUNTIME);
    CHECK(ERR_HAS("from is out of bounds for int8"));
    CHECK(th_randint_(i8, 0, 129, g) == TH_ERR_RUNTIME);
    CHECK(ERR_HAS("to - 1 is out of bounds for int8"));
    th_tensor *b = vec(2, TH_BOOL);
    CHECK(th_randint_(b, 0, 3, g) == TH_ERR_RUNTIME);
    CHECK(th_randint_(h, 0, 70000, g) == TH_ERR_RUNTIME);

    CHECK(th_randperm(-1, TH_INT64, g) == NULL && th_last_status() == TH_ERR_RUNTIME);
    CHECK(ERR_HAS("n must be non-negative"));
    th_tensor *ok = th_randperm(128, TH_INT8, g);
    CHECK(ok != NULL);
    th_tensor_release(ok);
    CHECK(th_randperm(129, TH_INT8, g) == NULL && ERR_HAS("n is too large"));
    CHECK(th_randperm(3, TH_BOOL, g) == NULL && ERR_HAS("n is too large"));
    CHECK(th_randperm(3, 42, g) == NULL && th_last_status() == TH_ERR_TYPE);

    const char *bad = "probability tensor contains either `inf`, `nan` or element < 0";
    double vals[3] = {-0.5, INFINITY, NAN};
    for (int k = 0; k < 3; k++) {
        th_tensor *p = th_arange(0, 3, 1, TH_FLOAT64);
        ((double *)th_data_ptr(p))[1] = vals[k];
        CHECK(th_multinomial(p, 1, 1, g) == NULL && ERR_HAS(bad));
        CHECK(th_multinomial(p, 1, 0, g) == NULL && ERR_HAS(bad));
        th_tensor_release(p);
    }
    th_tensor *zeros = vec(3, TH_FLOAT32);
    th_zero(zeros);
    CHECK(th_multinomial(zeros, 1, 1, g) == NULL &&
          ERR_HAS("invalid multinomial distribution (sum of probabilities <= 0)"));
    th_tensor *w = th_arange(0, 3, 1, TH_FLOAT32); /* 0, 1, 2 */
    CHECK(th_multinomial(w, 4, 0, g) == NULL && th_last_status() == TH_ERR_RUNTIME);
    CHECK(ERR_HAS("cannot sample n_sample > prob_dist.size(-1) samples without replacement"));
    CHECK(th_multinomial(w, 3, 0, g) == NULL && ERR_HAS("not enough non-negative category"));
    CHECK(th_multinomial(w, 0, 1, g) == NULL && ERR_HAS("n_sample <= 0"));
    th_tensor *w3 = th_empty(3, (int64_t[]){1, 1, 3}, TH_FLOAT32);
    CHECK(th_multinomial(w3, 1, 1, g) == NULL && ERR_HAS("prob_dist must be 1 or 2 dim"));
    CHECK(th_multinomial(i, 1, 1, g) == NULL && th_last_status() == TH_ERR_TYPE);
    CHECK(ERR_HAS("floating-point"));
    th_tensor *fine = th_multinomial(w, 2, 0, g); /* exactly the 2 positive */
    CHECK(fine && ((int64_t *)th_data_ptr(fine))[0] != 0);
    th_tensor_release(fine);

    /* failures left f untouched and drew nothing: only randperm(128)
     * (64 blocks) and the one good multinomial (3 draws, 2 blocks) did */
    float *pf = th_data_ptr(f);
    CHECK(pf[0] == 9 && pf[3] == 9);
    CHECK(g->offset == 64 + 2);
    th_tensor_release(w3);
    th_tensor_release(w);
    th_tensor_release(zeros);
    th_tensor_release(b);
    th_tensor_release(i8);
    th_tensor_release(three);
    th_tensor_release(zero);
    th_tensor_release(neg);
    th_tensor_release(h);
    th_tensor_release(i);
    th_tensor_release(f);
    th_generator_free(g);
}

/* Two threads drawing from the default generator never share a block. */
#define DRAWS 2000
static void *draw_many(void *arg) {
    int64_t *seen = arg;
    th_tensor *t = vec(2, TH_INT64);
    for (int k = 0; k < DRAWS; k++) {
        th_randint_(t, 0, INT64_MAX, NULL);
        seen[k] = ((int64_t *)th_data_ptr(t))[0];
    }
    th_tensor_release(t);
    return NULL;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void test_threads_share_default(void) {
    th_generator *d = th_default_generator();
    uint64_t before = d->offset;
    int64_t *seen = malloc(2 * DRAWS * sizeof *seen);
    pthread_t t1, t2;
    CHECK(pthread_create(&t1, NULL, draw_many, seen) == 0);
    CHECK(pthread_create(&t2, NULL, draw_many, seen + DRAWS) == 0);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    CHECK(d->offset == before + 2 * DRAWS);
    qsort(seen, 2 * DRAWS, sizeof *seen, cmp_i64);
    int dup = 0;
    for (int k = 1; k < 2 * DRAWS; k++) dup += seen[k] == seen[k - 1];
    CHECK(dup == 0);
    free(seen);
}

int main(void) {
    test_generator();
    test_known_answer();
    test_reproducible();
    test_noncontiguous();
    test_uniform();
    test_normal();
    test_bernoulli();
    test_randint();
    test_randperm();
    test_multinomial();
    test_errors();
    test_threads_share_default();
    return check_report("test_random");
}
