"""Readers check the sizes a file declares before allocating, against the file and the read cap."""

from __future__ import annotations

import pytest

import ahbm.io
from ahbm._validation import DEFAULT_MAX_READ_BYTES, check_read_size
from ahbm.errors import DataError, FileFormatError


@pytest.fixture
def small_cap():
    previous = ahbm.io.set_max_read_bytes(1_000_000)
    yield 1_000_000
    ahbm.io.set_max_read_bytes(previous)


def test_read_cap_default_setting_and_environment(monkeypatch):
    monkeypatch.delenv("AHBM_MAX_READ_BYTES", raising=False)
    assert ahbm.io.max_read_bytes() == DEFAULT_MAX_READ_BYTES == 2 * 2**30
    monkeypatch.setenv("AHBM_MAX_READ_BYTES", "12345")
    assert ahbm.io.max_read_bytes() == 12345
    previous = ahbm.io.set_max_read_bytes(777)
    try:
        assert previous is None and ahbm.io.max_read_bytes() == 777  # the setting wins
    finally:
        ahbm.io.set_max_read_bytes(previous)
    assert ahbm.io.max_read_bytes() == 12345
    monkeypatch.setenv("AHBM_MAX_READ_BYTES", "lots")
    with pytest.raises(DataError, match="AHBM_MAX_READ_BYTES"):
        ahbm.io.max_read_bytes()
    for bad in (0, -1, 1.5, "2GB", True):
        with pytest.raises(DataError, match="nbytes"):
            ahbm.io.set_max_read_bytes(bad)


def test_check_read_size_names_the_file_what_and_how_to_raise_the_cap(small_cap):
    assert check_read_size(small_cap, "x", "file 'a'") == small_cap
    with pytest.raises(FileFormatError) as info:
        check_read_size(10**30, "10**29 frames", "C3D file 'a.c3d'")
    text = str(info.value)
    assert "C3D file 'a.c3d'" in text and "10**29 frames" in text
    assert "set_max_read_bytes" in text and "AHBM_MAX_READ_BYTES" in text
