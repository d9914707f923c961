/* GPU tensors through the public API on a device: a real GPU, or the
 * emulated device of a host-only build (make check sets
 * EMBER_THC_EMULATE=1 there).  Prints "skipped" and passes without one.
 * Expected values are computed here on the host. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include "check.h"

static thc_tensor *upload(int ndim, const int64_t *sizes, int dtype, const void *host) {
    thc_tensor *t = thc_empty(ndim, sizes, dtype);
    CHECK(t && thc_copy_from_host(t, host) == THC_OK);
    return t;
}

static double rnd(void) { return (double)rand() / RAND_MAX * 4.0 - 2.0; }

/* out[i,j] = x[i] (a column broadcast along j) op y[j,i] (a transposed view) */
static void test_broadcast_binary(void) {
    enum { R = 37, C = 129 };
    static double hx[R], hy[C * R], hout[R * C];
    for (int i = 0; i < R; i++) hx[i] = rnd();
    for (int k = 0; k < R * C; k++) hy[k] = rnd();
    thc_tensor *x = upload(2, (int64_t[]){R, 1}, THC_FLOAT64, hx);
    thc_tensor *y = upload(2, (int64_t[]){C, R}, THC_FLOAT64, hy);
    thc_tensor *yt = thc_transpose(y, 0, 1);
    for (int op = THC_ADD; op <= THC_DIV; op++) {
        thc_tensor *out = thc_binary(op, x, yt);
        CHECK(out && out->ndim == 2 && out->sizes[0] == R && out->sizes[1] == C);
        if (!out) continue;
        CHECK(thc_copy_to_host(hout, out) == THC_OK);
        int bad = 0;
        for (int i = 0; i < R; i++)
            for (int j = 0; j < C; j++) {
                double a = hx[i], b = hy[j * R + i];
                double e = op == THC_ADD ? a + b : op == THC_SUB ? a - b
                         : op == THC_MUL ? a * b : a / b;
                bad += fabs(hout[i * C + j] - e) > 1e-12 * (1 + fabs(e));
            }
        CHECK(bad == 0);
        thc_tensor_release(out);
    }
    thc_tensor_release(x);
    thc_tensor_release(y);
    thc_tensor_release(yt);
}

/* int32 tensor + a Python float: float32 (the default dtype), 7 // 2 == 3,
 * comparisons give bool, integer division by zero is an error */
static void test_promotion(void) {
    int32_t hi[6] = {-7, -3, 0, 2, 5, 9};
    float hf[6];
    thc_tensor *a = upload(1, (int64_t[]){6}, THC_INT32, hi);
    thc_tensor *half = thc_scalar_double(0.5, THC_FLOAT64);
    half->flags = THC_TENSOR_WRAPPED_NUMBER;
    thc_tensor *r = thc_binary(THC_ADD, a, half);
    CHECK(r && r->dtype == THC_FLOAT32);
    if (r) {
        CHECK(thc_copy_to_host(hf, r) == THC_OK);
        int bad = 0;
        for (int i = 0; i < 6; i++) bad += hf[i] != (float)hi[i] + 0.5f;
        CHECK(bad == 0);
    }
    thc_tensor *two = thc_scalar_int64(2, THC_INT64);
    two->flags = THC_TENSOR_WRAPPED_NUMBER;
    thc_tensor *q = thc_binary(THC_FLOOR_DIVIDE, a, two);
    int32_t hq[6];
    CHECK(q && q->dtype == THC_INT32 && thc_copy_to_host(hq, q) == THC_OK);
    CHECK(hq[0] == -4 && hq[1] == -2 && hq[2] == 0 && hq[5] == 4);
    thc_tensor *gt = thc_binary(THC_GT, a, two);
    CHECK(gt && gt->dtype == THC_BOOL);
    thc_tensor *zero = thc_scalar_int64(0, THC_INT64);
    thc_tensor *z = thc_binary(THC_REMAINDER, two, a);   /* scalar % tensor with a 0 in it */
    CHECK(z == NULL && strstr(thc_last_error(), "ZeroDivisionError"));
    thc_tensor *all[] = {a, half, r, two, q, gt, zero};
    for (int i = 0; i < 7; i++) thc_tensor_release(all[i]);
}

static void test_unary_and_halves(void) {
    enum { N = 300 };
    static float h[N], out[N];
    for (int i = 0; i < N; i++) h[i] = (float)rnd();
    thc_tensor *a = upload(2, (int64_t[]){N / 3, 3}, THC_FLOAT32, h);
    thc_tensor *at = thc_transpose(a, 0, 1);
    thc_tensor *e = thc_unary(THC_EXP, at);
    thc_tensor *et = e ? thc_transpose(e, 0, 1) : NULL;
    CHECK(et && thc_copy_to_host(out, et) == THC_OK);
    int bad = 0;
    for (int i = 0; i < N; i++) bad += fabsf(out[i] - expf(h[i])) > 1e-6f * expf(h[i]);
    CHECK(bad == 0);
    /* float32 -> float16 -> float32 rounds to 11 significant bits */
    thc_tensor *hh = thc_to_dtype(a, THC_FLOAT16), *back = hh ? thc_to_dtype(hh, THC_FLOAT32) : NULL;
    CHECK(back && thc_copy_to_host(out, back) == THC_OK);
    bad = 0;
    for (int i = 0; i < N; i++) bad += fabsf(out[i] - h[i]) > fabsf(h[i]) / 1024.0f;
    CHECK(bad == 0);
    ERR(thc_unary(THC_BITWISE_NOT, a) == NULL ? thc_last_status() : 0, THC_ERR_TYPE,
        "not implemented for 'Float'");
    thc_tensor *all[] = {a, at, e, et, hh, back};
    for (int i = 0; i < 6; i++) thc_tensor_release(all[i]);
}

static void test_reductions(void) {
    enum { R = 5, C = 1000 };
    static double h[R * C], out[R];
    for (int i = 0; i < R * C; i++) h[i] = rnd();
    h[3 * C + 17] = NAN;
    thc_tensor *a = upload(2, (int64_t[]){R, C}, THC_FLOAT64, h);
    int dim = 1;
    thc_tensor *s = thc_reduce(THC_RED_SUM, a, 1, &dim, 0, -1);
    thc_tensor *m = thc_reduce(THC_RED_AMAX, a, 1, &dim, 1, -1);
    CHECK(s && s->ndim == 1 && m && m->ndim == 2 && m->sizes[1] == 1);
    CHECK(s && thc_copy_to_host(out, s) == THC_OK);
    int bad = 0;
    for (int i = 0; i < R; i++) {
        double e = 0;
        for (int j = 0; j < C; j++) e += h[i * C + j];
        bad += i == 3 ? !isnan(out[i]) : fabs(out[i] - e) > 1e-9;
    }
    CHECK(bad == 0);
    CHECK(m && thc_copy_to_host(out, m) == THC_OK && isnan(out[3]));
    thc_tensor *vals = NULL, *idx = NULL;
    CHECK(thc_minmax_dim(a, 1, 0, 0, &vals, &idx) == THC_OK);
    int64_t hidx[R];
    CHECK(idx && thc_copy_to_host(hidx, idx) == THC_OK && hidx[3] == 17);
    ERR(thc_reduce(THC_RED_SUM, a, 1, (int[]){2}, 0, -1) == NULL ? thc_last_status() : 0,
        THC_ERR_INDEX, "Dimension out of range");
    thc_tensor *all[] = {a, s, m, vals, idx};
    for (int i = 0; i < 5; i++) thc_tensor_release(all[i]);
}

static void test_matmul(void) {
    enum { M = 37, K = 29, N = 41 };
    static float ha[M * K], hb[N * K], hc[M * N];
    for (int i = 0; i < M * K; i++) ha[i] = (float)rnd();
    for (int i = 0; i < N * K; i++) hb[i] = (float)rnd();
    thc_tensor *a = upload(2, (int64_t[]){M, K}, THC_FLOAT32, ha);
    thc_tensor *b = upload(2, (int64_t[]){N, K}, THC_FLOAT32, hb);
    thc_tensor *bt = thc_transpose(b, 0, 1);   /* K x N, column-major */
    thc_tensor *c = thc_mm(a, bt);
    CHECK(c && thc_copy_to_host(hc, c) == THC_OK);
    int bad = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double e = 0;
            for (int k = 0; k < K; k++) e += (double)ha[i * K + k] * hb[j * K + k];
            bad += fabs(hc[i * N + j] - e) > 1e-4;
        }
    CHECK(bad == 0);
    ERR(thc_mm(a, b) == NULL ? thc_last_status() : 0, THC_ERR_RUNTIME,
        "mat1 and mat2 shapes cannot be multiplied (37x29 and 41x29)");
    thc_tensor *all[] = {a, b, bt, c};
    for (int i = 0; i < 4; i++) thc_tensor_release(all[i]);
}

static void test_random(void) {
    thc_tensor *t = thc_empty(1, (int64_t[]){10000}, THC_FLOAT32);
    thc_generator_set_seed(thc_default_generator(), 42);
    CHECK(t && thc_uniform_(t, 2.0, 3.0, NULL) == THC_OK);
    static float h[10000], h2[10000];
    CHECK(thc_copy_to_host(h, t) == THC_OK);
    double sum = 0;
    int out_of_range = 0;
    for (int i = 0; i < 10000; i++) {
        sum += h[i];
        out_of_range += h[i] < 2.0f || h[i] >= 3.0f;
    }
    CHECK(out_of_range == 0 && fabs(sum / 10000 - 2.5) < 0.02);
    thc_generator_set_seed(thc_default_generator(), 42);   /* the same seed, the same values */
    CHECK(thc_uniform_(t, 2.0, 3.0, NULL) == THC_OK && thc_copy_to_host(h2, t) == THC_OK);
    CHECK(memcmp(h, h2, sizeof h) == 0);
    thc_tensor_release(t);
}

/* work queued on a stream of our own, timed by two events */
static void test_streams(void) {
    void *stream = NULL, *start = NULL, *end = NULL;
    CHECK(thc_stream_create(&stream) == THC_OK && stream != NULL);
    CHECK(thc_event_create(&start, 1) == THC_OK && thc_event_create(&end, 1) == THC_OK);
    CHECK(thc_set_current_stream(stream) == THC_OK && thc_current_stream() == stream);
    CHECK(thc_event_record(start, stream) == THC_OK);
    thc_tensor *t = thc_empty(1, (int64_t[]){1000}, THC_FLOAT32);
    CHECK(t && thc_fill_double(t, 2.5) == THC_OK);
    CHECK(thc_event_record(end, stream) == THC_OK);
    CHECK(thc_event_synchronize(end) == THC_OK && thc_event_query(end) == 1);
    float ms = -1;
    CHECK(thc_event_elapsed_ms(start, end, &ms) == THC_OK && ms >= 0);
    CHECK(thc_stream_synchronize(stream) == THC_OK && thc_stream_query(stream) == 1);
    double v = 0;
    CHECK(thc_get_double(t, 999, &v) == THC_OK && v == 2.5);
    thc_tensor_release(t);   /* freed on the stream it was made on */
    CHECK(thc_set_current_stream(NULL) == THC_OK);
    CHECK(thc_event_destroy(start) == THC_OK && thc_event_destroy(end) == THC_OK);
    CHECK(thc_stream_destroy(stream) == THC_OK);
}

#ifndef THC_TEST_NO_CUDA_OPS
static void test_allocator_oom(void) {
    const thc_device_ops *ops = thc_cuda_device_ops();
    if (!ops) return;   /* a host-only build: no CUDA allocator to test */
    thc_allocator *a = thc_allocator_new(ops);
    void *p = NULL;
    ERR(thc_allocator_malloc(a, &p, (size_t)1 << 50, NULL), THC_ERR_MEMORY,
        "CUDA out of memory. Tried to allocate");
    CHECK(thc_allocator_malloc(a, &p, 1000, NULL) == THC_OK && p);   /* still usable */
    CHECK(thc_allocator_free(a, p) == THC_OK);
    CHECK(thc_allocator_empty_cache(a) == THC_OK);
    thc_alloc_stats s;
    CHECK(thc_allocator_stats(a, &s) == THC_OK && s.reserved_bytes == 0 && s.num_ooms == 1);
    thc_allocator_delete(a);
}
#endif

int main(void) {
    int n = 0;
    CHECK(thc_device_count(&n) == THC_OK);
    if (n == 0) {
        printf("test_device: skipped (no CUDA device: %s)\n", thc_cuda_error_text());
        return check_report("test_device");
    }
    printf("test_device: %s\n", thc_is_emulated() ? "the emulated device" : "a CUDA device");
    srand(7);
    int dev = -1;
    CHECK(thc_get_device(&dev) == THC_OK && dev == 0);
    CHECK(thc_set_device(0) == THC_OK);
    ERR(thc_set_device(n), THC_ERR_VALUE, "does not exist");
    test_broadcast_binary();
    test_promotion();
    test_unary_and_halves();
    test_reductions();
    test_matmul();
    test_random();
    test_streams();
    CHECK(thc_synchronize() == THC_OK);
#ifndef THC_TEST_NO_CUDA_OPS
    test_allocator_oom();
#endif
    return check_report("test_device");
}
