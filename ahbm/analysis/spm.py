"""Statistics of whole curves: statistical parametric mapping (SPM) of gait cycles.

Two sets of time-normalized curves (left and right knee angles over the gait
cycle, a patient group and a control group, before and after an
intervention) differ *somewhere* along the cycle; mean ± SD bands cannot say
where with a known error rate. SPM computes the test statistic at every node
of the curves and the threshold that the maximum of a smooth random field of
that statistic exceeds with probability ``alpha`` (random field theory for
1-D fields), and reports the supra-threshold clusters with their p values
(Pataky 2010; Pataky, Vanrenterghem & Robinson 2015).

The computation is the established package's: ``spm1d`` (Pataky), installed
with the ``stats`` extra (``pip install "ahbm[stats]"``). These functions
take ahbm's arrays (``(n_curves, n_nodes)`` from
:func:`~ahbm.analysis.time_normalize`, or ``(n_curves, n_nodes, n_components)``
for Hotelling's T²), check them, run spm1d's test and inference, and return a
plain :class:`SPMResult`. ``nonparametric=True`` uses spm1d's permutation
inference instead of random field theory (no smoothness assumption; exact for
small samples when all permutations are run).

:func:`ahbm.graphics.plot_spm` draws the curves and the statistic with its
threshold and clusters.

References
----------
Pataky, T. C. (2010). Generalized n-dimensional biomechanical field analysis
using statistical parametric mapping. J Biomech 43(10), 1976-1982.
Pataky, T. C., Vanrenterghem, J., Robinson, M. A. (2015). Zero- vs.
one-dimensional, parametric vs. non-parametric, and confidence interval vs.
hypothesis testing procedures in one-dimensional biomechanical trajectory
analysis. J Biomech 48(7), 1277-1285.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ahbm._internal.validation import as_float_array
from ahbm.errors import DataError, MissingDependencyError
from ahbm.types import ResultRepr

__all__ = [
    "SPMCluster",
    "SPMResult",
    "spm_anova1",
    "spm_hotellings2",
    "spm_hotellings_paired",
    "spm_regress",
    "spm_ttest",
    "spm_ttest2",
    "spm_ttest_paired",
]


@dataclass(frozen=True)
class SPMCluster:
    """One supra-threshold cluster of an SPM.

    Attributes
    ----------
    start, end : float
        Where the statistic crosses the threshold, in nodes (interpolated
        between nodes; node 0 is the first point of the curves).
    p : float
        The cluster's p value (the probability that a cluster this wide or
        wider exceeds the threshold under the null hypothesis).
    sign : int
        +1 above the upper threshold, -1 below the lower (two-tailed t tests).
    """

    start: float
    end: float
    p: float
    sign: int = 1


@dataclass(frozen=True, repr=False)
class SPMResult(ResultRepr):
    """Result of an SPM test (:func:`spm_ttest2` and its siblings).

    Attributes
    ----------
    test : str
        ``"ttest"``, ``"ttest_paired"``, ``"ttest2"``, ``"anova1"``,
        ``"regress"``, ``"hotellings2"`` or ``"hotellings_paired"``.
    statistic : str
        ``"t"``, ``"F"`` or ``"T2"``.
    z : ndarray, shape (n_nodes,)
        The test statistic at every node.
    threshold : float
        The critical value at `alpha` (the upper one for a two-tailed t test;
        the lower is its negative).
    alpha : float
    two_tailed : bool
    df : tuple of float
        Degrees of freedom.
    fwhm : float
        Estimated smoothness of the residuals, in nodes (NaN for the
        permutation inference).
    clusters : list of SPMCluster
    nonparametric : bool
        Permutation inference (True) or random field theory (False).
    """

    test: str
    statistic: str
    z: np.ndarray
    threshold: float
    alpha: float
    two_tailed: bool
    df: tuple
    fwhm: float
    clusters: list = field(default_factory=list)
    nonparametric: bool = False

    @property
    def rejected(self) -> bool:
        """True when the statistic crosses the threshold somewhere (H0 rejected)."""
        return bool(self.clusters)

    @property
    def p_min(self) -> float:
        """The smallest cluster p value (1.0 when no cluster)."""
        return min((c.p for c in self.clusters), default=1.0)


def _spm1d():
    try:
        import spm1d
    except ImportError as err:
        raise MissingDependencyError(
            "SPM needs the spm1d package: pip install 'ahbm[stats]' (or pip install spm1d)"
        ) from err
    return spm1d


def _curves(x, name: str, ndim: int = 2) -> np.ndarray:
    arr = as_float_array(x, name)
    if arr.ndim != ndim:
        shape = "(n_curves, n_nodes)" if ndim == 2 else "(n_curves, n_nodes, n_components)"
        raise DataError(f"`{name}` must have shape {shape}, got {arr.shape}")
    if arr.shape[0] < 2 or arr.shape[1] < 2:
        raise DataError(f"`{name}` needs at least 2 curves of at least 2 nodes, got {arr.shape}")
    return arr


def _same_nodes(a: np.ndarray, b: np.ndarray, names: str) -> None:
    if a.shape[1:] != b.shape[1:]:
        raise DataError(
            f"{names} must have the same nodes (and components): {a.shape[1:]} and {b.shape[1:]}"
        )


def _same_count(a: np.ndarray, b: np.ndarray) -> None:
    if a.shape[0] != b.shape[0]:
        raise DataError(
            f"paired curves need as many in `a` as in `b`: {a.shape[0]} and {b.shape[0]}"
        )


def _check_alpha(alpha) -> float:
    alpha = float(alpha)
    if not 0.0 < alpha < 1.0:
        raise DataError(f"`alpha` must be between 0 and 1, got {alpha}")
    return alpha


def _infer(spm, *, test_name, statistic, alpha, two_tailed, nonparametric, iterations, rng):
    """Run the inference and turn spm1d's object into an SPMResult."""
    kwargs = {}
    if statistic == "t":
        kwargs["two_tailed"] = two_tailed
    if nonparametric:
        kwargs["iterations"] = int(iterations)
        state = None
        if rng is not None:  # spm1d permutes with numpy's global generator
            state = np.random.get_state()  # noqa: NPY002 (spm1d's own generator)
            np.random.seed(int(np.random.default_rng(rng).integers(2**31 - 1)))  # noqa: NPY002
        try:
            spmi = spm.inference(alpha, **kwargs)
        except ValueError as err:  # e.g. fewer permutations than 1 / alpha
            raise DataError(
                f"SPM {test_name}: the permutation inference cannot run: "
                f"{' '.join(str(err).split())}; use more curves or a larger `alpha`, or the "
                "parametric inference (nonparametric=False)"
            ) from err
        finally:
            if state is not None:
                np.random.set_state(state)  # noqa: NPY002
    else:
        spmi = spm.inference(alpha, **kwargs)
    clusters = []
    for c in spmi.clusters:
        start, end = (float(v) for v in c.endpoints)
        sign = int(getattr(c, "csign", 1) or 1)
        clusters.append(SPMCluster(start, end, float(c.P), sign))
    fwhm = float(getattr(spm, "fwhm", np.nan)) if not nonparametric else float("nan")
    df = tuple(float(v) for v in np.atleast_1d(getattr(spm, "df", ())))
    return SPMResult(
        test_name,
        statistic,
        np.asarray(spm.z, dtype=float).copy(),
        float(spmi.zstar),
        alpha,
        bool(two_tailed) if statistic == "t" else False,
        df,
        fwhm,
        clusters,
        bool(nonparametric),
    )


def _run(function, args, *, test_name, statistic, alpha=0.05, two_tailed=True,
         nonparametric=False, iterations=-1, rng=None, options=None):  # fmt: skip
    """spm1d's `function` on `args` (``options``: keywords of the parametric test only)."""
    spm1d = _spm1d()
    alpha = _check_alpha(alpha)
    if nonparametric:
        spm = getattr(spm1d.stats.nonparam, function)(*args)
    else:
        spm = getattr(spm1d.stats, function)(*args, **(options or {}))
    return _infer(
        spm, test_name=test_name, statistic=statistic, alpha=alpha,
        two_tailed=two_tailed, nonparametric=nonparametric, iterations=iterations, rng=rng,
    )  # fmt: skip


def spm_ttest(y, mu=0.0, *, alpha=0.05, two_tailed=True, nonparametric=False, iterations=-1,
              rng=None) -> SPMResult:  # fmt: skip
    """One-sample t test of curves against a reference curve or value `mu`.

    Parameters
    ----------
    y : array_like, shape (n_curves, n_nodes)
    mu : float or array_like, shape (n_nodes,)
    two_tailed : bool
    alpha, nonparametric, iterations, rng
        As for :func:`spm_ttest2`.

    Returns
    -------
    SPMResult

    Raises
    ------
    DataError
        Curves of the wrong shape, with gaps, or not matching.
    MissingDependencyError
        spm1d is not installed (the ``stats`` extra).
    """
    y = _curves(y, "y")
    mu = np.broadcast_to(as_float_array(mu, "mu"), y.shape[1:]).astype(float)
    return _run("ttest", (y - mu, 0.0) if not nonparametric else (y - mu,),
                test_name="ttest", statistic="t", alpha=alpha, two_tailed=two_tailed,
                nonparametric=nonparametric, iterations=iterations, rng=rng)  # fmt: skip


def spm_ttest_paired(a, b, *, alpha=0.05, two_tailed=True, nonparametric=False, iterations=-1,
                     rng=None) -> SPMResult:  # fmt: skip
    """Paired t test of two sets of curves (the same subjects or cycles in both).

    Parameters
    ----------
    a, b : array_like, shape (n_curves, n_nodes)
        Curve ``i`` of `a` is paired with curve ``i`` of `b`.
    two_tailed : bool
    alpha, nonparametric, iterations, rng
        As for :func:`spm_ttest2`.

    Returns
    -------
    SPMResult

    Raises
    ------
    DataError
        Curves of the wrong shape, with gaps, or not matching.
    MissingDependencyError
        spm1d is not installed (the ``stats`` extra).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x = np.linspace(0, 1, 101)
    >>> a = np.sin(2 * np.pi * x) + 0.1 * rng.normal(size=(10, 101))
    >>> b = a + 0.5 * np.exp(-((x - 0.5) / 0.1) ** 2) + 0.05 * rng.normal(size=(10, 101))
    >>> res = spm_ttest_paired(a, b)
    >>> [(round(c.start), round(c.end), c.sign) for c in res.clusters]  # b > a in mid-cycle
    [(37, 63, -1)]
    """
    a, b = _curves(a, "a"), _curves(b, "b")
    _same_nodes(a, b, "`a` and `b`")
    _same_count(a, b)
    return _run("ttest_paired", (a, b), test_name="ttest_paired", statistic="t",
                alpha=alpha, two_tailed=two_tailed, nonparametric=nonparametric,
                iterations=iterations, rng=rng)  # fmt: skip


def spm_ttest2(a, b, *, equal_var=False, alpha=0.05, two_tailed=True, nonparametric=False,
               iterations=-1, rng=None) -> SPMResult:  # fmt: skip
    """Two-sample t test of two independent groups of curves.

    Parameters
    ----------
    a, b : array_like, shape (n_a, n_nodes) and (n_b, n_nodes)
    equal_var : bool
        Assume equal variances (pooled); default False: unequal variances, the
        degrees of freedom corrected as Welch-Satterthwaite's (spm1d's default;
        the permutation inference makes no such assumption).
    two_tailed : bool
        Two-tailed test (default): clusters above the threshold and below its negative.
    alpha : float
        Type I error rate (default 0.05).
    nonparametric : bool
        Permutation inference instead of random field theory.
    iterations : int
        Permutations for the nonparametric inference (-1: all of them).
    rng : int or numpy.random.Generator, optional
        Seed of the permutations (spm1d draws them from numpy's global
        generator, whose state is restored afterwards).

    Returns
    -------
    SPMResult

    Raises
    ------
    DataError
        Curves of the wrong shape, with gaps, or not matching.
    MissingDependencyError
        spm1d is not installed (the ``stats`` extra).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x = np.linspace(0, 1, 101)
    >>> a = np.sin(2 * np.pi * x) + 0.2 * rng.normal(size=(12, 101))
    >>> b = np.sin(2 * np.pi * x) + 0.6 * np.exp(-((x - 0.5) / 0.1) ** 2)
    >>> res = spm_ttest2(a, b + 0.2 * rng.normal(size=(12, 101)))
    >>> res.rejected, res.statistic, [round(d, 2) for d in res.df]  # Welch's df
    (True, 't', [1.0, 21.94])
    """
    a, b = _curves(a, "a"), _curves(b, "b")
    _same_nodes(a, b, "`a` and `b`")
    return _run("ttest2", (a, b), test_name="ttest2", statistic="t", alpha=alpha,
                two_tailed=two_tailed, nonparametric=nonparametric, iterations=iterations,
                rng=rng, options={"equal_var": bool(equal_var)})  # fmt: skip


def spm_anova1(y, groups, *, equal_var=True, alpha=0.05, nonparametric=False, iterations=-1,
               rng=None) -> SPMResult:  # fmt: skip
    """One-way ANOVA of curves in groups (the F statistic at every node).

    Parameters
    ----------
    y : array_like, shape (n_curves, n_nodes)
    groups : array_like of int, shape (n_curves,)
        The group of each curve (at least two groups).
    equal_var : bool
        Equal variances in the groups (default True: the classical ANOVA;
        spm1d's non-sphericity correction for unequal variances is, by its own
        warning, approximate and unverified).
    alpha, nonparametric, iterations, rng
        As for :func:`spm_ttest2`.

    Returns
    -------
    SPMResult

    Raises
    ------
    DataError
        Curves of the wrong shape, with gaps, or not matching.
    MissingDependencyError
        spm1d is not installed (the ``stats`` extra).
    """
    y = _curves(y, "y")
    g = np.asarray(groups)
    if g.shape != (y.shape[0],):
        raise DataError(f"`groups` must have one entry per curve ({y.shape[0]}), got {g.shape}")
    if np.unique(g).size < 2:
        raise DataError("`groups` must name at least two groups")
    return _run("anova1", (y, g), test_name="anova1", statistic="F", alpha=alpha,
                nonparametric=nonparametric, iterations=iterations, rng=rng,
                options={"equal_var": bool(equal_var)})  # fmt: skip


def spm_regress(y, x, *, alpha=0.05, two_tailed=True, nonparametric=False, iterations=-1,
                rng=None) -> SPMResult:  # fmt: skip
    """Linear regression of curves on a scalar (e.g. walking speed): t of the slope per node.

    Parameters
    ----------
    y : array_like, shape (n_curves, n_nodes)
    x : array_like, shape (n_curves,)
    two_tailed : bool
    alpha, nonparametric, iterations, rng
        As for :func:`spm_ttest2`.

    Returns
    -------
    SPMResult

    Raises
    ------
    DataError
        Curves of the wrong shape, with gaps, or not matching.
    MissingDependencyError
        spm1d is not installed (the ``stats`` extra).
    """
    y = _curves(y, "y")
    x = as_float_array(x, "x")
    if x.shape != (y.shape[0],):
        raise DataError(f"`x` must have one value per curve ({y.shape[0]}), got {x.shape}")
    return _run("regress", (y, x), test_name="regress", statistic="t", alpha=alpha,
                two_tailed=two_tailed, nonparametric=nonparametric, iterations=iterations,
                rng=rng)  # fmt: skip


def spm_hotellings2(a, b, *, alpha=0.05, nonparametric=False, iterations=-1,
                    rng=None) -> SPMResult:  # fmt: skip
    """Two-sample Hotelling's T² of vector curves (e.g. the three components of a moment).

    Parameters
    ----------
    a, b : array_like, shape (n_a, n_nodes, n_components) and (n_b, ...)
    alpha, nonparametric, iterations, rng
        As for :func:`spm_ttest2`.

    Returns
    -------
    SPMResult

    Raises
    ------
    DataError
        Curves of the wrong shape, with gaps, or not matching.
    MissingDependencyError
        spm1d is not installed (the ``stats`` extra).
    """
    a, b = _curves(a, "a", 3), _curves(b, "b", 3)
    _same_nodes(a, b, "`a` and `b`")
    return _run("hotellings2", (a, b), test_name="hotellings2", statistic="T2",
                alpha=alpha, nonparametric=nonparametric, iterations=iterations,
                rng=rng)  # fmt: skip


def spm_hotellings_paired(a, b, *, alpha=0.05, nonparametric=False, iterations=-1,
                          rng=None) -> SPMResult:  # fmt: skip
    """Paired Hotelling's T² of vector curves.

    Parameters
    ----------
    a, b : array_like, shape (n_curves, n_nodes, n_components)
    alpha, nonparametric, iterations, rng
        As for :func:`spm_ttest2`.

    Returns
    -------
    SPMResult

    Raises
    ------
    DataError
        Curves of the wrong shape, with gaps, or not matching.
    MissingDependencyError
        spm1d is not installed (the ``stats`` extra).
    """
    a, b = _curves(a, "a", 3), _curves(b, "b", 3)
    _same_nodes(a, b, "`a` and `b`")
    _same_count(a, b)
    return _run("hotellings_paired", (a, b), test_name="hotellings_paired",
                statistic="T2", alpha=alpha, nonparametric=nonparametric,
                iterations=iterations, rng=rng)  # fmt: skip
