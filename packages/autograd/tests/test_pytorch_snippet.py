"""Ordinary PyTorch programs run unchanged after ``import ember as torch``
(and, where PyTorch is installed, give the same numbers)."""
import pytest

REGRESSION = '''
torch.manual_seed(0)
x = torch.linspace(-1, 1, 64).unsqueeze(1)
y = 3 * x - 0.5 + 0.1 * torch.sin(7 * x)
w = torch.zeros(1, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
lr = 0.1
for step in range(200):
    pred = x @ w + b
    loss = ((pred - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
        w.grad.zero_()
        b.grad.zero_()
result = (w.item(), b.item(), loss.item())
'''

CLASSIFIER = '''
x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.2, -0.3], [-0.7, 0.9, 0.1], [0.0, 1.0, 1.0]])
labels = torch.tensor([2, 0, 1, 1])
W = torch.zeros(3, 3, dtype=torch.float32).requires_grad_()
bias = torch.zeros(3, requires_grad=True)

@torch.no_grad()
def accuracy():
    return (torch.argmax(x @ W + bias, dim=1) == labels).float().mean().item()

for epoch in range(100):
    logits = x @ W + bias
    log_probs = torch.log_softmax(logits, dim=1)
    loss = -log_probs[torch.arange(4), labels].mean()
    gw, gb = torch.autograd.grad(loss, [W, bias])
    W.data -= 0.5 * gw
    bias.data.sub_(0.5 * gb)
probs = torch.softmax(x @ W + bias, dim=-1).detach()
result = (loss.item(), accuracy(), probs.sum(1).tolist(), probs.numpy().shape)
'''


def _run(program, module):
    scope = {"torch": module}
    exec(program, scope)
    return scope["result"]


@pytest.mark.parametrize("program", [REGRESSION, CLASSIFIER], ids=["regression", "classifier"])
def test_runs_as_torch(program):
    import ember as torch
    result = _run(program, torch)
    if program is REGRESSION:
        w, b, loss = result
        assert abs(w - 3) < 0.1 and abs(b + 0.5) < 0.05 and loss < 0.01
    else:
        loss, acc, sums, shape = result
        assert loss < 0.5 and acc == 1.0 and shape == (4, 3)
        assert all(abs(s - 1) < 1e-5 for s in sums)


@pytest.mark.parametrize("program", [REGRESSION, CLASSIFIER], ids=["regression", "classifier"])
def test_same_numbers_as_pytorch(program):
    torch = pytest.importorskip("torch", exc_type=ImportError)
    import ember
    ours, theirs = _run(program, ember), _run(program, torch)
    for a, b in zip(ours, theirs):
        assert a == b if isinstance(a, tuple) else a == pytest.approx(b, rel=1e-4, abs=1e-5)
