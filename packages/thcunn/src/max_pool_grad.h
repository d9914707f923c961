// The max poolings' backward (adaptive_max_pool2d, max_pool3d): libTHNN's
// thnn__max_pool_backward (src/max_pool_grad.c) on the device.  Internal.
#ifndef THCUNN_MAX_POOL_GRAD_H
#define THCUNN_MAX_POOL_GRAD_H
#include "thcunn_internal.h"

namespace thcunn {

// grad_input (lead..., `spatial` dims) with lead 1 or 2, zeroed, then
// grad_output scattered along `indices` (int64 offsets within one input
// plane); every index is checked before anything is written; -1 (a window
// of padding only) passes no gradient.
int max_pool_backward(const char *fn, thc_tensor *grad_input, const thc_tensor *grad_output,
                      const thc_tensor *indices, int spatial);

}  // namespace thcunn
#endif
