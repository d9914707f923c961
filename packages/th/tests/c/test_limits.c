/* Hostile sizes, strides and values: every size computation that would
 * wrap in int64 is an error, nothing is written outside a storage, and
 * integer arithmetic wraps without undefined behaviour (run under the
 * sanitizer build to see the latter). */
#include <stdint.h>

#include "check.h"

static const int64_t BIG = (int64_t)1 << 61;

static void test_sizes(void) {
    th_tensor *x = th_arange(0, 10, 1, TH_FLOAT64);
    /* (2 - 1) * (2**61 - 1) + (2**61 + 10) elements of 8 bytes wrap */
    ERR(!th_as_strided(x, 2, SZ(2, 2), SZ(BIG - 1, BIG + 10), 0),
        TH_ERR_RUNTIME, "Storage size calculation overflowed with sizes=[2, "
        "2] and strides=[2305843009213693951, 2305843009213693962]");
    ERR(!th_as_strided(x, 1, SZ(2), SZ(INT64_MAX), 0), TH_ERR_RUNTIME, "");
    ERR(!th_as_strided(x, 2, SZ(3, 3), SZ(INT64_MAX / 2, INT64_MAX / 2), 0),
        TH_ERR_RUNTIME, "Storage size calculation overflowed");
    ERR(!th_as_strided(x, 1, SZ(2), SZ(-1), 0), TH_ERR_RUNTIME,
        "starts at element -1");
    ERR(!th_as_strided(x, 1, SZ(11), SZ(1), 0), TH_ERR_RUNTIME,
        "requiring a storage size of 88 are out of bounds for storage of "
        "size 80");
    /* the in-bounds extremes stay valid: last element, size-1 huge stride */
    th_tensor *v = th_as_strided(x, 2, SZ(1, 1), SZ(INT64_MAX, INT64_MIN), 9);
    double d = -1;
    CHECK(v && th_get_double(v, 0, &d) == TH_OK && d == 9.0);
    th_tensor_release(v);
    ERR(!th_empty_strided(1, SZ(3), SZ(BIG), TH_FLOAT32), TH_ERR_RUNTIME,
        "Storage size calculation overflowed");
    ERR(!th_empty_strided(2, SZ(2, 2), SZ(INT64_MAX, 1), TH_UINT8),
        TH_ERR_RUNTIME, "");
    ERR(!th_empty(2, SZ((int64_t)1 << 40, (int64_t)1 << 40), TH_FLOAT32),
        TH_ERR_RUNTIME, "Storage size calculation overflowed with "
        "sizes=[1099511627776, 1099511627776]");
    ERR(!th_empty(1, SZ(BIG * 2), TH_FLOAT64), TH_ERR_RUNTIME,
        "Storage size calculation overflowed");
    /* a zero size anywhere: no element, no overflow */
    th_tensor *e = th_empty(3, SZ(0, (int64_t)1 << 40, (int64_t)1 << 40),
                            TH_FLOAT32);
    CHECK(e && th_numel(e) == 0);
    th_tensor_release(e);

    th_tensor *one = th_empty(2, SZ(1, 1), TH_FLOAT32);
    ERR(!th_expand(one, 2, SZ((int64_t)1 << 40, (int64_t)1 << 40)),
        TH_ERR_RUNTIME, "numel: integer multiplication overflow");
    th_tensor *ok = th_expand(one, 2, SZ((int64_t)1 << 40, 4));
    CHECK(ok && th_numel(ok) == ((int64_t)1 << 42));
    th_tensor_release(ok);
    ERR(!th_repeat(one, 2, SZ(INT64_MAX, 3)), TH_ERR_RUNTIME, "");
    th_tensor *one1 = th_view(one, 1, SZ(1));
    th_tensor *half = th_expand(one1, 1, SZ((int64_t)1 << 62));
    th_tensor *parts[2] = {half, half};
    ERR(!th_cat(2, parts, 0), TH_ERR_RUNTIME, "add up to more than int64");
    th_tensor_release(half);
    th_tensor_release(one1);
    th_tensor *two = th_empty(1, SZ(2), TH_FLOAT32);
    ERR(!th_repeat(two, 1, SZ(INT64_MAX)), TH_ERR_RUNTIME, "overflow");
    ERR(!th_view(two, 3, SZ((int64_t)1 << 32, (int64_t)1 << 32, 4)),
        TH_ERR_RUNTIME, "is invalid for input of size 2");
    ERR(!th_view(two, 3, SZ((int64_t)1 << 32, (int64_t)1 << 32, -1)),
        TH_ERR_RUNTIME, "is invalid for input of size 2");
    /* steps beyond the size keep one element (no wrapped size or stride) */
    th_tensor *s = th_slice(x, 0, 3, 10, INT64_MAX);
    CHECK(s && s->ndim == 1 && s->sizes[0] == 1 &&
          th_get_double(s, 0, &d) == TH_OK && d == 3.0);
    th_tensor_release(s);
    s = th_slice(x, 0, 3, 3, INT64_MAX);
    CHECK(s && s->sizes[0] == 0);
    th_tensor_release(s);
    th_tensor_release(one);
    th_tensor_release(two);
    th_tensor_release(x);

    /* narrow: start + length would wrap */
    th_tensor *y = th_arange(0, 10, 1, TH_FLOAT64);
    ERR(!th_narrow(y, 0, 5, INT64_MAX), TH_ERR_RUNTIME, "exceeds dimension size");
    th_tensor_release(y);
    ERR(!th_arange(1e19, 2e19, 1e18, TH_INT64), TH_ERR_RUNTIME, "fit in int64");
    y = th_arange(-9.2e18, 9.2e18, 6e18, TH_INT64); /* no UB on the way */
    CHECK(y && y->sizes[0] == 4);
    th_tensor_release(y);
    th_storage *st = th_storage_new(16);
    ERR(!th_tensor_from_storage(st, INT64_MAX, 1, SZ(1), NULL, TH_FLOAT32),
        TH_ERR_RUNTIME, "");
    ERR(!th_tensor_from_storage(st, -1, 1, SZ(1), NULL, TH_FLOAT32),
        TH_ERR_RUNTIME, "invalid storage offset");
    th_storage_release(st);
    th_clear_error();
    CHECK(!th_storage_new(-8));
    /* misaligned external memory is refused for wider elements */
    static double buf[4];
    th_storage *w = th_storage_wrap((char *)buf + 1, 16, NULL, NULL);
    ERR(!th_tensor_from_storage(w, 0, 1, SZ(2), NULL, TH_FLOAT64), TH_ERR_VALUE,
        "not a multiple of the 8-byte elements of float64");
    th_tensor *u8 = th_tensor_from_storage(w, 0, 1, SZ(16), NULL, TH_UINT8);
    CHECK(u8 != NULL);
    th_tensor_release(u8);
    th_storage_release(w);
}

static void test_bincount(void) {
    th_tensor *a = th_scalar_int64(INT64_MAX, TH_INT64);
    th_tensor *a1 = th_view(a, 1, SZ(1));
    ERR(!th_bincount(a1, NULL, 0), TH_ERR_RUNTIME,
        "maximum value of input overflowed");
    th_tensor_release(a1);
    th_tensor_release(a);
}

/* int64 + - * and negation wrap in two's complement, as in PyTorch */
static void test_int_wrap(void) {
    th_tensor *mx = th_scalar_int64(INT64_MAX, TH_INT64);
    th_tensor *mn = th_scalar_int64(INT64_MIN, TH_INT64);
    th_tensor *r = th_binary(TH_ADD, mx, mx);
    int64_t v = 0;
    CHECK(r && th_get_int64(r, 0, &v) == TH_OK && v == -2);
    th_tensor_release(r);
    r = th_binary(TH_SUB, mn, mx);
    CHECK(r && th_get_int64(r, 0, &v) == TH_OK && v == 1);
    th_tensor_release(r);
    r = th_binary(TH_MUL, mx, mx);
    CHECK(r && th_get_int64(r, 0, &v) == TH_OK && v == 1);
    th_tensor_release(r);
    r = th_unary(TH_NEG, mn);
    CHECK(r && th_get_int64(r, 0, &v) == TH_OK && v == INT64_MIN);
    th_tensor_release(r);
    r = th_unary(TH_ABS, mn);
    CHECK(r && th_get_int64(r, 0, &v) == TH_OK && v == INT64_MIN);
    th_tensor_release(r);
    r = th_binary(TH_POW, mx, mx);
    CHECK(r && th_get_int64(r, 0, &v) == TH_OK && v == INT64_MAX);
    th_tensor_release(r);
    th_tensor *i32 = th_scalar_int64(INT32_MAX, TH_INT32);
    r = th_binary(TH_MUL, i32, i32);
    CHECK(r && th_get_int64(r, 0, &v) == TH_OK && v == 1);
    th_tensor_release(r);
    r = th_unary(TH_SQUARE, i32);
    CHECK(r && th_get_int64(r, 0, &v) == TH_OK && v == 1);
    th_tensor_release(r);
    /* 256 is 0 in int8, the compute dtype: refused, not a trap */
    th_tensor *i8 = th_scalar_int64(3, TH_INT8);
    th_tensor *i8v = th_view(i8, 1, SZ(1));
    th_tensor *d256 = th_scalar_int64(256, TH_INT64);
    d256->flags |= TH_TENSOR_WRAPPED_NUMBER;
    ERR(!(r = th_binary(TH_FLOOR_DIVIDE, i8v, d256)), TH_ERR_RUNTIME,
        "ZeroDivisionError");
    ERR(!(r = th_binary(TH_REMAINDER, i8v, d256)), TH_ERR_RUNTIME,
        "ZeroDivisionError");
    th_tensor_release(r);
    th_tensor_release(d256);
    th_tensor_release(i8v);
    th_tensor_release(i8);
    th_tensor_release(i32);
    th_tensor_release(mx);
    th_tensor_release(mn);
}

int main(void) {
    test_sizes();
    test_bincount();
    test_int_wrap();
    return check_report("test_limits");
}
