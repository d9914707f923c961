import pytest

from conftest import expect_ok, launch


@pytest.mark.parametrize("nproc", [2, 4])
def test_every_collective_every_dtype(nproc):
    expect_ok(launch("collectives.py", nproc, timeout=240), nproc)
