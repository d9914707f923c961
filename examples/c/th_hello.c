/* A C program using libTH only: builds a matrix, multiplies it by its
 * transpose, applies exp element-wise and sums each row.  Build with
 *   cc th_hello.c $(python -m ember.th --cflags --libs) -o th_hello       */
#include <stdio.h>
#include <th.h>

static int fail(void) {
    fprintf(stderr, "libTH error: %s\n", th_last_error());
    return 1;
}

int main(void) {
    int64_t shape[2] = {2, 3};
    th_tensor *r = th_arange(0, 6, 1, TH_FLOAT64);
    th_tensor *a = r ? th_view(r, 2, shape) : NULL;
    th_tensor *at = a ? th_transpose(a, 0, 1) : NULL;
    th_tensor *g = at ? th_mm(a, at) : NULL;          /* [[5, 14], [14, 50]] */
    th_tensor *scale = th_scalar_double(0.1, TH_FLOAT64);
    th_tensor *s = g ? th_binary(TH_MUL, g, scale) : NULL;
    th_tensor *e = s ? th_unary(TH_EXP, s) : NULL;
    int dim = 1;
    th_tensor *rows = e ? th_reduce(TH_RED_SUM, e, 1, &dim, 0, -1) : NULL;
    if (!rows) return fail();
    double v0, v1;
    if (th_get_double(rows, 0, &v0) || th_get_double(rows, 1, &v1)) return fail();
    printf("%.12g %.12g\n", v0, v1);
    /* errors are values, not crashes */
    th_tensor *bad = th_mm(a, a);
    printf("bad mm: %s\n", bad ? "no error?" : th_last_error());
    th_tensor *ts[] = {rows, e, s, scale, g, at, a, r};
    for (int i = 0; i < 8; i++) th_tensor_release(ts[i]);
    return bad == NULL ? 0 : 1;
}
