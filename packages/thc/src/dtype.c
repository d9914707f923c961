/* Dtype facts, type promotion (libTH's rules) and host-side element
 * access. */
#include <stdio.h>
#include <string.h>

#include "thc_internal.h"

static const int64_t itemsizes[THC_NUM_DTYPES] = {4, 8, 2, 2, 1, 1, 2, 4, 8, 1};
static const char *names[THC_NUM_DTYPES] = {
    "float32", "float64", "float16", "bfloat16", "int8",
    "uint8",   "int16",   "int32",   "int64",    "bool"};

/* process-wide, read by any thread: accessed atomically */
static int default_dtype = THC_FLOAT32;

static int valid(int dtype) { return dtype >= 0 && dtype < THC_NUM_DTYPES; }

THC_API int64_t thc_dtype_itemsize(int dtype) { return valid(dtype) ? itemsizes[dtype] : 0; }
THC_API const char *thc_dtype_name(int dtype) { return valid(dtype) ? names[dtype] : "invalid"; }

THC_API int thc_dtype_is_floating(int dtype) {
    return dtype == THC_FLOAT32 || dtype == THC_FLOAT64 || thc__is_half(dtype);
}

int thc__dtype_category(int dtype) {
    if (dtype == THC_BOOL) return 0;
    return thc_dtype_is_floating(dtype) ? 2 : 1;
}

/* Width rank within floating types. */
static int float_rank(int d) {
    return d == THC_FLOAT64 ? 3 : d == THC_FLOAT32 ? 2 : 1;
}

THC_API int thc_promote_types(int a, int b) {
    if (!valid(a) || !valid(b)) return -1;
    if (a == b) return a;
    if (a == THC_BOOL) return b;
    if (b == THC_BOOL) return a;
    int fa = thc_dtype_is_floating(a), fb = thc_dtype_is_floating(b);
    if (fa && fb) {
        if (thc__is_half(a) && thc__is_half(b)) return THC_FLOAT32;
        return float_rank(a) >= float_rank(b) ? a : b;
    }
    if (fa) return a;
    if (fb) return b;
    /* both integral, different */
    if (a == THC_UINT8 || b == THC_UINT8) {
        int o = a == THC_UINT8 ? b : a;
        return o == THC_INT8 ? THC_INT16 : o;
    }
    return itemsizes[a] >= itemsizes[b] ? a : b;
}

static int combine_categories(int higher, int lower) {
    if (higher < 0) return lower;
    if (lower < 0) return higher;
    if (thc_dtype_is_floating(higher)) return higher;
    if (higher == THC_BOOL || thc_dtype_is_floating(lower))
        return thc_promote_types(higher, lower);
    return higher;
}

THC_API int thc_result_type(const thc_tensor *a, const thc_tensor *b) {
    int dim_res = -1, zero_res = -1, wrapped_res = -1;
    const thc_tensor *ts[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        if (!ts[i]) continue;
        int d = ts[i]->dtype, *slot = &dim_res;
        if (ts[i]->ndim == 0 && (ts[i]->flags & THC_TENSOR_WRAPPED_NUMBER)) {
            slot = &wrapped_res;
            if (thc_dtype_is_floating(d)) d = thc_get_default_dtype();
        } else if (ts[i]->ndim == 0) {
            slot = &zero_res;
        }
        *slot = *slot < 0 ? d : thc_promote_types(*slot, d);
    }
    return combine_categories(dim_res, combine_categories(zero_res, wrapped_res));
}

THC_API int thc_get_default_dtype(void) {
    return __atomic_load_n(&default_dtype, __ATOMIC_RELAXED);
}
THC_API int thc_set_default_dtype(int dtype) {
    if (dtype != THC_FLOAT32 && dtype != THC_FLOAT64 && !thc__is_half(dtype))
        return thc__error(THC_ERR_TYPE,
                         "only floating-point types are supported as the "
                         "default type, got %s", thc_dtype_name(dtype));
    __atomic_store_n(&default_dtype, dtype, __ATOMIC_RELAXED);
    return THC_OK;
}

/* IEEE binary16 <-> binary32, round to nearest even. */
float thc__half_to_float(thc_half_t h) {
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

thc_half_t thc__float_to_half(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000;
    uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) /* inf or nan */
        return (thc_half_t)(sign | 0x7c00 | (absx > 0x7f800000u ? 0x200 : 0));
    if (absx >= 0x477ff000u) /* rounds to >= 65520: overflow */
        return (thc_half_t)(sign | 0x7c00);
    if (absx < 0x38800000u) { /* subnormal half or zero */
        if (absx < 0x33000000u) return (thc_half_t)sign;
        uint32_t e = absx >> 23;
        uint32_t m = (absx & 0x7fffff) | 0x800000;
        int shift = 126 - (int)e; /* value = m * 2^-24 in half units */
        uint32_t half_m = m >> shift;
        uint32_t rem = m & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half_m & 1))) half_m++;
        return (thc_half_t)(sign | half_m);
    }
    uint32_t r = absx + 0xfff + ((absx >> 13) & 1); /* round nearest even */
    return (thc_half_t)(sign | ((r - 0x38000000u) >> 13));
}

float thc__bf16_to_float(thc_half_t h) {
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

thc_half_t thc__float_to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (thc_half_t)((x >> 16) | 0x40);
    x += 0x7fff + ((x >> 16) & 1);
    return (thc_half_t)(x >> 16);
}

double thc__load_double(const char *p, int dtype) {
    switch (dtype) {
    case THC_FLOAT32: return *(const float *)p;
    case THC_FLOAT64: return *(const double *)p;
    case THC_FLOAT16: return thc__half_to_float(*(const thc_half_t *)p);
    case THC_BFLOAT16: return thc__bf16_to_float(*(const thc_half_t *)p);
    case THC_INT8: return *(const int8_t *)p;
    case THC_UINT8: return *(const uint8_t *)p;
    case THC_INT16: return *(const int16_t *)p;
    case THC_INT32: return *(const int32_t *)p;
    case THC_INT64: return (double)*(const int64_t *)p;
    case THC_BOOL: return *(const uint8_t *)p != 0;
    }
    return 0;
}

int64_t thc__load_int64(const char *p, int dtype) {
    switch (dtype) {
    case THC_INT8: return *(const int8_t *)p;
    case THC_UINT8: return *(const uint8_t *)p;
    case THC_INT16: return *(const int16_t *)p;
    case THC_INT32: return *(const int32_t *)p;
    case THC_INT64: return *(const int64_t *)p;
    case THC_BOOL: return *(const uint8_t *)p != 0;
    default: return (int64_t)thc__load_double(p, dtype);
    }
}

void thc__store_double(char *p, int dtype, double v) {
    switch (dtype) {
    case THC_FLOAT32: *(float *)p = (float)v; break;
    case THC_FLOAT64: *(double *)p = v; break;
    case THC_FLOAT16: *(thc_half_t *)p = thc__float_to_half((float)v); break;
    case THC_BFLOAT16: *(thc_half_t *)p = thc__float_to_bf16((float)v); break;
    case THC_INT8: *(int8_t *)p = (int8_t)(int64_t)v; break;
    case THC_UINT8: *(uint8_t *)p = (uint8_t)(int64_t)v; break;
    case THC_INT16: *(int16_t *)p = (int16_t)(int64_t)v; break;
    case THC_INT32: *(int32_t *)p = (int32_t)(int64_t)v; break;
    case THC_INT64: *(int64_t *)p = (int64_t)v; break;
    case THC_BOOL: *(uint8_t *)p = v != 0; break;
    }
}

const char *thc__shape_str(int ndim, const int64_t *sizes, char *buf) {
    int pos = 0;
    buf[pos++] = '[';
    for (int i = 0; i < ndim && pos < 200; i++)
        pos += snprintf(buf + pos, 256 - pos, i ? ", %lld" : "%lld",
                        (long long)sizes[i]);
    buf[pos++] = ']';
    buf[pos] = '\0';
    return buf;
}

int thc__wrap_dim(int dim, int ndim) {
    int n = ndim > 0 ? ndim : 1;
    if (dim < -n || dim >= n) {
        thc__error(THC_ERR_INDEX,
                  "Dimension out of range (expected to be in range of "
                  "[%d, %d], but got %d)", -n, n - 1, dim);
        return -1;
    }
    return dim < 0 ? dim + n : dim;
}

const char *thc__dtype_title(int dtype) {
    static const char *t[THC_NUM_DTYPES] = {"Float", "Double", "Half", "BFloat16", "Char",
                                            "Byte", "Short", "Int", "Long", "Bool"};
    return dtype >= 0 && dtype < THC_NUM_DTYPES ? t[dtype] : "Invalid";
}
