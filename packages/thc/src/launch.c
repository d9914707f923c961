/* Launch configuration and 64-bit index arithmetic, host side.  The CUDA
 * kernels use the same offset rule (index.h), so these functions are its
 * tested reference. */
#include "index.h"
#include "thc_internal.h"

THC_API int thc_launch_config_for(int64_t n, int threads_per_block, int64_t max_grid,
                                  thc_launch_config *out) {
    if (!out) return thc__error(THC_ERR_VALUE, "thc_launch_config_for: out is NULL");
    if (n < 0) return thc__error(THC_ERR_VALUE, "thc_launch_config_for: n must be >= 0, got %lld",
                                 (long long)n);
    if (threads_per_block < 32 || threads_per_block > 1024 || threads_per_block % 32)
        return thc__error(THC_ERR_VALUE, "thc_launch_config_for: threads_per_block must be a "
                          "multiple of 32 in [32, 1024], got %d", threads_per_block);
    if (max_grid < 1)
        return thc__error(THC_ERR_VALUE, "thc_launch_config_for: max_grid must be >= 1, got %lld",
                          (long long)max_grid);
    int64_t blocks = n / threads_per_block + (n % threads_per_block != 0);
    if (blocks < 1) blocks = 1;   /* a launch of zero blocks is an error in CUDA */
    if (blocks > max_grid) blocks = max_grid;
    int64_t threads = blocks * threads_per_block;
    out->grid = blocks;
    out->block = threads_per_block;
    out->per_thread = n / threads + (n % threads != 0);
    return THC_OK;
}

THC_API int thc_strided_offset(int ndim, const int64_t *sizes, const int64_t *strides,
                               int64_t linear, int64_t *offset) {
    if (!offset) return thc__error(THC_ERR_VALUE, "thc_strided_offset: offset is NULL");
    if (ndim < 0 || ndim > THC_MAX_DIMS)
        return thc__error(THC_ERR_VALUE, "thc_strided_offset: ndim must be in [0, %d], got %d",
                          THC_MAX_DIMS, ndim);
    if (ndim > 0 && (!sizes || !strides))
        return thc__error(THC_ERR_VALUE, "thc_strided_offset: sizes or strides is NULL");
    int64_t numel = 1;
    for (int d = 0; d < ndim; d++) {
        if (sizes[d] < 0)
            return thc__error(THC_ERR_VALUE, "thc_strided_offset: size %lld of dim %d is negative",
                              (long long)sizes[d], d);
        if (sizes[d] && numel > INT64_MAX / sizes[d])
            return thc__error(THC_ERR_VALUE, "thc_strided_offset: the shape has more than "
                              "2^63 elements");
        numel *= sizes[d];
    }
    if (linear < 0 || linear >= numel)
        return thc__error(THC_ERR_INDEX, "thc_strided_offset: index %lld is out of range for "
                          "%lld elements", (long long)linear, (long long)numel);
    *offset = thc__offset_of(ndim, sizes, strides, linear);
    return THC_OK;
}
