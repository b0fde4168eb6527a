"""The Movement Analysis Profile figure (ahbm.graphics.plot_movement_analysis_profile)."""

import numpy as np
import pytest

from ahbm.errors import DataError
from ahbm.gait import gait_profile_score, gait_reference
from ahbm.graphics import plot_movement_analysis_profile


def _scores(both=True):
    rng = np.random.default_rng(0)
    controls = rng.normal(0.0, 0.05, (10, 9, 51))
    subject = {"Left": controls[:2] + np.radians(np.arange(9.0))[:, None]}
    if both:
        subject["Right"] = controls[2:4] + np.radians(2.0)
    ref = gait_reference(controls)
    return gait_profile_score(subject, ref), ref


def test_bars_are_the_scores_in_degrees():
    s, ref = _scores()
    fig = plot_movement_analysis_profile(s, normal=ref.normal_profile(), title="$x$ trial")
    ax = fig.axes[0]
    bars = {}
    for container in ax.containers:
        bars[container.get_label()] = np.array([p.get_height() for p in container.patches])
    np.testing.assert_allclose(bars["Left"], np.degrees(np.r_[s.gvs["Left"], s.gps["Left"]]))
    np.testing.assert_allclose(bars["Right"], np.degrees(np.r_[s.gvs["Right"], s.gps["Right"]]))
    np.testing.assert_allclose(bars["overall"], [np.degrees(s.overall)])
    np.testing.assert_allclose(bars["reference"], np.degrees(ref.normal_profile()))
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels[0] == "Pelvic tilt" and labels[-2:] == ["GPS", "GPS overall"]
    assert "deg" in ax.get_ylabel()
    # left bars left of the right bars in each group
    left_x = [p.get_x() for p in ax.containers[1].patches]
    right_x = [p.get_x() for p in ax.containers[2].patches]
    assert all(a < b for a, b in zip(left_x, right_x, strict=True))


def test_one_side_radians_and_bad_input():
    s, _ = _scores(both=False)
    fig = plot_movement_analysis_profile(s, degrees=False, colors={"left": "blue"})
    ax = fig.axes[0]
    assert len(ax.patches) == 10 and "rad" in ax.get_ylabel()
    assert [t.get_text() for t in ax.get_xticklabels()][-1] == "GPS"
    with pytest.raises(DataError, match="GaitProfileScore"):
        plot_movement_analysis_profile({"gvs": 1})
    with pytest.raises(DataError, match="10 values"):
        plot_movement_analysis_profile(s, normal=np.zeros(9))
