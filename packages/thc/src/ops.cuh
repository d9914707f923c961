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
#endif
#pragma GCC diagnostic ignored "-Wtype-limits"

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

// ---- unary ----------------------------------------------------------------
template <typename T> THC_HD inline T unary_value(int op, T x) {
    if constexpr (is_float_v<T>) {
        switch (op) {
        case THC_NEG: return -x;
        case THC_ABS: return std::fabs(x);
        case THC_SIGN: return x > 0 ? T(1) : x < 0 ? T(-1) : x;
        case THC_EXP: return std::exp(x);
        case THC_EXP2: return std::exp2(x);
        case THC_EXPM1: return std::expm1(x);
        case THC_LOG: return std::log(x);
        case THC_LOG2: return std::log2(x);
        case THC_LOG10: return std::log10(x);
        case THC_LOG1P: return std::log1p(x);
        case THC_SQRT: return std::sqrt(x);
        case THC_RSQRT: return T(1) / std::sqrt(x);
        case THC_RECIPROCAL: return T(1) / x;
        case THC_SIN: return std::sin(x);
        case THC_COS: return std::cos(x);
        case THC_TAN: return std::tan(x);
        case THC_ASIN: return std::asin(x);
        case THC_ACOS: return std::acos(x);
        case THC_ATAN: return std::atan(x);
        case THC_SINH: return std::sinh(x);
        case THC_COSH: return std::cosh(x);
        case THC_TANH: return std::tanh(x);
        case THC_ASINH: return std::asinh(x);
        case THC_ACOSH: return std::acosh(x);
        case THC_ATANH: return std::atanh(x);
        case THC_SIGMOID: return T(1) / (T(1) + std::exp(-x));
        case THC_ERF: return std::erf(x);
        case THC_ERFC: return std::erfc(x);
        case THC_ERFINV: return (T)erfinv_d((double)x);
        case THC_FLOOR: return std::floor(x);
        case THC_CEIL: return std::ceil(x);
        case THC_ROUND: return std::nearbyint(x);
        case THC_TRUNC: return std::trunc(x);
        case THC_FRAC: return x - std::trunc(x);
        case THC_SQUARE: return x * x;
        default: return x;
        }
    } else if constexpr (std::is_same<T, bool>::value) {
        switch (op) {
        case THC_SIGN: return x;
        case THC_BITWISE_NOT: return !x;
        default: return x;
        }
    } else {
        switch (op) {
        case THC_NEG: return (T)(0 - x);
        case THC_ABS: return x < 0 ? (T)(0 - x) : x;
        case THC_SIGN: return (T)((x > 0) - (x < 0));
        case THC_BITWISE_NOT: return (T)~x;
        case THC_SQUARE: return (T)(x * x);
        default: return x;   // floor, ceil, round, trunc of integers
        }
    }
}

template <typename T> THC_HD inline bool unary_predicate(int op, T x) {
    switch (op) {
    case THC_LOGICAL_NOT: return x == 0;
    case THC_ISNAN: return x != x;
    default: break;
    }
    if constexpr (is_float_v<T>) {
        switch (op) {
        case THC_ISINF: return std::isinf(x);
        case THC_ISFINITE: return std::isfinite(x);
        case THC_ISPOSINF: return std::isinf(x) && x > 0;
        case THC_ISNEGINF: return std::isinf(x) && x < 0;
        default: return false;
        }
    } else {
        return op == THC_ISFINITE;
    }
}

// ---- binary ----------------------------------------------------------------
template <typename T> THC_HD inline T float_floordiv(T a, T b) {
    if (b == 0) return a / b;
    T mod = std::fmod(a, b), div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= T(1);
    if (div == 0) return std::copysign(T(0), a / b);
    T fd = std::floor(div);
    if (div - fd > T(0.5)) fd += T(1);
    return fd;
}

template <typename T> THC_HD inline T int_pow(T b, T e) {
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

template <typename T> THC_HD inline T binary_value(int op, T x, T y) {
    if constexpr (is_float_v<T>) {
        switch (op) {
        case THC_ADD: return x + y;
        case THC_SUB: return x - y;
        case THC_MUL: return x * y;
        case THC_DIV: return x / y;
        case THC_FLOOR_DIVIDE: return float_floordiv(x, y);
        case THC_TRUNC_DIVIDE: return std::trunc(x / y);
        case THC_REMAINDER: {
            T r = std::fmod(x, y);
            return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
        }
        case THC_FMOD: return std::fmod(x, y);
        case THC_POW: return std::pow(x, y);
        case THC_ATAN2: return std::atan2(x, y);
        case THC_MAXIMUM: return (x > y || x != x) ? x : y;
        case THC_MINIMUM: return (x < y || x != x) ? x : y;
        case THC_HYPOT: return std::hypot(x, y);
        case THC_COPYSIGN: return std::copysign(x, y);
        default: return x;
        }
    } else if constexpr (std::is_same<T, bool>::value) {
        switch (op) {
        case THC_ADD: case THC_MAXIMUM: case THC_BITWISE_OR: return x | y;
        case THC_MUL: case THC_MINIMUM: case THC_BITWISE_AND: return x & y;
        case THC_BITWISE_XOR: return x ^ y;
        default: return x;
        }
    } else {
        const int64_t bits = (int64_t)sizeof(T) * 8;
        switch (op) {
        case THC_ADD: return (T)(x + y);
        case THC_SUB: return (T)(x - y);
        case THC_MUL: return (T)(x * y);
        case THC_FLOOR_DIVIDE:
            if (std::is_signed<T>::value && y == T(-1)) return (T)(0 - x);
            return (T)(x / y - ((x % y != 0) && ((x < 0) != (y < 0))));
        case THC_TRUNC_DIVIDE:
            if (std::is_signed<T>::value && y == T(-1)) return (T)(0 - x);
            return (T)(x / y);
        case THC_REMAINDER: {
            if (std::is_signed<T>::value && y == T(-1)) return T(0);
            T r = (T)(x % y);
            return (r != 0 && ((r < 0) != (y < 0))) ? (T)(r + y) : r;
        }
        case THC_FMOD:
            if (std::is_signed<T>::value && y == T(-1)) return T(0);
            return (T)(x % y);
        case THC_POW: return int_pow(x, y);
        case THC_MAXIMUM: return x > y ? x : y;
        case THC_MINIMUM: return x < y ? x : y;
        case THC_BITWISE_AND: return (T)(x & y);
        case THC_BITWISE_OR: return (T)(x | y);
        case THC_BITWISE_XOR: return (T)(x ^ y);
        case THC_LSHIFT: return (y < 0 || y >= bits) ? T(0) : (T)(int64_t)((uint64_t)(int64_t)x << y);
        case THC_RSHIFT: return (y < 0 || y >= bits) ? (T)(x < 0 ? -1 : 0) : (T)(x >> y);
        default: return x;
        }
    }
}

template <typename T> THC_HD inline bool binary_predicate(int op, T x, T y) {
    switch (op) {
    case THC_EQ: return x == y;
    case THC_NE: return x != y;
    case THC_LT: return x < y;
    case THC_LE: return x <= y;
    case THC_GT: return x > y;
    case THC_GE: return x >= y;
    case THC_LOGICAL_AND: return (x != 0) & (y != 0);
    case THC_LOGICAL_OR: return (x != 0) | (y != 0);
    default: return (x != 0) ^ (y != 0);   // THC_LOGICAL_XOR
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
