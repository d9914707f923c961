/* Kernels and the allocator on a real device; prints "skipped" and passes
 * when there is none. */
#include <stdint.h>
#include <stdlib.h>
#include "check.h"

#include <cuda_runtime_api.h>   /* C-compatible: cudaMemcpy */

#define H2D cudaMemcpyHostToDevice
#define D2H cudaMemcpyDeviceToHost

static thc_layout layout(int ndim, const int64_t *sizes, const int64_t *strides) {
    thc_layout l;
    memset(&l, 0, sizeof l);
    l.ndim = ndim;
    for (int d = 0; d < ndim; d++) {
        l.sizes[d] = sizes[d];
        l.strides[d] = strides[d];
    }
    return l;
}

static void test_kernels(thc_allocator *a) {
    /* out[i,j] = x[i] (column, broadcast along j) op y[j,i] (a transposed view) */
    enum { R = 37, C = 1029 };
    static double hx[R], hy[R * C], hout[R * C];
    for (int i = 0; i < R; i++) hx[i] = i * 0.5;
    for (int k = 0; k < R * C; k++) hy[k] = k % 97 - 13;
    void *dx, *dy, *dout;
    CHECK(thc_allocator_malloc(a, &dx, sizeof hx, NULL) == THC_OK);
    CHECK(thc_allocator_malloc(a, &dy, sizeof hy, NULL) == THC_OK);
    CHECK(thc_allocator_malloc(a, &dout, sizeof hout, NULL) == THC_OK);
    CHECK(cudaMemcpy(dx, hx, sizeof hx, H2D) == 0 && cudaMemcpy(dy, hy, sizeof hy, H2D) == 0);
    thc_layout ol = layout(2, (int64_t[]){R, C}, (int64_t[]){C, 1});
    thc_layout xl = layout(2, (int64_t[]){R, C}, (int64_t[]){1, 0});
    thc_layout yl = layout(2, (int64_t[]){R, C}, (int64_t[]){1, R});   /* y is C x R */
    for (int op = THC_ADD; op <= THC_MUL; op++) {
        CHECK(thc_binary(op, THC_FLOAT64, dout, &ol, dx, &xl, dy, &yl, NULL) == THC_OK);
        CHECK(cudaMemcpy(hout, dout, sizeof hout, D2H) == 0);
        int bad = 0;
        for (int i = 0; i < R; i++)
            for (int j = 0; j < C; j++) {
                double x = hx[i], y = hy[j * R + i];
                bad += hout[i * C + j] != (op == THC_ADD ? x + y : x * y);
            }
        CHECK(bad == 0);
    }
    /* fill a strided (every other column) float32 view, then copy it out
     * transposed */
    float *hf = malloc(sizeof(float) * R * C);
    CHECK(cudaMemcpy(dout, hy, sizeof hy, H2D) == 0);
    thc_layout half = layout(2, (int64_t[]){R, C / 2}, (int64_t[]){C, 2});
    CHECK(thc_fill(dout, THC_FLOAT32, &half, 2.5, NULL) == THC_OK);
    thc_layout dst = layout(2, (int64_t[]){R, C / 2}, (int64_t[]){1, R});
    CHECK(thc_copy(dy, &dst, dout, &half, THC_FLOAT32, NULL) == THC_OK);
    CHECK(cudaMemcpy(hf, dy, sizeof(float) * R * (C / 2), D2H) == 0);
    int bad = 0;
    for (int k = 0; k < R * (C / 2); k++) bad += hf[k] != 2.5f;
    CHECK(bad == 0);
    free(hf);
    ERR(thc_fill(dout, 7, &half, 0, NULL), THC_ERR_TYPE, "not supported on the GPU");
    ERR(thc_binary(THC_ADD, THC_FLOAT32, dout, &ol, dx, &half, dy, &yl, NULL), THC_ERR_RUNTIME,
        "different shapes");
    CHECK(thc_allocator_free(a, dx) == THC_OK && thc_allocator_free(a, dy) == THC_OK);
    CHECK(thc_allocator_free(a, dout) == THC_OK);
}

static void test_allocator_oom(thc_allocator *a) {
    void *p = NULL;
    ERR(thc_allocator_malloc(a, &p, (size_t)1 << 50, NULL), THC_ERR_MEMORY,
        "CUDA out of memory. Tried to allocate");
    CHECK(thc_allocator_malloc(a, &p, 1000, NULL) == THC_OK && p);   /* still usable */
    CHECK(thc_allocator_free(a, p) == THC_OK);
    CHECK(thc_allocator_empty_cache(a) == THC_OK);
    thc_alloc_stats s;
    CHECK(thc_allocator_stats(a, &s) == THC_OK && s.reserved_bytes == 0 && s.num_ooms == 1);
}

int main(void) {
    int n = 0;
    CHECK(thc_device_count(&n) == THC_OK);
    if (n == 0) {
        printf("test_gpu: skipped (no CUDA device: %s)\n", thc_cuda_error_text());
        return check_report("test_gpu");
    }
    int dev = -1;
    CHECK(thc_get_device(&dev) == THC_OK && dev == 0);
    CHECK(thc_set_device(0) == THC_OK);
    ERR(thc_set_device(n), THC_ERR_VALUE, "does not exist");
    const thc_device_ops *ops = thc_cuda_device_ops();
    CHECK(ops != NULL);
    thc_allocator *a = ops ? thc_allocator_new(ops) : NULL;
    if (a) {
        test_kernels(a);
        CHECK(cudaDeviceSynchronize() == 0);
        test_allocator_oom(a);
        thc_allocator_delete(a);
    }
    return check_report("test_gpu");
}
