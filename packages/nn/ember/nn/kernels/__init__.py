"""One declaration per NN kernel.

A layer whose compute may be a C kernel (convolution, pooling, norms,
cross-entropy, resampling, padding, embedding_bag, ...) is declared once,
as a class in this package's family module (conv, pool, norm, activation,
loss, resample, embedding).  The class is everything ember.nn, the
autocast policy and the kernel packages (ember.thnn on the CPU,
ember.thcunn on the GPU) need to know about the kernel:

- ``composed``: the reference implementation in ember ops.  It runs on any
  backend and is differentiable to any order; its signature is the
  kernel's contract (what ember.nn.functional passes, already validated
  and normalised, and what it gets back).
- the spec, by which ember.nn runs a kernel package's functions (the
  package is bound as ``k`` by ``specs_for``):

  - ``differentiable``: n -- the first n arguments are the tensors (or
    None) gradients flow to -- or a tuple of their positions;
  - ``forward(*raw_args) -> (outputs, ctx)``: the composed function's
    arguments with every ember Tensor replaced by its raw tensor; outputs
    is a raw tensor, or a tuple whose first element is the one
    differentiable output; NotImplemented for a case the kernels do not
    cover (the composed function runs instead).  Only the package's
    ``float_dtypes`` run on its kernels;
  - ``backward(ctx, grad, inputs, needs)``: one raw gradient per
    differentiable input (None where ``needs`` is False);
  - ``requires``: the package function the spec needs (default
    ``<name>_forward``);
  - ``recompute_args(args)``: the call's arguments as kept for the
    composed recomputation under double backward (default: as called).
- ``node``: PyTorch's name for the autograd node (what ``grad_fn`` shows).
- ``samples``: argument lists of the composed function (ember._ops.samples'
  S / T / Index) that tests/test_nn_kernels.py runs through the composed
  form, each kernel package and gradcheck / gradgradcheck.
- ``autocast``: ``(class on CUDA, class on the CPU)`` of the
  ember.nn.functional function of the same name under ``ember.autocast``
  (see ember.amp.policy), or None; registered with the policy here.

``COMPOSED`` maps every kernel name to its composed function;
``specs_for(provider)`` binds the declarations to a kernel package.
"""
from ember.amp import policy as _policy

__all__ = ["Kernel", "DECLARED", "COMPOSED", "specs_for"]

#: kernel name -> its declaration (the class)
DECLARED = {}


class Kernel:
    """Base of the declarations; a subclass defining ``composed`` declares
    the kernel of its class name."""
    name = None
    node = None
    autocast = None
    differentiable = 1
    requires = None
    recompute_args = None
    samples = ()
    k = None   # the kernel package, in the copies specs_for binds

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "composed" not in cls.__dict__:  # a shared base, or a copy bound by specs_for
            return
        name = cls.__name__
        if name in DECLARED:
            raise RuntimeError(f"NN kernel {name!r} is declared twice")
        cls.name = name
        DECLARED[name] = cls
        if cls.autocast is not None:
            _policy.register(name, *cls.autocast)

    @classmethod
    def floats(cls, *tensors):
        """Every tensor given (None: absent) has a dtype the package's kernels take."""
        return all(t is None or t.dtype in cls.k.float_dtypes for t in tensors)


def specs_for(provider):
    """{kernel name: spec} bound to `provider` (a kernel package's object),
    for the kernels whose functions it has."""
    out = {}
    for name, decl in DECLARED.items():
        if hasattr(provider, decl.requires or f"{name}_forward"):
            out[name] = type(name, (decl,), {"k": provider, "__module__": decl.__module__})
    return out


# the families (each declares its kernels on import)
from . import activation, conv, embedding, loss, norm, pool, resample  # noqa: E402,F401

#: kernel name -> its composed function
COMPOSED = {name: decl.composed for name, decl in DECLARED.items()}
