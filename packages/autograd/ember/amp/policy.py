"""The autocast policy: what each operation does to its floating inputs
inside an ``ember.autocast`` region, per device type.  This is the one
table; ``ember.amp.dispatch`` applies it to the ops of the
front (ember._ops) and of ember.nn.functional by name.

The classes, after PyTorch's AMP lists (written here by name, per device):

- LOWER: matrix products and convolutions run in the region's dtype
  (float16 on CUDA, bfloat16 on the CPU by default): fast, and their sums
  are accumulated wider by the kernels anyway;
- FP32: ops whose range or precision matters (exp/log/pow, reductions,
  softmax, norms, losses) run in float32; an explicit ``dtype=`` argument
  wins (as PyTorch's sum/softmax/cumsum);
- WIDEST: ops that need one dtype among their tensors run in the widest
  floating dtype of them (CUDA only, as PyTorch);
- NATIVE: Ember-specific.  Ops that are one kernel in PyTorch but are
  composed of other ops here (elu of expm1, logaddexp of exp and log, ...):
  they run on their inputs as they come, as one unit, with no autocast
  inside (else their exp/log would run in float32 on CUDA, which
  PyTorch's kernel does not);
- INPUT_DTYPE: Ember-specific.  As NATIVE, and the floating result has the
  input's dtype: norms whose input is low precision and whose weights are
  float32 (PyTorch's kernels take that mix and return the input's dtype;
  Ember computes in the wider dtype and casts back);
- BANNED: raises (binary_cross_entropy on CUDA: unsafe in float16).

Ops not named here run on their inputs as they come; Ember's type
promotion widens mixed-dtype element-wise ops (float16 + float32 is
float32).  Only floating tensors on the region's device are cast, and
never float64 ones.
"""

LOWER = "lower"
FP32 = "float32"
WIDEST = "widest"
NATIVE = "native"
INPUT_DTYPE = "input"
BANNED = "banned"

# One row per op (ember.<op>, Tensor.<op>, ember.nn.functional.<op>): its
# class on CUDA, then on the CPU; "-": runs as it comes.
_TABLE = """
matmul                            lower    lower
mm                                lower    lower
bmm                               lower    lower
addmm                             lower    lower
addbmm                            lower    lower
baddbmm                           lower    lower
linear                            lower    lower
conv1d                            lower    lower
conv2d                            lower    lower
conv3d                            lower    lower
conv_transpose1d                  lower    lower
conv_transpose2d                  lower    lower
conv_transpose3d                  lower    lower
scaled_dot_product_attention      lower    lower
mv                                lower    -
addmv                             lower    -
addr                              lower    -
einsum                            lower    -

acos                              float32  -
asin                              float32  -
cosh                              float32  -
sinh                              float32  -
tan                               float32  -
erfinv                            float32  -
exp                               float32  -
expm1                             float32  -
log                               float32  -
log10                             float32  -
log2                              float32  -
log1p                             float32  -
reciprocal                        float32  -
rsqrt                             float32  -
pow                               float32  -
__rtruediv__                      float32  -
softplus                          float32  native
softmax                           float32  -
log_softmax                       float32  -
logsumexp                         float32  -
sum                               float32  -
prod                              float32  float32
cumsum                            float32  -
cumprod                           float32  -
norm                              float32  -
dist                              float32  -
cdist                             float32  float32
trace                             native   float32
layer_norm                        float32  input
group_norm                        float32  input
cosine_similarity                 float32  -
mse_loss                          float32  float32
l1_loss                           float32  float32
smooth_l1_loss                    float32  float32
huber_loss                        float32  float32
nll_loss                          float32  float32
cross_entropy                     float32  float32
kl_div                            float32  float32
binary_cross_entropy_with_logits  float32  float32
poisson_nll_loss                  float32  float32
cosine_embedding_loss             float32  float32
hinge_embedding_loss              float32  float32
margin_ranking_loss               float32  float32
soft_margin_loss                  float32  float32
triplet_margin_loss               float32  float32
multi_margin_loss                 float32  float32
multilabel_margin_loss            float32  float32
binary_cross_entropy              banned   float32
avg_pool3d                        native   float32
max_pool3d                        native   float32
adaptive_avg_pool3d               native   float32
adaptive_max_pool3d               native   float32
max_unpool1d                      native   float32
max_unpool2d                      native   float32
max_unpool3d                      native   float32

addcdiv                           widest   -
addcmul                           widest   -
atan2                             widest   -
bilinear                          widest   -
cross                             widest   -
dot                               widest   -
index_put                         widest   -
scatter_add                       widest   -
tensordot                         widest   -
inner                             widest   native

avg_pool1d                        native   native
avg_pool2d                        native   native
adaptive_avg_pool1d               native   native
adaptive_avg_pool2d               native   native
embedding_bag                     native   native
elu                               native   native
celu                              native   native
selu                              native   native
mish                              native   native
logsigmoid                        native   native
logit                             native   native
xlogy                             native   native
logaddexp                         native   native
logaddexp2                        native   native
logcumsumexp                      native   native
vdot                              native   native
batch_norm                        input    input
instance_norm                     input    input
"""


def _parse(text):
    kinds = {"-": None, LOWER: LOWER, FP32: FP32, WIDEST: WIDEST, NATIVE: NATIVE,
             INPUT_DTYPE: INPUT_DTYPE, BANNED: BANNED}
    table = {}
    for line in text.split("\n"):
        if line.strip():
            name, cuda, cpu = line.split()
            if name in table:
                raise RuntimeError(f"autocast policy: {name!r} is listed twice")
            table[name] = (kinds[cuda], kinds[cpu])
    return table


#: name -> (class on CUDA, class on the CPU); None: runs as it comes
POLICY = _parse(_TABLE)
