"""The autocast policy: what each operation does to its floating inputs
inside an ``ember.autocast`` region, per device type.  ``POLICY`` is the
one table; ``ember.amp.dispatch`` applies it by name.  The rows of the
front's ops (ember._ops) are written below; a package that defines ops of
its own registers their rows with ``register`` when it is imported
(ember.nn declares each of its functions' classes beside the function),
before it wraps them.

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

# One row per op of the front (ember.<op>, Tensor.<op>): its class on
# CUDA, then on the CPU; "-": runs as it comes.
_TABLE = """
matmul                            lower    lower
mm                                lower    lower
bmm                               lower    lower
addmm                             lower    lower
addbmm                            lower    lower
baddbmm                           lower    lower
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

addcdiv                           widest   -
addcmul                           widest   -
atan2                             widest   -
cross                             widest   -
dot                               widest   -
index_put                         widest   -
scatter_add                       widest   -
tensordot                         widest   -
inner                             widest   native

logit                             native   native
xlogy                             native   native
logaddexp                         native   native
logaddexp2                        native   native
logcumsumexp                      native   native
vdot                              native   native
"""


_KINDS = {"-": None, None: None, LOWER: LOWER, FP32: FP32, WIDEST: WIDEST, NATIVE: NATIVE,
          INPUT_DTYPE: INPUT_DTYPE, BANNED: BANNED}


def _parse(text):
    table = {}
    for line in text.split("\n"):
        if line.strip():
            name, cuda, cpu = line.split()
            if name in table:
                raise RuntimeError(f"autocast policy: {name!r} is listed twice")
            table[name] = (_KINDS[cuda], _KINDS[cpu])
    return table


#: name -> (class on CUDA, class on the CPU); None: runs as it comes
POLICY = _parse(_TABLE)


#: name -> what a BANNED op raises (a package gives it with its row)
BANNED_MESSAGES = {}


def register(name, cuda, cpu, banned_message=None):
    """Adds the row of op `name`: its class on CUDA and on the CPU (LOWER,
    FP32, WIDEST, NATIVE, INPUT_DTYPE, BANNED, or None: runs as it comes),
    and for BANNED the RuntimeError's message.  Ops read their row when
    they are wrapped, so register first.  The same row again is a no-op (a
    module imported twice); another row for a name already listed raises."""
    if banned_message is not None:
        BANNED_MESSAGES[name] = banned_message
    try:
        rule = (_KINDS[cuda], _KINDS[cpu])
    except (KeyError, TypeError):
        raise ValueError(f"autocast policy: unknown class in ({cuda!r}, {cpu!r}) for "
                         f"{name!r}") from None
    known = POLICY.get(name)
    if known is not None and known != rule:
        raise RuntimeError(f"autocast policy: {name!r} is already listed as {known}")
    if rule != (None, None):
        POLICY[name] = rule
