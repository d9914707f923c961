/* libTHNN from C alone: group_norm against direct loops, and its error contract (status
 * + message, outputs untouched). */
#include "thnn_testing.h"

static void test_group_norm(int dtype) {
    /* N=2, C=6, L=5, G=3: each (n, g) block of 2 channels has mean 0, var 1
     * before the affine */
    int64_t xs[3] = {2, 6, 5}, cs[1] = {6}, ss[2] = {2, 3};
    th_tensor *x = make(3, xs, dtype, 7), *w = make(1, cs, dtype, 8), *b = make(1, cs, dtype, 9);
    th_tensor *y = th_empty(3, xs, dtype), *m = th_empty(2, ss, dtype), *r = th_empty(2, ss, dtype);
    CHECK(thnn_group_norm_forward(y, m, r, x, w, b, 3, 1e-5) == TH_OK);
    const double tol = dtype == TH_FLOAT32 ? 1e-5 : 1e-12;
    for (int64_t n = 0; n < 2; n++)
        for (int64_t g = 0; g < 3; g++) {
            double s = 0, ss2 = 0;
            for (int64_t k = 0; k < 10; k++) s += at(x, (n * 6 + g * 2) * 5 + k);
            const double mean = s / 10;
            for (int64_t k = 0; k < 10; k++) {
                double d = at(x, (n * 6 + g * 2) * 5 + k) - mean;
                ss2 += d * d;
            }
            const double rstd = 1 / sqrt(ss2 / 10 + 1e-5);
            CHECK_CLOSE(at(m, n * 3 + g), mean, tol);
            CHECK_CLOSE(at(r, n * 3 + g), rstd, tol * rstd);
            for (int64_t k = 0; k < 10; k++) {
                int64_t i = (n * 6 + g * 2) * 5 + k, c = g * 2 + k / 5;
                CHECK_CLOSE(at(y, i), (at(x, i) - mean) * rstd * at(w, c) + at(b, c), 10 * tol);
            }
        }
    /* grad_bias = sum of grad_output over (N, L) */
    th_tensor *gx = th_empty(3, xs, dtype), *gw = th_empty(1, cs, dtype), *gb = th_empty(1, cs, dtype);
    CHECK(thnn_group_norm_backward_input(gx, x, x, w, m, r, 3) == TH_OK);
    CHECK(thnn_group_norm_backward_params(gw, gb, x, x, m, r, 3) == TH_OK);
    double s0 = 0;
    for (int64_t n = 0; n < 2; n++)
        for (int64_t k = 0; k < 5; k++) s0 += at(x, n * 30 + k);
    CHECK_CLOSE(at(gb, 0), s0, 10 * tol);
    /* 6 channels do not split into 4 groups; nothing is written */
    CHECK(th_fill_double(y, 3.0) == TH_OK);
    CHECK(thnn_group_norm_forward(y, m, r, x, w, b, 4, 1e-5) == TH_ERR_RUNTIME);
    CHECK(strstr(thnn_last_error(), "divisible by num_groups") != NULL);
    CHECK(at(y, 0) == 3.0);
    CHECK(thnn_group_norm_forward(y, m, r, x, NULL, NULL, 0, 1e-5) == TH_ERR_VALUE);
    th_tensor *all[] = {x, w, b, y, m, r, gx, gw, gb};
    for (int i = 0; i < 9; i++) th_tensor_release(all[i]);
}

int main(void) {
    test_group_norm(TH_FLOAT32);
    test_group_norm(TH_FLOAT64);
    return check_report("test_norm");
}
