/* libTHNN from C alone: upsampling and reflection/replication padding against direct
 * loops, and their error contract (status + message, outputs untouched). */
#include "thnn_testing.h"

static void test_upsample(void) {
    /* 1x1x2x2 [[0, 1], [2, 3]] to 4x4 */
    int64_t xs[4] = {1, 1, 2, 2}, ys[4] = {1, 1, 4, 4};
    th_tensor *a = th_arange(0, 4, 1, TH_FLOAT64), *x = th_view(a, 4, xs);
    th_tensor *y = th_empty(4, ys, TH_FLOAT64), *gx = th_empty(4, xs, TH_FLOAT64);
    CHECK(thnn_upsample_nearest2d_forward(y, x, 0, 0) == TH_OK);
    CHECK(at(y, 0) == 0 && at(y, 1) == 0 && at(y, 2) == 1 && at(y, 15) == 3 && at(y, 8) == 2);
    CHECK(thnn_upsample_nearest2d_backward_input(gx, y, 0, 0) == TH_OK);
    CHECK(at(gx, 0) == 0 && at(gx, 1) == 4 && at(gx, 3) == 12);
    /* align_corners: corners kept, the middle interpolated linearly */
    CHECK(thnn_upsample_bilinear2d_forward(y, x, 1, 0, 0) == TH_OK);
    CHECK_CLOSE(at(y, 0), 0, 1e-15);
    CHECK_CLOSE(at(y, 1), 1.0 / 3, 1e-15);
    CHECK_CLOSE(at(y, 15), 3, 1e-15);
    /* half-pixel centres: output 1 samples input 0.25 of the way */
    CHECK(thnn_upsample_bilinear2d_forward(y, x, 0, 0, 0) == TH_OK);
    CHECK_CLOSE(at(y, 0), 0, 1e-15);
    CHECK_CLOSE(at(y, 1), 0.25, 1e-15);
    CHECK(thnn_upsample_bilinear2d_backward_input(gx, y, 0, 0, 0) == TH_OK);
    /* each output's weights sum to 1, so the gradient keeps the total */
    double gsum = 0, ysum = 0;
    for (int i = 0; i < 4; i++) gsum += at(gx, i);
    for (int i = 0; i < 16; i++) ysum += at(y, i);
    CHECK_CLOSE(gsum, ysum, 1e-12);
    int64_t bad[3] = {1, 2, 2};
    th_tensor *x3 = th_empty(3, bad, TH_INT64);
    CHECK(thnn_upsample_nearest2d_forward(y, x3, 0, 0) == TH_ERR_TYPE);
    int64_t es[4] = {1, 1, 0, 4};
    th_tensor *e = th_empty(4, es, TH_FLOAT64);
    CHECK(thnn_upsample_nearest2d_forward(e, x, 0, 0) == TH_ERR_RUNTIME);
    CHECK(strstr(thnn_last_error(), "greater than 0") != NULL);
    th_tensor *all[] = {a, x, y, gx, x3, e};
    for (int i = 0; i < 6; i++) th_tensor_release(all[i]);
}

static void test_padding(void) {
    /* [0 1 2 3] reflect (2, 1) -> [2 1 0 1 2 3 2]; replicate -> [0 0 0 1 2 3 3] */
    int64_t xs[2] = {1, 4}, ys[2] = {1, 7}, pad[2] = {2, 1};
    th_tensor *a = th_arange(0, 4, 1, TH_FLOAT32), *x = th_view(a, 2, xs);
    th_tensor *y = th_empty(2, ys, TH_FLOAT32), *gx = th_empty(2, xs, TH_FLOAT32);
    const double refl[7] = {2, 1, 0, 1, 2, 3, 2}, repl[7] = {0, 0, 0, 1, 2, 3, 3};
    CHECK(thnn_reflection_pad1d_forward(y, x, pad) == TH_OK);
    for (int i = 0; i < 7; i++) CHECK(at(y, i) == refl[i]);
    CHECK(th_fill_double(y, 1.0) == TH_OK);
    CHECK(thnn_reflection_pad1d_backward_input(gx, y, pad) == TH_OK);
    CHECK(at(gx, 0) == 1 && at(gx, 1) == 2 && at(gx, 2) == 3 && at(gx, 3) == 1);
    CHECK(thnn_replication_pad1d_forward(y, x, pad) == TH_OK);
    for (int i = 0; i < 7; i++) CHECK(at(y, i) == repl[i]);
    /* reflection padding must stay below the input size */
    int64_t big[2] = {4, 0}, ybs[2] = {1, 8};
    th_tensor *yb = th_empty(2, ybs, TH_FLOAT32);
    CHECK(thnn_reflection_pad1d_forward(yb, x, big) == TH_ERR_RUNTIME);
    CHECK(strstr(thnn_last_error(), "Padding size should be less than the corresponding "
                 "input dimension, but got: padding (4, 0) at dimension 1 of input [1, 4]") != NULL);
    CHECK(thnn_replication_pad1d_forward(yb, x, big) == TH_OK);
    CHECK(at(yb, 0) == 0 && at(yb, 7) == 3);
    /* 3d replication: every output reads its clamped position */
    int64_t x3s[4] = {1, 2, 2, 2}, y3s[4] = {1, 3, 4, 3}, pad3[6] = {1, 0, 1, 1, 0, 1};
    th_tensor *a3 = th_arange(0, 8, 1, TH_FLOAT64), *x3 = th_view(a3, 4, x3s);
    th_tensor *y3 = th_empty(4, y3s, TH_FLOAT64);
    CHECK(thnn_replication_pad3d_forward(y3, x3, pad3) == TH_OK);
    int ok = 1;
    for (int d = 0; d < 3; d++)
        for (int h = 0; h < 4; h++)
            for (int w = 0; w < 3; w++) {
                int sd = d > 1 ? 1 : d, sh = h - 1 < 0 ? 0 : h - 1 > 1 ? 1 : h - 1;
                int sw = w - 1 < 0 ? 0 : w - 1;
                ok &= at(y3, (d * 4 + h) * 3 + w) == sd * 4 + sh * 2 + sw;
            }
    CHECK(ok);
    CHECK(thnn_replication_pad3d_forward(y3, x3, NULL) == TH_ERR_VALUE);
    th_tensor *all[] = {a, x, y, gx, yb, a3, x3, y3};
    for (int i = 0; i < 8; i++) th_tensor_release(all[i]);
}

int main(void) {
    test_upsample();
    test_padding();
    return check_report("test_resample");
}
