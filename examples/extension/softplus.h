/* A fused, scaled softplus for ember tensors:
 *   y = log(1 + exp(beta * x)) / beta,   dy/dx = sigmoid(beta * x).
 * Outputs come first and are allocated by the caller (contiguous, the input's
 * shape and dtype), as in libTHNN's kernels.  Each function returns 0, or a
 * nonzero code with softplus_last_error() saying what was wrong. */
#ifndef EMBER_EXAMPLE_SOFTPLUS_H
#define EMBER_EXAMPLE_SOFTPLUS_H

#include <th.h>

int softplus_forward(th_tensor *out, const th_tensor *x, double beta);
int softplus_backward(th_tensor *grad_x, const th_tensor *grad_out,
                      const th_tensor *x, double beta);
const char *softplus_last_error(void);

#endif
