/* Storages, views, copies and errors through the public C API only. */
#include <string.h>
#include "check.h"

static void test_views(void) {
    int64_t sizes[2] = {2, 3};
    th_tensor *a = th_arange(0, 6, 1, TH_FLOAT32);
    CHECK(a != NULL);
    th_tensor *m = th_view(a, 2, sizes);
    CHECK(m && m->ndim == 2 && m->strides[0] == 3);
    th_tensor *t = th_transpose(m, 0, 1);
    CHECK(t && t->sizes[0] == 3 && !th_is_contiguous(t));
    double v;
    CHECK(th_get_double(t, 1, &v) == TH_OK && v == 3.0);
    th_tensor *c = th_contiguous(t);
    CHECK(c && th_is_contiguous(c) && ((float *)th_data_ptr(c))[1] == 3.0f);
    th_tensor *bad = th_view(t, 1, (int64_t[]){6});
    CHECK(bad == NULL && th_last_status() == TH_ERR_RUNTIME);
    CHECK(strstr(th_last_error(), "view size is not compatible") != NULL);
    th_tensor *r = th_reshape(t, 1, (int64_t[]){-1});
    CHECK(r && r->sizes[0] == 6);
    CHECK(th_get_double(r, 1, &v) == TH_OK && v == 3.0);
    th_tensor *s = th_select(m, 1, 5);
    CHECK(s == NULL && th_last_status() == TH_ERR_INDEX);
    th_tensor *e = th_expand(m, 2, (int64_t[]){4, 3});
    CHECK(e == NULL && strstr(th_last_error(), "expanded size") != NULL);
    th_tensor_release(r);
    th_tensor_release(c);
    th_tensor_release(t);
    th_tensor_release(m);
    th_tensor_release(a);
}

static void test_copy_dtypes(void) {
    th_tensor *a = th_linspace(-2, 2, 5, TH_FLOAT64);
    for (int d = 0; d < TH_NUM_DTYPES; d++) {
        th_tensor *b = th_to_dtype(a, d);
        CHECK(b && b->dtype == d);
        double v;
        CHECK(th_get_double(b, 4, &v) == TH_OK);
        CHECK(v == (d == TH_BOOL ? 1.0 : d == TH_UINT8 ? 2.0 : 2.0));
        th_tensor_release(b);
    }
    th_tensor_release(a);
}

static void test_shared(void) {
    th_storage *s = th_storage_new_shared(4096);
    CHECK(s && s->kind == TH_STORAGE_SHARED);
    if (!s) return;
    ((char *)s->data)[10] = 42;
    th_storage *o = th_storage_open_shared(s->name, 4096);
    CHECK(o && ((char *)o->data)[10] == 42);
    CHECK(th_storage_unlink_shared(s) == TH_OK);
    th_storage_release(o);
    th_storage_release(s);
    CHECK(th_storage_open_shared("/ember_does_not_exist", 8) == NULL);
}

static void test_half(void) {
    th_tensor *a = th_scalar_double(1.0 / 3.0, TH_FLOAT16);
    double v;
    CHECK(a && th_get_double(a, 0, &v) == TH_OK && fabs(v - 0.33325195) < 1e-7);
    th_tensor_release(a);
    a = th_scalar_double(65520.0, TH_FLOAT16);
    CHECK(th_get_double(a, 0, &v) == TH_OK && isinf(v));
    th_tensor_release(a);
    a = th_scalar_double(1e-7, TH_FLOAT16); /* subnormal */
    CHECK(th_get_double(a, 0, &v) == TH_OK && fabs(v - 1.1920929e-07) < 1e-12);
    th_tensor_release(a);
}

int main(void) {
    CHECK(th_abi_version_major() == TH_ABI_VERSION_MAJOR);
    test_views();
    test_copy_dtypes();
    test_shared();
    test_half();
    return check_report("test_core");
}
