"""The LeNet example trains to high accuracy on its generated data."""
import importlib.util
import pathlib

import ember

EXAMPLE = pathlib.Path(__file__).parent.parent / "examples" / "lenet_mnist_like.py"


def test_lenet_example_converges(capsys):
    spec = importlib.util.spec_from_file_location("lenet_mnist_like", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    threads = ember.get_num_threads()
    ember.set_num_threads(1)  # small GEMMs: one thread is faster, and immune to a busy machine
    try:
        acc = module.main(["--epochs", "2", "--train", "1024", "--test", "300", "--quiet"])
    finally:
        ember.set_num_threads(threads)
    assert acc > 0.8
    assert "final test accuracy" in capsys.readouterr().out
