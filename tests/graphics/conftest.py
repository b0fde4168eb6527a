"""Headless set-up for the graphics tests: Agg backend, no plt.show, figures closed."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _headless(monkeypatch):
    """Fail any call to plt.show(); close every figure after each test."""

    def _no_show(*args, **kwargs):
        raise AssertionError("ahbm.graphics must never call plt.show()")

    monkeypatch.setattr(plt, "show", _no_show)
    monkeypatch.setattr(matplotlib.figure.Figure, "show", _no_show)
    yield
    plt.close("all")
    assert plt.get_fignums() == []
