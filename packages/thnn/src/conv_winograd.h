/* conv2d's Winograd F(4x4, 3x3) path (conv_winograd.c), used by conv.c for
 * the forward and both gradients. */
#ifndef THNN_CONV_WINOGRAD_H
#define THNN_CONV_WINOGRAD_H
#include "thnn_internal.h"

/* 1 when the Winograd path computes this convolution: float32, 3x3,
 * stride 1, dilation 1, one group, padding at most 2, at least 16 input
 * and output channels and 36 output positions, and a batch and plane
 * large enough to repay the filter transform; EMBER_CONV_WINOGRAD=0
 * turns it off, =1 takes it for every convolution of that form */
int thnn__winograd_fits(int dtype, int64_t N, int64_t C, int64_t O, int64_t kh, int64_t kw,
                        int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t groups,
                        int64_t ph, int64_t pw, int64_t OH, int64_t OW);

/* out (N, O, OH, OW) = the convolution of x (N, C, H, W) with w (O, C, 3,
 * 3), padding (ph, pw), plus bias (NULL: none); with flip, w is (C, O, 3,
 * 3) and is read flipped and transposed (an input gradient).  Contiguous
 * float32 buffers; out is written whole. */
int thnn__winograd_conv(float *out, const float *x, const float *w, const float *bias,
                        int64_t N, int64_t C, int64_t H, int64_t W, int64_t O, int64_t ph,
                        int64_t pw, int64_t OH, int64_t OW, int flip);

/* 1 when the weight gradient of a convolution that fits takes the path:
 * enough tiles for its products over them (or EMBER_CONV_WINOGRAD=1) */
int thnn__winograd_weight_grad_fits(int64_t N, int64_t OH, int64_t OW);

/* gw (O, C, 3, 3) = the weight gradient of that convolution (no flip) for
 * input x (N, C, H, W) and grad_output gy (N, O, OH, OW); contiguous
 * float32 buffers; gw is overwritten */
int thnn__winograd_weight_grad(float *gw, const float *x, const float *gy, int64_t N,
                               int64_t C, int64_t H, int64_t W, int64_t O, int64_t ph,
                               int64_t pw, int64_t OH, int64_t OW);
#endif
