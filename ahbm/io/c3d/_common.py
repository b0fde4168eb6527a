"""Constants and the warning helper shared by the C3D reader and writer (internal)."""

from __future__ import annotations

import sys
import warnings

from ahbm.errors import AhbmWarning

#: Length units understood in POINT:UNITS, as metres per unit.
C3D_LENGTH_UNITS: dict[str, float] = {
    "mm": 1e-3,
    "millimeter": 1e-3,
    "millimeters": 1e-3,
    "millimetre": 1e-3,
    "millimetres": 1e-3,
    "cm": 1e-2,
    "dm": 1e-1,
    "m": 1.0,
    "meter": 1.0,
    "meters": 1.0,
    "metre": 1.0,
    "metres": 1.0,
    "in": 0.0254,
    "inch": 0.0254,
    "inches": 0.0254,
    "ft": 0.3048,
}


def _warn(message: str) -> None:
    """Issue an AhbmWarning attributed to the first caller outside ahbm.io's readers."""
    frame = sys._getframe(1)
    level = 2
    while frame is not None and _internal(frame.f_globals.get("__name__")):
        frame = frame.f_back
        level += 1
    warnings.warn(message, AhbmWarning, stacklevel=level)


def _internal(module) -> bool:
    """True for the modules of the C3D package and the force plate reader."""
    return isinstance(module, str) and (
        module == "ahbm.io.forceplates" or module.split(".")[:3] == ["ahbm", "io", "c3d"]
    )


_BLOCK = 512
_PROCESSORS = {84: "Intel", 85: "DEC", 86: "MIPS"}
_TYPE_SIZES = {-1: 1, 1: 1, 2: 2, 4: 4}


#: Spelled-out length units that a file may store truncated ('mete', 'millim', 'centi').
_LONG_LENGTH_UNITS: dict[str, float] = {
    "millimeters": 1e-3,
    "millimetres": 1e-3,
    "centimeters": 1e-2,
    "centimetres": 1e-2,
    "decimeters": 1e-1,
    "decimetres": 1e-1,
    "meters": 1.0,
    "metres": 1.0,
    "inches": 0.0254,
    "feet": 0.3048,
    "foot": 0.3048,
}


def _unit_factor(units: str | None, *, lenient: bool = False) -> float | None:
    """Metres per unit of a length unit name (None if unknown).

    With `lenient` (unit strings read from a file), case, surrounding blanks and
    NUL bytes, a trailing dot and truncation are forgiven: any prefix of at least
    three letters of a spelled-out unit reads as that unit, so POINT:UNITS
    'mete' (a 4-character field holding 'meters') is metres and 'milli' is
    millimetres. A prefix shared by two units of different sizes stays unknown.
    """
    if not isinstance(units, str):
        return None
    key = units.strip().lower()
    known = C3D_LENGTH_UNITS.get(key)
    if known is not None or not lenient:
        return known
    key = key.strip("\x00 \t.")
    known = C3D_LENGTH_UNITS.get(key)
    if known is not None or len(key) < 3:
        return known
    factors = {f for name, f in _LONG_LENGTH_UNITS.items() if name.startswith(key)}
    return factors.pop() if len(factors) == 1 else None
