// What every kernel file shares: compiled by nvcc for the GPU, or by the
// host C++ compiler for a host-only build, where the same kernel bodies run
// as loops over host memory (the emulated device the tests use).  Internal.
#ifndef THC_KERNELS_CUH
#define THC_KERNELS_CUH
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <initializer_list>

#include "geometry.h"
#include "runtime.h"
#include "thc_internal.h"

#ifdef __CUDACC__
#include <cuda_runtime.h>
#define THC_HD __host__ __device__
#define THC_DEVICE_ONLY __device__
#else
#define THC_HD
#define THC_DEVICE_ONLY
#endif

namespace thc {

// ---- 16-bit floats: stored as bits, computed in float --------------------
struct half_t { uint16_t bits; };
struct bf16_t { uint16_t bits; };

THC_HD inline float half_to_float(half_t h) {
    uint32_t sign = (uint32_t)(h.bits & 0x8000u) << 16, exp = (h.bits >> 10) & 0x1f,
             man = h.bits & 0x3ffu, f;
    if (exp == 0x1f) {
        f = sign | 0x7f800000u | (man << 13);
    } else if (exp) {
        f = sign | ((exp + 112) << 23) | (man << 13);
    } else if (!man) {
        f = sign;
    } else {  // subnormal: normalise
        int e = -1;
        do { man <<= 1; e++; } while (!(man & 0x400u));
        f = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ffu) << 13);
    }
    float r;
    memcpy(&r, &f, 4);
    return r;
}

THC_HD inline half_t float_to_half(float v) {  // round to nearest even
    uint32_t f;
    memcpy(&f, &v, 4);
    uint32_t sign = (f >> 16) & 0x8000u, a = f & 0x7fffffffu;
    uint16_t h;
    if (a > 0x7f800000u) {
        h = (uint16_t)(sign | 0x7e00u);
    } else if (a >= 0x477ff000u) {  // overflows (rounds to inf)
        h = (uint16_t)(sign | 0x7c00u);
    } else if (a < 0x38800000u) {   // subnormal or zero
        if (a < 0x33000000u) {
            h = (uint16_t)sign;
        } else {
            uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u, shift = 126 - e;
            uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), halfway = 1u << (shift - 1);
            if (rem > halfway || (rem == halfway && (q & 1))) q++;
            h = (uint16_t)(sign | q);
        }
    } else {
        uint32_t q = a - 0x38000000u;  // rebias exponent
        uint32_t r = q & 0x1fffu;
        q >>= 13;
        if (r > 0x1000u || (r == 0x1000u && (q & 1))) q++;
        h = (uint16_t)(sign | q);
    }
    half_t out = {h};
    return out;
}

THC_HD inline float bf16_to_float(bf16_t b) {
    uint32_t f = (uint32_t)b.bits << 16;
    float r;
    memcpy(&r, &f, 4);
    return r;
}

THC_HD inline bf16_t float_to_bf16(float v) {
    uint32_t f;
    memcpy(&f, &v, 4);
    bf16_t out;
    if ((f & 0x7fffffffu) > 0x7f800000u) {
        out.bits = (uint16_t)((f >> 16) | 0x40u);  // quiet NaN
    } else {
        f += 0x7fffu + ((f >> 16) & 1u);
        out.bits = (uint16_t)(f >> 16);
    }
    return out;
}

// ---- conversion between element types (libTH's casting rules) -----------
template <typename U> struct Convert {
    template <typename V> THC_HD static U from(V v) { return (U)v; }
    THC_HD static U from(float v) { return (U)(int64_t)v; }
    THC_HD static U from(double v) { return (U)(int64_t)v; }
};
template <> struct Convert<float> {
    template <typename V> THC_HD static float from(V v) { return (float)v; }
};
template <> struct Convert<double> {
    template <typename V> THC_HD static double from(V v) { return (double)v; }
};
template <> struct Convert<bool> {
    template <typename V> THC_HD static bool from(V v) { return v != 0; }
};
template <> struct Convert<half_t> {
    template <typename V> THC_HD static half_t from(V v) { return float_to_half((float)v); }
};
template <> struct Convert<bf16_t> {
    template <typename V> THC_HD static bf16_t from(V v) { return float_to_bf16((float)v); }
};

template <typename U, typename V> THC_HD inline U convert(V v) { return Convert<U>::from(v); }
template <typename U> THC_HD inline U convert(half_t v) { return Convert<U>::from(half_to_float(v)); }
template <typename U> THC_HD inline U convert(bf16_t v) { return Convert<U>::from(bf16_to_float(v)); }

// Reads element `off` of memory of runtime dtype `dtype` as U.
template <typename U> THC_HD inline U load_as(const void *p, int dtype, int64_t off) {
    switch (dtype) {
    case THC_FLOAT32: return convert<U>(((const float *)p)[off]);
    case THC_FLOAT64: return convert<U>(((const double *)p)[off]);
    case THC_FLOAT16: return convert<U>(((const half_t *)p)[off]);
    case THC_BFLOAT16: return convert<U>(((const bf16_t *)p)[off]);
    case THC_INT8: return convert<U>(((const int8_t *)p)[off]);
    case THC_UINT8: return convert<U>(((const uint8_t *)p)[off]);
    case THC_INT16: return convert<U>(((const int16_t *)p)[off]);
    case THC_INT32: return convert<U>(((const int32_t *)p)[off]);
    case THC_INT64: return convert<U>(((const int64_t *)p)[off]);
    default: return convert<U>(((const bool *)p)[off]);
    }
}

// An operand of a kernel: device memory, or (p == NULL) a host scalar
// passed by value.
template <typename T> struct In {
    const T *p;
    T s;
    THC_HD T at(int64_t off) const { return p ? p[off] : s; }
};

// The value of a one-element tensor (host or device) as T.
template <typename T> T host_value(const thc_tensor *t) {
    if (thc_dtype_is_floating(t->dtype)) return convert<T>(thc__scalar_double(t));
    return convert<T>(thc__scalar_int64(t));
}

// A kernel operand for t: its device memory, or a host scalar's value.
template <typename T> In<T> operand(const thc_tensor *t) {
    In<T> in;
    if (thc__on_host(t)) {
        in.p = NULL;
        in.s = host_value<T>(t);
    } else {
        in.p = (const T *)thc__ptr(t);
        in.s = T();
    }
    return in;
}

// ---- launching -------------------------------------------------------------
// Per-element offsets of every operand of a geometry (thc__geom, collapsed).
struct Offsets {
    int32_t ndim, nops, unit;
    int64_t sizes[THC_MAX_DIMS];
    int64_t strides[THC__MAX_OPS][THC_MAX_DIMS];
    int64_t base[THC__MAX_OPS];

    static Offsets of(const thc__geom &g) {
        Offsets o;
        o.ndim = g.ndim;
        o.nops = g.nops;
        o.unit = g.unit;
        for (int d = 0; d < THC_MAX_DIMS; d++) o.sizes[d] = g.sizes[d];
        for (int k = 0; k < THC__MAX_OPS; k++) {
            o.base[k] = k < g.nops ? g.offsets[k] : 0;
            for (int d = 0; d < THC_MAX_DIMS; d++) o.strides[k][d] = k < g.nops ? g.strides[k][d] : 0;
        }
        return o;
    }

    // offset of operand k of element i, NOPS known at compile time
    template <int NOPS> THC_HD void at(int64_t i, int64_t *off) const {
        for (int k = 0; k < NOPS; k++) off[k] = base[k];
        if (unit) {
            for (int k = 0; k < NOPS; k++) off[k] += i;
            return;
        }
        for (int d = ndim - 1; d >= 0; d--) {
            int64_t s = sizes[d], idx = i % s;
            i /= s;
            for (int k = 0; k < NOPS; k++) off[k] += idx * strides[k][d];
        }
    }
};

#ifdef __CUDACC__
template <typename F> __global__ void for_each_kernel(int64_t n, F f) {
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) f(i);
}

// Runs f(i) for i in [0, n) on the device, in stream order.
template <typename F> int for_each(const char *what, int64_t n, const F &f, void *stream) {
    if (n <= 0) return THC_OK;
    thc_launch_config cfg;
    if (thc_launch_config_for(n, 256, 65535 * 8, &cfg)) return thc_last_status();
    for_each_kernel<<<(unsigned)cfg.grid, cfg.block, 0, (cudaStream_t)stream>>>(n, f);
    return thc__launch_status(what);
}
#else
template <typename F> int for_each(const char *, int64_t n, const F &f, void *) {
    for (int64_t i = 0; i < n; i++) f(i);
    return THC_OK;
}
#endif

// thc_cumsum/cumprod scan lines up to this long on one device thread each,
// in order (longer ones in chunks); multinomial's running sums rely on it.
constexpr int64_t kScanSerialMax = 1024;

}  // namespace thc

// ---- dispatch on a runtime dtype -------------------------------------------
#define THC_CASE(CODE, TYPE, ...) \
    case CODE: {                  \
        typedef TYPE scalar_t;    \
        __VA_ARGS__;              \
    } break;
// compute types: every dtype but the 16-bit floats (computed in float32)
#define THC_CASES_FLOAT(...)                      \
    THC_CASE(THC_FLOAT32, float, __VA_ARGS__)     \
    THC_CASE(THC_FLOAT64, double, __VA_ARGS__)
#define THC_CASES_INT(...)                        \
    THC_CASE(THC_INT8, int8_t, __VA_ARGS__)       \
    THC_CASE(THC_UINT8, uint8_t, __VA_ARGS__)     \
    THC_CASE(THC_INT16, int16_t, __VA_ARGS__)     \
    THC_CASE(THC_INT32, int32_t, __VA_ARGS__)     \
    THC_CASE(THC_INT64, int64_t, __VA_ARGS__)
#define THC_CASES_NUMBER(...)                     \
    THC_CASES_FLOAT(__VA_ARGS__)                  \
    THC_CASES_INT(__VA_ARGS__)
#define THC_CASES_COMPUTE(...)                    \
    THC_CASES_NUMBER(__VA_ARGS__)                 \
    THC_CASE(THC_BOOL, bool, __VA_ARGS__)
#define THC_CASES_ALL(...)                              \
    THC_CASES_COMPUTE(__VA_ARGS__)                      \
    THC_CASE(THC_FLOAT16, thc::half_t, __VA_ARGS__)     \
    THC_CASE(THC_BFLOAT16, thc::bf16_t, __VA_ARGS__)

#endif
