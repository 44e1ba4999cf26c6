from ascend_lint.text import plural


def test_the_noun_agrees_with_the_count():
    assert plural(1, "specialisation") == "1 specialisation"
    assert plural(3, "kernel") == "3 kernels"
    assert plural(0, "file") == "0 files"
    assert plural(1, "hidden fix", "hidden fixes") == "1 hidden fix"
    assert plural(2, "hidden fix", "hidden fixes") == "2 hidden fixes"
    assert plural(12_345, "access", "accesses") == "12,345 accesses"


def test_ungrouped_counts_as_ruff_writes_them():
    assert plural(1440, "error", grouped=False) == "1440 errors"
