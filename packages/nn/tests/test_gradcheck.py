"""Finite-difference checks (float64) of ember.nn.functional: first
derivatives for every op, second derivatives through conv, pooling, norms
and losses (everything here is composed of ember ops, so double backward
works)."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck


def T(*shape, scale=1.0, seed=0, positive=False):
    a = np.random.default_rng(seed + sum(shape)).standard_normal(shape) * scale
    if positive:
        a = np.abs(a) + 0.1
    return ember.from_numpy(a).requires_grad_()


def away_from_kinks(*shape, seed=0):
    """Inputs whose entries keep clear of the kinks at 0, ±1, ±3."""
    a = np.random.default_rng(seed).uniform(-4, 4, shape)
    for k in (-3, -1, 0, 1, 3):
        a = np.where(np.abs(a - k) < 0.1, a + 0.25, a)
    return ember.from_numpy(a).requires_grad_()


IDX = ember.tensor([2, 0, 3, 1, 2])
PROBS = ember.from_numpy(np.random.default_rng(3).dirichlet(np.ones(4), 5))

CASES = [
    ("linear", lambda x, w, b: F.linear(x, w, b), lambda: (T(3, 4), T(2, 4), T(2))),
    ("bilinear", F.bilinear, lambda: (T(3, 2), T(3, 4), T(5, 2, 4), T(5))),
    ("relu", F.relu, lambda: (away_from_kinks(3, 4),)),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.2), lambda: (away_from_kinks(3, 4),)),
    ("elu", lambda x: F.elu(x, 0.7), lambda: (away_from_kinks(3, 4),)),
    ("celu", lambda x: F.celu(x, 1.5), lambda: (away_from_kinks(3, 4),)),
    ("selu", F.selu, lambda: (away_from_kinks(3, 4),)),
    ("gelu", F.gelu, lambda: (T(3, 4),)),
    ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), lambda: (T(3, 4),)),
    ("silu", F.silu, lambda: (T(3, 4),)),
    ("softplus", lambda x: F.softplus(x, 2.0, 3.0), lambda: (away_from_kinks(3, 4),)),
    ("hardtanh", F.hardtanh, lambda: (away_from_kinks(3, 4),)),
    ("hardswish", F.hardswish, lambda: (away_from_kinks(3, 4),)),
    ("hardsigmoid", F.hardsigmoid, lambda: (away_from_kinks(3, 4),)),
    ("mish", F.mish, lambda: (T(3, 4, scale=3),)),
    ("logsigmoid", F.logsigmoid, lambda: (T(3, 4, scale=3),)),
    ("softsign", F.softsign, lambda: (away_from_kinks(3, 4),)),
    ("softmax", lambda x: F.softmax(x, 1), lambda: (T(3, 4),)),
    ("log_softmax", lambda x: F.log_softmax(x, 0), lambda: (T(3, 4),)),
    ("embedding", lambda w: F.embedding(IDX.view(5, 1), w), lambda: (T(4, 3),)),
    ("layer_norm", lambda x, w, b: F.layer_norm(x, (4,), w, b), lambda: (T(3, 4), T(4), T(4))),
    ("batch_norm", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
     lambda: (T(4, 3, 2), T(3), T(3))),
    ("conv2d", lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=1),
     lambda: (T(2, 2, 5, 4), T(3, 2, 3, 2), T(3))),
    ("conv2d_groups_dilation", lambda x, w: F.conv2d(x, w, groups=2, dilation=2),
     lambda: (T(1, 4, 5, 5), T(2, 2, 2, 2))),
    ("max_pool2d", lambda x: F.max_pool2d(x, 2, 1, ceil_mode=True), lambda: (T(1, 2, 4, 5),)),
    ("max_pool2d_pad", lambda x: F.max_pool2d(x, 3, 2, 1), lambda: (T(1, 1, 5, 5),)),
    ("avg_pool2d", lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
     lambda: (T(1, 2, 5, 5),)),
    ("conv1d", lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1, dilation=2),
     lambda: (T(2, 2, 7), T(3, 2, 2), T(3))),
    ("max_pool1d", lambda x: F.max_pool1d(x, 3, 2, 1), lambda: (T(2, 2, 7),)),
    ("avg_pool1d", lambda x: F.avg_pool1d(x, 2, ceil_mode=True), lambda: (T(2, 2, 7),)),
    ("adaptive_avg_pool2d", lambda x: F.adaptive_avg_pool2d(x, (3, 2)),
     lambda: (T(1, 2, 5, 5),)),
    ("adaptive_max_pool2d", lambda x: F.adaptive_max_pool2d(x, (2, 3)),
     lambda: (T(1, 2, 5, 4),)),
    ("group_norm", lambda x, w, b: F.group_norm(x, 2, w, b), lambda: (T(2, 4, 3), T(4), T(4))),
    ("instance_norm", lambda x: F.instance_norm(x), lambda: (T(2, 2, 3, 3),)),
    ("pad", lambda x: F.pad(x, (1, 2, -1, 1), value=0.5), lambda: (T(2, 3, 4),)),
    ("normalize", F.normalize, lambda: (T(3, 4),)),
    ("cosine_similarity", F.cosine_similarity, lambda: (T(3, 4), T(3, 4, seed=1))),
    ("mse_loss", F.mse_loss, lambda: (T(3, 4), T(3, 4, seed=1))),
    ("l1_loss", F.l1_loss, lambda: (T(3, 4), T(3, 4, seed=1))),
    ("smooth_l1_loss", lambda x, y: F.smooth_l1_loss(x, y, beta=0.5),
     lambda: (T(3, 4), T(3, 4, seed=1))),
    ("huber_loss", lambda x, y: F.huber_loss(x, y, delta=0.5),
     lambda: (T(3, 4), T(3, 4, seed=1))),
    ("nll_loss", lambda x, w: F.nll_loss(x, IDX, w), lambda: (T(5, 4), T(4, positive=True))),
    ("cross_entropy", lambda x: F.cross_entropy(x, IDX, label_smoothing=0.1, ignore_index=1),
     lambda: (T(5, 4),)),
    ("cross_entropy_probs", lambda x: F.cross_entropy(x, PROBS), lambda: (T(5, 4),)),
    ("binary_cross_entropy", lambda x: F.binary_cross_entropy(x.sigmoid(), PROBS),
     lambda: (T(5, 4),)),
    ("bce_with_logits", lambda x, pw: F.binary_cross_entropy_with_logits(x, PROBS,
                                                                         pos_weight=pw),
     lambda: (T(5, 4, scale=3), T(4, positive=True))),
    ("kl_div", lambda x: F.kl_div(x.log_softmax(1), PROBS, reduction="batchmean"),
     lambda: (T(5, 4),)),
]

SECOND_ORDER = {"conv2d", "conv2d_groups_dilation", "max_pool2d", "avg_pool2d", "layer_norm",
                "batch_norm", "cross_entropy", "bce_with_logits", "mse_loss", "gelu", "mish",
                "softplus", "nll_loss", "kl_div", "bilinear", "adaptive_avg_pool2d",
                "group_norm"}


@pytest.mark.parametrize("name,fn,make", CASES, ids=[c[0] for c in CASES])
def test_gradcheck(name, fn, make):
    assert gradcheck(fn, make(), eps=1e-6, atol=1e-5)


@pytest.mark.parametrize("name,fn,make", [c for c in CASES if c[0] in SECOND_ORDER],
                         ids=[c[0] for c in CASES if c[0] in SECOND_ORDER])
def test_gradgradcheck(name, fn, make):
    assert gradgradcheck(fn, make(), eps=1e-6, atol=1e-4)
