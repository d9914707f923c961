/* libTH's FFT from C: complex, real-to-complex and complex-to-real
 * transforms against a direct O(n^2) DFT in double, over the lane path
 * (short lines side by side), the four-step path (long lines), every
 * radix (4, 2, odd primes), both precisions, strided and non-last dims;
 * and the refusals (dtype, length, sizes) as error statuses. */
#include <string.h>
#include "check.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static double uniform(void) { /* in [-1, 1) */
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng_state >> 11) / (double)(1ull << 52) - 1.0;
}

/* x: `lines` contiguous lines of n complex values (double pairs); out[k] =
 * scale * sum_j x[j] e^{sign 2 pi i jk / n} */
static void dft(const double *x, double *out, int64_t lines, int64_t n, int sign,
                double scale) {
    double *c = malloc(sizeof(double) * 2 * n), *s = c + n;
    for (int64_t m = 0; m < n; m++) {
        c[m] = cos(2 * 3.14159265358979323846 * (double)m / n);
        s[m] = sign * sin(2 * 3.14159265358979323846 * (double)m / n);
    }
    for (int64_t b = 0; b < lines; b++)
        for (int64_t k = 0; k < n; k++) {
            double re = 0, im = 0;
            for (int64_t j = 0, m = 0; j < n; j++, m = (m + k) % n) { /* m = jk mod n */
                const double *v = x + 2 * (b * n + j);
                re += v[0] * c[m] - v[1] * s[m];
                im += v[0] * s[m] + v[1] * c[m];
            }
            out[2 * (b * n + k)] = scale * re;
            out[2 * (b * n + k) + 1] = scale * im;
        }
    free(c);
}

/* t's element i (contiguous order) as (re, im), any dtype */
static void element(const th_tensor *t, int64_t i, double *re, double *im) {
    if (t->dtype == TH_COMPLEX64 || t->dtype == TH_COMPLEX128) {
        th_get_complex(t, i, re, im);
    } else {
        th_get_double(t, i, re);
        *im = 0;
    }
}

/* largest |got - want| over the (re, im) pairs, relative to the largest |want| */
static double error(const th_tensor *got, const double *want, int64_t count) {
    double worst = 0, big = 1e-300;
    for (int64_t i = 0; i < count; i++) {
        double re, im;
        element(got, i, &re, &im);
        worst = fmax(worst, fmax(fabs(re - want[2 * i]), fabs(im - want[2 * i + 1])));
        big = fmax(big, fmax(fabs(want[2 * i]), fabs(want[2 * i + 1])));
    }
    return worst / big;
}

static double tolerance(int dtype) {
    return dtype == TH_COMPLEX128 || dtype == TH_FLOAT64 ? 1e-12 : 2e-5;
}

/* a (lines, n) complex tensor of random values, and its values as pairs */
static th_tensor *random_lines(int64_t lines, int64_t n, int dtype, double *vals) {
    th_tensor *t = th_empty(2, (int64_t[]){lines, n}, dtype);
    for (int64_t i = 0; i < lines * n; i++) {
        vals[2 * i] = uniform();
        vals[2 * i + 1] = dtype == TH_COMPLEX64 || dtype == TH_COMPLEX128 ? uniform() : 0;
        if (dtype == TH_COMPLEX64)
            ((float *)th_data_ptr(t))[2 * i] = (float)vals[2 * i],
            ((float *)th_data_ptr(t))[2 * i + 1] = (float)vals[2 * i + 1];
        else if (dtype == TH_COMPLEX128)
            ((double *)th_data_ptr(t))[2 * i] = vals[2 * i],
            ((double *)th_data_ptr(t))[2 * i + 1] = vals[2 * i + 1];
        else if (dtype == TH_FLOAT32)
            ((float *)th_data_ptr(t))[i] = (float)vals[2 * i];
        else
            ((double *)th_data_ptr(t))[i] = vals[2 * i];
        if (dtype == TH_COMPLEX64 || dtype == TH_FLOAT32) { /* what float holds */
            vals[2 * i] = (float)vals[2 * i];
            vals[2 * i + 1] = (float)vals[2 * i + 1];
        }
    }
    return t;
}

static void check_c2c(int64_t lines, int64_t n, int dtype) {
    double *x = malloc(sizeof(double) * 2 * lines * n), *want = malloc(sizeof(double) * 2 * lines * n);
    th_tensor *t = random_lines(lines, n, dtype, x);
    for (int inverse = 0; inverse <= 1; inverse++) {
        double scale = inverse ? 1.0 / n : 1.0;
        dft(x, want, lines, n, inverse ? 1 : -1, scale);
        th_tensor *f = th_fft_c2c(t, 1, inverse, scale);
        double e = f ? error(f, want, lines * n) : 1;
        if (!(e < tolerance(dtype)))
            fprintf(stderr, "  c2c lines %lld n %lld %s inverse %d: error %g\n",
                    (long long)lines, (long long)n, th_dtype_name(dtype), inverse, e);
        CHECK(f && e < tolerance(dtype));
        th_tensor_release(f);
    }
    th_tensor_release(t);
    free(x);
    free(want);
}

/* r2c against the DFT's first n/2 + 1 values, and c2r of that back */
static void check_real(int64_t lines, int64_t n, int dtype) {
    const int64_t h = n / 2 + 1;
    double *x = malloc(sizeof(double) * 2 * lines * n), *full = malloc(sizeof(double) * 2 * lines * n);
    double *want = malloc(sizeof(double) * 2 * lines * h);
    th_tensor *t = random_lines(lines, n, dtype, x);
    dft(x, full, lines, n, -1, 1.0);
    for (int64_t b = 0; b < lines; b++)
        memcpy(want + 2 * b * h, full + 2 * b * n, sizeof(double) * 2 * h);
    th_tensor *f = th_fft_r2c(t, -1, 1.0);
    double e = f ? error(f, want, lines * h) : 1;
    if (!(e < tolerance(dtype)))
        fprintf(stderr, "  r2c lines %lld n %lld: error %g\n", (long long)lines, (long long)n, e);
    CHECK(f && f->sizes[1] == h && e < tolerance(dtype));
    th_tensor *back = f ? th_fft_c2r(f, 1, n, 1.0 / n) : NULL;
    e = back ? error(back, x, lines * n) : 1;
    if (!(e < tolerance(dtype)))
        fprintf(stderr, "  c2r lines %lld n %lld: error %g\n", (long long)lines, (long long)n, e);
    CHECK(back && back->dtype == dtype && back->sizes[1] == n && e < tolerance(dtype));
    th_tensor_release(back);
    th_tensor_release(f);
    th_tensor_release(t);
    free(x);
    free(full);
    free(want);
}

static void test_lengths(void) {
    /* radices 4, 2, 3, 5, 7, 61; lane lengths, four-step lengths (>= 256 for
     * a single line, > 2048 for a batch) with aligned and unaligned splits */
    static const int64_t lengths[] = {1, 2, 3, 4, 5, 6, 8, 12, 16, 35, 61, 64, 100, 122,
                                      256, 360, 512, 1000, 2187, 3375, 4096};
    static const int dtypes[] = {TH_COMPLEX64, TH_COMPLEX128};
    for (size_t d = 0; d < 2; d++)
        for (size_t i = 0; i < sizeof lengths / sizeof *lengths; i++) {
            check_c2c(1, lengths[i], dtypes[d]);
            check_c2c(lengths[i] <= 512 ? 19 : 2, lengths[i], dtypes[d]);
        }
}

static void test_real_lengths(void) {
    static const int64_t lengths[] = {1, 2, 3, 4, 7, 10, 64, 66, 121, 250, 512, 1024, 4100};
    for (size_t i = 0; i < sizeof lengths / sizeof *lengths; i++) {
        check_real(1, lengths[i], TH_FLOAT32);
        check_real(lengths[i] <= 1024 ? 17 : 2, lengths[i], TH_FLOAT64);
    }
}

/* a transform along dim 0 of a transposed (non-contiguous) view */
static void test_strided(void) {
    const int64_t lines = 5, n = 48;
    double *x = malloc(sizeof(double) * 2 * lines * n), *want = malloc(sizeof(double) * 2 * lines * n);
    th_tensor *t = random_lines(lines, n, TH_COMPLEX128, x);
    th_tensor *v = th_transpose(t, 0, 1); /* (n, lines), lines along dim 1 */
    dft(x, want, lines, n, -1, 2.0);
    th_tensor *f = th_fft_c2c(v, 0, 0, 2.0);
    CHECK(f && th_is_contiguous(f) && f->sizes[0] == n && f->sizes[1] == lines);
    th_tensor *ft = f ? th_transpose(f, 0, 1) : NULL;
    th_tensor *fc = ft ? th_contiguous(ft) : NULL;
    CHECK(fc && error(fc, want, lines * n) < 1e-12);
    th_tensor *r = th_view_as_real(v), *re = r ? th_select(r, 2, 0) : NULL; /* stride 2 reals */
    th_tensor *rf = re ? th_fft_r2c(re, 0, 1.0) : NULL;
    CHECK(rf && rf->sizes[0] == n / 2 + 1 && rf->sizes[1] == lines);
    th_tensor *ts[] = {t, v, f, ft, fc, r, re, rf};
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++) th_tensor_release(ts[i]);
    free(x);
    free(want);
}

static void test_refusals(void) {
    th_tensor *z = th_empty(1, (int64_t[]){8}, TH_COMPLEX64);
    th_tensor *r = th_empty(1, (int64_t[]){8}, TH_FLOAT32);
    th_tensor *i = th_empty(1, (int64_t[]){8}, TH_INT64);
    memset(th_data_ptr(z), 0, 64);
    memset(th_data_ptr(r), 0, 32);
    CHECK(!th_fft_c2c(r, 0, 0, 1) && th_last_status() == TH_ERR_TYPE);
    CHECK(!th_fft_r2c(z, 0, 1) && th_last_status() == TH_ERR_TYPE);
    CHECK(!th_fft_r2c(i, 0, 1) && th_last_status() == TH_ERR_TYPE);
    CHECK(!th_fft_c2c(z, 1, 0, 1) && th_last_status() == TH_ERR_INDEX);
    CHECK(!th_fft_c2r(z, 0, 0, 1) && strstr(th_last_error(), "Invalid number of data points"));
    CHECK(!th_fft_c2r(z, 0, 16, 1) && th_last_status() == TH_ERR_RUNTIME); /* needs 9 */
    th_tensor *p = th_empty(1, (int64_t[]){67}, TH_COMPLEX64); /* a prime above 61 */
    CHECK(!th_fft_supported(67, 0) && th_fft_supported(134, 0) == 0 && th_fft_supported(61, 0));
    CHECK(th_fft_supported(122, 1) && !th_fft_supported(134, 1) && !th_fft_supported(0, 0));
    CHECK(!th_fft_c2c(p, 0, 0, 1) && th_last_status() == TH_ERR_NOT_IMPLEMENTED);
    /* lengths near 2^62 are answered from their factors at once */
    CHECK(th_fft_supported((int64_t)1 << 62, 0) && th_fft_supported((int64_t)1 << 62, 1));
    CHECK(!th_fft_c2r(z, 0, (int64_t)1 << 62, 1) && th_last_status() == TH_ERR_RUNTIME);
    /* one value seen as 2^61 (stride 0): the result's size overflows, an error */
    th_tensor *one = th_empty(1, (int64_t[]){1}, TH_COMPLEX64);
    th_tensor *huge = th_expand(one, 1, (int64_t[]){(int64_t)1 << 61});
    CHECK(huge && !th_fft_c2c(huge, 0, 0, 1) && th_last_status() != TH_OK);
    th_tensor *one_r = th_empty(1, (int64_t[]){1}, TH_FLOAT32);
    th_tensor *huge_r = th_expand(one_r, 1, (int64_t[]){(int64_t)1 << 62});
    CHECK(huge_r && !th_fft_r2c(huge_r, 0, 1) && th_last_status() != TH_OK);
    /* an empty batch: an empty result */
    th_tensor *e = th_empty(2, (int64_t[]){0, 8}, TH_COMPLEX128);
    th_tensor *fe = th_fft_c2c(e, 1, 0, 1);
    CHECK(fe && fe->sizes[0] == 0 && fe->sizes[1] == 8);
    th_tensor *ts[] = {z, r, i, p, one, huge, one_r, huge_r, e, fe};
    for (size_t k = 0; k < sizeof ts / sizeof *ts; k++) th_tensor_release(ts[k]);
}

int main(void) {
    test_lengths();
    test_real_lengths();
    test_strided();
    test_refusals();
    th_set_num_threads(1); /* the same on one thread */
    check_c2c(2, 4096, TH_COMPLEX64);
    check_real(1, 2048, TH_FLOAT64);
    return check_report("test_fft");
}
