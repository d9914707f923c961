/* libTHCUNN: Ember's neural-network kernels for the GPU, on libTHC's C API.
 *
 * The kernel contract is libTHNN's (packages/thnn/README.md, "Kernel
 * argument order"), with the thcunn_ prefix and thc_tensor for th_tensor,
 * so one table drives both libraries:
 *  - thcunn_<layer>_forward, _backward_input, _backward_params;
 *  - outputs first (pre-allocated on the device, contiguous, of the
 *    documented shape and of the input's dtype), then the const inputs,
 *    then the plain options;
 *  - each returns THC_OK (0) or a thc_status code; thcunn_last_error()
 *    holds a thread-local message.  Never aborts or prints.
 *  - float32 and float64; targets and indices are int64.
 *  - Work is queued on libTHC's current stream.
 *
 * Plain declarations only, so that FFI tools can read this header.
 */
#ifndef THCUNN_H
#define THCUNN_H

#include "thc.h"

#ifdef __cplusplus
extern "C" {
#endif

#define THCUNN_ABI_VERSION_MAJOR 1
#define THCUNN_ABI_VERSION_MINOR 0

/* reductions of the losses */
#define THCUNN_REDUCTION_NONE 0
#define THCUNN_REDUCTION_MEAN 1
#define THCUNN_REDUCTION_SUM 2

/* ---- library facts and errors -------------------------------------- */
int thcunn_abi_version_major(void);
int thcunn_abi_version_minor(void);
const char *thcunn_version(void);
int thcunn_has_cuda(void);   /* 1 if built with nvcc */
const char *thcunn_last_error(void);
int thcunn_last_status(void);
void thcunn_clear_error(void);

/* ---- conv2d (conv.cu): im2col and libTHC's batched products ----------
 * input (N, C, H, W), weight (O, C/groups, kH, kW), bias (O) or NULL,
 * output (N, O, OH, OW); stride, padding, dilation: int64[2] (h, w). */
int thcunn_conv2d_forward(thc_tensor *output, const thc_tensor *input,
                          const thc_tensor *weight, const thc_tensor *bias,
                          const int64_t *stride, const int64_t *padding,
                          const int64_t *dilation, int64_t groups);
int thcunn_conv2d_backward_input(thc_tensor *grad_input,
                                 const thc_tensor *grad_output,
                                 const thc_tensor *weight,
                                 const int64_t *stride,
                                 const int64_t *padding,
                                 const int64_t *dilation, int64_t groups);
/* grad_weight and/or grad_bias may be NULL (not computed); overwritten. */
int thcunn_conv2d_backward_params(thc_tensor *grad_weight,
                                  thc_tensor *grad_bias,
                                  const thc_tensor *grad_output,
                                  const thc_tensor *input,
                                  const int64_t *stride,
                                  const int64_t *padding,
                                  const int64_t *dilation, int64_t groups);

/* ---- pooling (pooling.cu) -------------------------------------------
 * input (N, C, H, W) or (C, H, W); kernel, stride, padding, dilation:
 * int64[2].  indices: int64, flat positions in each H*W plane. */
int thcunn_max_pool2d_forward(thc_tensor *output, thc_tensor *indices,
                              const thc_tensor *input, const int64_t *kernel,
                              const int64_t *stride, const int64_t *padding,
                              const int64_t *dilation, int ceil_mode);
int thcunn_max_pool2d_backward_input(thc_tensor *grad_input,
                                     const thc_tensor *grad_output,
                                     const thc_tensor *indices);
int thcunn_avg_pool2d_forward(thc_tensor *output, const thc_tensor *input,
                              const int64_t *kernel, const int64_t *stride,
                              const int64_t *padding, int ceil_mode,
                              int count_include_pad);
int thcunn_avg_pool2d_backward_input(thc_tensor *grad_input,
                                     const thc_tensor *grad_output,
                                     const int64_t *kernel,
                                     const int64_t *stride,
                                     const int64_t *padding, int ceil_mode,
                                     int count_include_pad);

/* ---- softmax (softmax.cu): any shape, along dim ---------------------- */
int thcunn_softmax_forward(thc_tensor *output, const thc_tensor *input,
                           int dim);
int thcunn_softmax_backward_input(thc_tensor *grad_input,
                                  const thc_tensor *grad_output,
                                  const thc_tensor *output, int dim);
int thcunn_log_softmax_forward(thc_tensor *output, const thc_tensor *input,
                               int dim);
int thcunn_log_softmax_backward_input(thc_tensor *grad_input,
                                      const thc_tensor *grad_output,
                                      const thc_tensor *output, int dim);

/* ---- nll_loss (loss.cu) ---------------------------------------------
 * input (N, C) or (N, C, d1, ...) of log-probabilities, target int64 (N)
 * or (N, d1, ...), weight (C) or NULL.  output: 0-d for mean/sum, shaped
 * like target for none; total_weight: 0-d, needed by the backward. */
int thcunn_nll_loss_forward(thc_tensor *output, thc_tensor *total_weight,
                            const thc_tensor *input, const thc_tensor *target,
                            const thc_tensor *weight, int reduction,
                            int64_t ignore_index);
int thcunn_nll_loss_backward_input(thc_tensor *grad_input,
                                   const thc_tensor *grad_output,
                                   const thc_tensor *target,
                                   const thc_tensor *weight,
                                   const thc_tensor *total_weight,
                                   int reduction, int64_t ignore_index);

/* ---- batch_norm (batchnorm.cu) ---------------------------------------
 * input (N, C, *); weight, bias, running_mean, running_var (C) or NULL.
 * save_mean, save_invstd (C): the statistics used (batch ones in training,
 * running ones in eval).  In training, running_mean/var are updated in
 * place with momentum (running_var gets the unbiased var). */
int thcunn_batch_norm_forward(thc_tensor *output, thc_tensor *save_mean,
                              thc_tensor *save_invstd,
                              thc_tensor *running_mean,
                              thc_tensor *running_var,
                              const thc_tensor *input,
                              const thc_tensor *weight,
                              const thc_tensor *bias, int training,
                              double momentum, double eps);
int thcunn_batch_norm_backward_input(thc_tensor *grad_input,
                                     const thc_tensor *grad_output,
                                     const thc_tensor *input,
                                     const thc_tensor *weight,
                                     const thc_tensor *save_mean,
                                     const thc_tensor *save_invstd,
                                     int training);
int thcunn_batch_norm_backward_params(thc_tensor *grad_weight,
                                      thc_tensor *grad_bias,
                                      const thc_tensor *grad_output,
                                      const thc_tensor *input,
                                      const thc_tensor *save_mean,
                                      const thc_tensor *save_invstd);

/* ---- activations (activation.cu) --------------------------------------
 * output/grad_input shaped like input; output may be input (in place).
 * Parameters as libTHNN's: leaky_relu a=negative_slope; elu a=alpha;
 * gelu a=0 exact, a=1 tanh approximation; softplus a=beta b=threshold;
 * hardtanh a=min b=max; the others take none. */
typedef enum thcunn_activation {
    THCUNN_RELU = 0, THCUNN_LEAKY_RELU, THCUNN_ELU, THCUNN_SELU, THCUNN_GELU,
    THCUNN_SILU, THCUNN_SIGMOID, THCUNN_TANH, THCUNN_SOFTPLUS,
    THCUNN_HARDTANH, THCUNN_HARDSWISH, THCUNN_MISH, THCUNN_NUM_ACTIVATIONS
} thcunn_activation;

int thcunn_activation_forward(thc_tensor *output, const thc_tensor *input,
                              int activation, double a, double b);
/* grad_input = grad_output * f'(input) */
int thcunn_activation_backward_input(thc_tensor *grad_input,
                                     const thc_tensor *grad_output,
                                     const thc_tensor *input, int activation,
                                     double a, double b);

/* ==== conv1d, conv3d, conv_transpose2d (conv_more.cu) ==== */
/* conv1d: conv2d on (N, C, 1, L) views.  input (N, C, L), weight
 * (O, C/groups, k), bias (O) or NULL, output (N, O, OL) with OL =
 * (L + 2 * padding - dilation * (k - 1) - 1) / stride + 1.  grad_input
 * (N, C, L) and grad_weight / grad_bias are overwritten; grad_weight
 * and/or grad_bias may be NULL (not computed). */
int thcunn_conv1d_forward(thc_tensor *output, const thc_tensor *input,
                          const thc_tensor *weight, const thc_tensor *bias,
                          int64_t stride, int64_t padding, int64_t dilation,
                          int64_t groups);
int thcunn_conv1d_backward_input(thc_tensor *grad_input,
                                 const thc_tensor *grad_output,
                                 const thc_tensor *weight, int64_t stride,
                                 int64_t padding, int64_t dilation,
                                 int64_t groups);
int thcunn_conv1d_backward_params(thc_tensor *grad_weight, thc_tensor *grad_bias,
                                  const thc_tensor *grad_output,
                                  const thc_tensor *input, int64_t stride,
                                  int64_t padding, int64_t dilation,
                                  int64_t groups);
/* conv3d: input (N, C, D, H, W), weight (O, C/groups, kD, kH, kW), bias
 * (O) or NULL, output (N, O, OD, OH, OW); stride, padding, dilation:
 * int64[3] (d, h, w).  Outputs overwritten; grad_weight and/or grad_bias
 * may be NULL. */
int thcunn_conv3d_forward(thc_tensor *output, const thc_tensor *input,
                          const thc_tensor *weight, const thc_tensor *bias,
                          const int64_t *stride, const int64_t *padding,
                          const int64_t *dilation, int64_t groups);
int thcunn_conv3d_backward_input(thc_tensor *grad_input,
                                 const thc_tensor *grad_output,
                                 const thc_tensor *weight,
                                 const int64_t *stride, const int64_t *padding,
                                 const int64_t *dilation, int64_t groups);
int thcunn_conv3d_backward_params(thc_tensor *grad_weight, thc_tensor *grad_bias,
                                  const thc_tensor *grad_output,
                                  const thc_tensor *input,
                                  const int64_t *stride, const int64_t *padding,
                                  const int64_t *dilation, int64_t groups);
/* conv_transpose2d: input (N, C, H, W), weight (C, O/groups, kH, kW),
 * bias (O) or NULL, output (N, O, OH, OW) with OH = (H - 1) * stride -
 * 2 * padding + dilation * (kH - 1) + output_padding + 1 (W alike);
 * stride, padding, output_padding, dilation: int64[2] (h, w),
 * output_padding smaller than stride or dilation.  Outputs overwritten;
 * grad_weight and/or grad_bias (O) may be NULL. */
int thcunn_conv_transpose2d_forward(thc_tensor *output, const thc_tensor *input,
                                    const thc_tensor *weight,
                                    const thc_tensor *bias,
                                    const int64_t *stride,
                                    const int64_t *padding,
                                    const int64_t *output_padding,
                                    const int64_t *dilation, int64_t groups);
int thcunn_conv_transpose2d_backward_input(thc_tensor *grad_input,
                                           const thc_tensor *grad_output,
                                           const thc_tensor *weight,
                                           const int64_t *stride,
                                           const int64_t *padding,
                                           const int64_t *output_padding,
                                           const int64_t *dilation,
                                           int64_t groups);
int thcunn_conv_transpose2d_backward_params(thc_tensor *grad_weight,
                                            thc_tensor *grad_bias,
                                            const thc_tensor *grad_output,
                                            const thc_tensor *input,
                                            const int64_t *stride,
                                            const int64_t *padding,
                                            const int64_t *output_padding,
                                            const int64_t *dilation,
                                            int64_t groups);



/* ==== adaptive pooling, 3-d pooling, window_output_size (pooling_more.cu) ==== */



/* ==== layer_norm, group_norm (norm.cu); dropout (dropout.cu) ==== */



/* ==== pointwise losses, kl_div, margin_ranking, cosine_embedding (loss_more.cu) ==== */



/* ==== padding (padding.cu); upsampling (upsample.cu) ==== */



/* ==== embedding, embedding_bag (embedding.cu) ==== */



#ifdef __cplusplus
}
#endif
#endif
