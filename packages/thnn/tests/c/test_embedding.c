/* libTHNN from C alone: embedding_bag against direct loops, and its error contract
 * (status + message, outputs untouched). */
#include "thnn_testing.h"

static void test_embedding_bag(void) {
    /* table 5x3, indices [1 2 4 4 3 0], bags [0, 2), [2, 2), [2, 6) */
    int64_t ws[2] = {5, 3}, os[2] = {3, 3};
    const int64_t iv[6] = {1, 2, 4, 4, 3, 0}, ov[3] = {0, 2, 2};
    th_tensor *w = make(2, ws, TH_FLOAT64, 11), *ind = longs(6, iv), *ofs = longs(3, ov);
    th_tensor *y = th_empty(2, os, TH_FLOAT64), *mi = th_empty(2, os, TH_INT64);
    int64_t n6 = 6, n3 = 3;
    th_tensor *o2b = th_empty(1, &n6, TH_INT64), *bs = th_empty(1, &n3, TH_INT64);
    CHECK(thnn_embedding_bag_forward(y, o2b, bs, NULL, w, ind, ofs, NULL,
                                     THNN_EMBEDDING_BAG_MEAN, 0, 4) == TH_OK);
    CHECK(at(bs, 0) == 2 && at(bs, 1) == 0 && at(bs, 2) == 2);   /* row 4 is padding */
    CHECK(at(o2b, 0) == 0 && at(o2b, 3) == 2 && at(o2b, 5) == 2);
    for (int d = 0; d < 3; d++) {
        CHECK_CLOSE(at(y, d), (at(w, 3 + d) + at(w, 6 + d)) / 2, 1e-15);
        CHECK(at(y, 3 + d) == 0);
        CHECK_CLOSE(at(y, 6 + d), (at(w, 9 + d) + at(w, d)) / 2, 1e-15);
    }
    CHECK(thnn_embedding_bag_forward(y, o2b, bs, mi, w, ind, ofs, NULL,
                                     THNN_EMBEDDING_BAG_MAX, 0, -1) == TH_OK);
    for (int d = 0; d < 3; d++) {
        double best = at(w, 12 + d);
        int64_t row = 4;
        for (int k = 3; k < 6; k++)
            if (at(w, iv[k] * 3 + d) > best) { best = at(w, iv[k] * 3 + d); row = iv[k]; }
        CHECK(at(y, 6 + d) == best && at(mi, 6 + d) == row);
        CHECK(at(mi, 3 + d) == -1);
    }
    /* grad of max: each (bag, column) goes to its winning row */
    th_tensor *gw = th_empty(2, ws, TH_FLOAT64);
    CHECK(thnn_embedding_bag_backward_params(gw, y, ind, o2b, bs, mi, NULL,
                                             THNN_EMBEDDING_BAG_MAX, -1) == TH_OK);
    double total = 0;
    for (int k = 0; k < 15; k++) total += at(gw, k);
    double ysum = 0;
    for (int k = 0; k < 9; k++) ysum += at(y, k);
    CHECK_CLOSE(total, ysum, 1e-12);
    /* per-sample weight grads (sum): <grad_output[bag], weight[row]>, 0 for padding */
    CHECK(thnn_embedding_bag_forward(y, o2b, bs, NULL, w, ind, ofs, NULL,
                                     THNN_EMBEDDING_BAG_SUM, 0, 4) == TH_OK);
    th_tensor *gp = th_empty(1, &n6, TH_FLOAT64);
    CHECK(thnn_embedding_bag_backward_per_sample_weights(gp, y, w, ind, o2b,
                                                         THNN_EMBEDDING_BAG_SUM, 4) == TH_OK);
    double dot = 0;
    for (int d = 0; d < 3; d++) dot += at(y, 6 + d) * at(w, 9 + d);
    CHECK_CLOSE(at(gp, 4), dot, 1e-12);
    CHECK(at(gp, 2) == 0 && at(gp, 3) == 0);
    CHECK(thnn_embedding_bag_backward_per_sample_weights(gp, y, w, ind, o2b,
                                                         THNN_EMBEDDING_BAG_MAX, 4) == TH_ERR_VALUE);
    th_tensor_release(gp);
    /* an index past the table: IndexError naming the index and table size */
    const int64_t badv[6] = {1, 2, 7, 4, 3, 0};
    th_tensor *bad = longs(6, badv);
    CHECK(th_fill_double(y, 5.0) == TH_OK);
    CHECK(thnn_embedding_bag_forward(y, o2b, bs, NULL, w, bad, ofs, NULL,
                                     THNN_EMBEDDING_BAG_SUM, 0, -1) == TH_ERR_INDEX);
    CHECK(strstr(thnn_last_error(), "index 7") && strstr(thnn_last_error(), "5 rows"));
    CHECK(at(y, 0) == 5.0);
    const int64_t ov2[3] = {1, 2, 2};
    th_tensor *ofs2 = longs(3, ov2);
    CHECK(thnn_embedding_bag_forward(y, o2b, bs, NULL, w, ind, ofs2, NULL,
                                     THNN_EMBEDDING_BAG_SUM, 0, -1) == TH_ERR_VALUE);
    CHECK(strstr(thnn_last_error(), "offsets[0] has to be 0") != NULL);
    CHECK(thnn_embedding_bag_forward(y, o2b, bs, NULL, w, ind, ofs, ind,
                                     THNN_EMBEDDING_BAG_MEAN, 0, -1) == TH_ERR_VALUE);
    th_tensor *all[] = {w, ind, ofs, y, mi, o2b, bs, gw, bad, ofs2};
    for (int i = 0; i < 10; i++) th_tensor_release(all[i]);
}

int main(void) {
    test_embedding_bag();
    return check_report("test_embedding");
}
