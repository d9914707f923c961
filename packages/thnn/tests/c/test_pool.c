/* libTHNN from C alone: 3-d pooling and adaptive max pooling against direct loops, and
 * their error statuses. */
#include "thnn_testing.h"

static void test_pool3d(void) {
    /* one 4x4x4 volume holding 0..63: the max of each 2x2x2 block is its
     * last element, the average its centre */
    int64_t xs[5] = {1, 1, 4, 4, 4}, ys[5] = {1, 1, 2, 2, 2};
    th_tensor *x = th_arange(0, 64, 1, TH_FLOAT64), *x5 = th_view(x, 5, xs);
    th_tensor *y = th_empty(5, ys, TH_FLOAT64), *ind = th_empty(5, ys, TH_INT64);
    int64_t k[3] = {2, 2, 2}, s[3] = {2, 2, 2}, p[3] = {0, 0, 0}, d[3] = {1, 1, 1};
    CHECK(thnn_max_pool3d_forward(y, ind, x5, k, s, p, d, 0) == TH_OK);
    CHECK(at(y, 0) == 21 && at(ind, 0) == 21 && at(y, 7) == 63 && at(ind, 5) == 55);
    CHECK(thnn_avg_pool3d_forward(y, x5, k, s, p, 0, 1, 0) == TH_OK);
    CHECK_CLOSE(at(y, 0), 10.5, 1e-12);
    CHECK(thnn_avg_pool3d_forward(y, x5, k, s, p, 0, 1, 4) == TH_OK);
    CHECK_CLOSE(at(y, 0), 21.0, 1e-12);
    th_tensor *gx = th_empty(5, xs, TH_FLOAT64);
    CHECK(thnn_max_pool3d_forward(y, ind, x5, k, s, p, d, 0) == TH_OK);
    CHECK(thnn_max_pool3d_backward_input(gx, y, ind) == TH_OK);
    CHECK(at(gx, 63) == 63 && at(gx, 62) == 0);

    /* errors: rank, padding over half the kernel, an index out of range */
    CHECK(thnn_max_pool3d_forward(y, ind, x, k, s, p, d, 0) == TH_ERR_RUNTIME);
    CHECK(strstr(thnn_last_error(), "Expected 4D or 5D") != NULL);
    int64_t big_p[3] = {0, 2, 0};
    CHECK(thnn_avg_pool3d_forward(y, x5, k, s, big_p, 0, 1, 0) == TH_ERR_RUNTIME);
    CHECK(strstr(thnn_last_error(), "pad should be at most half") != NULL);
    ((int64_t *)th_data_ptr(ind))[3] = 64;
    CHECK(thnn_max_pool3d_backward_input(gx, y, ind) == TH_ERR_INDEX);
    th_tensor *all[] = {x, x5, y, ind, gx};
    for (int i = 0; i < 5; i++) th_tensor_release(all[i]);
}

static void test_adaptive_max_pool2d(int dtype) {
    int64_t xs[4] = {2, 3, 7, 5}, ys[4] = {2, 3, 3, 2};
    th_tensor *x = make(4, xs, dtype, 31), *y = th_empty(4, ys, dtype);
    th_tensor *ind = th_empty(4, ys, TH_INT64), *gx = th_empty(4, xs, dtype);
    CHECK(thnn_adaptive_max_pool2d_forward(y, ind, x) == TH_OK);
    int ok = 1;
    for (int64_t pl = 0; pl < 6; pl++)
        for (int64_t i = 0; i < 3; i++)
            for (int64_t j = 0; j < 2; j++) {
                int64_t h0 = i * 7 / 3, h1 = ((i + 1) * 7 + 2) / 3;
                int64_t w0 = j * 5 / 2, w1 = ((j + 1) * 5 + 1) / 2;
                double best = -INFINITY;
                for (int64_t h = h0; h < h1; h++)
                    for (int64_t v = w0; v < w1; v++)
                        if (at(x, pl * 35 + h * 5 + v) > best) best = at(x, pl * 35 + h * 5 + v);
                const int64_t o = (pl * 3 + i) * 2 + j;
                ok &= at(y, o) == best && at(x, pl * 35 + (int64_t)at(ind, o)) == best;
            }
    CHECK(ok);
    CHECK(thnn_adaptive_max_pool2d_backward_input(gx, y, ind) == TH_OK);
    /* every output's gradient lands on its maximum (cells may overlap) */
    double sx = 0, sy = 0, sxy = 0;
    for (int64_t i = 0; i < th_numel(gx); i++) sx += at(gx, i), sxy += at(gx, i) * at(x, i);
    for (int64_t i = 0; i < th_numel(y); i++) sy += at(y, i);
    CHECK_CLOSE(sx, sy, 1e-5);
    CHECK_CLOSE(sxy, dot(y, y), 1e-5);
    CHECK(thnn_adaptive_max_pool2d_forward(y, ind, gx) == TH_OK);
    CHECK(thnn_adaptive_max_pool2d_forward(y, y, x) == TH_ERR_TYPE);
    th_tensor *all[] = {x, y, ind, gx};
    for (int i = 0; i < 4; i++) th_tensor_release(all[i]);
}

int main(void) {
    test_pool3d();
    test_adaptive_max_pool2d(TH_FLOAT32);
    test_adaptive_max_pool2d(TH_FLOAT64);
    return check_report("test_pool");
}
