"""Random numbers from a seedable, counter-based (Philox) generator:
Generator, manual_seed, rand/randn/randint/randperm, normal, bernoulli,
multinomial and the in-place samplers (uniform_, normal_, ...)."""
import numbers

from ._binding import PhiloxGenerator, randint_args
from ._core import Tensor, _DTYPES, dtype_code, parse_shape, wrap
from ._lib import NULL, check, ffi, lib

_functions = {}


class Generator(PhiloxGenerator):
    """A random generator: a 64-bit seed and a Philox counter offset."""

    __slots__ = ("_g", "_owned", "_initial_seed")
    _set_seed = lib.th_generator_set_seed

    def __init__(self, device="cpu"):
        if str(device) not in ("cpu", "cpu:0"):
            raise RuntimeError(f"ember.th generators are CPU generators, got device {device}")
        self._g = ffi.gc(lib.th_generator_new(67280421310721), lib.th_generator_free)
        self._initial_seed = 67280421310721

    @classmethod
    def _wrap_default(cls):
        g = object.__new__(cls)
        g._g = lib.th_default_generator()
        g._initial_seed = 67280421310721
        return g

    @property
    def device(self):
        return "cpu"


default_generator = Generator._wrap_default()


def _gen(generator):
    if generator is None:
        return NULL
    if not isinstance(generator, Generator):   # another device's generator
        found = str(getattr(generator, "device", type(generator).__name__)).split(":")[0]
        raise RuntimeError(f"Expected a 'cpu' device type for generator but found '{found}'")
    return generator._g


def manual_seed(seed):
    return default_generator.manual_seed(seed)


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


def _empty(size, dtype, default):
    s = parse_shape(size)
    from ._core import int64_array
    return wrap(lib.th_empty(len(s), int64_array(s), dtype_code(dtype, default)))


def _float_default():
    return lib.th_get_default_dtype()


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False, out=None):
    t = _empty(size, dtype, _float_default())
    check(lib.th_uniform_(t._p, 0.0, 1.0, _gen(generator)))
    return t


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False, out=None):
    t = _empty(size, dtype, _float_default())
    check(lib.th_normal_(t._p, 0.0, 1.0, _gen(generator)))
    return t


def randint(*args, size=None, generator=None, dtype=None, device=None, requires_grad=False):
    """randint(high, size) or randint(low, high, size)."""
    low, high, size = randint_args(args, size)
    t = _empty(size, dtype, lib.TH_INT64)
    check(lib.th_randint_(t._p, int(low), int(high), _gen(generator)))
    return t


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    return wrap(lib.th_randperm(int(n), dtype_code(dtype, lib.TH_INT64), _gen(generator)))


def rand_like(input, *, dtype=None, **kw):
    return rand(input.shape, dtype=dtype or input.dtype)


def randn_like(input, *, dtype=None, **kw):
    return randn(input.shape, dtype=dtype or input.dtype)


def randint_like(input, low=0, high=None, *, dtype=None, **kw):
    if high is None:
        low, high = 0, low
    return randint(low, high, input.shape, dtype=dtype or input.dtype)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, out=None):
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        from ._core import scalar_tensor
        ref = mean if isinstance(mean, Tensor) else std
        m = mean if isinstance(mean, Tensor) else scalar_tensor(float(mean), ref.dtype)
        s = std if isinstance(std, Tensor) else scalar_tensor(float(std), ref.dtype)
        from ._views import broadcast_shapes
        t = _empty(broadcast_shapes(m.shape, s.shape), dtype or ref.dtype, _float_default())
        check(lib.th_normal_tensor_(t._p, m._p, s._p, _gen(generator)))
        return t
    if size is None:
        raise TypeError("normal() with float mean and std needs a size")
    t = _empty(size, dtype, _float_default())
    check(lib.th_normal_(t._p, float(mean), float(std), _gen(generator)))
    return t


def bernoulli(input, p=None, *, generator=None, out=None):
    t = wrap(lib.th_empty(input.ndim, input._p.sizes, input._p.dtype))
    if p is None:
        check(lib.th_bernoulli_(t._p, input._p, 0.0, _gen(generator)))
    else:
        check(lib.th_bernoulli_(t._p, NULL, float(p), _gen(generator)))
    return t


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    return wrap(lib.th_multinomial(input._p, int(num_samples), bool(replacement), _gen(generator)))


for _f in (manual_seed, seed, initial_seed, get_rng_state, set_rng_state, rand, randn, randint,
           randperm, rand_like, randn_like, randint_like, normal, bernoulli, multinomial):
    _functions[_f.__name__] = _f
_functions["Generator"] = Generator
_functions["default_generator"] = default_generator


# ---- in-place samplers -------------------------------------------------
def uniform_(self, from_=0.0, to=1.0, *, generator=None, **kw):
    from_ = kw.pop("from", from_)
    check(lib.th_uniform_(self._p, float(from_), float(to), _gen(generator)))
    return self


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    check(lib.th_normal_(self._p, float(mean), float(std), _gen(generator)))
    return self


def bernoulli_(self, p=0.5, *, generator=None):
    if isinstance(p, Tensor):
        check(lib.th_bernoulli_(self._p, p._p, 0.0, _gen(generator)))
    else:
        check(lib.th_bernoulli_(self._p, NULL, float(p), _gen(generator)))
    return self


def random_(self, from_=0, to=None, *, generator=None, **kw):
    from_ = kw.pop("from", from_)
    if to is None:
        if from_ == 0 and not kw:
            to = 1 << 24 if self.dtype.is_floating_point or self.dtype.is_complex \
                else _max_for(self.dtype)  # complex: libTH refuses it
        else:
            from_, to = 0, from_
    check(lib.th_randint_(self._p, int(from_), int(to), _gen(generator)))
    return self


def _max_for(d):
    return {"int8": 1 << 7, "uint8": 1 << 8, "int16": 1 << 15, "int32": 1 << 31,
            "int64": (1 << 63) - 1, "bool": 2}[d.name]


Tensor.uniform_ = uniform_
Tensor.normal_ = normal_
Tensor.bernoulli_ = bernoulli_
Tensor.random_ = random_
Tensor.bernoulli = lambda self, p=None, *, generator=None: bernoulli(self, p, generator=generator)
Tensor.multinomial = multinomial

functions = _functions
