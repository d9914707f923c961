/* Branch-free float32 exp for libTHNN's row loops (rnn.c, softmax.c):
 * range reduction x = n ln2 + r, a degree-6 polynomial for e^r (about
 * 1 ulp), and 2^n applied as two exact power-of-two factors so that
 * overflow gives inf and the subnormal range rounds correctly.  libm's
 * scalar expf/exp in these loops cost several times the rest of the work.
 * NaN propagates.
 *
 * The loops calling it vectorize only when GCC may if-convert float
 * compares (the clamps and the NaN test); they set no FP exception flags
 * anyone reads, so including this header turns trapping math off for the
 * rest of the file. */
#ifndef THNN_VEXP_H
#define THNN_VEXP_H
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif

static inline float thnn__pow2i_f(int32_t n) { /* 2^n, -126 <= n <= 127 */
    const uint32_t bits = (uint32_t)(n + 127) << 23; /* unsigned: no UB for any n */
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline float thnn__exp_f(float x) {
    /* beyond these, e^x is inf or rounds to 0 in float32 */
    float y = x < -104.0f ? -104.0f : x;
    y = y > 89.0f ? 89.0f : y;
    /* n = round(y / ln 2) by the 1.5 * 2^23 trick (default rounding mode) */
    const float n = (y * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    const float r = y - n * 0.693359375f + n * 2.12194440e-4f;
    const float p = 1.0f + r * (1.0f + r * (0.5f + r * (1.66666667e-1f + r * (4.16666667e-2f
                    + r * (8.33333333e-3f + r * 1.38888889e-3f)))));
    /* n in [-150, 129]: 2^n as 2^h * 2^(n-h), each factor representable */
    const int32_t ni = (int32_t)n, h = ni / 2;
    const float v = p * thnn__pow2i_f(h) * thnn__pow2i_f(ni - h);
    return x != x ? x : v;
}
#endif
