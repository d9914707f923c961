/* Iteration geometry of an element-wise operation: the operands' shared
 * shape with dims of size 1 dropped and dims that every operand walks
 * contiguously merged, so that kernels index as few dims as possible.
 * Plain C, tested on the host.  Internal. */
#ifndef THC_GEOMETRY_H
#define THC_GEOMETRY_H
#include <stdint.h>
#include "thc.h"

#define THC__MAX_OPS 4

typedef struct thc__geom {
    int32_t ndim;           /* after collapsing; 0 when numel <= 1 */
    int32_t nops;
    int32_t unit;           /* 1-d, every operand with stride 1 */
    int64_t numel;
    int64_t sizes[THC_MAX_DIMS];
    int64_t strides[THC__MAX_OPS][THC_MAX_DIMS];   /* elements */
    int64_t offsets[THC__MAX_OPS];                  /* elements */
} thc__geom;

#ifdef __cplusplus
extern "C" {
#endif

/* ops[k] of shape (ndim, sizes) after broadcasting: an operand of fewer
 * dims or of size 1 along a dim gets stride 0 there.  The caller has
 * checked that every operand broadcasts to the shape. */
void thc__geom_init(thc__geom *g, int ndim, const int64_t *sizes, int nops,
                    const thc_tensor *const *ops);

#ifdef __cplusplus
}
#endif
#endif
