/* Launch configurations and strided offsets against a naive reference. */
#include <stdint.h>
#include <stdlib.h>
#include "check.h"

/* Reference: count up a multi-index like an odometer, summing strides. */
static int64_t naive_offset(int ndim, const int64_t *sizes, const int64_t *strides,
                            int64_t linear) {
    int64_t idx[THC_MAX_DIMS] = {0};
    for (int64_t k = 0; k < linear; k++)
        for (int d = ndim - 1; d >= 0; d--) {
            if (++idx[d] < sizes[d]) break;
            idx[d] = 0;
        }
    int64_t off = 0;
    for (int d = 0; d < ndim; d++) off += idx[d] * strides[d];
    return off;
}

static void test_offsets_random(void) {
    srand(11);
    for (int trial = 0; trial < 300; trial++) {
        int ndim = rand() % (THC_MAX_DIMS + 1);
        int64_t sizes[THC_MAX_DIMS], strides[THC_MAX_DIMS], numel = 1;
        for (int d = 0; d < ndim; d++) {
            sizes[d] = numel > 4096 ? 1 : 1 + rand() % 4;
            strides[d] = rand() % 13 - 6;          /* zero, negative, gaps */
            numel *= sizes[d];
        }
        for (int k = 0; k < 20; k++) {
            int64_t i = rand() % numel, off = -1;
            CHECK(thc_strided_offset(ndim, sizes, strides, i, &off) == THC_OK);
            CHECK(off == naive_offset(ndim, sizes, strides, i));
        }
    }
}

static void test_offsets_large(void) {
    /* beyond 2^31 elements, transposed */
    int64_t sizes[2] = {100000, 50000}, strides[2] = {1, 100000}, off = 0;
    int64_t i = (int64_t)99999 * 50000 + 49999;
    CHECK(thc_strided_offset(2, sizes, strides, i, &off) == THC_OK);
    CHECK(off == (int64_t)99999 + (int64_t)49999 * 100000);
    CHECK(thc_strided_offset(0, NULL, NULL, 0, &off) == THC_OK && off == 0);
}

static void test_offsets_bad(void) {
    int64_t sizes[2] = {2, 3}, strides[2] = {3, 1}, off;
    ERR(thc_strided_offset(2, sizes, strides, 6, &off), THC_ERR_INDEX, "out of range");
    ERR(thc_strided_offset(2, sizes, strides, -1, &off), THC_ERR_INDEX, "out of range");
    ERR(thc_strided_offset(17, sizes, strides, 0, &off), THC_ERR_VALUE, "ndim must be");
    int64_t neg[2] = {2, -1};
    ERR(thc_strided_offset(2, neg, strides, 0, &off), THC_ERR_VALUE, "is negative");
    int64_t huge[3] = {INT64_MAX / 2, 4, 1};
    ERR(thc_strided_offset(3, huge, strides, 0, &off), THC_ERR_VALUE, "2^63");
    ERR(thc_strided_offset(2, sizes, strides, 0, NULL), THC_ERR_VALUE, "NULL");
}

static void test_launch(void) {
    thc_launch_config c;
    CHECK(thc_launch_config_for(1000, 256, 65535, &c) == THC_OK);
    CHECK(c.grid == 4 && c.block == 256 && c.per_thread == 1);
    CHECK(thc_launch_config_for(0, 256, 65535, &c) == THC_OK && c.grid == 1);
    int64_t n = ((int64_t)1 << 33) + 7;
    CHECK(thc_launch_config_for(n, 512, 65535, &c) == THC_OK);
    CHECK(c.grid == 65535 && c.grid * c.block * c.per_thread >= n);
    CHECK(c.grid * c.block * (c.per_thread - 1) < n);
    srand(3);
    for (int k = 0; k < 1000; k++) {
        int64_t m = ((int64_t)rand() << 12) ^ rand();
        int tpb = 32 * (1 + rand() % 32);
        int64_t grid = 1 + rand() % 100000;
        CHECK(thc_launch_config_for(m, tpb, grid, &c) == THC_OK);
        CHECK(c.grid <= grid && c.grid * c.block * c.per_thread >= m);
    }
    ERR(thc_launch_config_for(-1, 256, 10, &c), THC_ERR_VALUE, "n must be >= 0");
    ERR(thc_launch_config_for(10, 100, 10, &c), THC_ERR_VALUE, "multiple of 32");
    ERR(thc_launch_config_for(10, 2048, 10, &c), THC_ERR_VALUE, "multiple of 32");
    ERR(thc_launch_config_for(10, 256, 0, &c), THC_ERR_VALUE, "max_grid");
}

static void test_library_facts(void) {
    int count = -1;
    CHECK(thc_abi_version_major() == THC_ABI_VERSION_MAJOR);
    CHECK(thc_abi_version_minor() == THC_ABI_VERSION_MINOR);
    CHECK(thc_device_count(&count) == THC_OK && count >= 0);
    if (count == 0) CHECK(thc_cuda_error_text()[0] != '\0');
    ERR(thc_device_count(NULL), THC_ERR_VALUE, "count is NULL");
}

int main(void) {
    test_offsets_random();
    test_offsets_large();
    test_offsets_bad();
    test_launch();
    test_library_facts();
    return check_report("test_launch");
}
