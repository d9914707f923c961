/* The backward of the max poolings that save indices (max_pool3d,
 * adaptive_max_pool2d).  Internal to libTHNN. */
#ifndef THNN_MAX_POOL_GRAD_H
#define THNN_MAX_POOL_GRAD_H
#include "thnn_internal.h"

/* grad_input (planes..., in spatial) = 0, then grad_output[i] added at
 * indices[i] within its plane.  grad_input has `spatial` + 1 or + 2 dims;
 * grad_output and indices (int64) share its leading dims and one shape.
 * Every index is checked against the plane size before anything is
 * written; -1 (a window of padding only) passes no gradient. */
int thnn__max_pool_backward(const char *fn, th_tensor *grad_input,
                            const th_tensor *grad_output,
                            const th_tensor *indices, int spatial);
#endif
