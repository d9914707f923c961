import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device (skipped without one)")


def pytest_collection_modifyitems(config, items):
    import ember.thc as thc
    if thc.device_count() > 0:
        return
    skip = pytest.mark.skip(reason=f"no CUDA device: {thc.cuda_error_text()}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
