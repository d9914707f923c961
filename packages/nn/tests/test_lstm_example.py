"""The LSTM example learns the adding problem: its test error falls far
below that of predicting the mean sum."""
import importlib.util
import pathlib

import ember

EXAMPLE = pathlib.Path(__file__).parent.parent / "examples" / "lstm_toy.py"


def test_lstm_example_learns(capsys):
    spec = importlib.util.spec_from_file_location("lstm_toy", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    threads = ember.get_num_threads()
    ember.set_num_threads(1)  # small GEMMs: one thread is faster, and immune to a busy machine
    try:
        first, final = module.main(["--steps", "250", "--quiet"])
    finally:
        ember.set_num_threads(threads)
    assert final < first / 10
    assert final < 0.05  # predicting the mean scores about 0.167
    assert "after (predicting the mean" in capsys.readouterr().out
