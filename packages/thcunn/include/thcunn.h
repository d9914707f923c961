/* libTHCUNN: Ember's neural-network kernels for the GPU, on libTHC's C API.
 *
 * The kernels are libTHNN's, declared once for both libraries in
 * ember-thnn's thnn_kernels.def, with the thcunn_ prefix and thc_tensor
 * for th_tensor; the contract (packages/thnn/README.md, "Kernel argument
 * order"):
 *  - thcunn_<layer>_forward, _backward_input, _backward_params;
 *  - outputs first (pre-allocated on the device, contiguous, of the
 *    documented shape and of the input's dtype), then the const inputs,
 *    then the plain options;
 *  - each returns THC_OK (0) or a thc_status code; thcunn_last_error()
 *    holds a thread-local message.  Never aborts or prints.
 *  - float32 and float64; targets and indices are int64.
 *  - Work is queued on libTHC's current stream.
 *
 * As installed, plain declarations only (the kernel table written out),
 * so that FFI tools can read this header.
 */
#ifndef THCUNN_H
#define THCUNN_H

#include "thc.h"

#ifdef __cplusplus
extern "C" {
#endif

#define THCUNN_ABI_VERSION_MAJOR 1
#define THCUNN_ABI_VERSION_MINOR 2

/* reductions of the losses */
#define THCUNN_REDUCTION_NONE 0
#define THCUNN_REDUCTION_MEAN 1
#define THCUNN_REDUCTION_SUM 2

/* embedding_bag modes */
#define THCUNN_EMBEDDING_BAG_SUM 0
#define THCUNN_EMBEDDING_BAG_MEAN 1
#define THCUNN_EMBEDDING_BAG_MAX 2

/* ---- library facts and errors -------------------------------------- */
int thcunn_abi_version_major(void);
int thcunn_abi_version_minor(void);
const char *thcunn_version(void);
int thcunn_has_cuda(void);   /* 1 if built with nvcc */
const char *thcunn_last_error(void);
int thcunn_last_status(void);
void thcunn_clear_error(void);

/* ---- the kernels: libTHNN's, declared once for both libraries in
 * ember-thnn's thnn_kernels.def (written out in the installed header) */
#define NN_FN(name) thcunn_##name
#define NN_NAME(name) THCUNN_##name
#define NN_TENSOR thc_tensor
#define NN_GENERATOR thc_generator
#include "thnn_kernels.def"
#undef NN_FN
#undef NN_NAME
#undef NN_TENSOR
#undef NN_GENERATOR

#ifdef __cplusplus
}
#endif
#endif
