/* The column buffers of the GEMM convolutions (conv2d, conv3d,
 * conv_transpose2d): vol2col unfolds every window of an image into one
 * column, col2vol is its adjoint.  Internal to libTHNN. */
#ifndef THNN_CONV_UNFOLD_H
#define THNN_CONV_UNFOLD_H
#include "thnn_internal.h"

/* An image (C, D, H, W) and the windows of a (kd, kh, kw) kernel placed
 * at OD x OH x OW positions: window (od, oh, ow) reads image element
 * (od*sd - pd + i*dd, oh*sh - ph + j*dh, ow*sw - pw + k*dw).  2-d
 * geometries have D = OD = kd = sd = dd = 1 and pd = 0. */
typedef struct thnn_unfold {
    int64_t C, D, H, W;
    int64_t kd, kh, kw;
    int64_t OD, OH, OW;
    int64_t sd, sh, sw, pd, ph, pw, dd, dh, dw;
} thnn_unfold;

/* col (C*kd*kh*kw, (r1 - r0)*OW) = the windows of x in the window rows
 * q = od*OH + oh in [r0, r1) (all of them: 0, OD*OH); zero where a window
 * reaches into the padding.  dtype: TH_FLOAT32 or TH_FLOAT64. */
void thnn__vol2col(int dtype, const void *x, void *col, const thnn_unfold *u,
                   int64_t r0, int64_t r1);
/* x += col (of window rows [r0, r1)) scattered back to the elements each
 * column entry read */
void thnn__col2vol(int dtype, void *x, const void *col, const thnn_unfold *u,
                   int64_t r0, int64_t r1);

/* Window rows per band: the convolutions unfold and multiply one band of
 * window rows at a time so that col (about this many bytes) stays in
 * cache between vol2col and the GEMM.  Against a whole-sample col, float32,
 * 1 thread: conv3d 4x16x16^3 -> 32, k=3 took 0.55-0.59x the time forward
 * and 0.70x backward; conv_transpose2d 8x64x28x28 -> 32, k=4 s=2 was
 * unchanged (1.0-1.16x, within the noise of a loaded machine). */
#ifndef THNN_COL_BAND_BYTES
#define THNN_COL_BAND_BYTES (1024 * 1024)
#endif
int64_t thnn__band_rows(const thnn_unfold *u, int dtype);

/* contiguous (rows, cols) column buffer; NULL with our error set */
th_tensor *thnn__col_buffer(int64_t rows, int64_t cols, int dtype);
/* 2-d view (rows, cols) of t's storage at element offset, row stride ld,
 * column stride cs; NULL with our error set */
th_tensor *thnn__mat(const th_tensor *t, int64_t offset, int64_t rows,
                     int64_t cols, int64_t ld, int64_t cs);
/* c = beta * c + a @ b on views (any may be NULL after a failed view:
 * the error is passed on); releases the three views */
int thnn__gemm_views(const char *where, th_tensor *c, th_tensor *a,
                     th_tensor *b, double beta);

/* out (NO rows of L) row r set to bias[r % O] */
void thnn__fill_bias(int dtype, void *out, const void *bias, int64_t NO,
                     int64_t O, int64_t L);
/* gb[o] = sum over n and the L positions of gy (N, O, L) */
void thnn__bias_grad(int dtype, void *gb, const void *gy, int64_t N,
                     int64_t O, int64_t L);
#endif
