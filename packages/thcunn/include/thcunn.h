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
#define THCUNN_ABI_VERSION_MINOR 1

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

/* ---- nll_loss (nll_loss.cu) -----------------------------------------
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

/* ---- conv1d (conv.cu), conv3d (conv3d.cu), conv_transpose2d (conv_transpose2d.cu) */
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

/* ---- adaptive pooling (adaptive_pooling.cu), 3-d pooling (pooling3d.cu),
 * window_output_size (pooling.cu) ------------------------------------------ */
/* Output length of a convolution or pooling window along one dim; -1 (and
 * an error) when it would be < 1 or the arguments are invalid. */
int64_t thcunn_window_output_size(int64_t in, int64_t kernel, int64_t stride,
                                  int64_t padding, int64_t dilation,
                                  int ceil_mode);

/* adaptive average pooling: input (N, C, H, W) or (C, H, W); output
 * (N, C, OH, OW) or (C, OH, OW), its size chosen by the caller; cell i
 * covers input rows [floor(i*H/OH), ceil((i+1)*H/OH)), the columns alike.
 * grad_input (shaped like the input) is overwritten. */
int thcunn_adaptive_avg_pool2d_forward(thc_tensor *output,
                                       const thc_tensor *input);
int thcunn_adaptive_avg_pool2d_backward_input(thc_tensor *grad_input,
                                              const thc_tensor *grad_output);

/* adaptive max pooling: output, indices (N, C, OH, OW) or (C, OH, OW), the
 * size chosen by the caller; cells as adaptive_avg_pool2d's; the first
 * maximum of a cell (a NaN wins); indices: int64, flat positions in each
 * H*W plane.  The backward overwrites grad_input (N, C, H, W) or (C, H, W);
 * an index outside the plane is an IndexError, nothing written. */
int thcunn_adaptive_max_pool2d_forward(thc_tensor *output, thc_tensor *indices,
                                       const thc_tensor *input);
int thcunn_adaptive_max_pool2d_backward_input(thc_tensor *grad_input,
                                              const thc_tensor *grad_output,
                                              const thc_tensor *indices);

/* 3-d pooling: input (N, C, D, H, W) or (C, D, H, W); kernel, stride,
 * padding, dilation: int64[3] (d, h, w).  indices: int64, flat positions in
 * each D*H*W volume (-1: a window of padding only, no gradient).
 * divisor_override: 0 for none, else every window's divisor.  The
 * backwards overwrite grad_input (shaped like the input). */
int thcunn_max_pool3d_forward(thc_tensor *output, thc_tensor *indices,
                              const thc_tensor *input, const int64_t *kernel,
                              const int64_t *stride, const int64_t *padding,
                              const int64_t *dilation, int ceil_mode);
int thcunn_max_pool3d_backward_input(thc_tensor *grad_input,
                                     const thc_tensor *grad_output,
                                     const thc_tensor *indices);
int thcunn_avg_pool3d_forward(thc_tensor *output, const thc_tensor *input,
                              const int64_t *kernel, const int64_t *stride,
                              const int64_t *padding, int ceil_mode,
                              int count_include_pad, int64_t divisor_override);
int thcunn_avg_pool3d_backward_input(thc_tensor *grad_input,
                                     const thc_tensor *grad_output,
                                     const int64_t *kernel,
                                     const int64_t *stride,
                                     const int64_t *padding, int ceil_mode,
                                     int count_include_pad,
                                     int64_t divisor_override);

/* ---- layer_norm, group_norm (norm.cu); dropout (dropout.cu) ------------ */
/* layer_norm over the last normalized_ndim dims of input (seen as rows
 * (M, K), K the product of those dims); weight, bias of those dims' shape
 * or NULL; save_mean, save_invstd (M): each row's mean and
 * 1 / sqrt(var + eps), needed by both backwards.  output / grad_input
 * shaped like input; grad_weight, grad_bias (weight's shape) may be NULL
 * (not computed); all outputs overwritten. */
int thcunn_layer_norm_forward(thc_tensor *output, thc_tensor *save_mean,
                              thc_tensor *save_invstd, const thc_tensor *input,
                              const thc_tensor *weight, const thc_tensor *bias,
                              int normalized_ndim, double eps);
int thcunn_layer_norm_backward_input(thc_tensor *grad_input,
                                     const thc_tensor *grad_output,
                                     const thc_tensor *input,
                                     const thc_tensor *weight,
                                     const thc_tensor *save_mean,
                                     const thc_tensor *save_invstd,
                                     int normalized_ndim);
int thcunn_layer_norm_backward_params(thc_tensor *grad_weight,
                                      thc_tensor *grad_bias,
                                      const thc_tensor *grad_output,
                                      const thc_tensor *input,
                                      const thc_tensor *save_mean,
                                      const thc_tensor *save_invstd,
                                      int normalized_ndim);

/* group_norm: input (N, C, *) with C divisible by num_groups; weight,
 * bias (C) or NULL; save_mean, save_rstd (N, num_groups): each group's
 * mean and 1 / sqrt(var + eps), needed by both backwards.  grad_weight,
 * grad_bias (C) may be NULL; all outputs overwritten.  Instance norm is
 * num_groups = C. */
int thcunn_group_norm_forward(thc_tensor *output, thc_tensor *save_mean,
                              thc_tensor *save_rstd, const thc_tensor *input,
                              const thc_tensor *weight, const thc_tensor *bias,
                              int64_t num_groups, double eps);
int thcunn_group_norm_backward_input(thc_tensor *grad_input,
                                     const thc_tensor *grad_output,
                                     const thc_tensor *input,
                                     const thc_tensor *weight,
                                     const thc_tensor *save_mean,
                                     const thc_tensor *save_rstd,
                                     int64_t num_groups);
int thcunn_group_norm_backward_params(thc_tensor *grad_weight,
                                      thc_tensor *grad_bias,
                                      const thc_tensor *grad_output,
                                      const thc_tensor *input,
                                      const thc_tensor *save_mean,
                                      const thc_tensor *save_rstd,
                                      int64_t num_groups);

/* dropout: mask (input's shape and dtype) gets 0 or 1/(1-p), drawn from
 * libTHC's Philox generator (NULL: thc_default_generator()), so a seeded
 * generator gives the same mask again; output = input * mask.  The
 * backward: grad_input (mask's shape) = grad_output * mask. */
int thcunn_dropout_forward(thc_tensor *output, thc_tensor *mask,
                           const thc_tensor *input, double p,
                           thc_generator *generator);
int thcunn_dropout_backward_input(thc_tensor *grad_input,
                                  const thc_tensor *grad_output,
                                  const thc_tensor *mask);

/* ---- pointwise losses, kl_div, margin_ranking, cosine_embedding (pointwise_loss.cu) */
/* Reductions: output (or grad_output) is 0-d for mean/sum, computed on the
 * device (per-element values in a float64 scratch, then libTHC's sums);
 * the mean of no element is NaN.  No broadcasting: the caller broadcasts.
 *
 * Pointwise losses: input and target of one shape and dtype; weight
 * (input's number of elements) or NULL multiplies each element's loss;
 * pos_weight (input's last dim) or NULL, for bce_with_logits.  a: beta of
 * smooth_l1, delta of huber.  output: input's shape for none, else 0-d.
 * bce's input must lie in [0, 1] (checked on the device, read back). */
typedef enum thcunn_pointwise_loss {
    THCUNN_MSE_LOSS = 0, THCUNN_L1_LOSS, THCUNN_SMOOTH_L1_LOSS, THCUNN_HUBER_LOSS,
    THCUNN_BCE_LOSS, THCUNN_BCE_WITH_LOGITS_LOSS, THCUNN_NUM_POINTWISE_LOSSES
} thcunn_pointwise_loss;

int thcunn_pointwise_loss_forward(thc_tensor *output, const thc_tensor *input,
                                  const thc_tensor *target,
                                  const thc_tensor *weight,
                                  const thc_tensor *pos_weight, int loss,
                                  int reduction, double a);
/* grad_input (input's shape) is overwritten. */
int thcunn_pointwise_loss_backward_input(thc_tensor *grad_input,
                                         const thc_tensor *grad_output,
                                         const thc_tensor *input,
                                         const thc_tensor *target,
                                         const thc_tensor *weight,
                                         const thc_tensor *pos_weight,
                                         int loss, int reduction, double a);

/* kl_div: input and target of one shape and dtype; target * (log target -
 * input), or exp(target) * (target - input) with log_target (a target of 0
 * gives 0, a negative one NaN).  output: input's shape for none, else 0-d
 * ('batchmean' is sum / batch, done by the caller).  The backward gives
 * grad_input and/or grad_target (input's shape; either may be NULL). */
int thcunn_kl_div_forward(thc_tensor *output, const thc_tensor *input,
                          const thc_tensor *target, int reduction,
                          int log_target);
int thcunn_kl_div_backward_input(thc_tensor *grad_input,
                                 thc_tensor *grad_target,
                                 const thc_tensor *grad_output,
                                 const thc_tensor *input,
                                 const thc_tensor *target, int reduction,
                                 int log_target);

/* margin_ranking_loss: input1, input2, target (+1/-1) of one shape and
 * dtype; max(0, -target * (input1 - input2) + margin).  output: input1's
 * shape for none, else 0-d.  grad_input1/2 (input1's shape) may be NULL. */
int thcunn_margin_ranking_loss_forward(thc_tensor *output,
                                       const thc_tensor *input1,
                                       const thc_tensor *input2,
                                       const thc_tensor *target,
                                       double margin, int reduction);
int thcunn_margin_ranking_loss_backward_input(thc_tensor *grad_input1,
                                              thc_tensor *grad_input2,
                                              const thc_tensor *grad_output,
                                              const thc_tensor *input1,
                                              const thc_tensor *input2,
                                              const thc_tensor *target,
                                              double margin, int reduction);

/* cosine_embedding_loss: inputs (N, D) with target (N), or (D) with a 0-d
 * target, one dtype; cos = <x1, x2> / sqrt((|x1|^2 + 1e-12)(|x2|^2 +
 * 1e-12)) per row; 1 - cos for target 1, max(0, cos - margin) for target
 * -1, 0 for other targets.  output: target's shape for none, else 0-d;
 * grad_input1/2 (input1's shape) may be NULL. */
int thcunn_cosine_embedding_loss_forward(thc_tensor *output,
                                         const thc_tensor *input1,
                                         const thc_tensor *input2,
                                         const thc_tensor *target,
                                         double margin, int reduction);
int thcunn_cosine_embedding_loss_backward_input(thc_tensor *grad_input1,
                                                thc_tensor *grad_input2,
                                                const thc_tensor *grad_output,
                                                const thc_tensor *input1,
                                                const thc_tensor *input2,
                                                const thc_tensor *target,
                                                double margin, int reduction);

/* ---- padding (padding.cu); upsampling (upsample.cu) -------------------- */
/* reflection / replication padding (padding.cu), libTHNN's layout:
 * padding is one (before, after) pair per padded dim, last dim first:
 * int64[2] {left, right} (1d: input (N, C, W) or (C, W)), int64[4]
 * {left, right, top, bottom} (2d: (N, C, H, W) or (C, H, W)), int64[6]
 * {..., front, back} (3d: (N, C, D, H, W) or (C, D, H, W)).  Negative
 * values crop; reflection needs each pad < that dim's size.  output: the
 * input's shape with the padded sizes; grad_input: the input's shape,
 * overwritten. */
int thcunn_reflection_pad1d_forward(thc_tensor *output, const thc_tensor *input,
                                    const int64_t *padding);
int thcunn_reflection_pad1d_backward_input(thc_tensor *grad_input,
                                           const thc_tensor *grad_output,
                                           const int64_t *padding);
int thcunn_reflection_pad2d_forward(thc_tensor *output, const thc_tensor *input,
                                    const int64_t *padding);
int thcunn_reflection_pad2d_backward_input(thc_tensor *grad_input,
                                           const thc_tensor *grad_output,
                                           const int64_t *padding);
int thcunn_reflection_pad3d_forward(thc_tensor *output, const thc_tensor *input,
                                    const int64_t *padding);
int thcunn_reflection_pad3d_backward_input(thc_tensor *grad_input,
                                           const thc_tensor *grad_output,
                                           const int64_t *padding);
int thcunn_replication_pad1d_forward(thc_tensor *output, const thc_tensor *input,
                                     const int64_t *padding);
int thcunn_replication_pad1d_backward_input(thc_tensor *grad_input,
                                            const thc_tensor *grad_output,
                                            const int64_t *padding);
int thcunn_replication_pad2d_forward(thc_tensor *output, const thc_tensor *input,
                                     const int64_t *padding);
int thcunn_replication_pad2d_backward_input(thc_tensor *grad_input,
                                            const thc_tensor *grad_output,
                                            const int64_t *padding);
int thcunn_replication_pad3d_forward(thc_tensor *output, const thc_tensor *input,
                                     const int64_t *padding);
int thcunn_replication_pad3d_backward_input(thc_tensor *grad_input,
                                            const thc_tensor *grad_output,
                                            const int64_t *padding);

/* upsampling (upsample.cu): input (N, C, H, W) or (C, H, W); output
 * (..., OH, OW) of the caller's size (grad_input: the input's shape,
 * overwritten).  scale_h, scale_w: the scale factors the user gave
 * (output / input), or <= 0 when none; given ones map output to input
 * coordinates (1 / scale), as in libTHNN.  A dimension whose size does
 * not change is copied, whatever its scale. */
int thcunn_upsample_nearest2d_forward(thc_tensor *output, const thc_tensor *input,
                                      double scale_h, double scale_w);
int thcunn_upsample_nearest2d_backward_input(thc_tensor *grad_input,
                                             const thc_tensor *grad_output,
                                             double scale_h, double scale_w);
int thcunn_upsample_bilinear2d_forward(thc_tensor *output, const thc_tensor *input,
                                       int align_corners, double scale_h,
                                       double scale_w);
int thcunn_upsample_bilinear2d_backward_input(thc_tensor *grad_input,
                                              const thc_tensor *grad_output,
                                              int align_corners, double scale_h,
                                              double scale_w);

/* ---- embedding, embedding_bag (embedding.cu) --------------------------- */
/* embedding: weight (num, dim), indices int64 of any shape, every entry
 * in [0, num) (else THC_ERR_INDEX, found on the device; nothing written);
 * output indices.shape + (dim).  grad_output: indices.numel() * dim
 * elements; grad_weight (num, dim) is overwritten, rows == padding_idx
 * get none (padding_idx < 0: no padding row). */
int thcunn_embedding_forward(thc_tensor *output, const thc_tensor *weight,
                             const thc_tensor *indices);
int thcunn_embedding_backward_params(thc_tensor *grad_weight,
                                     const thc_tensor *grad_output,
                                     const thc_tensor *indices,
                                     int64_t padding_idx);

/* embedding_bag: libTHNN's thnn_embedding_bag_* (thnn.h).  weight
 * (num, dim); indices int64 (n); offsets int64: bag b covers indices
 * [offsets[b], offsets[b+1]), the last bag up to n; with
 * include_last_offset offsets has one entry more than the bags (checked,
 * not used).  per_sample_weights (n) or NULL (mode sum only); rows ==
 * padding_idx are left out (padding_idx < 0: none).  Outputs: output
 * (bags, dim), offset2bag int64 (n): each index's bag (-1 when there are
 * no bags), bag_size int64 (bags): indices counted, max_indices int64
 * (bags, dim): the winning rows (-1 for an empty bag), mode max only
 * (else may be NULL).  Empty bags give 0.
 * Indices, offsets, offset2bag and max_indices are checked on the device
 * before anything is written.  grad_weight (num, dim) is overwritten. */
#define THCUNN_EMBEDDING_BAG_SUM 0
#define THCUNN_EMBEDDING_BAG_MEAN 1
#define THCUNN_EMBEDDING_BAG_MAX 2

int thcunn_embedding_bag_forward(thc_tensor *output, thc_tensor *offset2bag,
                                 thc_tensor *bag_size, thc_tensor *max_indices,
                                 const thc_tensor *weight,
                                 const thc_tensor *indices,
                                 const thc_tensor *offsets,
                                 const thc_tensor *per_sample_weights,
                                 int mode, int include_last_offset,
                                 int64_t padding_idx);
int thcunn_embedding_bag_backward_params(thc_tensor *grad_weight,
                                         const thc_tensor *grad_output,
                                         const thc_tensor *indices,
                                         const thc_tensor *offset2bag,
                                         const thc_tensor *bag_size,
                                         const thc_tensor *max_indices,
                                         const thc_tensor *per_sample_weights,
                                         int mode, int64_t padding_idx);
/* grad_per_sample_weights (n): <grad_output[bag of i], weight[indices[i]]>
 * (summed in double), 0 for padding rows and indices in no bag; mode sum
 * only. */
int thcunn_embedding_bag_backward_per_sample_weights(
    thc_tensor *grad_per_sample_weights, const thc_tensor *grad_output,
    const thc_tensor *weight, const thc_tensor *indices,
    const thc_tensor *offset2bag, int mode, int64_t padding_idx);

#ifdef __cplusplus
}
#endif
#endif
