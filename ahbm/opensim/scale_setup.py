"""OpenSim's Scale setup files (``<ScaleTool>``) read into frozen setups.

:func:`read_scale_setup` reads an OpenSim Scale setup (the
``GenericModelMaker``, the ``ModelScaler`` with its measurements and manual
scales, and the ``MarkerPlacer``) into a frozen :class:`ScaleSetup`, which
:func:`ahbm.opensim.scale_tool.run_scale` runs. Relative file names are
resolved against the setup file's folder, as OpenSim does; ``Unassigned``
means not given. A ``<MeasurementSet>``, ``<ScaleSet>`` or ``<IKTaskSet>``
may be kept in its own file (``file=``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ahbm.errors import FileFormatError
from ahbm.opensim._xml import XmlElement
from ahbm.opensim.setup_files import (
    _file,
    _float,
    _ik_task_set,
    _objects,
    _opt_bool,
    _opt_float,
    _shown,
    _split_words,
    _text,
    _time_range,
    _tool_root,
)

__all__ = ["ModelScalerSetup", "MarkerPlacerSetup", "ScaleSetup", "read_scale_setup"]


# --- the setup ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelScalerSetup:
    """The ``<ModelScaler>`` of a Scale setup.

    Attributes
    ----------
    apply : bool
    scaling_order : tuple of str
        ``"measurements"`` and/or ``"manualScale"``, in order.
    measurements : tuple of ahbm.bsp.Measurement
        All measurements of the ``<MeasurementSet>`` (with their ``apply``).
    manual_scales : tuple of (str, ndarray (3,))
        The applied ``<Scale>`` entries of the ``<ScaleSet>``: body and factors.
    marker_file : pathlib.Path or None
        Static trial (``.trc``).
    time_range : tuple of float or None
        ``(start, end)``, s.
    preserve_mass_distribution : bool
    output_model_file, output_scale_file : pathlib.Path or None
    """

    apply: bool = True
    scaling_order: tuple = ("measurements",)
    measurements: tuple = ()
    manual_scales: tuple = ()
    marker_file: Path | None = None
    time_range: tuple | None = None
    preserve_mass_distribution: bool = False
    output_model_file: Path | None = None
    output_scale_file: Path | None = None


@dataclass(frozen=True)
class MarkerPlacerSetup:
    """The ``<MarkerPlacer>`` of a Scale setup.

    Attributes
    ----------
    apply : bool
    tasks : tuple of ahbm.opensim.IKTask
        The ``<IKTaskSet>`` (marker and coordinate tasks).
    marker_file, coordinate_file : pathlib.Path or None
    time_range : tuple of float or None
    output_model_file, output_motion_file, output_marker_file : pathlib.Path or None
    max_marker_movement : float
        Largest movement of a marker over the averaged frames before a
        warning, in the trial file's units; negative: no check.
    """

    apply: bool = True
    tasks: tuple = ()
    marker_file: Path | None = None
    coordinate_file: Path | None = None
    time_range: tuple | None = None
    output_model_file: Path | None = None
    output_motion_file: Path | None = None
    output_marker_file: Path | None = None
    max_marker_movement: float = -1.0

    @property
    def marker_tasks(self) -> tuple:
        """The applied marker tasks."""
        return tuple(t for t in self.tasks if t.kind == "marker" and t.apply)

    @property
    def coordinate_tasks(self) -> tuple:
        """The applied coordinate tasks."""
        return tuple(t for t in self.tasks if t.kind == "coordinate" and t.apply)


@dataclass(frozen=True)
class ScaleSetup:
    """An OpenSim Scale setup (``<ScaleTool>``), file names resolved.

    Attributes
    ----------
    path : pathlib.Path
    name : str
    mass : float
        Subject mass, kg (``<mass>``); not positive: the masses are not
        normalized to a total.
    height, age : float
        Kept for reference (OpenSim does not use them).
    model_file, marker_set_file : pathlib.Path or None
        The ``<GenericModelMaker>``'s files.
    scaler : ModelScalerSetup or None
    placer : MarkerPlacerSetup or None
    set_files : tuple of pathlib.Path
        The files that hold a ``<MeasurementSet>``, ``<ScaleSet>`` or
        ``<IKTaskSet>`` of the setup (``file=`` attributes).
    """

    path: Path
    name: str = ""
    mass: float = -1.0
    height: float = -1.0
    age: float = -1.0
    model_file: Path | None = None
    marker_set_file: Path | None = None
    scaler: ModelScalerSetup | None = None
    placer: MarkerPlacerSetup | None = None
    set_files: tuple = ()


def _vec(el: XmlElement, n: int) -> np.ndarray:
    parts = _split_words(el)
    if len(parts) != n:
        raise FileFormatError(f"{el.where()}: expected {n} numbers, got {_shown(_text(el))}")
    return np.array([_float(el, p) for p in parts])


def _measurement(el: XmlElement):
    from ahbm.bsp import Measurement

    name = el.attrib.get("name", "").strip()
    if not name:
        raise FileFormatError(f"{el.where()}: a Measurement needs a name attribute")
    pairs = []
    mps = el.find("MarkerPairSet")
    for p in _objects(mps) if mps is not None else []:
        if p.tag != "MarkerPair":
            raise FileFormatError(f"{p.where()}: expected <MarkerPair> in a MarkerPairSet")
        m = p.find("markers")
        names = _split_words(m)
        if len(names) != 2:
            raise FileFormatError(
                f"{(m or p).where()}: a marker pair needs exactly two marker names, got "
                f"{_shown(_text(m))}"
            )
        pairs.append(tuple(names))
    axes = []
    bss = el.find("BodyScaleSet")
    for b in _objects(bss) if bss is not None else []:
        if b.tag != "BodyScale":
            raise FileFormatError(f"{b.where()}: expected <BodyScale> in a BodyScaleSet")
        body = b.attrib.get("name", "").strip()
        if not body:
            raise FileFormatError(f"{b.where()}: a BodyScale needs a name attribute (the body)")
        a = b.find("axes")
        letters = "".join(_split_words(a)).upper()
        if not letters or any(c not in "XYZ" for c in letters):
            raise FileFormatError(
                f"{(a or b).where()}: <axes> must list X, Y and/or Z, got {_shown(_text(a))}"
            )
        axes.append((body, letters))
    return Measurement(name, pairs, axes, _opt_bool(el, "apply", True))


def _set_element(node: XmlElement, tag: str, folder: Path, found=None) -> XmlElement | None:
    """The ``<tag>`` Set of `node`, read from its ``file`` attribute when it has one.

    OpenSim setups may keep a Set in its own file (``<MeasurementSet
    file="gait2354_Scale_MeasurementSet.xml"/>``), relative to the setup's folder.
    """
    from ahbm.opensim._xml import parse_xml_file

    el = node.find(tag)
    ref = "" if el is None else el.attrib.get("file", "").strip()
    if el is None or ref.lower() in ("", "unassigned"):
        return el
    path = Path(ref.replace("\\", "/"))
    path = path if path.is_absolute() else folder / path
    if found is not None:
        found.append(path)
    root = parse_xml_file(path, f"<{tag}> (named at {el.where()})")
    found = root if root.tag == tag else root.find(tag)
    if found is None:
        raise FileFormatError(
            f"{el.where()}: the file '{path}' it names has no <{tag}> (root <{root.tag}>)"
        )
    return found


def _set_owner(node: XmlElement, tag: str, folder: Path, found=None) -> XmlElement:
    """An element whose ``<tag>`` child is the Set of `node` (inline or from its file)."""
    el = _set_element(node, tag, folder, found)
    if el is None or el is node.find(tag):
        return node
    return XmlElement(node.tag, {}, el.line, source=el.source, children=[el])


def _scaler(node: XmlElement, folder: Path, found=None) -> ModelScalerSetup:
    order_el = node.find("scaling_order")
    order = _split_words(order_el) if order_el is not None else ("measurements",)
    for step in order:
        if step not in ("measurements", "manualScale"):
            raise FileFormatError(
                f"{order_el.where()}: unknown scaling step {_shown(step)}; OpenSim expects "
                "'measurements' and/or 'manualScale'"
            )
    measurements = []
    ms = _set_element(node, "MeasurementSet", folder, found)
    for el in _objects(ms) if ms is not None else []:
        if el.tag != "Measurement":
            raise FileFormatError(f"{el.where()}: expected <Measurement> in a MeasurementSet")
        measurements.append(_measurement(el))
    manual = []
    ss = _set_element(node, "ScaleSet", folder, found)
    for el in _objects(ss) if ss is not None else []:
        if el.tag != "Scale":
            raise FileFormatError(f"{el.where()}: expected <Scale> in a ScaleSet")
        seg = el.find("segment")
        if seg is None or not _text(seg):
            raise FileFormatError(f"{el.where()}: a Scale needs a <segment> (the body name)")
        sc = el.find("scales")
        if sc is None:
            raise FileFormatError(f"{el.where()}: a Scale needs <scales> (three factors)")
        if _opt_bool(el, "apply", True):
            manual.append((_text(seg), _vec(sc, 3)))
    return ModelScalerSetup(
        apply=_opt_bool(node, "apply", True),
        scaling_order=order,
        measurements=tuple(measurements),
        manual_scales=tuple(manual),
        marker_file=_file(node, "marker_file", folder),
        time_range=_time_range(node),
        preserve_mass_distribution=_opt_bool(node, "preserve_mass_distribution", False),
        output_model_file=_file(node, "output_model_file", folder),
        output_scale_file=_file(node, "output_scale_file", folder),
    )


def _placer(node: XmlElement, folder: Path, found=None) -> MarkerPlacerSetup:
    return MarkerPlacerSetup(
        apply=_opt_bool(node, "apply", True),
        tasks=_ik_task_set(_set_owner(node, "IKTaskSet", folder, found)),
        marker_file=_file(node, "marker_file", folder),
        coordinate_file=_file(node, "coordinate_file", folder),
        time_range=_time_range(node),
        output_model_file=_file(node, "output_model_file", folder),
        output_motion_file=_file(node, "output_motion_file", folder),
        output_marker_file=_file(node, "output_marker_file", folder),
        max_marker_movement=_opt_float(node, "max_marker_movement", -1.0),
    )


def read_scale_setup(path) -> ScaleSetup:
    """Read an OpenSim Scale setup file.

    Parameters
    ----------
    path : str or path-like
        An XML file with a ``<ScaleTool>`` element.

    Returns
    -------
    ScaleSetup
        Subject data, the generic model's files, the model scaler (measurements
        with marker pairs and body axes, manual scales, static trial, time
        range, mass option, outputs) and the marker placer (IK tasks, static
        trial, time range, outputs); file names resolved against the setup's
        folder.

    Raises
    ------
    FileFormatError
        Not a Scale setup, malformed XML or values, a DOCTYPE/ENTITY
        declaration, a marker pair without two markers, unknown axes or
        scaling steps, no model file (the message names the element and its
        line).

    Examples
    --------
    >>> setup = read_scale_setup("subject01_Setup_Scale.xml")  # doctest: +SKIP
    >>> [m.name for m in setup.scaler.measurements][:2]  # doctest: +SKIP
    ['pelvis', 'thigh_r']
    """
    node, folder = _tool_root(path, "ScaleTool", "Scale setup")
    gmm = node.find("GenericModelMaker")
    model_file = _file(gmm, "model_file", folder) if gmm is not None else None
    if model_file is None:
        el = (gmm.find("model_file") or gmm) if gmm is not None else node
        raise FileFormatError(
            f"{el.where()}: the Scale setup names no <GenericModelMaker><model_file>; ahbm "
            "needs the generic model to run the setup"
        )
    ms = node.find("ModelScaler")
    mp = node.find("MarkerPlacer")
    found: list = []
    scaler = _scaler(ms, folder, found) if ms is not None else None
    placer = _placer(mp, folder, found) if mp is not None else None
    return ScaleSetup(
        path=Path(path),
        name=node.attrib.get("name", ""),
        mass=_opt_float(node, "mass", -1.0),
        height=_opt_float(node, "height", -1.0),
        age=_opt_float(node, "age", -1.0),
        model_file=model_file,
        marker_set_file=_file(gmm, "marker_set_file", folder),
        scaler=scaler,
        placer=placer,
        set_files=tuple(found),
    )
