/* Hostile sizes: output sizes, paddings and groups whose arithmetic would
 * wrap in int64 are errors (run under the sanitizer build to see that no
 * signed overflow happens on the way). */
#include <stdint.h>
#include <string.h>

#include "check.h"

#define FAILS(call, text)                                                     \
    do {                                                                      \
        thnn_clear_error();                                                   \
        CHECK((call) != TH_OK && strstr(thnn_last_error(), (text)) != NULL);  \
    } while (0)

static const int64_t HUGE_ = INT64_MAX / 2 + 1; /* 2 * HUGE_ wraps */

static th_tensor *mk(int ndim, const int64_t *sizes) {
    th_tensor *t = th_empty(ndim, sizes, TH_FLOAT32);
    if (t) th_fill_double(t, 1.0);
    return t;
}

int main(void) {
    /* window output size: 2 * padding, dilation * (kernel - 1) */
    thnn_clear_error();
    CHECK(thnn_window_output_size(5, 3, 1, HUGE_, 1, 0) == -1 &&
          strstr(thnn_last_error(), "overflows int64"));
    CHECK(thnn_window_output_size(5, 3, 1, 0, HUGE_, 0) == -1 &&
          strstr(thnn_last_error(), "overflows int64"));
    CHECK(thnn_window_output_size(INT64_MAX, 1, 1, 0, 1, 1) == INT64_MAX);
    CHECK(thnn_window_output_size(INT64_MAX - 1, 2, INT64_MAX, 0, 1, 1) == 1);
    CHECK(thnn_window_output_size(10, 3, 2, 1, 1, 1) == 6);
    CHECK(thnn_window_output_size(-1, 1, 1, 0, 1, 0) == -1);

    const int64_t xs[4] = {1, 1, 5, 5}, ws[4] = {1, 1, 3, 3};
    th_tensor *x = mk(4, xs), *w = mk(4, ws), *y = mk(4, xs);
    const int64_t one[2] = {1, 1}, big_pad[2] = {HUGE_, 0};
    FAILS(thnn_conv2d_forward(y, x, w, NULL, one, big_pad, one, 1), "overflows int64");
    /* groups so large that weight size 1 * groups wraps */
    const int64_t zs[4] = {0, 1, 3, 3};
    th_tensor *w0 = mk(4, zs);
    FAILS(thnn_conv2d_forward(y, x, w0, NULL, one, one, one, INT64_MAX), "");
    const int64_t kern[2] = {3, 3};
    FAILS(thnn_max_pool2d_forward(y, NULL, x, kern, one, big_pad, one, 0),
          "pad should be at most half of effective kernel size");
    const int64_t opad[2] = {0, 0}, bigs[2] = {HUGE_, HUGE_};
    FAILS(thnn_conv_transpose2d_forward(y, x, w, NULL, bigs, opad, opad, one, 1),
          "overflows int64");
    const int64_t pads[2] = {INT64_MAX, INT64_MAX}, x3s[3] = {1, 1, 5};
    th_tensor *x3 = mk(3, x3s);
    FAILS(thnn_replication_pad1d_forward(x3, x3, pads), "overflows int64");
    th_tensor_release(x3);
    th_tensor_release(x);
    th_tensor_release(w);
    th_tensor_release(w0);
    th_tensor_release(y);
    return check_report("test_limits");
}
