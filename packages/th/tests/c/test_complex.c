/* Complex dtypes from C: creation and element access, arithmetic with
 * broadcasting and promotion, the views as (re, im) pairs, and refusals by
 * the kernels that have no complex loop (an error status, never a crash). */
#include <complex.h>
#include <string.h>
#include "check.h"

static int near(double a, double b) { return fabs(a - b) <= 1e-12 * (1 + fabs(b)); }

static int element_is(const th_tensor *t, int64_t i, double re, double im) {
    double r, m;
    return t && th_get_complex(t, i, &r, &m) == TH_OK && near(r, re) && near(m, im);
}

static void test_creation_and_casts(void) {
    th_tensor *z = th_scalar_complex(1.5, -2.0, TH_COMPLEX128);
    CHECK(z && z->dtype == TH_COMPLEX128 && th_dtype_itemsize(z->dtype) == 16);
    CHECK(element_is(z, 0, 1.5, -2.0));
    double re;
    CHECK(th_get_double(z, 0, &re) == TH_OK && re == 1.5); /* the real part */
    th_tensor *f = th_to_dtype(z, TH_FLOAT32);
    CHECK(f && th_get_double(f, 0, &re) == TH_OK && re == 1.5);
    th_tensor *i3 = th_scalar_complex(0, 3, TH_COMPLEX64);
    th_tensor *b = th_to_dtype(i3, TH_BOOL);
    CHECK(b && th_get_double(b, 0, &re) == TH_OK && re == 1); /* either part nonzero */
    th_tensor *v = th_empty(1, (int64_t[]){3}, TH_COMPLEX64);
    CHECK(v && th_fill_complex(v, 2, 5) == TH_OK && element_is(v, 2, 2, 5));
    th_tensor *r = th_empty(1, (int64_t[]){3}, TH_FLOAT32);
    CHECK(th_fill_complex(r, 1, 1) != TH_OK && strstr(th_last_error(), "type Float"));
    CHECK(th_fill_complex(r, 4, 0) == TH_OK && th_get_double(r, 1, &re) == TH_OK && re == 4);
    CHECK(th_fill(r, z) != TH_OK); /* a real tensor cannot hold 1.5-2j */
    CHECK(th_promote_types(TH_COMPLEX64, TH_FLOAT64) == TH_COMPLEX128);
    CHECK(th_promote_types(TH_INT64, TH_COMPLEX64) == TH_COMPLEX64);
    th_tensor *ts[] = {z, i3, f, b, v, r};
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++) th_tensor_release(ts[i]);
}

static void test_arithmetic(void) {
    /* (1+2i, 3-1i) * 2i and / (1+1i), a real operand broadcast */
    th_tensor *a = th_empty(1, (int64_t[]){2}, TH_COMPLEX128);
    double *p = th_data_ptr(a);
    p[0] = 1, p[1] = 2, p[2] = 3, p[3] = -1;
    th_tensor *s = th_scalar_complex(0, 2, TH_COMPLEX128);
    th_tensor *m = th_binary(TH_MUL, a, s);
    CHECK(element_is(m, 0, -4, 2) && element_is(m, 1, 2, 6));
    th_tensor *half = th_scalar_double(0.5, TH_FLOAT32);
    th_tensor *h = th_binary(TH_MUL, a, half);
    CHECK(h && h->dtype == TH_COMPLEX128 && element_is(h, 1, 1.5, -0.5));
    th_tensor *ab = th_unary(TH_ABS, a);
    double v;
    CHECK(ab && ab->dtype == TH_FLOAT64 && th_get_double(ab, 0, &v) == TH_OK &&
          near(v, sqrt(5.0)));
    th_tensor *e = th_unary(TH_EXP, s);
    CHECK(element_is(e, 0, cos(2.0), sin(2.0)));
    th_tensor *c = th_conj(a);
    CHECK(element_is(c, 0, 1, -2));
    th_tensor *ang = th_complex_angle(a);
    CHECK(ang && th_get_double(ang, 0, &v) == TH_OK && near(v, atan2(2, 1)));
    th_tensor *out = th_empty(1, (int64_t[]){2}, TH_FLOAT64);
    CHECK(th_binary_out(TH_ADD, out, a, a) != TH_OK); /* complex into float: refused */
    th_tensor *ts[] = {a, s, m, half, h, ab, e, c, ang, out};
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++) th_tensor_release(ts[i]);
}

static void test_views(void) {
    th_tensor *a = th_empty(2, (int64_t[]){2, 3}, TH_COMPLEX64);
    th_fill_complex(a, 1, 2);
    th_tensor *r = th_view_as_real(a);
    CHECK(r && r->dtype == TH_FLOAT32 && r->ndim == 3 && r->sizes[2] == 2 &&
          r->strides[0] == 6 && r->strides[2] == 1);
    th_tensor *back = r ? th_view_as_complex(r) : NULL;
    CHECK(back && back->dtype == TH_COMPLEX64 && th_data_ptr(back) == th_data_ptr(a));
    th_tensor *t = th_transpose(a, 0, 1);
    th_tensor *rt = th_view_as_real(t); /* a strided complex view: strided pairs */
    CHECK(rt && rt->strides[0] == 2 && rt->strides[1] == 6);
    th_tensor *odd = th_narrow(r, 2, 1, 1);
    CHECK(odd && !th_view_as_complex(odd) && th_last_status() == TH_ERR_RUNTIME);
    th_tensor *f = th_empty(1, (int64_t[]){2}, TH_FLOAT32);
    CHECK(!th_view_as_real(f));
    th_tensor *ts[] = {a, r, back, t, rt, odd, f};
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++) th_tensor_release(ts[i]);
}

static void test_refusals(void) {
    th_tensor *a = th_empty(2, (int64_t[]){2, 2}, TH_COMPLEX128);
    th_fill_complex(a, 1, 1);
    th_tensor *r = th_mm(a, a);
    CHECK(!r && th_last_status() == TH_ERR_TYPE && strstr(th_last_error(), "ComplexDouble"));
    CHECK(!th_reduce(TH_RED_SUM, a, 0, NULL, 0, -1) && th_last_status() == TH_ERR_TYPE);
    CHECK(!th_cumsum(a, 0, -1) && th_last_status() == TH_ERR_TYPE);
    CHECK(!th_unary(TH_FLOOR, a) && th_last_status() == TH_ERR_TYPE);
    CHECK(!th_binary(TH_LT, a, a) && th_last_status() == TH_ERR_TYPE);
    th_generator *g = th_generator_new(1);
    CHECK(th_bernoulli_(a, NULL, 0.5, g) == TH_ERR_TYPE);
    CHECK(th_randint_(a, 0, 1, g) == TH_ERR_TYPE);
    CHECK(!th_arange(0, 3, 1, TH_COMPLEX64) && th_last_status() == TH_ERR_TYPE);
    th_tensor *vals = NULL, *idx = NULL;
    CHECK(th_sort(a, 0, 0, 1, &vals, &idx) == TH_ERR_TYPE && !vals && !idx);
    CHECK(element_is(a, 3, 1, 1)); /* untouched */
    th_generator_free(g);
    th_tensor_release(a);
}

/* complex128's 16-byte elements through the data-movement kernels, and
 * complex values refused by real tensors and by the ops with no complex
 * loop (each an error status naming the dtype, the operands untouched) */
static void test_moves_and_real_targets(void) {
    th_tensor *a = th_empty(1, (int64_t[]){4}, TH_COMPLEX128);
    double *p = th_data_ptr(a);
    for (int i = 0; i < 8; i++) p[i] = i % 3 == 0 ? 0.0 : i; /* 0+1i 2+0i 4+5i 0+7i */
    th_tensor *mask = th_empty(1, (int64_t[]){4}, TH_BOOL);
    uint8_t *m = th_data_ptr(mask);
    m[0] = 1, m[1] = 0, m[2] = 1, m[3] = 0;
    th_tensor *fl = th_flip(a, 1, (int[]){0});
    th_tensor *w = th_where(mask, a, fl);
    CHECK(element_is(w, 0, 0, 1) && element_is(w, 1, 4, 5) && element_is(w, 2, 4, 5) &&
          element_is(w, 3, 0, 1));
    th_tensor *v = th_scalar_complex(-1, 0.5, TH_COMPLEX128);
    th_tensor *f = th_clone(a);
    CHECK(th_masked_fill_(f, mask, v) == TH_OK && element_is(f, 0, -1, 0.5) &&
          element_is(f, 1, 2, 0) && element_is(f, 2, -1, 0.5) && element_is(f, 3, 0, 7));
    th_tensor *idx = th_empty(1, (int64_t[]){2}, TH_INT64);
    int64_t *ip = th_data_ptr(idx);
    ip[0] = 3, ip[1] = 0;
    th_tensor *sel = th_index_select(a, 0, idx);
    CHECK(element_is(sel, 0, 0, 7) && element_is(sel, 1, 0, 1));
    th_tensor *nz = th_nonzero(a); /* 0+1i and 0+7i count: either part */
    CHECK(nz && nz->sizes[0] == 4);

    th_tensor *r = th_empty(1, (int64_t[]){4}, TH_FLOAT32);
    th_fill_double(r, 3);
    CHECK(th_masked_fill_(r, mask, v) == TH_ERR_RUNTIME &&
          strstr(th_last_error(), "value cannot be converted to type Float"));
    th_tensor *ix[1] = {idx};
    CHECK(th_index_put_(r, 0, 1, ix, sel, 0) == TH_ERR_RUNTIME &&
          strstr(th_last_error(), "ComplexDouble"));
    double want[4] = {3, 3, 3, 3};
    CHECK(same(r, 1, (int64_t[]){4}, want)); /* untouched */
    th_tensor *real_v = th_scalar_complex(2, 0, TH_COMPLEX64); /* no imaginary part: fits */
    CHECK(th_masked_fill_(r, mask, real_v) == TH_OK && same(r, 1, (int64_t[]){4},
                                                          (double[]){2, 3, 2, 3}));

    CHECK(!th_histc(a, 4, 0, 0) && th_last_status() == TH_ERR_TYPE &&
          strstr(th_last_error(), "ComplexDouble"));
    CHECK(!th_var(a, 0, NULL, 1, 0, 0) && th_last_status() == TH_ERR_TYPE);
    th_tensor *empty = th_narrow(a, 0, 0, 0);
    CHECK(!th_reduce(TH_RED_PROD, empty, 0, NULL, 0, -1) &&
          th_last_status() == TH_ERR_TYPE); /* empty: refused all the same */
    CHECK(!th_cumsum(r, 0, TH_COMPLEX64) && th_last_status() == TH_ERR_TYPE);
    th_generator *g = th_generator_new(2);
    CHECK(th_bernoulli_(r, a, 0, g) == TH_ERR_TYPE); /* a complex p */
    th_generator_free(g);
    th_tensor *sc = th_clone(a);
    CHECK(th_scatter_(sc, 0, idx, v, TH_SCATTER_SUM, 1) == TH_ERR_TYPE &&
          element_is(sc, 0, 0, 1));
    th_tensor *ts[] = {a, mask, fl, w, v, f, idx, sel, nz, r, real_v, empty, sc};
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++) th_tensor_release(ts[i]);
}

int main(void) {
    test_creation_and_casts();
    test_arithmetic();
    test_views();
    test_refusals();
    test_moves_and_real_targets();
    return check_report("test_complex");
}
