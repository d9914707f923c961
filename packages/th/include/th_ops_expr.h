/* Helpers of th_ops.def's scalar expressions (INEG, IWRAP, IFLOORDIV,
 * IMOD, ITRUNCDIV, IFMOD, FMAX, FMIN, BITS, fl_floordiv, fl_mod, ipow,
 * erfinv_d), for C code that evaluates the expressions: libTH's loops and
 * the kernels ember.compile generates.  Macros and static inline
 * functions only (nothing exported), C99 with GNU __typeof__; include
 * <math.h> and <stdint.h> first.  libTHC defines the same names for its
 * device code (src/ops.cuh).
 */
#ifndef TH_OPS_EXPR_H
#define TH_OPS_EXPR_H

/* Integer negation, products and + - * wrap in two's complement like
 * PyTorch's, computed in uint64 since signed overflow is undefined in C
 * (int8/int16 promote to int and never overflow, int32/int64 can). */
#define INEG(x) ((__typeof__(x))(0 - (uint64_t)(x)))
#define IMUL(x, y) ((__typeof__(x))((uint64_t)(x) * (uint64_t)(y)))
#define IWRAP(x, y, OP) ((__typeof__(x))((uint64_t)(x) OP (uint64_t)(y)))
/* Python-style integer floor division and modulo (divisor checked != 0).
 * y == -1 is taken apart: INT_MIN / -1 traps on x86 (the quotient wraps,
 * as in PyTorch, and the remainder is 0). */
#define IFLOORDIV(x, y) ((y) == -1 ? INEG(x) : \
    (x) / (y) - (((x) % (y) != 0) && (((x) < 0) != ((y) < 0))))
#define IMOD(x, y) ((y) == -1 ? 0 : \
    (x) % (y) + ((((x) % (y)) != 0 && ((((x) % (y)) < 0) != ((y) < 0))) ? (y) : 0))
#define ITRUNCDIV(x, y) ((y) == -1 ? INEG(x) : (x) / (y))
#define IFMOD(x, y) ((y) == -1 ? 0 : (x) % (y))
/* NaN-propagating maximum and minimum */
#define FMAX(x, y) (((x) > (y) || (x) != (x)) ? (x) : (y))
#define FMIN(x, y) (((x) < (y) || (x) != (x)) ? (x) : (y))
#define BITS(x) ((int64_t)sizeof(x) * 8)

/* Python-style float floor division and modulo, in double */
static inline double fl_floordiv(double a, double b) {
    if (b == 0) return a / b;
    double mod = fmod(a, b), div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1.0;
    if (div == 0) return copysign(0.0, a / b);
    double fd = floor(div);
    if (div - fd > 0.5) fd += 1.0;
    return fd;
}

static inline double fl_mod(double a, double b) {
    double r = fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}

/* integer power, wrapping (negative exponents are refused before) */
static inline int64_t ipow(int64_t b, int64_t e) {
    if (e < 0) return b == 1 ? 1 : b == -1 ? ((e & 1) ? -1 : 1) : 0;
    int64_t r = 1;
    while (e) {
        if (e & 1) r = (int64_t)((uint64_t)r * (uint64_t)b);
        b = (int64_t)((uint64_t)b * (uint64_t)b);
        e >>= 1;
    }
    return r;
}

/* Inverse error function: Giles' single-precision approximation as a
 * start, refined by two Newton steps on erf in double precision. */
static inline double erfinv_d(double y) {
    if (y <= -1.0) return y == -1.0 ? -INFINITY : NAN;
    if (y >= 1.0) return y == 1.0 ? INFINITY : NAN;
    if (y != y) return y;
    double w = -log((1.0 - y) * (1.0 + y)), x;
    if (w < 5.0) {
        w -= 2.5;
        x = 2.81022636e-08;
        x = 3.43273939e-07 + x * w;
        x = -3.5233877e-06 + x * w;
        x = -4.39150654e-06 + x * w;
        x = 0.00021858087 + x * w;
        x = -0.00125372503 + x * w;
        x = -0.00417768164 + x * w;
        x = 0.246640727 + x * w;
        x = 1.50140941 + x * w;
    } else {
        w = sqrt(w) - 3.0;
        x = -0.000200214257;
        x = 0.000100950558 + x * w;
        x = 0.00134934322 + x * w;
        x = -0.00367342844 + x * w;
        x = 0.00573950773 + x * w;
        x = -0.0076224613 + x * w;
        x = 0.00943887047 + x * w;
        x = 1.00167406 + x * w;
        x = 2.83297682 + x * w;
    }
    x *= y;
    for (int i = 0; i < 2; i++) { /* Newton: f(x) = erf(x) - y */
        double err = erf(x) - y;
        x -= err / (1.1283791670955126 * exp(-x * x));
    }
    return x;
}

#endif
