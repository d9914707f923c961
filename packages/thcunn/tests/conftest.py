import pytest

import ember.thc as thc


def pytest_collection_modifyitems(config, items):
    if thc.device_count() > 0:
        return
    skip = pytest.mark.skip(reason=f"no CUDA device (nor libTHC's emulated device): "
                                   f"{thc.cuda_error_text()}")
    for item in items:
        if "needs_device" in item.keywords:
            item.add_marker(skip)


def pytest_configure(config):
    config.addinivalue_line("markers", "needs_device: runs on a GPU or the emulated device")
