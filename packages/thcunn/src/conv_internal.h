/* The unfold-and-multiply machinery of libTHCUNN's convolutions, shared
 * by conv2d and conv1d (conv.cu), conv3d (conv3d.cu) and the transposed
 * convolution (conv_transpose2d.cu).  Internal.
 *
 * A geometry type `Geo` (Conv here, the 3-d one in conv3d.cu) has the
 * members N, C, O, G, K() (column rows: C times the kernel volume), L()
 * (output positions of one sample), and two host methods that launch its
 * kernels on contiguous tensors of m samples:
 *   int unfold(const char *what, thc_tensor *cols, const thc_tensor *x):
 *       cols (m, K, L) from x (m, C, ...input);
 *   int fold(const char *what, thc_tensor *x, const thc_tensor *cols):
 *       x (m, C, ...input) = the sum of the cols entries that read each
 *       element (overwritten).
 * The cores below run libTHC's batched products on the columns, a chunk
 * of samples at a time so that the column buffer stays under
 * COLUMN_BYTES; every tensor they take is contiguous. */
#ifndef THCUNN_CONV_INTERNAL_H
#define THCUNN_CONV_INTERNAL_H
#include "thcunn_internal.h"

namespace thcunn {
namespace conv {

// conv2d's geometry: input (N, C, H, W), weight (O, C/G, kh, kw), output
// (N, O, OH, OW).  The transposed convolution uses it with the roles of
// input and output swapped.
struct Conv {
    int64_t N, C, H, W, O, kh, kw, OH, OW, sh, sw, ph, pw, dh, dw, G;
    THCUNN_HD int64_t K() const { return C * kh * kw; }   // column rows (all groups)
    THCUNN_HD int64_t L() const { return OH * OW; }
    int unfold(const char *what, thc_tensor *cols, const thc_tensor *x) const;   // im2col
    int fold(const char *what, thc_tensor *x, const thc_tensor *cols) const;     // col2im
};

// samples per chunk: columns (nb, K, L) of at most 256 MiB, at least one
int64_t chunk_of(int64_t N, int64_t K, int64_t L, int dtype);
// a narrowed (batch or group) slice of t reshaped to (d0, d1, d2); a view
thc_tensor *slice3(const thc_tensor *t, int dim, int64_t start, int64_t len, int64_t d0,
                   int64_t d1, int64_t d2);
// w (O, C/G, ...kernel) seen as (O, K/G): group grp's (O/G, K/G) block, or
// its transpose, expanded over nb samples (a view)
thc_tensor *weight_group(const thc_tensor *w, int64_t O, int64_t K, int64_t G, int64_t grp,
                         int64_t nb, int transpose);
// dst = src; releases both (either may be NULL after a failed libTHC call)
int copy_release(thc_tensor *dst, thc_tensor *src);
// output (N, O, ...) += bias (O) along dim 1
int add_bias(thc_tensor *output, const thc_tensor *bias);
// grad_bias (O) = grad_output (N, O, ...) summed over every dim but 1
int bias_grad(thc_tensor *grad_bias, const thc_tensor *grad_output);

// output (N, O, ...) = the convolution of x (N, C, ...) with w (O, C/G, ...)
template <class Geo>
int forward_cols(const char *what, thc_tensor *output, const thc_tensor *x, const thc_tensor *w,
                 const Geo &g) {
    if (g.N == 0) return THC_OK;
    const int64_t K = g.K(), L = g.L(), og = g.O / g.G, kg = K / g.G;
    const int64_t nb = chunk_of(g.N, K, L, x->dtype);
    int64_t cshape[3] = {nb, K, L};
    thc_tensor *cols = thc_empty(3, cshape, x->dtype);
    int rc = cols ? THC_OK : thcunn__from_thc();
    for (int64_t n0 = 0; !rc && n0 < g.N; n0 += nb) {
        int64_t m = g.N - n0 < nb ? g.N - n0 : nb;
        thc_tensor *xc = thc_narrow(x, 0, n0, m), *cc = thc_narrow(cols, 0, 0, m);
        thc_tensor *oc = slice3(output, 0, n0, m, m, g.O, L);
        rc = xc && cc && oc ? g.unfold(what, cc, xc) : thcunn__from_thc();
        for (int64_t grp = 0; !rc && grp < g.G; grp++) {   // out_g = W_g @ cols_g
            thc_tensor *wg = weight_group(w, g.O, K, g.G, grp, m, 0);
            thc_tensor *cg = thc_narrow(cc, 1, grp * kg, kg);
            thc_tensor *prod = wg && cg ? thc_bmm(wg, cg) : NULL;   // (m, O/G, L)
            rc = copy_release(prod ? thc_narrow(oc, 1, grp * og, og) : NULL, prod);
            thc_tensor_release(wg);
            thc_tensor_release(cg);
        }
        thc_tensor *tmp[] = {xc, cc, oc};
        for (thc_tensor *p : tmp) thc_tensor_release(p);
    }
    thc_tensor_release(cols);
    return rc;
}

// grad_input (N, C, ...) from grad_output (N, O, ...) and w (O, C/G, ...):
// cols_g = W_g^T @ gout_g, folded back (overwrites grad_input)
template <class Geo>
int input_cols(const char *what, thc_tensor *grad_input, const thc_tensor *grad_output,
               const thc_tensor *w, const Geo &g) {
    if (g.N == 0) return THC_OK;
    const int64_t K = g.K(), L = g.L(), og = g.O / g.G, kg = K / g.G;
    const int64_t nb = chunk_of(g.N, K, L, grad_output->dtype);
    int64_t cshape[3] = {nb, K, L};
    thc_tensor *cols = thc_empty(3, cshape, grad_output->dtype);
    int rc = cols ? THC_OK : thcunn__from_thc();
    for (int64_t n0 = 0; !rc && n0 < g.N; n0 += nb) {
        int64_t m = g.N - n0 < nb ? g.N - n0 : nb;
        thc_tensor *cc = thc_narrow(cols, 0, 0, m);
        thc_tensor *gc = slice3(grad_output, 0, n0, m, m, g.O, L);
        thc_tensor *gx = thc_narrow(grad_input, 0, n0, m);
        if (!cc || !gc || !gx) rc = thcunn__from_thc();
        for (int64_t grp = 0; !rc && grp < g.G; grp++) {
            thc_tensor *wt = weight_group(w, g.O, K, g.G, grp, m, 1);
            thc_tensor *gg = thc_narrow(gc, 1, grp * og, og);
            thc_tensor *prod = wt && gg ? thc_bmm(wt, gg) : NULL;   // (m, K/G, L)
            rc = copy_release(prod ? thc_narrow(cc, 1, grp * kg, kg) : NULL, prod);
            thc_tensor_release(wt);
            thc_tensor_release(gg);
        }
        if (!rc) rc = g.fold(what, gx, cc);
        thc_tensor *tmp[] = {cc, gc, gx};
        for (thc_tensor *p : tmp) thc_tensor_release(p);
    }
    thc_tensor_release(cols);
    return rc;
}

// grad_weight (O, C/G, ...) = sum over samples of gout_g @ cols_g^T, with
// cols unfolded from x (N, C, ...) (overwrites grad_weight).  A chunk's
// samples are summed by one product (O/G, m*L) @ (m*L, K/G) over copies
// of gout and cols laid out (O, m, L) and (K, m, L), instead of m
// products (m, O/G, K/G) summed afterwards (that temporary is m weights:
// gigabytes for wide layers at small resolutions).  The chunk holds the
// columns and both copies under the column cap.
template <class Geo>
int weight_cols(const char *what, thc_tensor *grad_weight, const thc_tensor *grad_output,
                const thc_tensor *x, const Geo &g) {
    if (thc_zero(grad_weight)) return thcunn__from_thc();
    if (g.N == 0) return THC_OK;
    const int64_t K = g.K(), L = g.L(), og = g.O / g.G, kg = K / g.G;
    const int64_t nb = chunk_of(g.N, 2 * K + g.O, L, x->dtype);
    int64_t cshape[3] = {nb, K, L}, wshape[3] = {g.G, og, kg};
    const int swap[3] = {1, 0, 2};
    thc_tensor *cols = thc_empty(3, cshape, x->dtype);
    thc_tensor *gw = cols ? thc_view(grad_weight, 3, wshape) : NULL;
    int rc = gw ? THC_OK : thcunn__from_thc();
    for (int64_t n0 = 0; !rc && n0 < g.N; n0 += nb) {
        int64_t m = g.N - n0 < nb ? g.N - n0 : nb;
        thc_tensor *xc = thc_narrow(x, 0, n0, m), *cc = thc_narrow(cols, 0, 0, m);
        thc_tensor *gc = slice3(grad_output, 0, n0, m, m, g.O, L);
        thc_tensor *cp = NULL, *ct = NULL, *gp = NULL, *gt = NULL;
        rc = xc && cc && gc ? g.unfold(what, cc, xc) : thcunn__from_thc();
        if (!rc) {   // (K, m, L) and (O, m, L) copies: rows of m*L
            if ((cp = thc_permute(cc, 3, swap))) ct = thc_contiguous(cp);
            if (ct && (gp = thc_permute(gc, 3, swap))) gt = thc_contiguous(gp);
            if (!gt) rc = thcunn__from_thc();
        }
        for (int64_t grp = 0; !rc && grp < g.G; grp++) {
            int64_t ash[2] = {og, m * L}, bsh[2] = {kg, m * L};
            thc_tensor *gg = thc_narrow(gt, 0, grp * og, og);
            thc_tensor *cg = thc_narrow(ct, 0, grp * kg, kg);
            thc_tensor *a = gg ? thc_view(gg, 2, ash) : NULL;
            thc_tensor *bt = cg ? thc_view(cg, 2, bsh) : NULL;
            thc_tensor *b = bt ? thc_transpose(bt, 0, 1) : NULL;   // (m*L, K/G), strided
            thc_tensor *dst = a && b ? thc_select(gw, 0, grp) : NULL;
            thc_tensor *s = dst ? thc_addmm(dst, a, b, 1.0, 1.0) : NULL;   // (O/G, K/G)
            if (!s || thc_copy(dst, s)) rc = thcunn__from_thc();
            thc_tensor *tmp[] = {gg, cg, a, bt, b, dst, s};
            for (thc_tensor *p : tmp) thc_tensor_release(p);
        }
        thc_tensor *tmp[] = {xc, cc, gc, cp, ct, gp, gt};
        for (thc_tensor *p : tmp) thc_tensor_release(p);
    }
    thc_tensor_release(cols);
    thc_tensor_release(gw);
    return rc;
}

// ---- argument checks shared by the convolutions (libTHNN's wording) ----
// an output (thcunn__check_out), NULL worded as thcunn__check_tensor words it
int check_out(const char *fn, const char *name, const thc_tensor *t, int ndim,
              const int64_t *sizes, int dtype);
// grad_output must be `os` (ndim dims) of the input's dtype
int check_grad_output(const char *fn, const thc_tensor *gout, int ndim, const int64_t *os,
                      int dtype);
// the input and weight of a convolution: floating, on the device, nd-D, one dtype
int check_pair(const char *fn, const thc_tensor *input, const thc_tensor *weight, int nd);
// the backward_params preamble: input and grad_output nd-D, one dtype and batch
int check_params_inputs(const char *fn, const thc_tensor *grad_output, const thc_tensor *input,
                        int nd);
// contiguous copies (or new references) of two inputs; NULL and the error set on failure
int contig2(const thc_tensor *a, const thc_tensor *b, thc_tensor **ca, thc_tensor **cb);
int zero_out(thc_tensor *t);

}  // namespace conv
}  // namespace thcunn
#endif
