// The element-wise operations' arithmetic, shared by host and device code:
// libTH's semantics (Python-style integer division, NaN-propagating
// maximum, ...).  Internal.
#ifndef THC_OPS_CUH
#define THC_OPS_CUH
#include <cmath>
#include <type_traits>

#include "kernels.cuh"

// unsigned element types make some sign tests constant: intended
#ifdef __CUDACC__
#pragma nv_diag_suppress 186
#pragma nv_diag_suppress 514
#endif
#pragma GCC diagnostic ignored "-Wtype-limits"

// th_ops.def's facts about an op by family (THC_OP_*) and code
// (vocabulary.c): its name, THC_OPF_* flags, and whether it has a loop for
// compute dtype `dtype`'s class
extern "C" const char *thc__op_name(int family, int code);
extern "C" int thc__op_flags(int family, int code);
extern "C" int thc__op_has_dtype(int family, int code, int dtype);

namespace thc {

template <typename T> constexpr bool is_float_v = std::is_floating_point<T>::value;

// Inverse error function: a single-precision approximation refined by two
// Newton steps on erf in double precision.
THC_HD inline double erfinv_d(double y) {
    if (y <= -1.0) return y == -1.0 ? -INFINITY : NAN;
    if (y >= 1.0) return y == 1.0 ? INFINITY : NAN;
    if (y != y) return y;
    double w = -std::log((1.0 - y) * (1.0 + y)), x;
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
        w = std::sqrt(w) - 3.0;
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
    for (int i = 0; i < 2; i++) x -= (std::erf(x) - y) / (1.1283791670955126 * std::exp(-x * x));
    return x;
}

// ---- helpers of th_ops.def's scalar expressions --------------------------
// libTH defines the same names (include/th_ops_expr.h) for its loops; here in
// the element type T, which the expressions are written for.
using std::acos; using std::acosh; using std::asin; using std::asinh; using std::atan;
using std::atan2; using std::atanh; using std::ceil; using std::copysign; using std::cos;
using std::cosh; using std::erf; using std::erfc; using std::exp; using std::exp2;
using std::expm1; using std::fabs; using std::floor; using std::fmod; using std::hypot;
using std::isfinite; using std::isinf; using std::log; using std::log10; using std::log1p;
using std::log2; using std::nearbyint; using std::pow; using std::sin; using std::sinh;
using std::sqrt; using std::tan; using std::tanh; using std::trunc;

// integer negation, products and + - * wrap in two's complement, in uint64
#define INEG(x) ((T)(0 - (uint64_t)(x)))
#define IMUL(x, y) ((T)((uint64_t)(x) * (uint64_t)(y)))
#define IWRAP(x, y, OP) ((T)((uint64_t)(x) OP (uint64_t)(y)))
// Python-style integer division and modulo; y == -1 apart (INT_MIN / -1
// traps; the quotient wraps and the remainder is 0)
#define IFLOORDIV(x, y) ((y) == -1 ? INEG(x) : \
    (x) / (y) - (((x) % (y) != 0) && (((x) < 0) != ((y) < 0))))
#define IMOD(x, y) ((y) == -1 ? 0 : \
    (x) % (y) + ((((x) % (y)) != 0 && ((((x) % (y)) < 0) != ((y) < 0))) ? (y) : 0))
#define ITRUNCDIV(x, y) ((y) == -1 ? INEG(x) : (x) / (y))
#define IFMOD(x, y) ((y) == -1 ? 0 : (x) % (y))
// NaN-propagating maximum and minimum
#define FMAX(x, y) (((x) > (y) || (x) != (x)) ? (x) : (y))
#define FMIN(x, y) (((x) < (y) || (x) != (x)) ? (x) : (y))
#define BITS(x) ((int64_t)sizeof(x) * 8)

// Python-style float floor division and modulo, in T
template <typename T> THC_HD inline T fl_floordiv(T a, T b) {
    if (b == 0) return a / b;
    T mod = std::fmod(a, b), div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= T(1);
    if (div == 0) return std::copysign(T(0), a / b);
    T fd = std::floor(div);
    if (div - fd > T(0.5)) fd += T(1);
    return fd;
}

template <typename T> THC_HD inline T fl_mod(T a, T b) {
    T r = std::fmod(a, b);
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

// integer power, wrapping (negative exponents are refused before)
template <typename T> THC_HD inline T ipow(T b, T e) {
    if (e < 0) return b == 1 ? T(1) : (std::is_signed<T>::value && b == T(-1)) ? ((e & 1) ? T(-1) : T(1)) : T(0);
    uint64_t r = 1, bb = (uint64_t)(int64_t)b;
    int64_t ee = (int64_t)e;
    while (ee) {
        if (ee & 1) r *= bb;
        bb *= bb;
        ee >>= 1;
    }
    return (T)(int64_t)r;
}

// ---- the kernels' switch arms, one per row of th_ops.def ------------------
#define TH_OPS_CLASS_MACROS
#include "th_ops.def"
// value arms: every kind but PRED; predicate arms: PRED only
#define THC_VALUE_KEEP(...) __VA_ARGS__
#define THC_VALUE_FLOAT(...) __VA_ARGS__
#define THC_VALUE_MATH(...) __VA_ARGS__
#define THC_VALUE_ONLYF(...) __VA_ARGS__
#define THC_VALUE_PRED(...)
#define THC_PRED_KEEP(...)
#define THC_PRED_FLOAT(...)
#define THC_PRED_MATH(...)
#define THC_PRED_ONLYF(...)
#define THC_PRED_PRED(...) __VA_ARGS__

template <typename T> THC_HD inline T unary_value(int op, T x) {
    if constexpr (is_float_v<T>) {
        switch (op) {
#define TH_UNARY_OP(CODE, name, c, kind, flags, f, i, b) \
    THC_VALUE_##kind(TH_IF_F_##c(case THC_##CODE: return (T)(f);))
#include "th_ops.def"
        default: return x;
        }
    } else if constexpr (std::is_same<T, bool>::value) {
        switch (op) {
#define TH_UNARY_OP(CODE, name, c, kind, flags, f, i, b) \
    THC_VALUE_##kind(TH_IF_B_##c(case THC_##CODE: return (T)(b);))
#include "th_ops.def"
        default: return x;
        }
    } else {
        switch (op) {
#define TH_UNARY_OP(CODE, name, c, kind, flags, f, i, b) \
    THC_VALUE_##kind(TH_IF_I_##c(case THC_##CODE: return (T)(i);))
#include "th_ops.def"
        default: return x;
        }
    }
}

template <typename T> THC_HD inline bool unary_predicate(int op, T x) {
    if constexpr (is_float_v<T>) {
        switch (op) {
#define TH_UNARY_OP(CODE, name, c, kind, flags, f, i, b) \
    THC_PRED_##kind(TH_IF_F_##c(case THC_##CODE: return (f);))
#include "th_ops.def"
        default: return false;
        }
    } else if constexpr (std::is_same<T, bool>::value) {
        switch (op) {
#define TH_UNARY_OP(CODE, name, c, kind, flags, f, i, b) \
    THC_PRED_##kind(TH_IF_B_##c(case THC_##CODE: return (b);))
#include "th_ops.def"
        default: return false;
        }
    } else {
        switch (op) {
#define TH_UNARY_OP(CODE, name, c, kind, flags, f, i, b) \
    THC_PRED_##kind(TH_IF_I_##c(case THC_##CODE: return (i);))
#include "th_ops.def"
        default: return false;
        }
    }
}

template <typename T> THC_HD inline T binary_value(int op, T x, T y) {
    if constexpr (is_float_v<T>) {
        switch (op) {
#define TH_BINARY_OP(CODE, name, c, kind, flags, f, i, b) \
    THC_VALUE_##kind(TH_IF_F_##c(case THC_##CODE: return (T)(f);))
#include "th_ops.def"
        default: return x;
        }
    } else if constexpr (std::is_same<T, bool>::value) {
        switch (op) {
#define TH_BINARY_OP(CODE, name, c, kind, flags, f, i, b) \
    THC_VALUE_##kind(TH_IF_B_##c(case THC_##CODE: return (T)(b);))
#include "th_ops.def"
        default: return x;
        }
    } else {
        switch (op) {
#define TH_BINARY_OP(CODE, name, c, kind, flags, f, i, b) \
    THC_VALUE_##kind(TH_IF_I_##c(case THC_##CODE: return (T)(i);))
#include "th_ops.def"
        default: return x;
        }
    }
}

template <typename T> THC_HD inline bool binary_predicate(int op, T x, T y) {
    if constexpr (is_float_v<T>) {
        switch (op) {
#define TH_BINARY_OP(CODE, name, c, kind, flags, f, i, b) \
    THC_PRED_##kind(TH_IF_F_##c(case THC_##CODE: return (f);))
#include "th_ops.def"
        default: return false;
        }
    } else if constexpr (std::is_same<T, bool>::value) {
        switch (op) {
#define TH_BINARY_OP(CODE, name, c, kind, flags, f, i, b) \
    THC_PRED_##kind(TH_IF_B_##c(case THC_##CODE: return (b);))
#include "th_ops.def"
        default: return false;
        }
    } else {
        switch (op) {
#define TH_BINARY_OP(CODE, name, c, kind, flags, f, i, b) \
    THC_PRED_##kind(TH_IF_I_##c(case THC_##CODE: return (i);))
#include "th_ops.def"
        default: return false;
        }
    }
}

// ---- atomics: read-modify-write of device memory that threads share -------
// A compare-and-swap of a 4- or 8-byte word: the value found there (the
// swap happened when it equals `expected`).  The emulated device runs one
// element at a time, but takes the same path, so the bit handling below is
// what the tests run.
template <typename U> THC_HD inline U cas_word(U *q, U expected, U desired) {
#ifdef __CUDA_ARCH__
    if constexpr (sizeof(U) == 4)
        return atomicCAS((unsigned int *)q, (unsigned int)expected, (unsigned int)desired);
    else
        return atomicCAS((unsigned long long *)q, (unsigned long long)expected,
                         (unsigned long long)desired);
#else
    __atomic_compare_exchange_n(q, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    return expected;
#endif
}

template <typename U> THC_HD inline U load_word(const U *q) {
#ifdef __CUDA_ARCH__
    return *(const volatile U *)q;
#else
    return __atomic_load_n(q, __ATOMIC_RELAXED);
#endif
}

// *p = f(*p) atomically: a compare-and-swap loop on the bits (compared as
// bits, so a NaN result still ends the loop).  1- and 2-byte values swap
// the aligned 4-byte word that holds them, leaving its other bytes as
// found (little-endian: the value's bytes sit `shift` bits up).
template <typename T, typename F> THC_HD inline void atomic_apply(T *p, const F &f) {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8,
                  "atomic_apply: a 1-, 2-, 4- or 8-byte value");
    typedef typename std::conditional<sizeof(T) == 8, unsigned long long, unsigned int>::type U;
    uintptr_t addr = (uintptr_t)p;
    U *q = (U *)addr, mask = ~(U)0;
    int shift = 0;
    if constexpr (sizeof(T) < 4) {
        q = (U *)(addr & ~(uintptr_t)3);
        shift = (int)(addr & 3) * 8;
        mask = (U)(sizeof(T) == 1 ? 0xffu : 0xffffu) << shift;
    }
    U old = load_word(q), seen;
    do {
        seen = old;
        U bits = (seen & mask) >> shift;
        T cur, next;
        memcpy(&cur, &bits, sizeof(T));   // the low bytes: little-endian
        next = f(cur);
        U nb = 0;
        memcpy(&nb, &next, sizeof(T));
        old = cas_word(q, seen, (seen & ~mask) | ((nb << shift) & mask));
    } while (old != seen);
}

template <typename T> struct AddTo {
    T v;
    THC_HD T operator()(T cur) const { return (T)(cur + v); }
};

template <typename T> THC_HD inline void atomic_add(T *p, T v) {
#ifdef __CUDA_ARCH__
    if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value ||
                  std::is_same<T, int32_t>::value) {
        atomicAdd(p, v);
        return;
    } else if constexpr (std::is_same<T, int64_t>::value) {
        atomicAdd((unsigned long long *)p, (unsigned long long)v);
        return;
    }
#else
    if constexpr (sizeof(T) >= 4) {   // one element at a time on the host
        *p = (T)(*p + v);
        return;
    }
#endif
    atomic_apply(p, AddTo<T>{v});   // 1- and 2-byte integers and bool
}

// scatter_reduce's combination of the target's value with a source value:
// wrapping integer products, logical and for bool; a NaN wins amax/amin
template <typename T> struct ScatterCombine {
    int reduce;   // THC_SCATTER_PROD, _AMAX or _AMIN
    T v;
    THC_HD T operator()(T cur) const {
        if (reduce == THC_SCATTER_AMAX) return (v != v || cur < v) ? v : cur;
        if (reduce == THC_SCATTER_AMIN) return (v != v || v < cur) ? v : cur;
        if constexpr (std::is_same<T, bool>::value) return cur && v;
        else if constexpr (is_float_v<T>) return cur * v;
        else return (T)((uint64_t)(int64_t)cur * (uint64_t)(int64_t)v);
    }
};

}  // namespace thc
#endif
