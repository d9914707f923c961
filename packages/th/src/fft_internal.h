/* libTH's FFT (fft.c, fft_kernel.h): plans shared by both precisions.
 *
 * A transform of length n is a sequence of Stockham stages (radix 4, 2,
 * 3, 5, or any odd prime up to FFT_MAX_RADIX), each reading one buffer
 * and writing the other, results in natural order.  Buffers hold LANES
 * independent transforms side by side in split form (re[j * LANES + l],
 * im[...]), so every butterfly is a vector loop over the lanes whatever
 * the radix or the stride.  The lanes are the batch's transforms (short
 * lengths) or, for a long transform, the columns and rows of its four-step
 * decomposition n = n1 * n2 (column transforms, a twiddle, row
 * transforms). */
#ifndef TH_FFT_INTERNAL_H
#define TH_FFT_INTERNAL_H

#include "th_internal.h"

#define FFT_MAX_RADIX 61
#define FFT_MAX_STAGES 64

/* e^{-2 pi i e / n} = hi[e / s] * lo[e % s], both tables in double: two
 * tables of about sqrt(n) entries give every root to double accuracy. */
typedef struct fft_roots {
    int64_t n, s;
    double *lo, *hi; /* (re, im) pairs */
} fft_roots;

typedef struct fft_stage {
    int radix;
    int64_t ns;     /* length of the transforms already done (span) */
    double *tw;     /* (ns, radix - 1) twiddles W_{ns*radix}^{r k}, pairs */
    double *coef;   /* odd radix > 3: cos, sin of 2 pi r q / radix, h x h each */
} fft_stage;

typedef struct fft_lanes { /* one length, on lanes */
    int64_t n;
    int nstages;
    fft_stage st[FFT_MAX_STAGES];
    double *mem;
} fft_lanes;

typedef struct fft_plan {
    int64_t n;
    int four_step;     /* n = n1 * n2 computed as columns then rows */
    int64_t n1, n2;
    fft_lanes whole;   /* !four_step */
    fft_lanes col, row;
    fft_roots roots;   /* of n: the four-step's twiddles */
} fft_plan;

/* Where the lines of one batch of transforms are, in units of the real
 * type: line b's element j has its real part at line(b) + j * step and
 * its imaginary part imoff further (imoff < 0: the imaginary part is 0). */
typedef struct fft_job {
    const fft_plan *plan;
    int nb;                       /* batch dims */
    int64_t bsizes[TH_MAX_DIMS];
    int64_t B;                    /* lines */
    const char *in;
    int64_t in_bstride[TH_MAX_DIMS], in_step, in_imoff;
    char *out;
    int64_t out_bstride[TH_MAX_DIMS], out_step, out_imoff;
    int inverse;
    double scale;
    int64_t line;                 /* the four-step's current line */
    char *work;                   /* the four-step's n1 x n2 middle (split) */
    void *lane_tw;                /* the four-step's W_n^{k1 l} (n1, LANES) */
    int failed;                   /* a worker could not allocate */
} fft_job;

/* Constant shuffle masks for the kernels' vectors of 8 or 16 lanes: F(c, a)
 * is lane c's source (a: F's parameter). */
#define FFT_M8(F, a) {F(0, a), F(1, a), F(2, a), F(3, a), F(4, a), F(5, a), F(6, a), F(7, a)}
#define FFT_M16(F, a) {F(0, a), F(1, a), F(2, a), F(3, a), F(4, a), F(5, a), F(6, a), \
                       F(7, a), F(8, a), F(9, a), F(10, a), F(11, a), F(12, a), F(13, a), \
                       F(14, a), F(15, a)}

static inline void fft__line(const fft_job *job, int64_t b, int64_t *in_off,
                             int64_t *out_off) {
    int64_t io = 0, oo = 0;
    for (int d = job->nb - 1; d >= 0; d--) {
        int64_t i = b % job->bsizes[d];
        b /= job->bsizes[d];
        io += i * job->in_bstride[d];
        oo += i * job->out_bstride[d];
    }
    *in_off = io;
    *out_off = oo;
}

static inline void fft__root(const fft_roots *r, int64_t e, int inverse,
                             double *re, double *im) {
    const double *h = r->hi + 2 * (e / r->s), *l = r->lo + 2 * (e % r->s);
    *re = h[0] * l[0] - h[1] * l[1];
    double i = h[0] * l[1] + h[1] * l[0];
    *im = inverse ? -i : i;
}

#endif
