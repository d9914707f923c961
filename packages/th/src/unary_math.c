/* Transcendental element-wise loops, vectorised through glibc's vector
 * math library (vecmath.h); each loop is cloned for AVX-512 and AVX2. */
#include "elementwise.h"
#include "vecmath.h"

#define MATH_LOOP(NAME, T, EXPR)                                              \
    TH_CLONES                                                                 \
    static void NAME(char **d, const int64_t *s, int64_t n, void *ctx) {      \
        (void)ctx;                                                            \
        if (s[0] == sizeof(T) && s[1] == sizeof(T)) {                         \
            T *restrict o = (T *)d[0];                                        \
            const T *restrict xs = (const T *)d[1];                           \
            for (int64_t i = 0; i < n; i++) {                                 \
                T x = xs[i];                                                  \
                o[i] = (EXPR);                                                \
            }                                                                 \
        } else {                                                              \
            char *op = d[0];                                                  \
            const char *xp = d[1];                                            \
            for (int64_t i = 0; i < n; i++, op += s[0], xp += s[1]) {         \
                T x = *(const T *)xp;                                         \
                *(T *)op = (EXPR);                                            \
            }                                                                 \
        }                                                                     \
    }

#define MATH_OP(OP, FEXPR, DEXPR)              \
    MATH_LOOP(OP##_f32, float, FEXPR)          \
    MATH_LOOP(OP##_f64, double, DEXPR)

MATH_OP(exp, expf(x), exp(x))
MATH_OP(exp2, exp2f(x), exp2(x))
MATH_OP(expm1, expm1f(x), expm1(x))
MATH_OP(log, logf(x), log(x))
MATH_OP(log2, log2f(x), log2(x))
MATH_OP(log10, log10f(x), log10(x))
MATH_OP(log1p, log1pf(x), log1p(x))
MATH_OP(sqrt, sqrtf(x), sqrt(x))
MATH_OP(rsqrt, 1.0f / sqrtf(x), 1.0 / sqrt(x))
MATH_OP(reciprocal, 1.0f / x, 1.0 / x)
MATH_OP(sin, sinf(x), sin(x))
MATH_OP(cos, cosf(x), cos(x))
MATH_OP(tan, tanf(x), tan(x))
MATH_OP(asin, asinf(x), asin(x))
MATH_OP(acos, acosf(x), acos(x))
MATH_OP(atan, atanf(x), atan(x))
MATH_OP(sinh, sinhf(x), sinh(x))
MATH_OP(cosh, coshf(x), cosh(x))
MATH_OP(tanh, tanhf(x), tanh(x))
MATH_OP(asinh, asinhf(x), asinh(x))
MATH_OP(acosh, acoshf(x), acosh(x))
MATH_OP(atanh, atanhf(x), atanh(x))
MATH_OP(sigmoid, 1.0f / (1.0f + expf(-x)), 1.0 / (1.0 + exp(-x)))
MATH_OP(erf, erff(x), erf(x))
MATH_OP(erfc, erfcf(x), erfc(x))

th_loop_fn th__unary_math_loop(int op, int dtype) {
    int d = dtype == TH_FLOAT64;
#define CASE(OPC, NAME) \
    case OPC: return d ? NAME##_f64 : NAME##_f32;
    switch (op) {
        CASE(TH_EXP, exp) CASE(TH_EXP2, exp2) CASE(TH_EXPM1, expm1)
        CASE(TH_LOG, log) CASE(TH_LOG2, log2) CASE(TH_LOG10, log10)
        CASE(TH_LOG1P, log1p) CASE(TH_SQRT, sqrt) CASE(TH_RSQRT, rsqrt)
        CASE(TH_RECIPROCAL, reciprocal) CASE(TH_SIN, sin) CASE(TH_COS, cos)
        CASE(TH_TAN, tan) CASE(TH_ASIN, asin) CASE(TH_ACOS, acos)
        CASE(TH_ATAN, atan) CASE(TH_SINH, sinh) CASE(TH_COSH, cosh)
        CASE(TH_TANH, tanh) CASE(TH_ASINH, asinh) CASE(TH_ACOSH, acosh)
        CASE(TH_ATANH, atanh) CASE(TH_SIGMOID, sigmoid) CASE(TH_ERF, erf)
        CASE(TH_ERFC, erfc)
    default: return NULL;
    }
#undef CASE
}
