"""ember-vision train --nproc 2: DDP + DistributedSampler reach one
process's test accuracy on digits; rank 0 alone prints and writes."""
import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("ember.vision")


def train(out, *extra):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    p = subprocess.run([sys.executable, "-m", "ember.vision.train", "--out", str(out), *extra],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=240,
                       env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


def accuracy(printed):
    found = re.findall(r"final test accuracy ([\d.]+)%", printed)
    assert len(found) == 1, printed            # printed by rank 0 alone
    return float(found[0])


def test_two_processes_reach_one_process_accuracy(tmp_path):
    one = train(tmp_path / "one", "--threads", "1")
    two = train(tmp_path / "two", "--nproc", "2")
    assert "2 processes" in two
    assert two.count("epoch 15/15: train loss") == 1
    assert abs(accuracy(one) - accuracy(two)) <= 1.0, (one, two)
    assert accuracy(two) > 95
    assert sorted(os.listdir(tmp_path / "two")) == ["checkpoint.pt", "report.png"]
    import ember
    state = ember.load(tmp_path / "two" / "checkpoint.pt")
    # the wrapped model's keys, loadable into a model without DDP
    assert not any(k.startswith("module.") for k in state["model"])


def test_batch_must_split_over_the_processes(tmp_path):
    p = subprocess.run([sys.executable, "-m", "ember.vision.train", "--out", str(tmp_path),
                        "--nproc", "2", "--batch-size", "33", "--epochs", "1"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    assert p.returncode != 0
    assert "--batch-size 33 does not split over 2 processes" in p.stdout, p.stdout
