"""Fixtures for the example tests: a private extension cache and the convnet
data file."""
import pytest

from example_helpers import load_example


@pytest.fixture
def extensions_dir(tmp_path, monkeypatch):
    """A private extension cache, so a test always builds from scratch."""
    d = tmp_path / "extensions"
    monkeypatch.setenv("EMBER_EXTENSIONS_DIR", str(d))
    return d


@pytest.fixture(scope="session")
def convnet_file(tmp_path_factory):
    pytest.importorskip("ember.nn", reason="the reference output needs ember-nn")
    pytest.importorskip("ember.thnn", reason="the convnet needs ember-thnn")
    data = load_example("c/convnet_data.py", "convnet_data")
    path = tmp_path_factory.mktemp("convnet") / "convnet.bin"
    data.write(path, data.make(seed=1, batch=3))
    return path
