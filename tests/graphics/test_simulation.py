"""Tests of plot_simulation against a small synthetic result (the documented protocol)."""

from dataclasses import dataclass

import numpy as np
import pytest

from ahbm.errors import DataError
from ahbm.graphics import plot_simulation


@dataclass
class _Result:
    t: np.ndarray
    q: np.ndarray
    coordinate_names: list | None = None
    constraint_residuals: object = None
    energy: object = None


def _pendulum_result():
    """Small-angle pendulum: exact energy is constant; add a known drift."""
    t = np.linspace(0.0, 2.0, 51)
    th = 0.1 * np.cos(np.pi * t)
    q = np.c_[th, -th]
    kinetic = 0.5 * (0.1 * np.pi * np.sin(np.pi * t)) ** 2
    potential = 0.5 * np.pi**2 * th**2
    phi = np.c_[1e-9 * t, 2e-9 * t]
    return _Result(
        t,
        q,
        ["hip", "knee"],
        {"position": phi, "velocity": 1e-7 * np.ones(51)},
        {"kinetic": kinetic, "potential": potential, "total": kinetic + potential + 1e-4 * t},
    )


def test_panels_and_data():
    res = _pendulum_result()
    fig = plot_simulation(res)
    ax_q, ax_r, ax_e = fig.axes
    assert ax_q.get_shared_x_axes().joined(ax_q, ax_e)
    assert [ln.get_label() for ln in ax_q.lines] == ["hip", "knee"]
    np.testing.assert_array_equal(ax_q.lines[0].get_xdata(), res.t)
    np.testing.assert_array_equal(ax_q.lines[1].get_ydata(), res.q[:, 1])
    assert ax_r.get_yscale() == "log"
    pos = ax_r.lines[0]
    np.testing.assert_allclose(pos.get_ydata(), np.sqrt(5) * 1e-9 * res.t)
    np.testing.assert_allclose(ax_r.lines[1].get_ydata(), 1e-7)
    assert [ln.get_label() for ln in ax_e.lines] == ["kinetic", "potential", "total"]
    np.testing.assert_allclose(ax_e.lines[2].get_ydata(), res.energy["total"])
    assert "= 0.0002 J" in ax_e.get_title()


def test_mapping_result_selected_coordinates_in_degrees():
    t = np.linspace(0, 1, 11)
    q = np.c_[t, 2 * t, 3 * t]
    fig = plot_simulation({"t": t, "q": q}, coordinates=[2, 0], degrees=True)
    assert len(fig.axes) == 1
    (a, b) = fig.axes[0].lines
    np.testing.assert_allclose(a.get_ydata(), np.degrees(3 * t))
    np.testing.assert_allclose(b.get_ydata(), np.degrees(t))
    assert [a.get_label(), b.get_label()] == ["q2", "q0"]


def test_single_energy_array_reports_its_drift():
    t = np.linspace(0, 1, 11)
    fig = plot_simulation(_Result(t, np.zeros((11, 1)), energy=5.0 + 0.5 * t))
    assert "0.5 J" in fig.axes[1].get_title()


@pytest.mark.parametrize(
    ("result", "kwargs", "match"),
    [
        ({"q": np.zeros((3, 2))}, {}, "no `t`"),
        ({"t": np.zeros(3)}, {}, "no `q`"),
        ({"t": np.arange(3.0), "q": np.zeros((4, 2))}, {}, r"\(3, nq\)"),
        ({"t": np.arange(3.0), "q": np.zeros((3, 2)), "energy": np.zeros(4)}, {}, r"\(3,\)"),
        ({"t": np.arange(3.0), "q": np.zeros((3, 2))}, {"coordinates": ["x"]}, "'x' not in"),
        ({"t": np.arange(3.0), "q": np.zeros((3, 2))}, {"coordinates": [2]}, "outside"),
        ({"t": np.arange(3.0), "q": np.zeros((3, 2)), "coordinate_names": ["a"]}, {}, "1 names"),
    ],
)
def test_bad_input(result, kwargs, match):
    with pytest.raises(DataError, match=match):
        plot_simulation(result, **kwargs)
