/* Hostile sizes and strides: libTHC refuses them with PyTorch's wording
 * instead of wrapping int64 arithmetic into a tensor that addresses memory
 * outside its storage.  Needs no device: the refusals come before any
 * allocation, and the views are made over wrapped (never read) memory. */
#include <stdint.h>
#include "check.h"

#define BIG (INT64_C(1) << 61)

static void test_constructors(void) {
    int64_t sz[3] = {INT64_C(1) << 40, INT64_C(1) << 40, 1};
    thc_clear_error();
    CHECK(thc_empty(2, sz, THC_FLOAT32) == NULL);
    CHECK(thc_last_status() == THC_ERR_RUNTIME &&
          strstr(thc_last_error(), "Storage size calculation overflowed "
                 "with sizes=[1099511627776, 1099511627776]"));
    int64_t s3[1] = {3}, st3[1] = {BIG};
    thc_clear_error();
    CHECK(thc_empty_strided(1, s3, st3, THC_FLOAT32) == NULL);
    CHECK(strstr(thc_last_error(), "Storage size calculation overflowed with "
                 "sizes=[3] and strides=[2305843009213693952]"));
    int64_t neg[2] = {2, -3};
    thc_clear_error();
    CHECK(thc_empty(2, neg, THC_FLOAT32) == NULL);
    CHECK(strstr(thc_last_error(), "negative dimension -3: [2, -3]"));
}

static void test_views(void) {
    static float buf[4];
    thc_storage *s = thc_storage_wrap(buf, sizeof buf, 0, NULL, NULL);
    CHECK(s != NULL);
    if (!s) return;
    int64_t two[2] = {2, 2}, st[2] = {BIG - 1, BIG + 10};
    thc_clear_error();
    CHECK(thc_tensor_from_storage(s, 0, 2, two, st, THC_FLOAT32) == NULL);
    CHECK(strstr(thc_last_error(), "Storage size calculation overflowed"));
    int64_t far[1] = {5}, one[1] = {1};
    thc_clear_error();
    CHECK(thc_tensor_from_storage(s, 0, 1, far, one, THC_FLOAT32) == NULL);
    CHECK(strstr(thc_last_error(), "setStorage: sizes [5], strides [1], "
                 "storage offset 0, and itemsize 4 requiring a storage size "
                 "of 20 are out of bounds for storage of size 16"));
    thc_clear_error();
    CHECK(thc_tensor_from_storage(s, INT64_MAX, 1, one, one, THC_FLOAT32) == NULL);
    CHECK(thc_last_status() == THC_ERR_RUNTIME);

    thc_tensor *t = thc_tensor_from_storage(s, 0, 2, two, NULL, THC_FLOAT32);
    CHECK(t != NULL);
    if (t) {
        int64_t big[2] = {INT64_C(1) << 40, INT64_C(1) << 40};
        int64_t one11[2] = {1, 1};
        thc_tensor *u = thc_as_strided(t, 2, one11, two, 0);
        CHECK(u != NULL);
        if (u) {
            thc_clear_error();
            CHECK(thc_expand(u, 2, big) == NULL);
            CHECK(strstr(thc_last_error(), "numel: integer multiplication overflow"));
            thc_tensor_release(u);
        }
        thc_clear_error();
        CHECK(thc_as_strided(t, 2, two, st, 0) == NULL);
        CHECK(strstr(thc_last_error(), "Storage size calculation overflowed"));
        int64_t huge[2] = {INT64_C(1) << 62, 4};
        thc_clear_error();
        CHECK(thc_view(t, 2, huge) == NULL);
        CHECK(strstr(thc_last_error(), "is invalid for input of size 4"));
        /* a step whose stride product overflows refuses unless the dim keeps
           one element (x[::2**62] is valid, as in PyTorch) */
        thc_tensor *r = thc_slice(t, 0, 0, 2, INT64_C(1) << 62);
        CHECK(r != NULL && r->sizes[0] == 1);
        thc_tensor_release(r);
        thc_tensor_release(t);
    }
    thc_storage_release(s);
}

int main(void) {
    test_constructors();
    test_views();
    return check_report("test_limits");
}
