/* Dtype facts and type promotion: libTH's tables and rules (thc_dtype codes
 * are th_dtype's, and the default dtype is libTH's, one for both). */
#include "thc_internal.h"

THC_API int64_t thc_dtype_itemsize(int dtype) { return th_dtype_itemsize(dtype); }
THC_API const char *thc_dtype_name(int dtype) { return th_dtype_name(dtype); }
THC_API int thc_dtype_is_floating(int dtype) { return th_dtype_is_floating(dtype); }
THC_API int thc_promote_types(int a, int b) { return th_promote_types(a, b); }

THC_API int thc_result_type(const thc_tensor *a, const thc_tensor *b) {
    return th_result_type_of(a ? a->dtype : -1, a ? a->ndim : 0, a ? a->flags : 0,
                             b ? b->dtype : -1, b ? b->ndim : 0, b ? b->flags : 0);
}

THC_API int thc_get_default_dtype(void) { return th_get_default_dtype(); }
THC_API int thc_set_default_dtype(int dtype) { return th_set_default_dtype(dtype); }
