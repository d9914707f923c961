from conftest import expect_ok, launch


def test_ddp_equals_one_process_on_the_concatenated_batch():
    expect_ok(launch("ddp.py", 2, timeout=240), 2)
