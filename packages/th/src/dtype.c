/* Dtype facts, PyTorch's type promotion, and half-precision conversion. */
#include "th_internal.h"

static const int64_t itemsizes[TH_NUM_DTYPES] = {4, 8, 2, 2, 1, 1, 2, 4, 8, 1, 8, 16};
static const char *names[TH_NUM_DTYPES] = {
    "float32", "float64", "float16", "bfloat16", "int8",      "uint8",
    "int16",   "int32",   "int64",   "bool",     "complex64", "complex128"};

/* process-wide, read by any thread: accessed atomically */
static int default_dtype = TH_FLOAT32;

static int valid(int dtype) { return dtype >= 0 && dtype < TH_NUM_DTYPES; }

int64_t th_dtype_itemsize(int dtype) { return valid(dtype) ? itemsizes[dtype] : 0; }
const char *th_dtype_name(int dtype) { return valid(dtype) ? names[dtype] : "invalid"; }

int th_dtype_is_floating(int dtype) {
    return dtype == TH_FLOAT32 || dtype == TH_FLOAT64 || th__is_half(dtype);
}

int th_dtype_is_integral(int dtype) {
    return dtype >= TH_INT8 && dtype <= TH_INT64;
}

int th_dtype_is_complex(int dtype) {
    return dtype == TH_COMPLEX64 || dtype == TH_COMPLEX128;
}

int th_complex_part_dtype(int dtype) {
    switch (dtype) {
    case TH_COMPLEX64: return TH_FLOAT32;
    case TH_COMPLEX128: return TH_FLOAT64;
    case TH_FLOAT32: return TH_COMPLEX64;
    case TH_FLOAT64: return TH_COMPLEX128;
    }
    return -1;
}

/* the complex dtype holding values of floating dtype d (halves: complex64) */
static int to_complex(int d) {
    return th_dtype_is_complex(d) ? d : d == TH_FLOAT64 ? TH_COMPLEX128 : TH_COMPLEX64;
}

int th__dtype_category(int dtype) {
    if (dtype == TH_BOOL) return 0;
    if (th_dtype_is_complex(dtype)) return 3;
    return th_dtype_is_floating(dtype) ? 2 : 1;
}
TH_EXPORT_AS(th_dtype_category, th__dtype_category);

/* PyTorch spells dtypes in messages as Float, Long, ... */
const char *th__dtype_title(int dtype) {
    static const char *t[TH_NUM_DTYPES] = {"Float", "Double", "Half",
                                           "BFloat16", "Char", "Byte",
                                           "Short", "Int", "Long", "Bool",
                                           "ComplexFloat", "ComplexDouble"};
    return valid(dtype) ? t[dtype] : "Invalid";
}
TH_EXPORT_AS(th_dtype_title, th__dtype_title);

/* Width rank within floating types. */
static int float_rank(int d) {
    return d == TH_FLOAT64 ? 3 : d == TH_FLOAT32 ? 2 : 1;
}

int th_promote_types(int a, int b) {
    if (!valid(a) || !valid(b)) return -1;
    if (a == b) return a;
    if (a == TH_BOOL) return b;
    if (b == TH_BOOL) return a;
    if (th_dtype_is_complex(a) || th_dtype_is_complex(b)) /* the wider part */
        return a == TH_COMPLEX128 || b == TH_COMPLEX128 || a == TH_FLOAT64 ||
                       b == TH_FLOAT64
                   ? TH_COMPLEX128 : TH_COMPLEX64;
    int fa = th_dtype_is_floating(a), fb = th_dtype_is_floating(b);
    if (fa && fb) {
        if (th__is_half(a) && th__is_half(b)) return TH_FLOAT32;
        return float_rank(a) >= float_rank(b) ? a : b;
    }
    if (fa) return a;
    if (fb) return b;
    /* both integral, different */
    if (a == TH_UINT8 || b == TH_UINT8) {
        int o = a == TH_UINT8 ? b : a;
        return o == TH_INT8 ? TH_INT16 : o;
    }
    return itemsizes[a] >= itemsizes[b] ? a : b;
}

static int combine_categories(int higher, int lower) {
    if (higher < 0) return lower;
    if (lower < 0) return higher;
    if (th_dtype_is_complex(higher)) return higher;
    if (th_dtype_is_complex(lower)) /* a complex 0-d operand: keep the width */
        return th_dtype_is_floating(higher) ? to_complex(higher) : lower;
    if (th_dtype_is_floating(higher)) return higher;
    if (higher == TH_BOOL || th_dtype_is_floating(lower))
        return th_promote_types(higher, lower);
    return higher;
}

int th_result_type_of(int a_dtype, int a_ndim, int a_flags, int b_dtype,
                      int b_ndim, int b_flags) {
    int dim_res = -1, zero_res = -1, wrapped_res = -1;
    const int parts[2][3] = {{a_dtype, a_ndim, a_flags}, {b_dtype, b_ndim, b_flags}};
    for (int i = 0; i < 2; i++) {
        int d = parts[i][0], ndim = parts[i][1], *slot = &dim_res;
        if (d < 0) continue;
        if (ndim == 0 && (parts[i][2] & TH_TENSOR_WRAPPED_NUMBER)) {
            slot = &wrapped_res;
            if (th_dtype_is_floating(d)) d = th_get_default_dtype();
            if (th_dtype_is_complex(d)) d = to_complex(th_get_default_dtype());
        } else if (ndim == 0) {
            slot = &zero_res;
        }
        *slot = *slot < 0 ? d : th_promote_types(*slot, d);
    }
    return combine_categories(dim_res, combine_categories(zero_res, wrapped_res));
}

int th_result_type(const th_tensor *a, const th_tensor *b) {
    return th_result_type_of(a ? a->dtype : -1, a ? a->ndim : 0, a ? a->flags : 0,
                             b ? b->dtype : -1, b ? b->ndim : 0, b ? b->flags : 0);
}

int th_get_default_dtype(void) {
    return __atomic_load_n(&default_dtype, __ATOMIC_RELAXED);
}
int th_set_default_dtype(int dtype) {
    if (dtype != TH_FLOAT32 && dtype != TH_FLOAT64 && !th__is_half(dtype))
        return th__error(TH_ERR_TYPE,
                         "only floating-point types are supported as the "
                         "default type, got %s", th_dtype_name(dtype));
    __atomic_store_n(&default_dtype, dtype, __ATOMIC_RELAXED);
    return TH_OK;
}

/* IEEE binary16 <-> binary32, round to nearest even. */
float th__half_to_float(th_half_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else { /* subnormal: normalise */
            exp = 127 - 15 + 1;
            while (!(man & 0x400)) { man <<= 1; exp--; }
            man &= 0x3ff;
            bits = sign | (exp << 23) | (man << 13);
        }
    } else if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}
TH_EXPORT_AS(th_half_to_float, th__half_to_float);

th_half_t th__float_to_half(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000;
    uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) /* inf or nan */
        return (th_half_t)(sign | 0x7c00 | (absx > 0x7f800000u ? 0x200 : 0));
    if (absx >= 0x477ff000u) /* rounds to >= 65520: overflow */
        return (th_half_t)(sign | 0x7c00);
    if (absx < 0x38800000u) { /* subnormal half or zero */
        if (absx < 0x33000000u) return (th_half_t)sign;
        uint32_t e = absx >> 23;
        uint32_t m = (absx & 0x7fffff) | 0x800000;
        int shift = 126 - (int)e; /* value = m * 2^-24 in half units */
        uint32_t half_m = m >> shift;
        uint32_t rem = m & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half_m & 1))) half_m++;
        return (th_half_t)(sign | half_m);
    }
    uint32_t r = absx + 0xfff + ((absx >> 13) & 1); /* round nearest even */
    return (th_half_t)(sign | ((r - 0x38000000u) >> 13));
}
TH_EXPORT_AS(th_float_to_half, th__float_to_half);

float th__bf16_to_float(th_half_t h) {
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}
TH_EXPORT_AS(th_bf16_to_float, th__bf16_to_float);

th_half_t th__float_to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (th_half_t)((x >> 16) | 0x40);
    x += 0x7fff + ((x >> 16) & 1);
    return (th_half_t)(x >> 16);
}
TH_EXPORT_AS(th_float_to_bf16, th__float_to_bf16);

double th__load_double(const char *p, int dtype) {
    switch (dtype) {
    case TH_FLOAT32: return *(const float *)p;
    case TH_FLOAT64: return *(const double *)p;
    case TH_FLOAT16: return th__half_to_float(*(const th_half_t *)p);
    case TH_BFLOAT16: return th__bf16_to_float(*(const th_half_t *)p);
    case TH_INT8: return *(const int8_t *)p;
    case TH_UINT8: return *(const uint8_t *)p;
    case TH_INT16: return *(const int16_t *)p;
    case TH_INT32: return *(const int32_t *)p;
    case TH_INT64: return (double)*(const int64_t *)p;
    case TH_BOOL: return *(const uint8_t *)p != 0;
    case TH_COMPLEX64: return *(const float *)p;   /* the real part */
    case TH_COMPLEX128: return *(const double *)p;
    }
    return 0;
}
TH_EXPORT_AS(th_load_double, th__load_double);

int64_t th__load_int64(const char *p, int dtype) {
    switch (dtype) {
    case TH_INT8: return *(const int8_t *)p;
    case TH_UINT8: return *(const uint8_t *)p;
    case TH_INT16: return *(const int16_t *)p;
    case TH_INT32: return *(const int32_t *)p;
    case TH_INT64: return *(const int64_t *)p;
    case TH_BOOL: return *(const uint8_t *)p != 0;
    default: return (int64_t)th__load_double(p, dtype);
    }
}
TH_EXPORT_AS(th_load_int64, th__load_int64);

void th__store_double(char *p, int dtype, double v) {
    switch (dtype) {
    case TH_FLOAT32: *(float *)p = (float)v; break;
    case TH_FLOAT64: *(double *)p = v; break;
    case TH_FLOAT16: *(th_half_t *)p = th__float_to_half((float)v); break;
    case TH_BFLOAT16: *(th_half_t *)p = th__float_to_bf16((float)v); break;
    case TH_INT8: *(int8_t *)p = (int8_t)(int64_t)v; break;
    case TH_UINT8: *(uint8_t *)p = (uint8_t)(int64_t)v; break;
    case TH_INT16: *(int16_t *)p = (int16_t)(int64_t)v; break;
    case TH_INT32: *(int32_t *)p = (int32_t)(int64_t)v; break;
    case TH_INT64: *(int64_t *)p = (int64_t)v; break;
    case TH_COMPLEX64: { float z[2] = {(float)v, 0.0f}; memcpy(p, z, sizeof z); break; }
    case TH_COMPLEX128: { double z[2] = {v, 0.0}; memcpy(p, z, sizeof z); break; }
    case TH_BOOL: *(uint8_t *)p = v != 0; break;
    }
}
TH_EXPORT_AS(th_store_double, th__store_double);
