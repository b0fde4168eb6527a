"""The fuzz harness classifies every kind of outcome (ok, AhbmError, raw, hang, crash, memory)."""

from __future__ import annotations

import os
import signal
import time

import numpy as np
import pytest
from fuzz_harness import (
    Case,
    assert_clean,
    flip_bits,
    mutate,
    run_cases,
    set_bytes,
    splice,
    truncate,
    write_int,
)

from ahbm.errors import FileFormatError


def behave(path):
    """A reader whose behaviour is the file's content (run in the harness's child)."""
    what = path.read_bytes().decode()
    if what == "ok":
        return 1
    if what == "ahbm":
        raise FileFormatError(f"damaged file '{path}'")
    if what == "ahbm-unnamed":
        raise FileFormatError("damaged file")
    if what == "raw":
        raise KeyError("boom")
    if what == "hang":
        time.sleep(60)
    if what == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    if what == "alloc":
        return np.ones(2**31)  # 16 GiB, beyond the memory limit
    if what == "touch":
        return float(np.ones(25_000_000).sum())  # 200 MB within the limit, beyond max_peak
    if what == "recursion":
        return behave_deep(0)
    if what == "bad-result":
        return -1
    raise AssertionError(what)


def behave_deep(n):
    return behave_deep(n + 1)


def positive(result):
    assert result > 0, f"result {result} is not positive"


def test_outcomes_are_classified_and_the_child_is_replaced():
    kinds = ["ok", "ahbm", "raw", "hang", "ok", "segv", "ahbm", "alloc", "recursion",
             "bad-result", "ahbm-unnamed", "ok", "touch"]  # fmt: skip
    cases = [Case(100 + i, k.encode(), ".txt", k) for i, k in enumerate(kinds)]
    report = run_cases(
        behave, cases, timeout=3.0, memory_limit=512 * 2**20, max_peak=100 * 2**20,
        check=positive, name_in_message=True,
    )  # fmt: skip
    got = [o.kind for o in report.outcomes]
    assert got == [
        "ok", "ahbm", "raw", "hang", "ok", "crash", "ahbm", "raw", "raw", "invalid", "unnamed",
        "ok", "memory",
    ]  # fmt: skip
    by_note = {o.note: o for o in report.outcomes}
    assert by_note["raw"].error_type == "KeyError"
    assert by_note["segv"].error_type == "SIGSEGV"
    assert by_note["alloc"].error_type == "MemoryError"
    assert by_note["recursion"].error_type == "RecursionError"
    assert report.counts() == {
        "ok": 3, "ahbm": 2, "raw": 3, "hang": 1, "crash": 1, "invalid": 1, "unnamed": 1,
        "memory": 1,
    }  # fmt: skip
    assert by_note["touch"].peak > 190e6 and 0 <= by_note["ok"].peak < 50e6
    with pytest.raises(AssertionError) as info:
        assert_clean(report, what="demo")
    text = str(info.value)
    for seed in (102, 103, 105, 107, 108, 109, 110, 112):
        assert str(seed) in text
    assert "100," not in text and "seeds 101" not in text  # passes are not listed


def test_clean_report_passes_and_objects_can_be_passed():
    cases = [Case(i, b"ok") for i in range(5)]
    report = run_cases(behave, cases, timeout=30.0)
    assert_clean(report)
    assert report.counts()["ok"] == 5


def test_mutators_are_reproducible_and_stay_in_region():
    raw = bytes(range(256)) * 4
    for fn in (flip_bits, set_bytes, truncate, splice, mutate):
        a = fn(raw, np.random.default_rng(3))
        b = fn(raw, np.random.default_rng(3))
        assert a == b and isinstance(a[1], str)
    out, _ = flip_bits(raw, np.random.default_rng(0), n=4, region=(10, 20))
    diff = [i for i in range(len(raw)) if out[i] != raw[i]]
    assert diff and all(10 <= i < 20 for i in diff)
    out, note = write_int(raw, np.random.default_rng(0), 8, 2, value=65535)
    assert out[8:10] == b"\xff\xff" and out[:8] == raw[:8] and "65535" in note
