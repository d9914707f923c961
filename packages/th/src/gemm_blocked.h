/* Portable BLAS-like kernels for float32/float64 (gemm_blocked.c), used by
 * linalg.c when libTH is built with TH_NO_BLAS.  Internal.
 *
 * Matrices are given as a pointer plus row and column strides in elements
 * (any sign, zero allowed for inputs).  beta == 0 ignores the previous
 * contents of the output (NaNs included), as BLAS does. */
#ifndef TH_GEMM_BLOCKED_H
#define TH_GEMM_BLOCKED_H
#include <stdint.h>

#ifdef TH_NO_BLAS
/* C (m x n) = beta * C + alpha * A (m x k) @ B (k x n).  Threads over
 * blocks of C.  Returns TH_OK, or TH_ERR_MEMORY with the message set. */
int th__gemm_blocked_f32(int64_t m, int64_t n, int64_t k, float alpha,
                         const float *a, int64_t rsa, int64_t csa,
                         const float *b, int64_t rsb, int64_t csb, float beta,
                         float *c, int64_t rsc, int64_t csc);
int th__gemm_blocked_f64(int64_t m, int64_t n, int64_t k, double alpha,
                         const double *a, int64_t rsa, int64_t csa,
                         const double *b, int64_t rsb, int64_t csb,
                         double beta, double *c, int64_t rsc, int64_t csc);

/* y (m) = beta * y + alpha * A (m x k) @ x (k). */
void th__gemv_blocked_f32(int64_t m, int64_t k, float alpha, const float *a,
                          int64_t rsa, int64_t csa, const float *x,
                          int64_t incx, float beta, float *y, int64_t incy);
void th__gemv_blocked_f64(int64_t m, int64_t k, double alpha, const double *a,
                          int64_t rsa, int64_t csa, const double *x,
                          int64_t incx, double beta, double *y, int64_t incy);

float th__dot_blocked_f32(int64_t n, const float *x, int64_t incx,
                          const float *y, int64_t incy);
double th__dot_blocked_f64(int64_t n, const double *x, int64_t incx,
                           const double *y, int64_t incy);
#endif

#endif
