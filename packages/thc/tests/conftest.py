import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a real CUDA device (skipped without one, "
                                       "and on libTHC's emulated device)")


def pytest_collection_modifyitems(config, items):
    import ember.thc as thc
    if thc.device_count() > 0 and not thc.is_emulated():
        return
    reason = ("the emulated device is not a GPU" if thc.is_emulated()
              else f"no CUDA device: {thc.cuda_error_text()}")
    skip = pytest.mark.skip(reason=reason)
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
