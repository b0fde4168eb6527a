"""SPM of curves (ahbm.analysis.spm) against spm1d itself on spm1d's documented example data.

ahbm wraps spm1d's computation in its own data types, so the statistic curve,
the threshold and every cluster (endpoints, p value) must equal spm1d's own
to 1e-10 on the datasets spm1d ships for each test (its documentation's
examples); the permutation inference too, with the same seed. Plus the
checks of the arguments and a figure.
"""

from __future__ import annotations

import numpy as np
import pytest

spm1d = pytest.importorskip("spm1d", reason="the stats extra (spm1d) is not installed")

from ahbm.analysis import (  # noqa: E402
    spm_anova1,
    spm_hotellings2,
    spm_hotellings_paired,
    spm_regress,
    spm_ttest,
    spm_ttest2,
    spm_ttest_paired,
)
from ahbm.errors import DataError  # noqa: E402

UV, MV = spm1d.data.uv1d, spm1d.data.mv1d


def _same(ours, spmi, spm):
    np.testing.assert_allclose(ours.z, spm.z, rtol=1e-10, atol=1e-12)
    assert ours.threshold == pytest.approx(spmi.zstar, rel=1e-10)
    assert len(ours.clusters) == len(spmi.clusters)
    for c, d in zip(ours.clusters, spmi.clusters, strict=True):
        assert (c.start, c.end) == pytest.approx(tuple(d.endpoints), rel=1e-10)
        assert c.p == pytest.approx(d.P, rel=1e-10, abs=1e-15)


CASES = [
    ("ttest", UV.t1.SimulatedPataky2015a, lambda d: (d[0], d[1]),
     lambda Y, mu: spm1d.stats.ttest(Y, mu), lambda Y, mu: spm_ttest(Y, mu)),
    ("ttest_paired", UV.tpaired.PlantarArchAngle, lambda d: d,
     spm1d.stats.ttest_paired, spm_ttest_paired),
    ("ttest2", UV.t2.PlantarArchAngle, lambda d: d, spm1d.stats.ttest2, spm_ttest2),
    ("ttest2 two maxima", UV.t2.SimulatedTwoLocalMax, lambda d: d, spm1d.stats.ttest2, spm_ttest2),
    ("anova1", UV.anova1.SpeedGRFcategorical, lambda d: d,
     lambda Y, A: spm1d.stats.anova1(Y, A, equal_var=True), spm_anova1),
    ("regress", UV.regress.SpeedGRF, lambda d: d, spm1d.stats.regress, spm_regress),
    ("hotellings2", MV.hotellings2.Besier2009muscleforces, lambda d: d,
     spm1d.stats.hotellings2, spm_hotellings2),
    ("hotellings_paired", MV.hotellings_paired.Neptune1999kneekin, lambda d: d,
     spm1d.stats.hotellings_paired, spm_hotellings_paired),
]  # fmt: skip


@pytest.mark.parametrize("name, dataset, args, theirs, ours", CASES, ids=[c[0] for c in CASES])
def test_equals_spm1d_on_its_example_data(name, dataset, args, theirs, ours):
    data = args(dataset().get_data())
    spm = theirs(*data)
    kwargs = {"two_tailed": True} if spm.STAT == "T" else {}
    spmi = spm.inference(0.05, **kwargs)
    res = ours(*data)
    _same(res, spmi, spm)
    assert res.statistic == {"T": "t", "F": "F", "T2": "T2"}[spm.STAT]
    assert res.fwhm == pytest.approx(spm.fwhm, rel=1e-12)


def test_the_permutation_inference_equals_spm1d_with_the_same_seed():
    a, b = UV.t2.PlantarArchAngle().get_data()
    before = np.random.get_state()[1][:5].copy()  # noqa: NPY002 (spm1d's generator)
    res = spm_ttest2(a, b, nonparametric=True, iterations=500, rng=7)
    assert np.array_equal(np.random.get_state()[1][:5], before)  # noqa: NPY002 (restored)
    np.random.seed(int(np.random.default_rng(7).integers(2**31 - 1)))  # noqa: NPY002
    snpm = spm1d.stats.nonparam.ttest2(a, b)
    snpmi = snpm.inference(0.05, two_tailed=True, iterations=500)
    _same(res, snpmi, snpm)
    assert res.nonparametric and np.isnan(res.fwhm)
    again = spm_ttest2(a, b, nonparametric=True, iterations=500, rng=7)
    assert again.threshold == res.threshold  # reproducible


def test_a_known_effect_is_found_where_it_is():
    from scipy.ndimage import gaussian_filter1d

    rng = np.random.default_rng(1)
    x = np.linspace(0, 1, 101)

    def noise():  # smooth residuals, as gait curves have (FWHM about 10 nodes)
        return 0.4 * gaussian_filter1d(rng.normal(size=(15, 101)), 4.0, axis=1, mode="wrap")

    a = np.sin(2 * np.pi * x) + noise()
    bump = 0.8 * np.exp(-(((x - 0.7) / 0.06) ** 2))
    b = np.sin(2 * np.pi * x) + bump + noise()
    res = spm_ttest2(a, b)
    assert res.rejected and len(res.clusters) == 1
    c = res.clusters[0]
    assert c.sign == -1 and 55 < c.start < 70 < c.end < 85 and c.p < 0.001
    null = spm_ttest2(a, np.sin(2 * np.pi * x) + noise())
    assert not null.rejected and null.p_min == 1.0


def test_bad_curves_are_refused_with_their_names():
    a = np.zeros((5, 20))
    with pytest.raises(DataError, match="`a` must have shape"):
        spm_ttest2(np.zeros(20), a)
    bad = a.copy()
    bad[2, 7] = np.nan
    with pytest.raises(DataError, match=r"`a` contains non-finite values .*\(2, 7\)"):
        spm_ttest_paired(bad, a)
    with pytest.raises(DataError, match="as many in `a` as in `b`"):
        spm_ttest_paired(a, a[:4])
    with pytest.raises(DataError, match="same nodes"):
        spm_ttest2(a, np.zeros((5, 21)))
    with pytest.raises(DataError, match="at least two groups"):
        spm_anova1(a, np.zeros(5))
    with pytest.raises(DataError, match="one value per curve"):
        spm_regress(a, np.arange(4.0))
    with pytest.raises(DataError, match="`alpha`"):
        spm_ttest2(a + np.arange(20), a, alpha=1.5)


def test_the_figure_shows_the_curves_the_statistic_and_the_clusters():
    import matplotlib

    matplotlib.use("Agg")
    from ahbm.graphics import plot_spm

    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(10, 51)), rng.normal(size=(10, 51)) + 2.0
    res = spm_ttest2(a, b)
    fig = plot_spm(res, [a, b], labels=("left", "right"), ylabel="deg")
    top, ax = fig.axes
    assert [t.get_text() for t in top.get_legend().get_texts()] == ["left", "right"]
    assert any(t.get_text().startswith("p") for t in ax.texts)  # the cluster's p value
    with pytest.raises(DataError, match="one per node"):
        plot_spm(res, x=np.arange(3))
