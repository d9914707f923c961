/* libTHNN from C alone: the kl_div / margin losses against direct loops, and their error
 * contract (status + message, outputs untouched). */
#include "thnn_testing.h"

static void test_losses(void) {
    int64_t s[2] = {3, 4}, n3 = 3;
    th_tensor *x = make(2, s, TH_FLOAT64, 21), *t = make(2, s, TH_FLOAT64, 22);
    th_tensor *out = th_empty(0, NULL, TH_FLOAT64), *gx = th_empty(2, s, TH_FLOAT64);
    th_tensor *g1 = th_scalar_double(1.0, TH_FLOAT64);
    /* log_target kl_div, sum */
    CHECK(thnn_kl_div_forward(out, x, t, THNN_REDUCTION_SUM, 1) == TH_OK);
    double ref = 0;
    for (int i = 0; i < 12; i++) ref += exp(at(t, i)) * (at(t, i) - at(x, i));
    CHECK_CLOSE(at(out, 0), ref, 1e-12);
    CHECK(thnn_kl_div_backward_input(gx, NULL, g1, x, t, THNN_REDUCTION_SUM, 1) == TH_OK);
    CHECK_CLOSE(at(gx, 5), -exp(at(t, 5)), 1e-15);
    /* margin ranking, mean */
    CHECK(thnn_margin_ranking_loss_forward(out, x, t, x, 0.1, THNN_REDUCTION_MEAN) == TH_OK);
    ref = 0;
    for (int i = 0; i < 12; i++) {
        double l = -at(x, i) * (at(x, i) - at(t, i)) + 0.1;
        ref += l > 0 ? l : 0;
    }
    CHECK_CLOSE(at(out, 0), ref / 12, 1e-12);
    /* cosine embedding: a row against itself has cos 1 */
    const double yv[3] = {1, -1, 1};
    th_tensor *y = th_empty(1, &n3, TH_FLOAT64), *per = th_empty(1, &n3, TH_FLOAT64);
    for (int i = 0; i < 3; i++) ((double *)th_data_ptr(y))[i] = yv[i];
    CHECK(thnn_cosine_embedding_loss_forward(per, x, x, y, 0.5, THNN_REDUCTION_NONE) == TH_OK);
    CHECK_CLOSE(at(per, 0), 0, 1e-12);
    CHECK_CLOSE(at(per, 1), 0.5, 1e-12);
    /* errors */
    int64_t s2[2] = {4, 3};
    th_tensor *xt = make(2, s2, TH_FLOAT64, 23);
    CHECK(thnn_kl_div_forward(out, x, xt, THNN_REDUCTION_SUM, 0) == TH_ERR_RUNTIME);
    CHECK(strstr(thnn_last_error(), "target [4, 3] and input [3, 4]") != NULL);
    CHECK(thnn_kl_div_forward(out, x, t, 7, 0) == TH_ERR_VALUE);
    CHECK(thnn_cosine_embedding_loss_forward(per, x, x, x, 0.0, THNN_REDUCTION_NONE) == TH_ERR_RUNTIME);
    th_tensor *all[] = {x, t, out, gx, g1, y, per, xt};
    for (int i = 0; i < 8; i++) th_tensor_release(all[i]);
}

int main(void) {
    test_losses();
    return check_report("test_loss");
}
