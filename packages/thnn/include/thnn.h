/* libTHNN: neural-network kernels for Ember, in C99, on libTH's C API.
 *
 * Kernel contract (see packages/thnn/README.md, "Kernel argument order"):
 *  - thnn_<layer>_forward, thnn_<layer>_backward_input,
 *    thnn_<layer>_backward_params;
 *  - outputs first (pre-allocated, contiguous, of the documented shape and
 *    of the input's dtype), then the const inputs, then the plain options;
 *  - each returns TH_OK (0) or a th_status code; thnn_last_error() holds
 *    a thread-local message saying what went wrong.  Never aborts or prints.
 *  - float32 and float64; integer tensors (targets, indices) are int64.
 *  - Optional tensors (bias, weight, running stats) may be NULL.
 *
 * Plain declarations only, so that FFI tools can read this header.
 */
#ifndef THNN_H
#define THNN_H

#include "th.h"

#ifdef __cplusplus
extern "C" {
#endif

#define THNN_ABI_VERSION_MAJOR 1
#define THNN_ABI_VERSION_MINOR 2

/* reductions of the losses */
#define THNN_REDUCTION_NONE 0
#define THNN_REDUCTION_MEAN 1
#define THNN_REDUCTION_SUM 2

/* ---- library facts and errors -------------------------------------- */
int thnn_abi_version_major(void);
int thnn_abi_version_minor(void);
const char *thnn_version(void);
const char *thnn_last_error(void);
int thnn_last_status(void);
void thnn_clear_error(void);

/* Output length of a convolution or pooling window along one dim; -1 (and
 * an error) when it would be < 1. */
int64_t thnn_window_output_size(int64_t in, int64_t kernel, int64_t stride,
                                int64_t padding, int64_t dilation,
                                int ceil_mode);

/* ---- conv2d (conv.c) ----------------------------------------------
 * input (N, C, H, W), weight (O, C/groups, kH, kW), bias (O) or NULL,
 * output (N, O, OH, OW); stride, padding, dilation: int64[2] (h, w). */
int thnn_conv2d_forward(th_tensor *output, const th_tensor *input,
                        const th_tensor *weight, const th_tensor *bias,
                        const int64_t *stride, const int64_t *padding,
                        const int64_t *dilation, int64_t groups);
int thnn_conv2d_backward_input(th_tensor *grad_input,
                               const th_tensor *grad_output,
                               const th_tensor *weight,
                               const int64_t *stride, const int64_t *padding,
                               const int64_t *dilation, int64_t groups);
/* grad_weight and/or grad_bias may be NULL (not computed); overwritten. */
int thnn_conv2d_backward_params(th_tensor *grad_weight, th_tensor *grad_bias,
                                const th_tensor *grad_output,
                                const th_tensor *input,
                                const int64_t *stride, const int64_t *padding,
                                const int64_t *dilation, int64_t groups);

/* ---- conv1d (conv.c): conv2d on (N, C, 1, L) views -------------------
 * input (N, C, L), weight (O, C/groups, k), bias (O) or NULL,
 * output (N, O, OL). */
int thnn_conv1d_forward(th_tensor *output, const th_tensor *input,
                        const th_tensor *weight, const th_tensor *bias,
                        int64_t stride, int64_t padding, int64_t dilation,
                        int64_t groups);
int thnn_conv1d_backward_input(th_tensor *grad_input,
                               const th_tensor *grad_output,
                               const th_tensor *weight, int64_t stride,
                               int64_t padding, int64_t dilation,
                               int64_t groups);
int thnn_conv1d_backward_params(th_tensor *grad_weight, th_tensor *grad_bias,
                                const th_tensor *grad_output,
                                const th_tensor *input, int64_t stride,
                                int64_t padding, int64_t dilation,
                                int64_t groups);

/* ---- pooling (pooling.c) ------------------------------------------
 * input (N, C, H, W) or (C, H, W); kernel, stride, padding, dilation:
 * int64[2].  indices: int64, flat positions in each H*W plane. */
int thnn_max_pool2d_forward(th_tensor *output, th_tensor *indices,
                            const th_tensor *input, const int64_t *kernel,
                            const int64_t *stride, const int64_t *padding,
                            const int64_t *dilation, int ceil_mode);
int thnn_max_pool2d_backward_input(th_tensor *grad_input,
                                   const th_tensor *grad_output,
                                   const th_tensor *indices);
int thnn_avg_pool2d_forward(th_tensor *output, const th_tensor *input,
                            const int64_t *kernel, const int64_t *stride,
                            const int64_t *padding, int ceil_mode,
                            int count_include_pad);
int thnn_avg_pool2d_backward_input(th_tensor *grad_input,
                                   const th_tensor *grad_output,
                                   const int64_t *kernel,
                                   const int64_t *stride,
                                   const int64_t *padding, int ceil_mode,
                                   int count_include_pad);

/* adaptive average pooling (adaptive_pooling.c): output (N, C, OH, OW) or (C, OH, OW), its
 * size chosen by the caller; cell i covers input rows
 * [floor(i*H/OH), ceil((i+1)*H/OH)). */
int thnn_adaptive_avg_pool2d_forward(th_tensor *output,
                                     const th_tensor *input);
int thnn_adaptive_avg_pool2d_backward_input(th_tensor *grad_input,
                                            const th_tensor *grad_output);

/* ---- softmax (softmax.c): any shape, along dim ---------------------- */
int thnn_softmax_forward(th_tensor *output, const th_tensor *input, int dim);
int thnn_softmax_backward_input(th_tensor *grad_input,
                                const th_tensor *grad_output,
                                const th_tensor *output, int dim);
int thnn_log_softmax_forward(th_tensor *output, const th_tensor *input,
                             int dim);
int thnn_log_softmax_backward_input(th_tensor *grad_input,
                                    const th_tensor *grad_output,
                                    const th_tensor *output, int dim);

/* ---- nll_loss (nll_loss.c) -----------------------------------------
 * input (N, C) or (N, C, d1, ...) of log-probabilities, target int64
 * (N) or (N, d1, ...), weight (C) or NULL.  output: 0-d for mean/sum,
 * shaped like target for none; total_weight: 0-d (sum of the weights of
 * the counted targets), needed by the backward. */
int thnn_nll_loss_forward(th_tensor *output, th_tensor *total_weight,
                          const th_tensor *input, const th_tensor *target,
                          const th_tensor *weight, int reduction,
                          int64_t ignore_index);
int thnn_nll_loss_backward_input(th_tensor *grad_input,
                                 const th_tensor *grad_output,
                                 const th_tensor *target,
                                 const th_tensor *weight,
                                 const th_tensor *total_weight,
                                 int reduction, int64_t ignore_index);

/* ---- pointwise losses (pointwise_loss.c) ----------------------------
 * input and target of one shape and dtype; weight (input's shape) or NULL,
 * multiplies each element's loss; pos_weight (input's last dim) or NULL,
 * for bce_with_logits.  a: beta of smooth_l1, delta of huber.  output:
 * input's shape for none, else 0-d. */
typedef enum thnn_pointwise_loss {
    THNN_MSE_LOSS = 0, THNN_L1_LOSS, THNN_SMOOTH_L1_LOSS, THNN_HUBER_LOSS,
    THNN_BCE_LOSS, THNN_BCE_WITH_LOGITS_LOSS
} thnn_pointwise_loss;

int thnn_pointwise_loss_forward(th_tensor *output, const th_tensor *input,
                                const th_tensor *target,
                                const th_tensor *weight,
                                const th_tensor *pos_weight, int loss,
                                int reduction, double a);
int thnn_pointwise_loss_backward_input(th_tensor *grad_input,
                                       const th_tensor *grad_output,
                                       const th_tensor *input,
                                       const th_tensor *target,
                                       const th_tensor *weight,
                                       const th_tensor *pos_weight, int loss,
                                       int reduction, double a);

/* ---- dropout (dropout.c) ----------------------------------------------
 * mask (input's shape and dtype) gets 0 or 1/(1-p); output = input * mask.
 * generator NULL: libTH's default generator. */
int thnn_dropout_forward(th_tensor *output, th_tensor *mask,
                         const th_tensor *input, double p,
                         th_generator *generator);
int thnn_dropout_backward_input(th_tensor *grad_input,
                                const th_tensor *grad_output,
                                const th_tensor *mask);

/* ---- batch_norm (batchnorm.c) --------------------------------------
 * input (N, C, *); weight, bias, running_mean, running_var (C) or NULL.
 * save_mean, save_invstd (C): the statistics used (batch ones in
 * training, running ones in eval).  In training, running_mean/var are
 * updated in place with momentum (running_var gets the unbiased var). */
int thnn_batch_norm_forward(th_tensor *output, th_tensor *save_mean,
                            th_tensor *save_invstd, th_tensor *running_mean,
                            th_tensor *running_var, const th_tensor *input,
                            const th_tensor *weight, const th_tensor *bias,
                            int training, double momentum, double eps);
int thnn_batch_norm_backward_input(th_tensor *grad_input,
                                   const th_tensor *grad_output,
                                   const th_tensor *input,
                                   const th_tensor *weight,
                                   const th_tensor *save_mean,
                                   const th_tensor *save_invstd,
                                   int training);
int thnn_batch_norm_backward_params(th_tensor *grad_weight,
                                    th_tensor *grad_bias,
                                    const th_tensor *grad_output,
                                    const th_tensor *input,
                                    const th_tensor *save_mean,
                                    const th_tensor *save_invstd);

/* ---- layer_norm (norm.c) --------------------------------------------
 * normalizes over the last normalized_ndim dims of input; weight, bias of
 * those dims' shape or NULL; save_mean, save_invstd (M) with M the
 * product of the leading dims. */
int thnn_layer_norm_forward(th_tensor *output, th_tensor *save_mean,
                            th_tensor *save_invstd, const th_tensor *input,
                            const th_tensor *weight, const th_tensor *bias,
                            int normalized_ndim, double eps);
int thnn_layer_norm_backward_input(th_tensor *grad_input,
                                   const th_tensor *grad_output,
                                   const th_tensor *input,
                                   const th_tensor *weight,
                                   const th_tensor *save_mean,
                                   const th_tensor *save_invstd,
                                   int normalized_ndim);
int thnn_layer_norm_backward_params(th_tensor *grad_weight,
                                    th_tensor *grad_bias,
                                    const th_tensor *grad_output,
                                    const th_tensor *input,
                                    const th_tensor *save_mean,
                                    const th_tensor *save_invstd,
                                    int normalized_ndim);

/* ---- embedding (embedding.c) -----------------------------------------
 * weight (num, dim), indices int64 of any shape; output indices.shape +
 * (dim).  grad_weight is overwritten; rows == padding_idx get none
 * (padding_idx < 0: no padding row). */
int thnn_embedding_forward(th_tensor *output, const th_tensor *weight,
                           const th_tensor *indices);
int thnn_embedding_backward_params(th_tensor *grad_weight,
                                   const th_tensor *grad_output,
                                   const th_tensor *indices,
                                   int64_t padding_idx);

/* ---- activations (activation.c) ------------------------------------
 * output/grad_input shaped like input; output may be input (in place).
 * The parameters a, b mean, per activation:
 *   relu -; leaky_relu a=negative_slope; elu a=alpha; selu -;
 *   gelu a=0 exact, a=1 tanh approximation; silu -; sigmoid -; tanh -;
 *   softplus a=beta b=threshold; hardtanh a=min b=max; hardswish -;
 *   mish -. */
typedef enum thnn_activation {
    THNN_RELU = 0, THNN_LEAKY_RELU, THNN_ELU, THNN_SELU, THNN_GELU,
    THNN_SILU, THNN_SIGMOID, THNN_TANH, THNN_SOFTPLUS, THNN_HARDTANH,
    THNN_HARDSWISH, THNN_MISH, THNN_NUM_ACTIVATIONS
} thnn_activation;

int thnn_activation_forward(th_tensor *output, const th_tensor *input,
                            int activation, double a, double b);
/* grad_input = grad_output * f'(input) */
int thnn_activation_backward_input(th_tensor *grad_input,
                                   const th_tensor *grad_output,
                                   const th_tensor *input, int activation,
                                   double a, double b);

/* ---- group_norm (norm.c) ---------------------------------------------
 * input (N, C, *) with C divisible by num_groups; weight, bias (C) or
 * NULL; save_mean, save_rstd (N, num_groups): each group's mean and
 * 1 / sqrt(var + eps), needed by both backwards.  Instance norm is
 * num_groups = C. */
int thnn_group_norm_forward(th_tensor *output, th_tensor *save_mean,
                            th_tensor *save_rstd, const th_tensor *input,
                            const th_tensor *weight, const th_tensor *bias,
                            int64_t num_groups, double eps);
int thnn_group_norm_backward_input(th_tensor *grad_input,
                                   const th_tensor *grad_output,
                                   const th_tensor *input,
                                   const th_tensor *weight,
                                   const th_tensor *save_mean,
                                   const th_tensor *save_rstd,
                                   int64_t num_groups);
int thnn_group_norm_backward_params(th_tensor *grad_weight,
                                    th_tensor *grad_bias,
                                    const th_tensor *grad_output,
                                    const th_tensor *input,
                                    const th_tensor *save_mean,
                                    const th_tensor *save_rstd,
                                    int64_t num_groups);

/* ---- upsampling (upsample.c) ------------------------------------------
 * input (N, C, H, W) or (C, H, W); output (..., OH, OW) of the caller's
 * size (grad_input: the input's shape).  scale_h, scale_w: the scale
 * factors the user gave (output / input), or <= 0 when none; given ones
 * map output to input coordinates (1 / scale), as PyTorch does.  A
 * dimension whose size does not change is copied, whatever its scale. */
int thnn_upsample_nearest2d_forward(th_tensor *output,
                                    const th_tensor *input, double scale_h,
                                    double scale_w);
int thnn_upsample_nearest2d_backward_input(th_tensor *grad_input,
                                           const th_tensor *grad_output,
                                           double scale_h, double scale_w);
int thnn_upsample_bilinear2d_forward(th_tensor *output,
                                     const th_tensor *input,
                                     int align_corners, double scale_h,
                                     double scale_w);
int thnn_upsample_bilinear2d_backward_input(th_tensor *grad_input,
                                            const th_tensor *grad_output,
                                            int align_corners,
                                            double scale_h, double scale_w);

/* ---- reflection / replication padding (padding.c) ----------------------
 * padding: one (before, after) pair per padded dim, last dim first:
 * int64[2] {left, right} (1d, input (N, C, W) or (C, W)), int64[4]
 * {left, right, top, bottom} (2d), int64[6] {..., front, back} (3d).
 * Negative values crop.  Reflection needs each pad < that dim's size. */
int thnn_reflection_pad1d_forward(th_tensor *output, const th_tensor *input,
                                  const int64_t *padding);
int thnn_reflection_pad1d_backward_input(th_tensor *grad_input,
                                         const th_tensor *grad_output,
                                         const int64_t *padding);
int thnn_reflection_pad2d_forward(th_tensor *output, const th_tensor *input,
                                  const int64_t *padding);
int thnn_reflection_pad2d_backward_input(th_tensor *grad_input,
                                         const th_tensor *grad_output,
                                         const int64_t *padding);
int thnn_reflection_pad3d_forward(th_tensor *output, const th_tensor *input,
                                  const int64_t *padding);
int thnn_reflection_pad3d_backward_input(th_tensor *grad_input,
                                         const th_tensor *grad_output,
                                         const int64_t *padding);
int thnn_replication_pad1d_forward(th_tensor *output, const th_tensor *input,
                                   const int64_t *padding);
int thnn_replication_pad1d_backward_input(th_tensor *grad_input,
                                          const th_tensor *grad_output,
                                          const int64_t *padding);
int thnn_replication_pad2d_forward(th_tensor *output, const th_tensor *input,
                                   const int64_t *padding);
int thnn_replication_pad2d_backward_input(th_tensor *grad_input,
                                          const th_tensor *grad_output,
                                          const int64_t *padding);
int thnn_replication_pad3d_forward(th_tensor *output, const th_tensor *input,
                                   const int64_t *padding);
int thnn_replication_pad3d_backward_input(th_tensor *grad_input,
                                          const th_tensor *grad_output,
                                          const int64_t *padding);

/* ---- embedding_bag (embedding.c) ---------------------------------------
 * weight (num, dim); indices int64 (n); offsets int64: bag b covers
 * indices [offsets[b], offsets[b+1]), the last bag up to n; with
 * include_last_offset offsets has one entry more than the bags (its value
 * is checked, not used, as in PyTorch).  per_sample_weights (n) or NULL
 * (mode sum only); rows == padding_idx are left out (padding_idx < 0:
 * none).  Outputs: output (bags, dim), offset2bag int64 (n): each
 * index's bag (-1: none, when there are no bags), bag_size int64
 * (bags): indices counted, max_indices int64 (bags, dim): the winning
 * rows (-1 for an empty bag), mode max only (else may be NULL).  Empty
 * bags give 0.  grad_weight (num, dim) is overwritten. */
#define THNN_EMBEDDING_BAG_SUM 0
#define THNN_EMBEDDING_BAG_MEAN 1
#define THNN_EMBEDDING_BAG_MAX 2

int thnn_embedding_bag_forward(th_tensor *output, th_tensor *offset2bag,
                               th_tensor *bag_size, th_tensor *max_indices,
                               const th_tensor *weight,
                               const th_tensor *indices,
                               const th_tensor *offsets,
                               const th_tensor *per_sample_weights, int mode,
                               int include_last_offset, int64_t padding_idx);
int thnn_embedding_bag_backward_params(th_tensor *grad_weight,
                                       const th_tensor *grad_output,
                                       const th_tensor *indices,
                                       const th_tensor *offset2bag,
                                       const th_tensor *bag_size,
                                       const th_tensor *max_indices,
                                       const th_tensor *per_sample_weights,
                                       int mode, int64_t padding_idx);
/* grad_per_sample_weights (n): <grad_output[bag of i], weight[indices[i]]>,
 * 0 for padding rows; mode sum only. */
int thnn_embedding_bag_backward_per_sample_weights(
    th_tensor *grad_per_sample_weights, const th_tensor *grad_output,
    const th_tensor *weight, const th_tensor *indices,
    const th_tensor *offset2bag, int mode, int64_t padding_idx);

/* ---- kl_div, margin_ranking, cosine_embedding losses (pointwise_loss.c) --
 * output: 0-d for mean/sum, else per element (kl_div, margin_ranking:
 * the input's shape; cosine_embedding: the target's).  Inputs and target
 * of one shape and dtype (the caller broadcasts).  kl_div: target *
 * (log target - input), or exp(target) * (target - input) with
 * log_target; its backward also gives grad_target (either output may be
 * NULL).  margin_ranking: max(0, -target * (input1 - input2) + margin).
 * cosine_embedding: inputs (N, D) with target (N), or (D) with a 0-d
 * target; 1 - cos for target 1, max(0, cos - margin) for target -1. */
int thnn_kl_div_forward(th_tensor *output, const th_tensor *input,
                        const th_tensor *target, int reduction,
                        int log_target);
int thnn_kl_div_backward_input(th_tensor *grad_input, th_tensor *grad_target,
                               const th_tensor *grad_output,
                               const th_tensor *input,
                               const th_tensor *target, int reduction,
                               int log_target);
int thnn_margin_ranking_loss_forward(th_tensor *output,
                                     const th_tensor *input1,
                                     const th_tensor *input2,
                                     const th_tensor *target, double margin,
                                     int reduction);
int thnn_margin_ranking_loss_backward_input(th_tensor *grad_input1,
                                            th_tensor *grad_input2,
                                            const th_tensor *grad_output,
                                            const th_tensor *input1,
                                            const th_tensor *input2,
                                            const th_tensor *target,
                                            double margin, int reduction);
int thnn_cosine_embedding_loss_forward(th_tensor *output,
                                       const th_tensor *input1,
                                       const th_tensor *input2,
                                       const th_tensor *target, double margin,
                                       int reduction);
int thnn_cosine_embedding_loss_backward_input(th_tensor *grad_input1,
                                              th_tensor *grad_input2,
                                              const th_tensor *grad_output,
                                              const th_tensor *input1,
                                              const th_tensor *input2,
                                              const th_tensor *target,
                                              double margin, int reduction);

/* ---- conv3d (conv3d.c) ---------------------------------------------
 * input (N, C, D, H, W), weight (O, C/groups, kD, kH, kW), bias (O) or
 * NULL, output (N, O, OD, OH, OW); stride, padding, dilation: int64[3]
 * (d, h, w).  grad_weight and/or grad_bias may be NULL; overwritten. */
int thnn_conv3d_forward(th_tensor *output, const th_tensor *input,
                        const th_tensor *weight, const th_tensor *bias,
                        const int64_t *stride, const int64_t *padding,
                        const int64_t *dilation, int64_t groups);
int thnn_conv3d_backward_input(th_tensor *grad_input,
                               const th_tensor *grad_output,
                               const th_tensor *weight,
                               const int64_t *stride, const int64_t *padding,
                               const int64_t *dilation, int64_t groups);
int thnn_conv3d_backward_params(th_tensor *grad_weight, th_tensor *grad_bias,
                                const th_tensor *grad_output,
                                const th_tensor *input,
                                const int64_t *stride, const int64_t *padding,
                                const int64_t *dilation, int64_t groups);

/* ---- conv_transpose2d (conv_transpose2d.c) ---------------------------
 * input (N, C, H, W), weight (C, O/groups, kH, kW), bias (O) or NULL,
 * output (N, O, OH, OW) with OH = (H - 1) * stride - 2 * padding +
 * dilation * (kH - 1) + output_padding + 1 (W alike); stride, padding,
 * output_padding, dilation: int64[2] (h, w), output_padding smaller than
 * stride or dilation.  grad_weight and/or grad_bias may be NULL. */
int thnn_conv_transpose2d_forward(th_tensor *output, const th_tensor *input,
                                  const th_tensor *weight,
                                  const th_tensor *bias,
                                  const int64_t *stride,
                                  const int64_t *padding,
                                  const int64_t *output_padding,
                                  const int64_t *dilation, int64_t groups);
int thnn_conv_transpose2d_backward_input(th_tensor *grad_input,
                                         const th_tensor *grad_output,
                                         const th_tensor *weight,
                                         const int64_t *stride,
                                         const int64_t *padding,
                                         const int64_t *output_padding,
                                         const int64_t *dilation,
                                         int64_t groups);
int thnn_conv_transpose2d_backward_params(th_tensor *grad_weight,
                                          th_tensor *grad_bias,
                                          const th_tensor *grad_output,
                                          const th_tensor *input,
                                          const int64_t *stride,
                                          const int64_t *padding,
                                          const int64_t *output_padding,
                                          const int64_t *dilation,
                                          int64_t groups);

/* ---- 3-d pooling (pooling3d.c) ---------------------------------------
 * input (N, C, D, H, W) or (C, D, H, W); kernel, stride, padding,
 * dilation: int64[3] (d, h, w).  indices: int64, flat positions in each
 * D*H*W volume (-1: a window of padding only).  divisor_override: 0 for
 * none, else every window's divisor. */
int thnn_max_pool3d_forward(th_tensor *output, th_tensor *indices,
                            const th_tensor *input, const int64_t *kernel,
                            const int64_t *stride, const int64_t *padding,
                            const int64_t *dilation, int ceil_mode);
int thnn_max_pool3d_backward_input(th_tensor *grad_input,
                                   const th_tensor *grad_output,
                                   const th_tensor *indices);
int thnn_avg_pool3d_forward(th_tensor *output, const th_tensor *input,
                            const int64_t *kernel, const int64_t *stride,
                            const int64_t *padding, int ceil_mode,
                            int count_include_pad, int64_t divisor_override);
int thnn_avg_pool3d_backward_input(th_tensor *grad_input,
                                   const th_tensor *grad_output,
                                   const int64_t *kernel,
                                   const int64_t *stride,
                                   const int64_t *padding, int ceil_mode,
                                   int count_include_pad,
                                   int64_t divisor_override);

/* ---- adaptive_max_pool2d (adaptive_pooling.c) ------------------------
 * output, indices (N, C, OH, OW) or (C, OH, OW), the size chosen by the
 * caller; cells as adaptive_avg_pool2d's; indices: int64, flat positions
 * in each H*W plane. */
int thnn_adaptive_max_pool2d_forward(th_tensor *output, th_tensor *indices,
                                     const th_tensor *input);
int thnn_adaptive_max_pool2d_backward_input(th_tensor *grad_input,
                                            const th_tensor *grad_output,
                                            const th_tensor *indices);

/* ---- recurrent cells (rnn.c) ----------------------------------------
 * The pointwise part of one step, after the caller's matrix products; B
 * rows, hidden size H, PyTorch's gate order.  All outputs contiguous.
 * LSTM: gates (B, 4H) = x W_ih^T + b_ih + h_prev W_hh^T + b_hh in (i, f,
 * g, o) order, replaced in place by the activations (sigmoid, sigmoid,
 * tanh, sigmoid), which the backward takes; c = f c_prev + i g, h = o
 * tanh(c); c may be c_prev itself.  Backward: grad_h, grad_c (either may
 * be NULL for zero) -> grad_gates (B, 4H, pre-activation) and grad_c_prev
 * (may be grad_c itself).
 * GRU: input_gates (B, 3H) = x W_ih^T + b_ih, hidden_gates = h_prev W_hh^T
 * + b_hh, (r, z, n) order; n = tanh(x_n + r hidden_n), h = (1 - z) n +
 * z h_prev; save (B, 4H) gets r, z, n, hidden_n.  Backward: grad of both
 * gate tensors and the direct part of grad_h_prev (grad_h z; the caller
 * adds grad_hidden_gates W_hh).
 * RNN: h = tanh(gates) or relu(gates) (h may be gates itself); backward
 * from h (grad_gates may be grad_h itself). */
#define THNN_RNN_TANH 0
#define THNN_RNN_RELU 1
int thnn_lstm_cell_forward(th_tensor *h, th_tensor *c, th_tensor *gates,
                           const th_tensor *c_prev);
int thnn_lstm_cell_backward(th_tensor *grad_gates, th_tensor *grad_c_prev,
                            const th_tensor *grad_h, const th_tensor *grad_c,
                            const th_tensor *gates, const th_tensor *c_prev,
                            const th_tensor *c);
int thnn_gru_cell_forward(th_tensor *h, th_tensor *save,
                          const th_tensor *input_gates,
                          const th_tensor *hidden_gates,
                          const th_tensor *h_prev);
int thnn_gru_cell_backward(th_tensor *grad_input_gates,
                           th_tensor *grad_hidden_gates,
                           th_tensor *grad_h_prev, const th_tensor *grad_h,
                           const th_tensor *save, const th_tensor *h_prev);
int thnn_rnn_cell_forward(th_tensor *h, const th_tensor *gates,
                          int nonlinearity);
int thnn_rnn_cell_backward(th_tensor *grad_gates, const th_tensor *grad_h,
                           const th_tensor *h, int nonlinearity);

#ifdef __cplusplus
}
#endif

#endif /* THNN_H */
