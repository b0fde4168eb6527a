"""Input validation shared by all ahbm modules (internal).

Validate at the boundary, trust inside: public functions call these helpers
once on their arguments and work on the cleaned float64 arrays afterwards.
Messages follow the pattern "Expected `q` to have shape (34,), got (33,)".
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ahbm.errors import DataError, FileFormatError, ModelError

__all__ = [
    "as_float_array",
    "as_vector_array",
    "as_positive_float",
    "as_nonnegative_float",
    "as_finite_float",
    "check_model",
    "broadcast_batch",
    "check_mass",
    "check_inertia",
    "callback_result",
    "input_path",
    "as_path",
    "as_int",
    "as_choice",
    "check_trailing_shape",
    "check_finite",
    "check_not_empty",
    "check_callable",
    "output_path",
    "sample_times",
    "sample_rate",
    "DEFAULT_MAX_READ_BYTES",
    "max_read_bytes",
    "set_max_read_bytes",
    "check_read_size",
]


def _kind_of(x) -> str:
    """A short name of the type of `x` for messages ("str", "None", "dict", ...)."""
    return "None" if x is None else type(x).__name__


def as_float_array(x, name: str, *, allow_nan: bool = False) -> np.ndarray:
    """Return `x` as a float64 ndarray, raising DataError if impossible.

    Parameters
    ----------
    x : array_like
        The value passed by the user.
    name : str
        Argument name used in error messages.
    allow_nan : bool, optional
        If False (default), NaN or inf anywhere raises DataError naming the
        first offending index.

    Notes
    -----
    None, strings, dictionaries and complex values are rejected (numpy would
    turn None into NaN, ``"1.5"`` into 1.5 and drop an imaginary part without
    a word); booleans and integers are cast to float64.
    """
    if x is None or isinstance(x, (str, bytes, dict, set)):
        raise DataError(f"Expected `{name}` to be a numeric array, got {_kind_of(x)}")
    try:
        raw = x if isinstance(x, np.ndarray) else np.asarray(x)
    except (TypeError, ValueError) as err:
        raise DataError(
            f"Expected `{name}` to be a numeric array, got {_kind_of(x)}: {err}"
        ) from err
    if raw.dtype.kind == "c":
        raise DataError(
            f"Expected `{name}` to be a real array, got complex values; pass the real part "
            f"(`x.real`) explicitly if that is what you mean"
        )
    if raw.dtype.kind in "USV":
        raise DataError(f"Expected `{name}` to be a numeric array, got text ({raw.dtype})")
    try:
        arr = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise DataError(
            f"Expected `{name}` to be a numeric array, got {_kind_of(x)}: {err}"
        ) from err
    if not allow_nan:
        check_finite(arr, name)
    return arr


def as_positive_float(value, name: str, *, unit: str = "", error=DataError) -> float:
    """`value` as a positive finite float, or `error` naming `name` (and its unit)."""
    what = f"a positive number in {unit}" if unit else "a positive number"
    v = _as_real_scalar(value, name, what, error)
    if not (np.isfinite(v) and v > 0):
        raise error(f"Expected `{name}` to be {what}, got {value!r}")
    return v


def _as_real_scalar(value, name: str, what: str, error) -> float:
    """`value` as a float; text, None, bool and complex numbers raise `error`."""
    rejected = (str, bytes, bool, np.bool_, complex, np.complexfloating)
    if value is None or isinstance(value, rejected):
        raise error(f"Expected `{name}` to be {what}, got {value!r} ({_kind_of(value)})")
    if isinstance(value, np.ndarray) and value.dtype.kind not in "iuf":
        raise error(f"Expected `{name}` to be {what}, got an array of {value.dtype}")
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError) as err:
        raise error(f"Expected `{name}` to be {what}, got {_kind_of(value)}: {value!r}") from err


def as_finite_float(value, name: str, *, unit: str = "", error=DataError) -> float:
    """`value` as a finite float (any sign), or `error` naming `name` (and its unit)."""
    what = f"a finite number in {unit}" if unit else "a finite number"
    v = _as_real_scalar(value, name, what, error)
    if not np.isfinite(v):
        raise error(f"Expected `{name}` to be {what}, got {value!r}")
    return v


def callback_result(value, name: str, shape: tuple | None = None) -> np.ndarray:
    """The value returned by the user's callback `name` as a float64 array.

    Text, None, dicts and complex values raise DataError naming the callback;
    `shape` (trailing axes) is checked when given. NaN passes (the caller
    decides what a non-finite value means, e.g. a SimulationError).
    """
    arr = as_float_array(value, f"{name}(...) (the value your function returned)", allow_nan=True)
    if shape is not None:
        check_trailing_shape(arr, shape, f"{name}(...) (the value your function returned)")
    return arr


def check_mass(mass: np.ndarray, name: str = "mass", *, error=DataError) -> np.ndarray:
    """Raise `error` if any mass (kg) is negative; returns `mass`."""
    if np.any(mass < 0):
        bad = np.argwhere(np.atleast_1d(mass) < 0)[0]
        raise error(
            f"`{name}` must be >= 0 kg; got {float(np.atleast_1d(mass)[tuple(bad)]):g} at index "
            f"{tuple(int(i) for i in bad)}"
        )
    return mass


def check_inertia(inertia: np.ndarray, name: str = "inertia", *, error=DataError) -> np.ndarray:
    """Raise `error` unless every (..., 3, 3) inertia tensor is physically valid.

    Valid: symmetric, positive semi-definite, and its principal moments satisfy
    the triangle inequality ``I1 + I2 >= I3`` (every rigid body does), within a
    round-off tolerance relative to the largest entry. Returns `inertia`.
    """
    scale = np.maximum(1.0, np.abs(inertia).max(axis=(-2, -1), initial=0.0))[..., None, None]
    asym = np.abs(inertia - np.swapaxes(inertia, -1, -2)) > 1e-9 * scale
    if np.any(asym):
        raise error(f"`{name}` must be symmetric (kg m² about the COM); it is not")
    eig = np.linalg.eigvalsh(0.5 * (inertia + np.swapaxes(inertia, -1, -2)))
    tol = 1e-10 * scale[..., 0, 0]
    if np.any(eig[..., 0] < -tol):
        raise error(
            f"`{name}` is not positive semi-definite (a principal moment is negative, "
            f"min {eig[..., 0].min():.6g} kg m²); check the signs of the products of inertia"
        )
    if np.any(eig[..., 0] + eig[..., 1] < eig[..., 2] - tol):
        raise error(
            f"`{name}` violates the triangle inequality of principal moments (I1 + I2 >= I3); "
            "no rigid body has such an inertia"
        )
    return inertia


def broadcast_batch(*items) -> tuple:
    """The common batch shape of arrays given as ``(name, array, n_trailing_axes)``.

    Raises DataError naming the arguments whose leading (batch) axes do not
    broadcast, e.g. a signal of 60 frames against rotations of 0 frames.
    """
    shapes = [a.shape[: a.ndim - k] for _, a, k in items]
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError as err:
        listed = ", ".join(f"`{n}` {a.shape}" for n, a, _ in items)
        raise DataError(
            f"the batch (leading) axes of {listed} do not broadcast; give the same number "
            "of frames to each"
        ) from err


def check_model(model, name: str = "model") -> None:
    """Raise ModelError unless `model` is an :class:`ahbm.kinematics.Model`.

    The class is recognized by name and module (this module sits below
    ``ahbm.kinematics`` in the layering and does not import it).
    """
    ok = any(
        c.__name__ == "Model" and c.__module__ == "ahbm.kinematics.tree"
        for c in type(model).__mro__
    )
    if not ok:
        raise ModelError(
            f"Expected `{name}` to be an ahbm Model (ahbm.kinematics.Model, e.g. from "
            f"load_model or ahbm.models), got {_kind_of(model)}"
        )


def as_path(path, name: str = "path", *, error=DataError) -> Path:
    """`path` (str or os.PathLike) as a Path, or `error` naming `name` (e.g. for None)."""
    if not isinstance(path, (str, os.PathLike)):
        raise error(
            f"Expected `{name}` to be a file path (str or os.PathLike), got {_kind_of(path)}"
        )
    return Path(os.fspath(path))


def input_path(path, name: str = "path", *, error=DataError) -> Path:
    """`path` as the Path of an existing file to read, or `error` naming `name`."""
    if not isinstance(path, (str, os.PathLike)):
        raise error(
            f"Expected `{name}` to be a file path (str or os.PathLike), got {_kind_of(path)}"
        )
    target = Path(os.fspath(path))
    if "\x00" in str(target):
        raise error(f"`{name}` {str(target)!r} contains a NUL character")
    if target.is_dir():
        raise error(f"`{name}` {str(target)!r} is a folder; give a file inside it")
    if not target.is_file():
        raise error(f"`{name}`: no such file {str(target)!r}")
    return target


def as_nonnegative_float(value, name: str, *, unit: str = "", error=DataError) -> float:
    """`value` as a finite float >= 0, or `error` naming `name` (and its unit)."""
    what = f"a number >= 0 in {unit}" if unit else "a number >= 0"
    v = _as_real_scalar(value, name, what, error)
    if not (np.isfinite(v) and v >= 0):
        raise error(f"Expected `{name}` to be {what}, got {value!r}")
    return v


def as_int(value, name: str, *, minimum: int | None = None, error=DataError) -> int:
    """`value` as an int (an integral float is accepted), at least `minimum` if given."""
    what = "an integer" if minimum is None else f"an integer >= {minimum}"
    if isinstance(value, (bool, np.bool_)) or value is None or isinstance(value, (str, bytes)):
        raise error(f"Expected `{name}` to be {what}, got {value!r} ({_kind_of(value)})")
    try:
        f = float(value)
    except (TypeError, ValueError, OverflowError) as err:
        raise error(f"Expected `{name}` to be {what}, got {_kind_of(value)}: {value!r}") from err
    if not np.isfinite(f) or f != int(f):
        raise error(f"Expected `{name}` to be {what}, got {value!r}")
    v = int(f)
    if minimum is not None and v < minimum:
        raise error(f"Expected `{name}` to be {what}, got {value!r}")
    return v


def as_choice(value, name: str, choices, *, error=DataError):
    """`value` if it is one of `choices`, else `error` listing them."""
    if isinstance(value, np.ndarray) or (
        not isinstance(value, (str, int, float, type(None))) and not np.isscalar(value)
    ):
        ok = False  # arrays, lists, dicts are never an option value
    else:
        try:
            ok = value in choices
        except (TypeError, ValueError):
            ok = False
    if not ok or isinstance(value, (bool, np.bool_)) and not any(c is value for c in choices):
        listed = ", ".join(repr(c) for c in choices)
        raise error(f"Expected `{name}` to be one of {listed}; got {value!r}")
    return value


def check_not_empty(arr: np.ndarray, name: str, *, axis: int = 0, minimum: int = 1) -> None:
    """Raise DataError if `arr` has fewer than `minimum` samples along `axis`."""
    n = arr.shape[axis] if arr.ndim else 1
    if arr.size == 0 or n < minimum:
        need = "at least one sample" if minimum == 1 else f"at least {minimum} samples"
        raise DataError(
            f"`{name}` needs {need} along axis {axis}, got shape {arr.shape}; "
            "pass a non-empty signal"
        )


def check_callable(value, name: str, *, error=DataError) -> None:
    """Raise `error` if `value` is not callable."""
    if not callable(value):
        raise error(f"Expected `{name}` to be callable, got {_kind_of(value)}")


def output_path(path, name: str = "path") -> Path:
    """`path` as the Path of a file to write, or DataError naming `name`.

    The value must be a str or os.PathLike (not None, not a Trial or an array:
    the usual cause is swapped arguments, ``write_x(path, data)`` instead of
    ``write_x(data, path)``), must not be empty, and must not name a folder.
    Whether the folder exists is checked when the file is written
    (:func:`ahbm._internal.files.atomic_path`).
    """
    if not isinstance(path, (str, os.PathLike)):
        raise DataError(
            f"Expected `{name}` to be a file path (str or os.PathLike), got {_kind_of(path)}; "
            "writers take the data first and the path second: write_x(data, path)"
        )
    try:
        target = Path(os.fspath(path))
    except TypeError as err:
        raise DataError(f"Expected `{name}` to be a file path, got {_kind_of(path)}") from err
    if str(path) == "" or target.name == "":
        raise DataError(f"`{name}` is empty; give the name of the file to write")
    if "\x00" in str(target):
        raise DataError(f"`{name}` {str(target)!r} contains a NUL character")
    if target.is_dir():
        raise DataError(f"`{name}` {str(target)!r} is a folder; give the name of a file inside it")
    return target


def check_finite(arr: np.ndarray, name: str) -> None:
    """Raise DataError if `arr` contains NaN or inf, naming the first index."""
    if arr.size and not np.isfinite(arr).all():
        bad = np.argwhere(~np.isfinite(arr))[0]
        where = tuple(int(i) for i in bad)
        raise DataError(
            f"`{name}` contains non-finite values (first at index {where}); "
            "remove or fill missing samples before calling this function"
        )


def check_trailing_shape(arr: np.ndarray, shape: tuple, name: str) -> np.ndarray:
    """Check that the trailing axes of `arr` equal `shape`.

    Leading axes are batch axes and are free. Returns `arr` unchanged.
    """
    n = len(shape)
    if arr.ndim < n or tuple(arr.shape[arr.ndim - n :]) != tuple(shape):
        want = "(..., " + ", ".join(str(s) for s in shape) + ")"
        raise DataError(f"Expected `{name}` to have shape {want}, got {arr.shape}")
    return arr


def as_vector_array(x, size: int, name: str, *, allow_nan: bool = False) -> np.ndarray:
    """Cast to float64 and check the last axis has length `size`."""
    arr = as_float_array(x, name, allow_nan=allow_nan)
    return check_trailing_shape(arr, (size,), name)


def _time_vector(time, n: int) -> np.ndarray:
    t = as_float_array(time, "time", allow_nan=True).ravel() if time is not None else None
    if t is None or t.size != n:
        size = None if t is None else t.size
        raise DataError(
            f"Expected `time` to have {n} samples (the length of the signal along its time "
            f"axis), got {size}"
        )
    if not np.all(np.isfinite(t)):
        raise DataError("`time` contains NaN or inf; give finite sample times in s")
    dt = np.diff(t)
    if np.any(dt <= 0):
        i = int(np.argmax(dt <= 0))
        raise DataError(f"`time` must be strictly increasing; it is not at index {i}->{i + 1}")
    return t


def sample_times(n: int, *, rate=None, time=None, required: bool = True) -> np.ndarray:
    """Sample times (n,) in s from exactly one of `rate` (Hz) or `time` (s).

    The one time convention of the signal functions (docs/api-rules.md):
    ``f(x, *, rate=None, time=None)``. Giving both is an error; giving neither is an error when
    `required`, otherwise the times are the sample indices ``0, 1, ..., n-1``
    (the functions that document "sample indices" when no time axis is given).
    """
    if rate is not None and time is not None:
        raise DataError(
            "Give exactly one of `rate` (Hz, uniform sampling) or `time` (s, one time per "
            "sample), not both"
        )
    if time is not None:
        return _time_vector(time, n)
    if rate is not None:
        return np.arange(n) / as_positive_float(rate, "rate", unit="Hz")
    if required:
        raise DataError(
            "Give exactly one of `rate` (Hz, uniform sampling) or `time` (s, one time per "
            "sample); neither was given"
        )
    return np.arange(n, dtype=float)


def sample_rate(n: int, *, rate=None, time=None, rtol: float = 1e-6) -> tuple[float, float]:
    """Uniform sample rate (Hz) and first sample time (s) from exactly one of `rate`/`time`.

    For the functions that need uniform sampling (filters, Savitzky-Golay,
    event detectors): a `time` vector must be uniform within `rtol` of its
    mean step; its rate is ``1 / step`` and its start ``time[0]``.
    """
    if time is None:
        sample_times(0, rate=rate, time=None)  # raises when rate is missing
        return as_positive_float(rate, "rate", unit="Hz"), 0.0
    t = sample_times(n, rate=rate, time=time)
    if n < 2:
        raise DataError("`time` needs at least 2 samples to define a sample rate")
    dt = np.diff(t)
    step = (t[-1] - t[0]) / (n - 1)
    if np.max(np.abs(dt - step)) > rtol * step:
        raise DataError(
            "This function needs uniform sampling but `time` is not uniform (steps from "
            f"{dt.min():.6g} to {dt.max():.6g} s); resample the signal or give `rate`"
        )
    return 1.0 / step, float(t[0])


# ----------------------------------------------------------------------------
# the read cap: how much memory one read of a file may allocate
# ----------------------------------------------------------------------------

#: Default cap (bytes) on the memory that one read of a file may allocate: 2 GiB.
DEFAULT_MAX_READ_BYTES = 2 * 2**30
_READ_CAP_ENV = "AHBM_MAX_READ_BYTES"
_read_cap: list = [None]  # set_max_read_bytes's value; None = environment or default


def _format_bytes(n: int) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} bytes"


def max_read_bytes() -> int:
    """The cap (bytes) on the memory one read of a file may allocate.

    Every reader (C3D, TRC, MOT/STO, HDF5 stores, model files) computes the
    size of the arrays a file declares *before* allocating them and refuses a
    file that would need more (a ``FileFormatError`` that names the file, what
    it declares and this cap). The cap is, in order: the value given to
    :func:`set_max_read_bytes`; the environment variable
    ``AHBM_MAX_READ_BYTES`` (bytes, an integer); ``DEFAULT_MAX_READ_BYTES``
    (2 GiB).

    Returns
    -------
    int
        Bytes.

    Raises
    ------
    DataError
        If ``AHBM_MAX_READ_BYTES`` is set but is not a positive integer.

    Examples
    --------
    >>> previous = set_max_read_bytes(8 * 2**30)  # a genuine 8 GiB recording
    >>> max_read_bytes()
    8589934592
    >>> _ = set_max_read_bytes(previous)
    """
    if _read_cap[0] is not None:
        return _read_cap[0]
    text = os.environ.get(_READ_CAP_ENV)
    if text is None or not text.strip():
        return DEFAULT_MAX_READ_BYTES
    try:
        value = int(text.strip())
    except ValueError:
        value = 0
    if value <= 0:
        raise DataError(
            f"The environment variable {_READ_CAP_ENV}={text!r} must be a positive integer "
            "(bytes); unset it to use the default cap of 2 GiB"
        )
    return value


def set_max_read_bytes(nbytes) -> int | None:
    """Set the cap of :func:`max_read_bytes` for this process; return the previous setting.

    Parameters
    ----------
    nbytes : int or None
        Bytes a single read may allocate; None goes back to
        ``AHBM_MAX_READ_BYTES`` or the default (2 GiB).

    Returns
    -------
    int or None
        The previous setting (None if there was none), to restore it.

    Raises
    ------
    DataError
        If `nbytes` is not a positive integer or None.

    Examples
    --------
    >>> previous = set_max_read_bytes(64 * 2**20)  # refuse anything above 64 MiB
    >>> try:
    ...     pass  # read untrusted files here
    ... finally:
    ...     _ = set_max_read_bytes(previous)
    """
    previous = _read_cap[0]
    if nbytes is None:
        _read_cap[0] = None
        return previous
    if isinstance(nbytes, bool) or not isinstance(nbytes, (int, np.integer)) or nbytes <= 0:
        raise DataError(
            f"Expected `nbytes` to be a positive integer (bytes) or None, got {nbytes!r}"
        )
    _read_cap[0] = int(nbytes)
    return previous


def check_read_size(nbytes, what: str, source: str, *, error=FileFormatError) -> int:
    """Refuse a read that would allocate more than :func:`max_read_bytes`.

    Parameters
    ----------
    nbytes : int
        Bytes the read is about to allocate, computed from the file's declared
        sizes with Python integers (which cannot overflow).
    what : str
        What is allocated, e.g. ``"4294967152 frames of 2 points"``.
    source : str
        The file, e.g. ``"C3D file 'walk.c3d'"``.
    error : type
        Exception class (FileFormatError by default).

    Returns
    -------
    int
        `nbytes`, when it is within the cap.
    """
    cap = max_read_bytes()
    nbytes = int(nbytes)
    if nbytes > cap:
        raise error(
            f"{source}: {what} would need {_format_bytes(nbytes)}, more than the read cap of "
            f"{_format_bytes(cap)}; the file is damaged or crafted, or, if it is genuine, raise "
            f"the cap with ahbm.io.set_max_read_bytes(n) or the environment variable "
            f"{_READ_CAP_ENV}"
        )
    return nbytes
