/* A small CNN's forward pass in C with libTH and libTHNN only:
 *
 *   conv2d(1->4, 3x3) -> relu -> max_pool2d(2) -> conv2d(4->8, 3x3) -> relu
 *   -> max_pool2d(2) -> flatten -> linear(32->10) -> log_softmax
 *
 * It reads the weights, an input batch and the output ember computed for
 * them from a file written by convnet_data.py, runs the network and checks
 * its own output against that reference.  Build and run:
 *
 *   python examples/c/convnet_data.py convnet.bin
 *   cc -std=c99 -Wall -Wextra -Werror examples/c/convnet.c -o convnet \
 *      $(python -m ember.thnn --cflags --libs)
 *   ./convnet convnet.bin
 *
 * Exit status: 0 when the output matches, 1 when it does not, 2 on an error
 * (bad file, libTH/libTHNN error). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <th.h>
#include <thnn.h>

#define MAX_TENSORS 16
#define TOLERANCE 1e-4

typedef struct {
    char name[64];
    th_tensor *t;
} named_tensor;

typedef struct {
    named_tensor items[MAX_TENSORS];
    int count;
} tensor_file;

static char error_text[512];

static int set_error(const char *what, const char *detail) {
    snprintf(error_text, sizeof error_text, "%s%s%s", what,
             detail ? ": " : "", detail ? detail : "");
    return 2;
}

/* set_error for functions that return a tensor */
static th_tensor *no_tensor(const char *what, const char *detail) {
    set_error(what, detail);
    return NULL;
}

static int read_exact(FILE *f, void *buf, size_t n) {
    return fread(buf, 1, n, f) == n ? 0 : -1;
}

/* The file format is little-endian; so are the machines this runs on
 * (checked once in main). */
static int read_u32(FILE *f, uint32_t *v) { return read_exact(f, v, sizeof *v); }

static int read_tensor(FILE *f, named_tensor *out) {
    uint32_t name_len, dtype, ndim;
    if (read_u32(f, &name_len) || name_len == 0 || name_len >= sizeof out->name)
        return set_error("bad record name length", NULL);
    if (read_exact(f, out->name, name_len))
        return set_error("truncated file", "in a record name");
    out->name[name_len] = '\0';
    if (read_u32(f, &dtype) || read_u32(f, &ndim))
        return set_error("truncated file", out->name);
    if (dtype != TH_FLOAT32)
        return set_error("only float32 records are supported", out->name);
    if (ndim > TH_MAX_DIMS)
        return set_error("too many dimensions", out->name);
    int64_t sizes[TH_MAX_DIMS];
    if (ndim && read_exact(f, sizes, sizeof(int64_t) * ndim))
        return set_error("truncated file", out->name);
    for (uint32_t d = 0; d < ndim; d++)
        if (sizes[d] < 0 || sizes[d] > (1 << 24))
            return set_error("implausible size", out->name);
    out->t = th_empty((int)ndim, sizes, TH_FLOAT32);
    if (!out->t) return set_error(out->name, th_last_error());
    size_t nbytes = (size_t)th_numel(out->t) * sizeof(float);
    if (read_exact(f, th_data_ptr(out->t), nbytes)) {
        th_tensor_release(out->t);
        out->t = NULL;
        return set_error("truncated file", out->name);
    }
    return 0;
}

static int read_file(const char *path, tensor_file *tf) {
    FILE *f = fopen(path, "rb");
    if (!f) return set_error("cannot open", path);
    char magic[8];
    uint32_t count;
    int rc = 0;
    if (read_exact(f, magic, 8) || memcmp(magic, "EMBRTNS1", 8) != 0)
        rc = set_error("not a tensor file (bad magic)", path);
    else if (read_u32(f, &count) || count > MAX_TENSORS)
        rc = set_error("bad record count", path);
    for (uint32_t i = 0; rc == 0 && i < count; i++) {
        rc = read_tensor(f, &tf->items[i]);
        if (rc == 0) tf->count++;
    }
    fclose(f);
    return rc;
}

static th_tensor *find(const tensor_file *tf, const char *name) {
    for (int i = 0; i < tf->count; i++)
        if (strcmp(tf->items[i].name, name) == 0) return tf->items[i].t;
    return no_tensor("missing record", name);
}

/* conv2d (stride 1, no padding) then relu in place */
static th_tensor *conv_relu(const th_tensor *x, const th_tensor *w,
                            const th_tensor *b) {
    const int64_t one[2] = {1, 1}, zero[2] = {0, 0};
    if (x->ndim != 4 || w->ndim != 4)
        return no_tensor("conv2d expects 4-d input and weight", NULL);
    int64_t sizes[4] = {x->sizes[0], w->sizes[0],
                        thnn_window_output_size(x->sizes[2], w->sizes[2], 1, 0, 1, 0),
                        thnn_window_output_size(x->sizes[3], w->sizes[3], 1, 0, 1, 0)};
    if (sizes[2] < 1 || sizes[3] < 1) return no_tensor("conv2d", thnn_last_error());
    th_tensor *y = th_empty(4, sizes, x->dtype);
    if (!y) return no_tensor("conv2d", th_last_error());
    if (thnn_conv2d_forward(y, x, w, b, one, zero, one, 1) ||
        thnn_activation_forward(y, y, THNN_RELU, 0.0, 0.0)) {
        set_error("conv2d/relu", thnn_last_error());
        th_tensor_release(y);
        return NULL;
    }
    return y;
}

static th_tensor *max_pool2(const th_tensor *x) {
    const int64_t two[2] = {2, 2}, one[2] = {1, 1}, zero[2] = {0, 0};
    int64_t sizes[4] = {x->sizes[0], x->sizes[1],
                        thnn_window_output_size(x->sizes[2], 2, 2, 0, 1, 0),
                        thnn_window_output_size(x->sizes[3], 2, 2, 0, 1, 0)};
    if (sizes[2] < 1 || sizes[3] < 1) return no_tensor("max_pool2d", thnn_last_error());
    th_tensor *y = th_empty(4, sizes, x->dtype);
    th_tensor *ix = th_empty(4, sizes, TH_INT64);
    if (y && ix && thnn_max_pool2d_forward(y, ix, x, two, two, zero, one, 0) == 0) {
        th_tensor_release(ix);
        return y;
    }
    set_error("max_pool2d", y && ix ? thnn_last_error() : th_last_error());
    th_tensor_release(y);
    th_tensor_release(ix);
    return NULL;
}

/* log_softmax(flatten(x) @ w^T + b) */
static th_tensor *linear_log_softmax(const th_tensor *x, const th_tensor *w,
                                     const th_tensor *b) {
    int64_t flat[2] = {x->sizes[0], th_numel(x) / (x->sizes[0] ? x->sizes[0] : 1)};
    th_tensor *x2 = th_reshape(x, 2, flat);
    th_tensor *wt = th_transpose(w, 0, 1);
    th_tensor *z = x2 && wt ? th_addmm(b, x2, wt, 1.0, 1.0) : NULL;
    th_tensor *y = z ? th_empty(z->ndim, z->sizes, z->dtype) : NULL;
    th_tensor_release(x2);
    th_tensor_release(wt);
    if (!y) {
        set_error("linear", th_last_error());
        th_tensor_release(z);
        return NULL;
    }
    if (thnn_log_softmax_forward(y, z, 1)) {
        set_error("log_softmax", thnn_last_error());
        th_tensor_release(y);
        y = NULL;
    }
    th_tensor_release(z);
    return y;
}

static th_tensor *forward(const tensor_file *p, const th_tensor *input) {
    th_tensor *w1 = find(p, "conv1.weight"), *b1 = find(p, "conv1.bias");
    th_tensor *w2 = find(p, "conv2.weight"), *b2 = find(p, "conv2.bias");
    th_tensor *fw = find(p, "fc.weight"), *fb = find(p, "fc.bias");
    if (!w1 || !b1 || !w2 || !b2 || !fw || !fb) return NULL;
    th_tensor *a = conv_relu(input, w1, b1);
    th_tensor *b = a ? max_pool2(a) : NULL;
    th_tensor *c = b ? conv_relu(b, w2, b2) : NULL;
    th_tensor *d = c ? max_pool2(c) : NULL;
    th_tensor *out = d ? linear_log_softmax(d, fw, fb) : NULL;
    th_tensor *tmp[] = {a, b, c, d};
    for (int i = 0; i < 4; i++) th_tensor_release(tmp[i]);
    return out;
}

/* largest |a - b| over all elements, or -1 when the shapes differ */
static double max_abs_diff(const th_tensor *a, const th_tensor *b) {
    if (a->ndim != b->ndim ||
        memcmp(a->sizes, b->sizes, sizeof(int64_t) * (size_t)a->ndim) != 0)
        return -1;
    double worst = 0;
    for (int64_t i = 0; i < th_numel(a); i++) {
        double x, y;
        if (th_get_double(a, i, &x) || th_get_double(b, i, &y)) return -1;
        double d = fabs(x - y);
        if (!(d <= worst)) worst = d;  /* a NaN counts as the worst */
    }
    return worst;
}

int main(int argc, char **argv) {
    const uint16_t probe = 1;
    if (*(const uint8_t *)&probe != 1) {
        fprintf(stderr, "convnet: this program reads little-endian files only\n");
        return 2;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: %s FILE   (written by convnet_data.py)\n", argv[0]);
        return 2;
    }
    tensor_file tf = {0};
    int rc = read_file(argv[1], &tf);
    th_tensor *out = NULL;
    const th_tensor *input = rc ? NULL : find(&tf, "input");
    const th_tensor *expected = input ? find(&tf, "expected") : NULL;
    if (expected) out = forward(&tf, input);
    if (!out) {
        fprintf(stderr, "convnet: %s\n", error_text);
        rc = 2;
    } else {
        double diff = max_abs_diff(out, expected);
        int64_t n = out->sizes[0], k = out->sizes[1];
        printf("output %lld x %lld, max |C - ember| = %.3g\n", (long long)n,
               (long long)k, diff);
        rc = (diff >= 0 && diff <= TOLERANCE) ? 0 : 1;
        printf("%s\n", rc == 0 ? "OK: matches ember" : "MISMATCH");
    }
    th_tensor_release(out);
    for (int i = 0; i < tf.count; i++) th_tensor_release(tf.items[i].t);
    return rc;
}
