/* libTHNN: neural-network kernels for Ember, in C99, on libTH's C API.
 *
 * Kernel contract (see packages/thnn/README.md, "Kernel argument order"):
 *  - thnn_<layer>_forward, thnn_<layer>_backward_input,
 *    thnn_<layer>_backward_params;
 *  - outputs first (pre-allocated, contiguous, of the documented shape and
 *    of the input's dtype), then the const inputs, then the plain options;
 *  - each returns TH_OK (0) or a th_status code; thnn_last_error() holds
 *    a thread-local message saying what went wrong.  Never aborts or prints.
 *  - float32 and float64; integer tensors (targets, indices) are int64.
 *  - Optional tensors (bias, weight, running stats) may be NULL.
 *
 * As installed, plain declarations only (the kernel table written out),
 * so that FFI tools can read this header.
 */
#ifndef THNN_H
#define THNN_H

#include "th.h"

#ifdef __cplusplus
extern "C" {
#endif

#define THNN_ABI_VERSION_MAJOR 1
#define THNN_ABI_VERSION_MINOR 3

/* reductions of the losses */
#define THNN_REDUCTION_NONE 0
#define THNN_REDUCTION_MEAN 1
#define THNN_REDUCTION_SUM 2

/* embedding_bag modes */
#define THNN_EMBEDDING_BAG_SUM 0
#define THNN_EMBEDDING_BAG_MEAN 1
#define THNN_EMBEDDING_BAG_MAX 2

/* ---- library facts and errors -------------------------------------- */
int thnn_abi_version_major(void);
int thnn_abi_version_minor(void);
const char *thnn_version(void);
const char *thnn_last_error(void);
int thnn_last_status(void);
void thnn_clear_error(void);

/* ---- the kernels: declared once for libTHNN and libTHCUNN, in
 * thnn_kernels.def (written out in the installed header) ----------- */
#define NN_FN(name) thnn_##name
#define NN_NAME(name) THNN_##name
#define NN_TENSOR th_tensor
#define NN_GENERATOR th_generator
#include "thnn_kernels.def"
#undef NN_FN
#undef NN_NAME
#undef NN_TENSOR
#undef NN_GENERATOR

/* ---- recurrent cells (rnn.c) ----------------------------------------
 * The pointwise part of one step, after the caller's matrix products; B
 * rows, hidden size H, PyTorch's gate order.  All outputs contiguous.
 * LSTM: gates (B, 4H) = x W_ih^T + b_ih + h_prev W_hh^T + b_hh in (i, f,
 * g, o) order, replaced in place by the activations (sigmoid, sigmoid,
 * tanh, sigmoid), which the backward takes; c = f c_prev + i g, h = o
 * tanh(c); c may be c_prev itself.  Backward: grad_h, grad_c (either may
 * be NULL for zero) -> grad_gates (B, 4H, pre-activation) and grad_c_prev
 * (may be grad_c itself).
 * GRU: input_gates (B, 3H) = x W_ih^T + b_ih, hidden_gates = h_prev W_hh^T
 * + b_hh, (r, z, n) order; n = tanh(x_n + r hidden_n), h = (1 - z) n +
 * z h_prev; save (B, 4H) gets r, z, n, hidden_n.  Backward: grad of both
 * gate tensors and the direct part of grad_h_prev (grad_h z; the caller
 * adds grad_hidden_gates W_hh).
 * RNN: h = tanh(gates) or relu(gates) (h may be gates itself); backward
 * from h (grad_gates may be grad_h itself). */
#define THNN_RNN_TANH 0
#define THNN_RNN_RELU 1
int thnn_lstm_cell_forward(th_tensor *h, th_tensor *c, th_tensor *gates,
                           const th_tensor *c_prev);
int thnn_lstm_cell_backward(th_tensor *grad_gates, th_tensor *grad_c_prev,
                            const th_tensor *grad_h, const th_tensor *grad_c,
                            const th_tensor *gates, const th_tensor *c_prev,
                            const th_tensor *c);
int thnn_gru_cell_forward(th_tensor *h, th_tensor *save,
                          const th_tensor *input_gates,
                          const th_tensor *hidden_gates,
                          const th_tensor *h_prev);
int thnn_gru_cell_backward(th_tensor *grad_input_gates,
                           th_tensor *grad_hidden_gates,
                           th_tensor *grad_h_prev, const th_tensor *grad_h,
                           const th_tensor *save, const th_tensor *h_prev);
int thnn_rnn_cell_forward(th_tensor *h, const th_tensor *gates,
                          int nonlinearity);
int thnn_rnn_cell_backward(th_tensor *grad_gates, const th_tensor *grad_h,
                           const th_tensor *h, int nonlinearity);

#ifdef __cplusplus
}
#endif

#endif /* THNN_H */
