"""Model files: read and write a whole :class:`~ahbm.kinematics.tree.Model` as JSON.

The file format (version 1) is specified in :mod:`ahbm.kinematics.tree`. A
model file owns all of a model: its bodies, joints, markers and geometry,
and the top-level *sections* that other layers define (``"constraints"``
today, read by :mod:`ahbm.dynamics.constraints`; ``"muscles"`` and
``"contacts"`` will come the same way). A section is registered with
:func:`register_model_section` by the package that owns its classes, because
the kinematics layer may not import the layers above it. The owners of the
toolbox's own sections are listed by name in ``_SECTION_OWNERS`` of
:mod:`ahbm.kinematics.model_dict` (a plugin table, not an import) and
imported on the first read or write of a model file, so :func:`load_model`
always knows them and ``import ahbm`` stays light.
Nothing is reserved or dropped silently: an entry of a file that no
reader understands, or a section whose reader is not registered, is a
:class:`~ahbm.errors.ModelError` that names the entry and the file.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np

from ahbm._internal.files import atomic_path
from ahbm._internal.validation import check_read_size, output_path
from ahbm.errors import FileFormatError, ModelError
from ahbm.kinematics import model_dict
from ahbm.kinematics.model_dict import _BASE_ENTRIES, _MAX_DEPTH, ModelSection, model_to_dict
from ahbm.kinematics.tree import Model

__all__ = [
    "load_model",
    "save_model",
    "register_model_section",
    "model_from_dict",
]


def register_model_section(key: str, *, read, write, check, owner: str) -> None:
    """Register the reader and writer of a top-level model-file section.

    Parameters
    ----------
    key : str
        Entry name, e.g. ``"constraints"``; not one of the base entries
        (``format``, ``version``, ``name``, ``gravity``, ``bodies``).
    read, write, check : callable
        See :class:`ModelSection`.
    owner : str
        Module that owns the section's classes, e.g. ``"ahbm.dynamics"``.

    Notes
    -----
    Registering a key again replaces its functions (so a module can be
    reloaded). :mod:`ahbm.dynamics.constraints` registers ``"constraints"``.
    """
    if not isinstance(key, str) or not key.isidentifier() or key in _BASE_ENTRIES:
        raise ModelError(
            f"model-file section name must be an identifier other than {list(_BASE_ENTRIES)}, "
            f"got {key!r}"
        )
    if hasattr(Model, key) and key != "constraints":
        raise ModelError(f"model-file section {key!r} would hide the Model attribute {key!r}")
    for fn_name, fn in (("read", read), ("write", write), ("check", check)):
        if not callable(fn):
            raise ModelError(f"register_model_section({key!r}): `{fn_name}` must be callable")
    model_dict._SECTIONS[key] = ModelSection(key, read, write, check, str(owner))


def model_from_dict(data: dict, *, source: str = "model dict", cls=Model) -> Model:
    """Build a model and its sections from a model-file dictionary (see :func:`load_model`).

    Parameters
    ----------
    data : dict
        The model-file dictionary (version 1).
    source : str, optional
        What `data` is, for error messages.
    cls : type, optional
        The class of the model (``Model`` or a subclass).

    Returns
    -------
    Model
    """
    return cls.from_dict(data, source=source)


def load_model(path_or_dict) -> Model:
    """Load a model, with all its sections, from a JSON model file (or its dictionary).

    Parameters
    ----------
    path_or_dict : str, os.PathLike or dict
        Path to an ``ahbm-model`` JSON file (version 1), or the dictionary.

    Returns
    -------
    Model
        With its bodies, markers and the registered sections of the file
        (``model.constraints`` from ``"constraints"``).

    Raises
    ------
    FileFormatError
        The file is missing, not UTF-8 text (the message names the byte and
        the line), not JSON (numbers of more than 4,300 digits included),
        nested more than 64 levels deep, larger than the read cap allows
        (16 bytes per byte of JSON, see :func:`ahbm.io.max_read_bytes`), or
        not an ahbm model file.
    ModelError
        The content is inconsistent, or has an entry or field that no reader
        understands, or a value of the wrong type or out of range: names and
        parents that are not non-empty strings, numbers that are not finite
        or beyond 1e12 (SI units), a negative mass, an inertia that is not
        symmetric positive semi-definite with I1 + I2 >= I3, a rotation that
        is not proper orthonormal (the message names the file, the body and
        the field).

    Notes
    -----
    Every field is checked before it is used, and the derived arrays of the
    model are built once, on first use, so loading is linear in the size of
    the file (600 bodies take about 0.13 s). What a crafted file can do is
    described in ``docs/security.md``.

    Examples
    --------
    >>> m = load_model({"format": "ahbm-model", "version": 1, "name": "p",
    ...     "bodies": [{"name": "a", "parent": "ground", "mass": 1.0,
    ...                 "joint": {"type": "revolute", "axis": [0, 1, 0]}}]})
    >>> m.nq
    1
    """
    if isinstance(path_or_dict, dict):
        return model_from_dict(path_or_dict)
    if not isinstance(path_or_dict, (str, os.PathLike)):
        raise FileFormatError(
            f"load_model expects a path or a dict, got {type(path_or_dict).__name__}"
        )
    path = Path(path_or_dict)
    source = f"model file '{path}'"
    try:
        size = path.stat().st_size
        # parsed JSON takes about 10 times the bytes of its text in Python objects
        check_read_size(16 * size, f"parsing {size} bytes of JSON", source)
        raw = path.read_bytes()
    except OSError as err:
        raise FileFormatError(f"cannot read model file '{path}': {err}") from err
    try:
        text = raw.decode("utf-8-sig")  # a byte order mark is allowed
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        raise FileFormatError(
            f"{source} is not UTF-8 text: byte {err.start} (line {line}) is "
            f"{raw[err.start]:#04x}; save the file with UTF-8 encoding"
        ) from err
    _check_json_depth(text, source)
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys)
    except _DuplicateKey as err:
        raise FileFormatError(
            f"{source}: the key {err.args[0]!r:.60} appears twice in one object; JSON keeps only "
            "the last, so one of the values would be lost (remove the other)"
        ) from None
    except (ValueError, RecursionError) as err:  # JSONDecodeError, numbers of > 4300 digits
        raise FileFormatError(f"{source} is not valid JSON: {err}") from err
    return model_from_dict(data, source=source)


class _DuplicateKey(Exception):
    pass


def _unique_keys(pairs: list) -> dict:
    """A JSON object as a dict; a key given twice raises (json would keep the last silently)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return out


def _check_json_depth(text: str, source: str) -> None:
    """FileFormatError when the JSON `text` nests lists/objects deeper than ``_MAX_DEPTH``.

    One vectorized pass over the text without its strings: the parser, and
    everything that copies the values, recurses once per level.
    """
    bare = re.sub(r'"(?:[^"\\]|\\.)*"', '""', text)
    codes = np.frombuffer(bare.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    step = np.isin(codes, (0x5B, 0x7B)).astype(np.int64) - np.isin(codes, (0x5D, 0x7D))
    depth = int(np.cumsum(step).max()) if step.size else 0
    if depth > _MAX_DEPTH:
        raise FileFormatError(
            f"{source}: lists and objects are nested {depth} levels deep; a model file nests "
            f"at most {_MAX_DEPTH} (the file is damaged or crafted)"
        )


def save_model(model: Model, path) -> Path:
    """Write a model, with all its sections, to a JSON model file (atomically).

    Parameters
    ----------
    model : Model
    path : str or os.PathLike
        Destination file.

    Returns
    -------
    Path
        The written path.

    Raises
    ------
    ModelError
        An item of a section cannot be stored (e.g. a ``UserConstraint``
        holding a Python function); nothing is written.
    FileFormatError
        The folder does not exist.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> m = Model("p"); _ = m.add_body("a", "ground", "fixed", mass=1.0)
    >>> p = save_model(m, pathlib.Path(tempfile.mkdtemp()) / "p.json")
    >>> load_model(p).body_names
    ['a']
    """
    if not isinstance(model, Model):
        raise ModelError(f"save_model expects a Model, got {type(model).__name__}")
    path = output_path(path)
    text = json.dumps(model_to_dict(model), indent=2)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise FileFormatError(f"cannot write model file '{path}': folder does not exist")
    with atomic_path(path, argname="path") as tmp:
        tmp.write_text(text, encoding="utf-8")
    return path
