"""The numpy codings of the OpenSim ID path against the compiled kernels they stand in for.

A short command (``ahbm id``) runs them instead of numba's kernels or
``scipy.linalg`` while neither is loaded (:mod:`ahbm._engine.backend`). The
filter pass, the tridiagonal solver and the cubic spline's steps do the
kernels' operations in their order: bitwise equal. The quintic spline's
banded LU does LAPACK's ``gbsv`` steps, which the OpenBLAS of scipy's wheels
fuses into multiply-adds: equal to round-off (within 1e-12 of the largest
coefficient; ~5e-14 measured). ``AHBM_KERNELS`` forces a side.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from sample_data import SHARED, needs_shared

from ahbm._engine import jit_banded, jit_filters
from ahbm.opensim import _xml, processing
from ahbm.opensim import external_loads as loads

DATA = SHARED / "opensim"


@pytest.fixture
def kernels(monkeypatch):
    """Set ``AHBM_KERNELS`` for the test: ``kernels("numpy")``."""
    return lambda side: monkeypatch.setenv("AHBM_KERNELS", side)


def _bits(a) -> bytes:
    return np.ascontiguousarray(a).tobytes()


# --- the IIR filter pass ------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_iir_pass_numpy_is_the_kernel_bitwise(seed):
    rng = np.random.default_rng(seed)
    for n in [*range(9), 50, 301, 2001]:  # below 3 samples: copied
        for m in (1, 3, 17):
            dt = rng.uniform(1e-4, 0.05)
            b, a = processing._iir_coefficients(dt, rng.uniform(0.5, 0.49 / dt))
            x = rng.standard_normal((n, m)).cumsum(axis=0) * 10.0 ** rng.integers(-3, 4)
            want = jit_filters.iir3_pass(b, a, x)
            got = processing._iir3_pass_numpy(b, a, x)
            assert got.shape == want.shape and _bits(got) == _bits(want), (n, m)


def test_lowpass_is_the_same_either_side(kernels):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((400, 3, 4)).cumsum(axis=0)
    kernels("numba")
    want = processing.opensim_lowpass_iir(x, dt=0.01, cutoff=6.0)
    kernels("numpy")
    got = processing.opensim_lowpass_iir(x, dt=0.01, cutoff=6.0)
    assert _bits(got) == _bits(want)


# --- the quintic spline's banded solve ----------------------------------------------


def _fit_both(kernels, t, y):
    kernels("numba")  # scipy.linalg.solve_banded
    k1, c1 = processing._quintic_fit(t, y)
    kernels("numpy")
    k2, c2 = processing._quintic_fit(t, y)
    assert _bits(k1) == _bits(k2) and c1.shape == c2.shape
    return k1, c1, c2


@pytest.mark.parametrize("n", [6, 7, 8, 9, 12, 61, 151, 302, 1001])
def test_quintic_fit_numpy_agrees_with_solve_banded(kernels, n):
    rng = np.random.default_rng(n)
    for t in (np.cumsum(rng.uniform(0.005, 0.02, n)), np.arange(n) / 100.0):
        for y in (rng.standard_normal(n).cumsum(), rng.standard_normal((n, 11)).cumsum(axis=0)):
            y = y * 10.0 ** rng.integers(-3, 4)
            knots, c1, c2 = _fit_both(kernels, t, y)
            scale = np.abs(c1).max()
            np.testing.assert_allclose(c2, c1, rtol=0, atol=1e-12 * scale)
            x = np.concatenate([t, rng.uniform(t[0], t[-1], 40)])
            for nu in (0, 1, 2):
                v1 = processing._quintic_values(knots, c1, x, nu)
                v2 = processing._quintic_values(knots, c2, x, nu)
                np.testing.assert_allclose(v2, v1, rtol=0, atol=1e-11 * np.abs(v1).max())


@pytest.mark.parametrize("kl, ku", [(1, 1), (2, 3), (5, 5), (3, 0), (0, 2), (4, 1)])
def test_banded_lu_numpy_is_solve_banded_to_round_off(kl, ku):
    """General bands whose LU exchanges rows: backward stable, and scipy's solution
    within round-off times the condition number."""
    from scipy.linalg import solve_banded

    rng = np.random.default_rng(10 * kl + ku)
    for n in (1, 2, kl + ku + 1, 40, 200):
        A = np.zeros((n, n))
        for i in range(n):
            lo, hi = max(0, i - kl), min(n, i + ku + 1)
            A[i, lo:hi] = rng.standard_normal(hi - lo)
        A[np.arange(n), np.arange(n)] += 0.1  # (no exact zero pivot)
        r, c = np.nonzero(A)
        b = rng.standard_normal((n, 4))
        got = processing._solve_banded_numpy(kl, ku, r, c, A[r, c], b)
        ab = np.zeros((kl + ku + 1, n))
        ab[ku + r - c, c] = A[r, c]
        want = solve_banded((kl, ku), ab, b)
        residual = np.abs(A @ got - b).max()
        assert residual <= 1e-13 * np.abs(A).max() * np.abs(got).max() * n
        tol = 1e-15 * np.linalg.cond(A) * np.abs(want).max() * (kl + ku + 1)
        np.testing.assert_allclose(got, want, rtol=0, atol=tol)


def test_banded_lu_numpy_declines_a_singular_matrix(kernels):
    A = np.array([[1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [0.0, 1.0, 1.0]])
    r, c = np.nonzero(A)
    assert processing._solve_banded_numpy(1, 1, r, c, A[r, c], np.ones((3, 1))) is None


# --- the natural cubic spline of the external loads ----------------------------------


def _spline_data(n, m, rng):
    x = np.cumsum(rng.uniform(1e-3, 2.0, n)) * 10.0 ** rng.integers(-3, 1)
    y = rng.normal(size=(n, m)) * 10.0 ** rng.integers(-3, 4)
    return x, y


@pytest.mark.parametrize("seed", range(4))
def test_cubic_system_and_values_numpy_are_the_kernels_bitwise(seed):
    rng = np.random.default_rng(seed)
    for n in (2, 3, 4, 5, 33, 1501):
        m = int(rng.integers(1, 20))
        x, y = _spline_data(n, m, rng)
        h = np.diff(x)
        want = jit_banded.natural_cubic_system(h, y)
        got = loads._natural_cubic_system_numpy(h, y)
        for w, g in zip(want, got, strict=True):
            assert w.shape == g.shape and _bits(w) == _bits(g), n
        t = np.sort(rng.uniform(x[0] - 0.4 * h[0], x[-1] + 0.4 * h[-1], 97))
        k = np.clip(np.searchsorted(x, t, side="right") - 1, 0, n - 2)
        a, b = x[k + 1] - t, t - x[k]
        M = rng.normal(size=y.shape)
        args = (M, y, h, k, a, b, a**3, b**3)
        assert _bits(loads._natural_cubic_values_numpy(*args)) == _bits(
            jit_banded.natural_cubic_values(*args)
        )


@pytest.mark.parametrize("seed", range(4))
def test_ptsv_numpy_is_the_kernel_bitwise(seed):
    rng = np.random.default_rng(seed)
    for n in (0, 1, 2, 3, 7, 60, 1499):
        h = rng.uniform(1e-3, 2.0, n + 1) * 10.0 ** rng.integers(-3, 2)
        d, e = 2.0 * (h[:-1] + h[1:]), h[1:-1].copy()
        b = rng.normal(size=(n, int(rng.integers(1, 20)))) * 10.0 ** rng.integers(-3, 4)
        info, want = jit_banded.ptsv(d, e, b)
        got_info, got = loads._ptsv_numpy(d, e, b)
        assert info == got_info == 0 and _bits(got) == _bits(want), n
    for d, e in (([1.0, -1.0, 2.0], [0.5, 0.5]), ([1.0, 0.25, 2.0], [0.5, 0.5]),
                 ([-1.0, 1.0, 1.0], [0.5, 0.5]), ([1.0, 1.0], [2.0])):  # fmt: skip
        d, e = np.array(d), np.array(e)
        b = np.ones((d.shape[0], 2))
        assert loads._ptsv_numpy(d, e, b)[0] == jit_banded.ptsv(d, e, b)[0] > 0
    for shapes in (((3,), (1,), (3, 2)), ((3,), (2,), (2, 2))):  # shapes that do not fit
        d, e, b = (np.ones(s) for s in shapes)
        assert loads._ptsv_numpy(d, e, b)[0] == jit_banded.ptsv(d, e, b)[0] == -1


@pytest.mark.parametrize("n", [2, 3, 4, 5, 40, 1501])
def test_natural_cubic_is_the_same_either_side(kernels, n):
    rng = np.random.default_rng(n)
    x, y = _spline_data(n, 6, rng)
    t = np.linspace(x[0] - 0.3 * (x[1] - x[0]), x[-1], 151)
    kernels("numba")
    want = loads._natural_cubic(x, y, t)
    kernels("numpy")
    assert _bits(loads._natural_cubic(x, y, t)) == _bits(want)


def test_the_solver_fallback_still_runs_on_the_numpy_side(kernels, monkeypatch):
    """A failure of the SPD solve (info != 0) gives the banded LU's solution either side."""
    rng = np.random.default_rng(3)
    x, y = _spline_data(30, 4, rng)
    t = np.linspace(x[0], x[-1], 50)
    kernels("numpy")
    want = loads._natural_cubic(x, y, t)
    monkeypatch.setattr(loads, "ptsv", lambda d, e, b: (1, np.full_like(b, np.nan)))
    np.testing.assert_allclose(loads._natural_cubic(x, y, t), want, rtol=0, atol=1e-12)


# --- the XML reader -----------------------------------------------------------------


def _tree(node, depth=0):
    yield depth, node.tag, dict(node.attrib), node.text, node.line, node.source
    for child in node.children:
        yield from _tree(child, depth + 1)


def _big_xml() -> bytes:
    body = "".join(
        f'<Body name="b{i}">\n  <mass> {i * 0.5} </mass>\n  <inertia>1 0 0 1 0 1</inertia>\n'
        f'  <Geometry file="g{i}.vtp"><scale>1 1 1</scale></Geometry>\n</Body>\n'
        for i in range(400)
    )
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<Model name="m">\n{body}</Model>\n'.encode()


def _parse_both(kernels, monkeypatch, data, **options):
    calls = []
    real = _xml._scanned_tree

    def spy(*args):
        root = real(*args)
        calls.append(root is not None)
        return root

    with monkeypatch.context() as patch:
        patch.setattr(_xml, "_scanned_tree", spy)
        kernels("numba")
        scanned = list(_tree(_xml.parse_xml(data, "f", **options)))
        kernels("numpy")
        events = list(_tree(_xml.parse_xml(data, "f", **options)))
    assert calls == [True, False]  # the scan, then expat's events alone
    assert events == scanned


def test_xml_tree_is_the_same_without_the_scan(kernels, monkeypatch):
    data = _big_xml()
    assert len(data) >= _xml._SCAN_MIN_BYTES
    _parse_both(kernels, monkeypatch, data)
    _parse_both(kernels, monkeypatch, data, skip={"Geometry"})


def test_xml_scan_runs_above_the_bound(kernels, monkeypatch):
    """Above the bound the scan runs even where small work would stay in numpy."""
    from ahbm._engine import backend

    data = _big_xml()
    monkeypatch.delenv("AHBM_KERNELS", raising=False)
    monkeypatch.setattr(backend, "compiled_loaded", lambda: False)
    seen = []
    real = _xml._scanned_tree
    monkeypatch.setattr(_xml, "_scanned_tree", lambda *a: seen.append(real(*a) is not None))
    with backend.numpy_while_small():
        _xml.parse_xml(data, "f")
        monkeypatch.setattr(_xml, "_SCAN_NUMPY_MAX_BYTES", len(data) - 1)
        _xml.parse_xml(data, "f")
    assert seen == [False, True]


# --- the shared walking trial ---------------------------------------------------------


@needs_shared
def test_subject01_osim_tree_is_the_same_without_the_scan(kernels, monkeypatch):
    from ahbm.opensim._osim_values import _FORCE_OBJECTS, _SUMMARY_SKIP

    data = (DATA / "subject01.osim").read_bytes()
    _parse_both(kernels, monkeypatch, data)
    _parse_both(
        kernels, monkeypatch, data, shallow=_FORCE_OBJECTS, skip=_SUMMARY_SKIP | {"MarkerSet"}
    )


@needs_shared
def test_subject01_coordinate_processing_either_side(kernels):
    """The IIR passes are bitwise the kernel's; the quintic fits differ by round-off only
    (measured on subject01: q 2e-15, qd 2.5e-13, qdd 2.2e-12 of each column's largest)."""
    from ahbm.opensim.storage import read_mot

    table = read_mot(DATA / "subject01_walk_IK.mot")
    t, Q = table.time, np.asarray(table.values, dtype=float)
    out = {}
    for side in ("numba", "numpy"):
        kernels(side)
        out[side] = processing.opensim_coordinate_processing(t, Q, cutoff=6.0)
    want, got = out["numba"], out["numpy"]
    assert got.resampled and want.resampled
    assert _bits(got.time) == _bits(want.time)
    for name, tol in (("q", 1e-13), ("qd", 1e-11), ("qdd", 1e-10)):
        w, g = getattr(want, name), getattr(got, name)
        assert (np.abs(g - w) <= tol * np.abs(w).max(axis=0)).all(), name


@needs_shared
def test_subject01_external_loads_either_side(kernels):
    """The loads' cubic spline is bitwise the compiled one (same kinematics given)."""
    from ahbm.kinematics.forward import forward_kinematics
    from ahbm.opensim import read_external_loads, read_osim
    from ahbm.opensim.storage import read_mot

    model = read_osim(DATA / "subject01.osim", muscles=False, forces="summary", markers=False)
    spec = read_external_loads(DATA / "subject01_walk_grf.xml")
    data = read_mot(DATA / "subject01_walk_grf.mot", angle_columns=[])
    time = np.linspace(0.5, 2.5, 151)
    kin = forward_kinematics(model, np.zeros((time.shape[0], model.nq)))
    out = {}
    for side in ("numba", "numpy"):
        kernels(side)
        out[side] = loads.external_loads_f_ext(model, None, time, spec, data, kin=kin)
    assert np.abs(out["numba"]).max() > 100.0  # (forces of a walk, N)
    assert _bits(out["numpy"]) == _bits(out["numba"])


# --- what the modules load ------------------------------------------------------------


def _run(code: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "AHBM_KERNELS"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    return out.stdout.strip()


_HEAVY = "print(sorted(m for m in ('numba', 'scipy', 'pandas') if m in sys.modules))\n"


def test_modules_load_no_numba_scipy_or_pandas():
    code = (
        "import sys\n"
        "import ahbm.opensim.processing, ahbm.opensim.external_loads, ahbm.opensim._xml\n" + _HEAVY
    )
    assert _run(code) == "[]"


def test_a_short_command_computes_without_numba_scipy_or_pandas():
    code = (
        "import sys, numpy as np\n"
        "from ahbm._engine.backend import numpy_while_small\n"
        "from ahbm.opensim import processing, _xml\n"
        "from ahbm.opensim.external_loads import _natural_cubic\n"
        "t = np.arange(151) / 60.0 + 1e-9 * (np.arange(151) % 3)\n"
        "with numpy_while_small():\n"
        "    processing.opensim_coordinate_processing(t, np.sin(t)[:, None] * [1, 2], cutoff=6.0)\n"
        "    _natural_cubic(t, np.cos(t)[:, None] * np.ones(18), t[3:-3])\n"
        "    body = ''.join(f'<B n=\"{i}\"><m>{i}</m></B>' for i in range(2000))\n"
        "    _xml.parse_xml(f'<M>{body}</M>'.encode(), 'f')\n" + _HEAVY
    )
    assert _run(code) == "[]"


@needs_shared
def test_the_id_tool_runs_without_numba_scipy_or_pandas():
    """``run_id_setup`` on subject01 in a short command (other modules' codings included)."""
    code = (
        "import os, sys\n"
        "from ahbm._engine.backend import numpy_while_small\n"
        "from ahbm.opensim import run_id_setup\n"
        f"os.chdir({str(DATA)!r})\n"
        "with numpy_while_small():\n"
        "    run_id_setup('subject01_Setup_ID.xml', write=False)\n" + _HEAVY
    )
    assert _run(code) == "[]"
