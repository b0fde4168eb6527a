"""Gait Deviation Index (ahbm.gait.gdi): the construction's identities and published relations.

No published worked case (a subject's curves with its GDI) could be found to
reproduce; the tests check what holds exactly by construction and what the
papers state:

* Schwartz & Rozumalski (2008): the controls' GDI has mean 100 and SD 10; a
  cycle whose feature-space distance d from the controls' mean equals
  exp(mean ln d_controls) has GDI 100, one at exp(mean + SD) has GDI 90.
* Baker et al. (2009): with every feature kept, d is sqrt(9 x 51) times the
  cycle's GPS against the controls' mean, so the GDI equals the GDI* of
  Schwartz, Rozumalski & Baker (2013), the same scaling applied to ln GPS.
* GDI* with the published Gillette constants (A = 1.677, B = 0.263 for GPS in
  degrees): GPS = exp(A) = 5.349 deg is 100, exp(A + B) = 6.959 deg is 90.
"""

import numpy as np
import pytest

from ahbm.errors import DataError
from ahbm.gait import (
    GDI_STAR_GILLETTE,
    gait_deviation_index,
    gait_deviation_index_sides,
    gait_profile_score,
    gait_reference,
    gait_reference_band,
    gdi_reference,
    gdi_star,
    gdi_star_to_gps,
)


def curves(n, seed, scale=1.0, shift=0.0):
    """Gait-like score curves (rad) with random per-cycle variation on 6 harmonics."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 1.0, 51)
    base = np.radians(20.0) * np.sin(2 * np.pi * t + np.arange(9)[:, None])
    h = np.stack([np.sin(2 * np.pi * k * t + k) for k in range(1, 7)])  # (6, 51)
    amp = rng.normal(size=(n, 9, 6)) * np.radians([3.0, 2.0, 1.5, 1.0, 0.5, 0.3]) * scale
    return base + amp @ h + shift + rng.normal(0.0, np.radians(0.2), (n, 9, 51))


@pytest.fixture(scope="module")
def controls():
    return curves(40, seed=0)


def test_controls_average_100_with_sd_10(controls):
    for n_features in (3, 15):
        ref = gdi_reference(controls, n_features=n_features)
        gdi = gait_deviation_index(controls, ref)
        np.testing.assert_allclose(gdi, ref.control_gdi, rtol=1e-12)
        assert gdi.mean() == pytest.approx(100.0, abs=1e-9)
        assert gdi.std(ddof=1) == pytest.approx(10.0, abs=1e-9)
        assert ref.features.shape == (n_features, 9, 51)
    # features from a larger set of controls and patients: the controls still average 100
    patients = curves(30, seed=1, scale=3.0, shift=np.radians(5.0))
    ref = gdi_reference(controls, data=np.r_[controls, patients], n_features=15)
    assert ref.control_gdi.mean() == pytest.approx(100.0) and ref.control_gdi.std(ddof=1) == (
        pytest.approx(10.0)
    )
    assert np.median(gait_deviation_index(patients, ref)) < 90.0
    assert 0.9 < ref.fidelity <= 1.0 and "70 cycles" in ref.source


def test_known_distances_give_known_gdi(controls):
    ref = gdi_reference(controls, n_features=8)
    mean_curve = np.tensordot(ref.control_mean_scores, ref.features, axes=1)
    f0 = ref.features[0]
    for z in (-1.5, 0.0, 1.0, 2.0):
        d = np.exp(ref.ln_mean + z * ref.ln_sd)
        assert gait_deviation_index(mean_curve + d * f0, ref) == pytest.approx(100.0 - 10.0 * z)
        assert gait_deviation_index(mean_curve - d * ref.features[5], ref) == pytest.approx(
            100.0 - 10.0 * z
        )
    # at distance 1 (in the curves' units): 100 + 10 mean(ln d) / sd(ln d)
    assert gait_deviation_index(mean_curve + f0, ref) == pytest.approx(
        100.0 + 10.0 * ref.ln_mean / ref.ln_sd
    )
    # at the controls' mean: d is a rounding error, the GDI huge; exactly there (an
    # identity basis keeps the numbers exact): d = 0, GDI = +inf
    assert gait_deviation_index(mean_curve, ref) > 500.0
    exact = gdi_reference(controls, basis=np.eye(459))
    assert gait_deviation_index(controls.mean(axis=0), exact) == np.inf


def test_invariances(controls):
    subject = curves(5, seed=3, scale=2.0)
    ref = gdi_reference(controls, n_features=6)
    gdi = gait_deviation_index(subject, ref)
    # units: degrees instead of radians (every curve scaled) change nothing
    k = 180.0 / np.pi
    ref_deg = gdi_reference(k * controls, n_features=6)
    np.testing.assert_allclose(gait_deviation_index(k * subject, ref_deg), gdi, rtol=1e-9)
    # the sign of a feature changes nothing
    flipped = ref.features * np.array([1, -1, 1, -1, -1, 1.0])[:, None, None]
    ref_flip = gdi_reference(controls, basis=flipped)
    np.testing.assert_allclose(gait_deviation_index(subject, ref_flip), gdi, rtol=1e-12)
    # a change orthogonal to every kept feature is invisible to the GDI
    rng = np.random.default_rng(4)
    v = rng.normal(size=9 * 51)
    fl = ref.features.reshape(6, -1)
    v -= fl.T @ (fl @ v)
    np.testing.assert_allclose(
        gait_deviation_index(subject + v.reshape(9, 51), ref), gdi, rtol=1e-12
    )
    # the order of the controls changes nothing; centring the decomposition changes the features
    ref_perm = gdi_reference(controls[::-1], n_features=6)
    np.testing.assert_allclose(gait_deviation_index(subject, ref_perm), gdi, rtol=1e-9)
    assert "centred" in gdi_reference(controls, n_features=6, center=True).source


def test_full_basis_distance_is_sqrt459_gps_and_gdi_equals_gdi_star(controls):
    """Baker et al. (2009): the GDI's distance over all features is sqrt(459) x GPS."""
    subject = curves(6, seed=5, scale=2.5)
    reference = gait_reference(controls)
    gps = gait_profile_score({"Left": subject}, reference).gps_cycles["Left"]
    ln_a, ln_b = reference.gps_log_stats()
    expected = gdi_star(gps, ln_mean=ln_a, ln_sd=ln_b)
    # a supplied basis: the identity, every direction of the 459-dimensional space
    full = gdi_reference(reference, basis=np.eye(459))
    np.testing.assert_allclose(full.distance(subject), np.sqrt(459.0) * gps, rtol=1e-12)
    np.testing.assert_allclose(gait_deviation_index(subject, full), expected, rtol=1e-12)
    np.testing.assert_allclose(full.control_gdi, gdi_star(reference.cycle_scores()[1],
                                                          ln_mean=ln_a, ln_sd=ln_b))  # fmt: skip
    # computed features: all 459 of a decomposition of 500 cycles span the space too
    data = curves(500, seed=6, scale=3.0) + np.random.default_rng(7).normal(0, 0.01, (500, 9, 51))
    computed = gdi_reference(reference, data=data, n_features=459)
    assert computed.fidelity == pytest.approx(1.0)
    np.testing.assert_allclose(gait_deviation_index(subject, computed), expected, rtol=1e-9)
    # with 15 features (the first 15 of the same decomposition) the GDI is not GDI* exactly
    gdi15 = gait_deviation_index(subject, gdi_reference(reference, basis=computed.features[:15]))
    assert np.abs(gdi15 - expected).max() > 1e-6


def test_gdi_star_with_the_published_gillette_constants():
    a, b = GDI_STAR_GILLETTE["ln_mean"], GDI_STAR_GILLETTE["ln_sd"]
    assert (a, b) == (1.677, 0.263)
    assert gdi_star(np.exp(a), **GDI_STAR_GILLETTE) == pytest.approx(100.0)
    assert gdi_star(np.exp(a + b), **GDI_STAR_GILLETTE) == pytest.approx(90.0)
    assert gdi_star_to_gps(90.0, **GDI_STAR_GILLETTE) == pytest.approx(6.959, abs=5e-4)
    assert gdi_star_to_gps(100.0, **GDI_STAR_GILLETTE) == pytest.approx(5.349, abs=5e-4)
    g = np.array([3.0, 5.0, 10.0, 20.0])
    np.testing.assert_allclose(
        gdi_star_to_gps(gdi_star(g, **GDI_STAR_GILLETTE), **GDI_STAR_GILLETTE), g
    )
    # doubling the GPS lowers GDI* by 10 ln 2 / B whatever the GPS
    np.testing.assert_allclose(
        gdi_star(2 * g, **GDI_STAR_GILLETTE) - gdi_star(g, **GDI_STAR_GILLETTE),
        -10 * np.log(2) / b,
    )


def test_sides_and_bad_input(controls):
    ref = gdi_reference(controls, n_features=5)
    out = gait_deviation_index_sides({"Left": controls[:2], "Right": controls[2:5]}, ref)
    np.testing.assert_allclose(out["Right"], ref.control_gdi[2:5])
    with pytest.raises(DataError, match="at least 15 cycles"):
        gdi_reference(controls[:10], n_features=15)
    with pytest.raises(DataError, match="at least 3 control"):
        gdi_reference(controls[:2], n_features=1)
    with pytest.raises(DataError, match="not orthonormal"):
        gdi_reference(controls, basis=2 * np.eye(459)[:5])
    with pytest.raises(DataError, match="features as rows"):
        gdi_reference(controls, basis=np.eye(50))
    with pytest.raises(DataError, match="not both"):
        gdi_reference(controls, data=controls, basis=np.eye(459))
    band = gait_reference_band(controls.mean(axis=0))
    with pytest.raises(DataError, match="band without cycles"):
        gdi_reference(band)
    with pytest.raises(DataError, match="exactly at the controls' mean"):
        gdi_reference(np.r_[controls[:3], controls[:3].mean(axis=0, keepdims=True)], n_features=2)
    with pytest.raises(DataError, match="GdiReference"):
        gait_deviation_index(controls, gait_reference(controls))
    bad = controls[:2].copy()
    bad[1, 0, 0] = np.nan
    with pytest.raises(DataError, match="cycle 1, Pelvic tilt has NaN at 0 %"):
        gait_deviation_index(bad, ref)
    with pytest.raises(DataError, match="positive"):
        gdi_star(0.0, **GDI_STAR_GILLETTE)
