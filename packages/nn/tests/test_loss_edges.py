"""Every loss's value and gradients at the edges of its domain (log(0),
targets exactly 0 or 1, zero distances, the huber / smooth_l1 boundary,
all-ignored nll, saturated logits, ...) against PyTorch 2.13's numbers,
recorded below; with torch installed the same cases also run live."""
import math
import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as F

from conftest import torch

# (name, expression): F is the functional module, L(values) an int64 tensor and
# t(values, requires_grad) a float64 tensor
CASES = [
    ("bce_saturated",
     'F.binary_cross_entropy(t([1., 0., .5, 1.], 1), t([0., 1., 1., 1.]))'),
    ("bce_weight_sum",
     'F.binary_cross_entropy(t([1., 0., .5, 1.], 1), t([0., 1., 1., 1.]), weight=t([1., 2., '
     '3., 4.]), reduction="sum")'),
    ("bce_target_grad",
     'F.binary_cross_entropy(t([.3, 0., 1., .5]), t([.2, .5, .5, 1.], 1))'),
    ("bce_tiny_input",
     'F.binary_cross_entropy(t([1e-30, 1 - 1e-7], 1), t([1., 0.]), reduction="none").sum()'),
    ("bce_logits_pos_weight",
     'F.binary_cross_entropy_with_logits(t([100., -100., 0., 30.], 1), t([0., 1., 1., 1.]), '
     'pos_weight=t([2., 2., 2., 2.]))'),
    ("bce_logits_zero",
     'F.binary_cross_entropy_with_logits(t([0., 0.], 1), t([1., 0.]))'),
    ("mse_zero_residual",
     'F.mse_loss(t([1., 2.], 1), t([1., 2.]))'),
    ("l1_zero_residual",
     'F.l1_loss(t([1., 2.], 1), t([1., 3.]))'),
    ("smooth_l1_at_beta",
     'F.smooth_l1_loss(t([0., 1., 2., -1.], 1), t([1., 1., 0., 0.]), beta=1.0)'),
    ("smooth_l1_beta0",
     'F.smooth_l1_loss(t([0., 1., 2.], 1), t([0., 1., 0.]), beta=0.0)'),
    ("huber_at_delta",
     'F.huber_loss(t([0., 1., 2., -1.5], 1), t([1., 1., 0., 0.]), delta=1.0)'),
    ("huber_at_delta2",
     'F.huber_loss(t([0., 3., 2., -1.5], 1), t([2., 1., 0., 0.]), delta=2.0)'),
    ("nll_ignore_index",
     'F.nll_loss(t([[-1., -2.], [-.5, -3.]], 1), L([1, -100]))'),
    ("nll_all_ignored",
     'F.nll_loss(t([[-1., -2.], [-.5, -3.]], 1), L([-100, -100]))'),
    ("ce_all_ignored",
     'F.cross_entropy(t([[1., 2.], [.5, 3.]], 1), L([-100, -100]))'),
    ("ce_all_ignored_smoothing",
     'F.cross_entropy(t([[1., 2.], [.5, 3.]], 1), L([-100, -100]), label_smoothing=0.2)'),
    ("ce_zero_class_weights",
     'F.cross_entropy(t([[1., 2.], [.5, 3.]], 1), L([1, 0]), weight=t([0., 0.]))'),
    ("ce_ignore_smoothing",
     'F.cross_entropy(t([[1., 2.], [.5, 3.]], 1), L([1, -100]), label_smoothing=0.1)'),
    ("ce_prob_target_zeros",
     'F.cross_entropy(t([[1., 2.], [.5, 3.]], 1), t([[0., 1.], [1., 0.]]))'),
    ("nll_of_saturated_log_softmax",
     'F.nll_loss(F.log_softmax(t([[1000., 0.], [-1000., 0.]], 1), 1), L([1, 0]))'),
    ("kl_div_zero_target",
     'F.kl_div(t([-1., -2., -.5], 1), t([0., .5, .5], 1), reduction="sum")'),
    ("kl_div_log_target_inf",
     'F.kl_div(t([-1., -2., -.5], 1), t([-float("inf"), -.5, -1.], 1), reduction="sum", '
     'log_target=True)'),
    ("poisson_log_input",
     'F.poisson_nll_loss(t([0., 1., -2.], 1), t([0., 1., 3.]), log_input=True, full=True)'),
    ("poisson_zero_rate",
     'F.poisson_nll_loss(t([0., 1., 2.], 1), t([0., 1., 3.]), log_input=False, full=True)'),
    ("gaussian_nll_var_clamp",
     'F.gaussian_nll_loss(t([0., 1., 2.], 1), t([0., 1., 3.]), t([0., 1e-9, 1.], 1), '
     'full=True)'),
    ("cosine_embedding_zero_vector",
     'F.cosine_embedding_loss(t([[0., 0.], [1., 0.]], 1), t([[1., 0.], [1., 0.]], 1), t([1., '
     '-1.]))'),
    ("cosine_similarity_zero_vector",
     'F.cosine_similarity(t([[0., 0.], [1., 0.]], 1), t([[1., 0.], [1., 0.]], 1)).sum()'),
    ("pairwise_distance_zero",
     'F.pairwise_distance(t([[1., 2.], [0., 0.]], 1), t([[1., 2.], [0., 0.]], 1)).sum()'),
    ("triplet_all_equal",
     'F.triplet_margin_loss(t([[1., 2.]], 1), t([[1., 2.]], 1), t([[1., 2.]], 1))'),
    ("triplet_swap",
     'F.triplet_margin_loss(t([[1., 2.]], 1), t([[1., 2.]], 1), t([[3., 2.]], 1), swap=True)'),
    ("margin_ranking_at_margin",
     'F.margin_ranking_loss(t([1., 2.], 1), t([1., 1.], 1), t([1., -1.]))'),
    ("hinge_embedding_at_margin",
     'F.hinge_embedding_loss(t([1., .5], 1), t([-1., -1.]))'),
    ("soft_margin_large",
     'F.soft_margin_loss(t([100., -100.], 1), t([-1., -1.]))'),
    ("soft_margin_zero",
     'F.soft_margin_loss(t([0., 0.], 1), t([1., -1.]))'),
    ("multi_margin_at_margin",
     'F.multi_margin_loss(t([[1., 0., 0.]], 1), L([0]))'),
    ("multilabel_margin_at_margin",
     'F.multilabel_margin_loss(t([[1., 0., 0.]], 1), L([[0, -1, 1]]))'),
    ("multilabel_soft_margin_saturated",
     'F.multilabel_soft_margin_loss(t([[100., -100., 0.]], 1), t([[0., 1., 1.]]))'),
    ("logsigmoid_edges",
     'F.logsigmoid(t([-1000., 1000., 0.], 1)).sum()'),
    ("softplus_edges",
     'F.softplus(t([0., -30., 30., 25.], 1)).sum()'),
    ("normalize_zero_row",
     'F.normalize(t([[0., 0.], [3., 4.]], 1)).sum()'),
    ("triplet_distance_fn_zero",
     'F.triplet_margin_with_distance_loss(t([[1., 2.]], 1), t([[1., 2.]], 1), '
     't([[1., 2.]], 1))'),
    ("multi_margin_p2_at_margin",
     'F.multi_margin_loss(t([[1., 0., 0.5]], 1), L([0]), p=2)'),
    ("gaussian_nll_var_at_eps",
     'F.gaussian_nll_loss(t([0., 1.], 1), t([1., 1.]), t([1e-6, 1e-6], 1))'),
    ("huber_none_at_delta",
     'F.huber_loss(t([1., -1., 0.5], 1), t([0., 0., 0.]), reduction="none", '
     'delta=1.0).sum()'),
]


def evaluate(lib, F, expr):
    """(loss, [grad of each leaf]) in float64."""
    leaves = []

    def t(v, requires_grad=0):
        a = lib.tensor(v, dtype=lib.float64, requires_grad=bool(requires_grad))
        if requires_grad:
            leaves.append(a)
        return a

    out = eval(expr, {"F": F, "L": lambda v: lib.tensor(v, dtype=lib.int64), "t": t,
                      "inf": float("inf")})
    out.backward()
    return float(out.detach()), [a.grad.detach().numpy().tolist() for a in leaves]


inf, nan = math.inf, math.nan
# PyTorch 2.13 (CPU, float64): (loss, [gradient of each leaf])
TORCH_2_13 = {
    "bce_saturated": (50.17328679513999, [[250000000998.9507, -250000000998.9507, -0.5, 0.0]]),
    "bce_weight_sum": (302.07944154167984, [[1000000003995.8029, -2000000007991.6057, -6.0, 0.0]]),
    "bce_target_grad": (25.30482042414403, [[0.2118244650968009, inf, -inf, -0.0]]),
    "bce_tiny_input": (85.19564844130605, [[-1000000003995.8029, 10000000.005263558]]),
    "bce_logits_pos_weight": (75.34657359028002, [[0.25, -0.5, -0.25, -4.674038933671909e-14]]),
    "bce_logits_zero": (0.6931471805599453, [[-0.25, 0.25]]),
    "mse_zero_residual": (0.0, [[0.0, 0.0]]),
    "l1_zero_residual": (0.5, [[0.0, -0.5]]),
    "smooth_l1_at_beta": (0.625, [[-0.25, 0.0, 0.25, -0.25]]),
    "smooth_l1_beta0": (0.6666666666666666, [[0.0, 0.0, 0.3333333333333333]]),
    "huber_at_delta": (0.75, [[-0.25, 0.0, 0.25, -0.25]]),
    "huber_at_delta2": (1.78125, [[-0.5, 0.5, 0.5, -0.375]]),
    "nll_ignore_index": (2.0, [[[0.0, -1.0], [0.0, 0.0]]]),
    "nll_all_ignored": (nan, [[[0.0, 0.0], [0.0, 0.0]]]),
    "ce_all_ignored": (nan, [[[0.0, 0.0], [0.0, 0.0]]]),
    "ce_all_ignored_smoothing": (nan, [[[0.0, 0.0], [0.0, 0.0]]]),
    "ce_zero_class_weights": (nan, [[[nan, nan], [nan, nan]]]),
    "ce_ignore_smoothing":
        (0.3632616875182229, [[[0.21894142136999512, -0.21894142136999517], [0.0, 0.0]]]),
    "ce_prob_target_zeros":
        (1.4460757109053863,
         [[[0.13447071068499755, -0.13447071068499755],
           [-0.4620709099893782, 0.4620709099893783]]]),
    "nll_of_saturated_log_softmax": (1000.0, [[[0.5, -0.5], [-0.5, 0.5]]]),
    "kl_div_zero_target":
        (0.5568528194400546, [[-0.0, -0.5, -0.5], [nan, 2.3068528194400546, 0.8068528194400547]]),
    "kl_div_log_target_inf":
        (nan,
         [[-0.0, -0.6065306597126334, -0.36787944117144233],
          [nan, 1.5163266492815834, 0.18393972058572117]]),
    "poisson_log_input":
        (3.539232885079571, [[0.3333333333333333, 0.5727606094863484, -0.9548882389211291]]),
    "poisson_zero_rate":
        (0.8948799922877404, [[0.3333333333333333, 3.3333332760676626e-09, -0.1666666641666667]]),
    "gaussian_nll_var_clamp":
        (-3.519564986116752,
         [[0.0, 0.0, -0.3333333333333333], [166666.66666666666, 166666.66666666666, 0.0]]),
    "cosine_embedding_zero_vector":
        (0.9999999999995,
         [[[-500000.0009987007, 0.0], [5.000444502911705e-13, 0.0]],
          [[0.0, 0.0], [5.000444502911705e-13, 0.0]]]),
    "cosine_similarity_zero_vector":
        (1.0, [[[100000000.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]]]),
    "pairwise_distance_zero":
        (2.82842712474619e-06,
         [[[0.7071067811865476, 0.7071067811865476], [0.7071067811865476, 0.7071067811865476]],
          [[-0.7071067811865476, -0.7071067811865476],
           [-0.7071067811865476, -0.7071067811865476]]]),
    "triplet_all_equal":
        (1.0,
         [[[0.0, 0.0]],
          [[-0.7071067811865476, -0.7071067811865476]],
          [[0.7071067811865476, 0.7071067811865476]]]),
    "triplet_swap": (0.0, [[[0.0, 0.0]], [[0.0, -0.0]], [[-0.0, 0.0]]]),
    "margin_ranking_at_margin": (0.5, [[-0.5, 0.5], [0.5, -0.5]]),
    "hinge_embedding_at_margin": (0.25, [[-0.5, -0.5]]),
    "soft_margin_large": (50.0, [[0.5, 1.860037988010418e-44]]),
    "soft_margin_zero": (0.6931471805599453, [[-0.25, 0.25]]),
    "multi_margin_at_margin": (0.0, [[[0.0, 0.0, 0.0]]]),
    "multilabel_margin_at_margin": (0.0, [[[0.0, 0.0, 0.0]]]),
    "multilabel_soft_margin_saturated":
        (66.89771572685332, [[[0.3333333333333333, -0.3333333333333333, -0.16666666666666666]]]),
    "logsigmoid_edges": (-1000.6931471805599, [[1.0, 0.0, 0.5]]),
    "softplus_edges": (55.69314718056004, [[0.5, 9.3576229688393e-14, 1.0, 1.0]]),
    "normalize_zero_row":
        (1.4, [[[1000000000000.0, 1000000000000.0], [0.032, -0.02400000000000002]]]),
    "triplet_distance_fn_zero":
        (1.0,
         [[[0.0, 0.0]],
          [[-0.7071067811865476, -0.7071067811865476]],
          [[0.7071067811865476, 0.7071067811865476]]]),
    "multi_margin_p2_at_margin":
        (0.08333333333333333, [[[-0.3333333333333333, 0.0, 0.3333333333333333]]]),
    "gaussian_nll_var_at_eps":
        (249993.09224472102, [[-500000.0, 0.0], [-249999750000.0, 250000.0]]),
    "huber_none_at_delta": (1.125, [[1.0, -1.0, 0.5]]),
}


def _close(a, b):
    return np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-6,
                       atol=1e-9, equal_nan=True)


@pytest.mark.parametrize("name,expr", CASES, ids=[c[0] for c in CASES])
def test_loss_edge_matches_pytorch(name, expr):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loss, grads = evaluate(ember, F, expr)
    want_loss, want_grads = TORCH_2_13[name]
    assert _close(loss, want_loss), (loss, want_loss)
    assert len(grads) == len(want_grads)
    for g, w in zip(grads, want_grads):
        assert _close(g, w), (g, w)


@pytest.mark.skipif(torch is None, reason="needs torch")
@pytest.mark.parametrize("name,expr", CASES, ids=[c[0] for c in CASES])
def test_loss_edge_live(name, expr):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loss, grads = evaluate(ember, F, expr)
        want_loss, want_grads = evaluate(torch, torch.nn.functional, expr)
    assert _close(loss, want_loss)
    for g, w in zip(grads, want_grads):
        assert _close(g, w), (g, w)


def test_bce_saturated_float32_is_finite():
    # a saturated sigmoid into BCELoss: finite gradients in float32 as well
    x = ember.tensor([1.0, 0.0, 0.5, 1.0], requires_grad=True)
    loss = ember.nn.BCELoss()(x, ember.tensor([0.0, 1.0, 1.0, 1.0]))
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.5e11, -2.5e11, -0.5, 0.0], rtol=1e-6)


def test_bce_double_backward_is_finite():
    x = ember.tensor([0.2, 0.7], dtype=ember.float64, requires_grad=True)
    y = ember.tensor([0.0, 1.0], dtype=ember.float64)
    g, = ember.autograd.grad(F.binary_cross_entropy(x, y, reduction="sum"), x,
                             create_graph=True)
    h, = ember.autograd.grad(g.sum(), x)
    # d2/dx2 of -(y log x + (1 - y) log(1 - x))
    want = [1 / 0.8 ** 2, 1 / 0.7 ** 2]
    np.testing.assert_allclose(h.numpy(), want, rtol=1e-12)


def test_bce_input_out_of_range_is_refused():
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(ember.tensor([1.5]), ember.tensor([1.0]))
