"""Body-segment-parameter tables (as data) and their evaluation for a subject.

Each table lists, per segment, the mass as a fraction of body mass, the
segment length as a fraction of stature, the centre of mass (COM) and the
radii of gyration (and, for Dumas et al., the products of inertia) as
fractions of the segment length. :func:`segment_parameters` turns a table
into masses (kg), COM positions (m) and inertia tensors about the COM
(kg m^2) for one subject.

Segment frame (all tables): origin at the segment's ``origin`` landmark,
axes of the anatomical neutral posture: x anterior, y to the subject's left,
z superior. Limbs and trunk segments therefore have their COM at negative z
(below their proximal/cranial origin); the foot's long axis is x. Tables
give right-side values; left segments are mirrored (y -> -y: the sign of
the COM y coordinate and of the xy and yz products flips).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ahbm._internal.validation import as_positive_float
from ahbm.errors import DataError
from ahbm.types import ResultRepr

__all__ = [
    "BSPTable",
    "SegmentData",
    "SegmentParameters",
    "TABLES",
    "compare_tables",
    "get_table",
    "parameters_to_dataframe",
    "segment_parameters",
]

_NAN = float("nan")


@dataclass(frozen=True)
class SegmentData:
    """One row of a BSP table (fractions, segment frame described in the module).

    Attributes
    ----------
    mass : float
        Segment mass / body mass.
    length : float
        Segment length / stature (NaN if the table gives none).
    com : tuple of 3 float
        COM position / segment length, in the segment frame.
    radii : tuple of 3 float
        Radii of gyration about the COM along x, y, z / segment length (NaN
        where the table gives none).
    products : tuple of 3 float
        Signed "radii" of the products of inertia (xy, xz, yz) / length: the
        tensor element is ``sign(r) r^2 m L^2`` (Dumas et al. 2007).
    origin, end : str
        Landmarks that define the segment length.
    bilateral : bool
        True for limb segments (returned as ``<name>_r`` and ``<name>_l``).
    """

    mass: float
    length: float
    com: tuple
    radii: tuple
    products: tuple = (0.0, 0.0, 0.0)
    origin: str = ""
    end: str = ""
    bilateral: bool = True


@dataclass(frozen=True)
class BSPTable:
    """A named table: ``segments[sex][name] -> SegmentData``.

    Attributes
    ----------
    name : str
        Key in :data:`TABLES`.
    source : str
        Bibliographic source of the numbers.
    segments : dict
        ``{sex: {segment: SegmentData}}``; ``sex`` is ``"male"``,
        ``"female"`` or ``None`` for tables without sex.
    notes : str
        Known caveats.
    """

    name: str
    source: str
    segments: dict = field(repr=False)
    notes: str = ""

    @property
    def sexes(self) -> tuple:
        """Sexes available in this table."""
        return tuple(self.segments)


@dataclass(frozen=True, repr=False)
class SegmentParameters(ResultRepr):
    """Inertial parameters of one segment of one subject.

    Attributes
    ----------
    name : str
        Segment name (``thigh_r``, ``head``, ...).
    mass : float
        kg.
    length : float
        m (NaN if unknown).
    com : ndarray, shape (3,)
        COM in the segment frame, m.
    inertia : ndarray, shape (3, 3)
        Inertia tensor about the COM in the segment frame, kg m^2 (NaN
        entries where the table gives no radius).
    origin, end : str
        Landmarks that define the segment length.
    """

    name: str
    mass: float
    length: float
    com: np.ndarray
    inertia: np.ndarray
    origin: str = ""
    end: str = ""


def _s(mass, length, com, radii, products=(0.0, 0.0, 0.0), origin="", end="", bilateral=True):
    return SegmentData(
        float(mass),
        float(length),
        tuple(com),
        tuple(radii),
        tuple(products),
        origin,
        end,
        bilateral,
    )


# ---------------------------------------------------------------------------
# Dempster (1955) as tabulated by Winter (2009), Table 4.1; lengths from
# Drillis & Contini (1966) as in Winter's Fig. 4.1.
# ---------------------------------------------------------------------------
def _dempster_winter():
    def limb(m, l, f, rho, o, e):
        return _s(m, l, (0, 0, -f), (rho, rho, _NAN), origin=o, end=e)

    seg = {
        "hand": limb(0.006, 0.108, 0.506, 0.297, "wrist axis", "knuckle II middle finger"),
        "forearm": limb(0.016, 0.146, 0.430, 0.303, "elbow axis", "ulnar styloid"),
        "upper_arm": limb(0.028, 0.186, 0.436, 0.322, "glenohumeral axis", "elbow axis"),
        "thigh": limb(0.100, 0.245, 0.433, 0.323, "greater trochanter", "femoral condyles"),
        "shank": limb(0.0465, 0.246, 0.433, 0.302, "femoral condyles", "medial malleolus"),
        "foot": _s(
            0.0145,
            0.152,
            (0.50, 0, 0),
            (_NAN, 0.475, 0.475),
            origin="lateral malleolus",
            end="head metatarsal II",
        ),
        "head_neck": _s(
            0.081,
            _NAN,
            (0, 0, 1.0),
            (0.495, 0.495, _NAN),
            origin="C7-T1",
            end="ear canal",
            bilateral=False,
        ),
        "trunk": _s(
            0.497,
            0.288,
            (0, 0, -0.50),
            (_NAN, _NAN, _NAN),
            origin="glenohumeral joints",
            end="greater trochanters",
            bilateral=False,
        ),
    }
    return {None: seg}


# ---------------------------------------------------------------------------
# de Leva (1996), Table 4 (adjusted Zatsiorsky-Seluyanov); lengths in mm of
# the mean subjects (male stature 1741 mm, female 1735 mm).
# ---------------------------------------------------------------------------
_DE_LEVA_ROWS = {
    # name: (origin, end, bilateral,
    #        male (length mm, mass %, CM % from origin, r_sag, r_trans, r_long %),
    #        female (...))
    "head": (
        "VERT",
        "MIDG",
        False,
        (203.3, 6.94, 59.76, 36.2, 37.6, 31.2),
        (200.2, 6.68, 58.94, 33.0, 35.9, 31.8),
    ),
    "trunk": (
        "SUPR",
        "MIDH",
        False,
        (531.9, 43.46, 44.86, 37.2, 34.7, 19.1),
        (529.3, 42.57, 41.51, 35.7, 33.9, 17.1),
    ),
    "upper_trunk": (
        "SUPR",
        "XYPH",
        False,
        (170.7, 15.96, 29.99, 71.6, 45.4, 65.9),
        (142.5, 15.45, 20.77, 74.6, 50.2, 71.8),
    ),
    "middle_trunk": (
        "XYPH",
        "OMPH",
        False,
        (215.5, 16.33, 45.02, 48.2, 38.3, 46.8),
        (205.3, 14.65, 45.12, 43.3, 35.4, 41.5),
    ),
    "lower_trunk": (
        "OMPH",
        "MIDH",
        False,
        (145.7, 11.17, 61.15, 61.5, 55.1, 58.7),
        (181.5, 12.47, 49.20, 43.3, 40.2, 44.4),
    ),
    "upper_arm": (
        "SJC",
        "EJC",
        True,
        (281.7, 2.71, 57.72, 28.5, 26.9, 15.8),
        (275.1, 2.55, 57.54, 27.8, 26.0, 14.8),
    ),
    "forearm": (
        "EJC",
        "WJC",
        True,
        (268.9, 1.62, 45.74, 27.6, 26.5, 12.1),
        (264.3, 1.38, 45.59, 26.1, 25.7, 9.4),
    ),
    "hand": (
        "WJC",
        "MET3",
        True,
        (86.2, 0.61, 79.00, 62.8, 51.3, 40.1),
        (78.0, 0.56, 74.74, 53.1, 45.4, 33.5),
    ),
    "thigh": (
        "HJC",
        "KJC",
        True,
        (422.2, 14.16, 40.95, 32.9, 32.9, 14.9),
        (368.5, 14.78, 36.12, 36.9, 36.4, 16.2),
    ),
    "shank": (
        "KJC",
        "LMAL",
        True,
        (434.0, 4.33, 44.59, 25.5, 24.9, 10.3),
        (432.3, 4.81, 44.16, 27.1, 26.7, 9.3),
    ),
    "foot": (
        "HEEL",
        "TTIP",
        True,
        (258.1, 1.37, 44.15, 25.7, 24.5, 12.4),
        (228.3, 1.29, 40.14, 29.9, 27.9, 13.9),
    ),
}
_DE_LEVA_STATURE = {"male": 1741.0, "female": 1735.0}


def _de_leva(trunk: str):
    skip = {"one": ("upper_trunk", "middle_trunk", "lower_trunk"), "three": ("trunk",)}[trunk]
    out = {}
    for sex, col in (("male", 3), ("female", 4)):
        seg = {}
        for name, row in _DE_LEVA_ROWS.items():
            if name in skip:
                continue
            o, e, bil = row[:3]
            ln, m, cm, rs, rt, rl = row[col]
            if name == "foot":  # long axis anterior (x): sag -> vertical z, trans -> y
                com, radii = (cm / 100, 0, 0), (rl / 100, rt / 100, rs / 100)
            else:
                com, radii = (0, 0, -cm / 100), (rs / 100, rt / 100, rl / 100)
            seg[name] = _s(
                m / 100, ln / _DE_LEVA_STATURE[sex], com, radii, origin=o, end=e, bilateral=bil
            )
        out[sex] = seg
    return out


# ---------------------------------------------------------------------------
# Dumas, Cheze & Verriest (2007), Table 2 (adjustments to McConville et al.
# 1980 and Young et al. 1983), ISB segment frames, right side. Converted
# here from ISB axes (x anterior, y superior, z right) to the ahbm segment
# frame (x anterior, y left, z superior): (x, y, z) -> (x, -z, y).
# Mean segment lengths in m; mean statures 1.77 m (male) / 1.61 m (female).
# ---------------------------------------------------------------------------
_DUMAS_ROWS = {
    # name: (origin, end, bilateral, sex: (L, m, cx, cy, cz, rxx, ryy, rzz, rxy, rxz, ryz))
    # (ISB axes; negative product radii stand for Dumas' "i" entries)
    "head_neck": (
        "C7/T1 joint centre",
        "head vertex",
        False,
        {
            "male": (0.244, 0.067, -0.062, 0.555, 0.001, 0.31, 0.25, 0.33, -0.09, -0.02, 0.03),
            "female": (0.221, 0.067, -0.070, 0.597, 0.000, 0.32, 0.27, 0.34, -0.06, 0.01, -0.01),
        },
    ),
    "torso": (
        "C7/T1 joint centre",
        "L5/S1 joint centre",
        False,
        {
            "male": (0.477, 0.333, -0.036, -0.420, -0.002, 0.27, 0.25, 0.28, 0.18, 0.02, -0.04),
            "female": (0.429, 0.304, -0.016, -0.436, -0.006, 0.29, 0.27, 0.29, 0.22, 0.05, -0.05),
        },
    ),
    "upper_arm": (
        "glenohumeral joint centre",
        "elbow joint centre",
        True,
        {
            "male": (0.271, 0.024, 0.017, -0.452, -0.026, 0.31, 0.14, 0.32, 0.06, 0.05, 0.02),
            "female": (0.243, 0.022, -0.073, -0.454, -0.028, 0.33, 0.17, 0.33, 0.03, -0.05, 0.14),
        },
    ),
    "forearm": (
        "elbow joint centre",
        "wrist joint centre",
        True,
        {
            "male": (0.283, 0.017, 0.010, -0.417, 0.014, 0.28, 0.11, 0.27, 0.03, 0.02, -0.08),
            "female": (0.247, 0.013, 0.021, -0.411, 0.019, 0.26, 0.14, 0.25, 0.10, 0.04, -0.13),
        },
    ),
    "hand": (
        "wrist joint centre",
        "2nd-5th metacarpal heads",
        True,
        {
            "male": (0.080, 0.006, 0.082, -0.839, 0.074, 0.61, 0.38, 0.56, 0.22, 0.15, -0.20),
            "female": (0.071, 0.005, 0.077, -0.768, 0.048, 0.63, 0.43, 0.58, 0.29, 0.23, -0.28),
        },
    ),
    "pelvis": (
        "L5/S1 joint centre",
        "hip joint centres (projected)",
        False,
        {
            "male": (0.094, 0.142, 0.028, -0.280, -0.006, 1.01, 1.06, 0.95, -0.25, -0.12, -0.08),
            "female": (0.107, 0.146, -0.009, -0.232, 0.002, 0.91, 1.00, 0.79, -0.34, -0.01, -0.01),
        },
    ),
    "thigh": (
        "hip joint centre",
        "knee joint centre",
        True,
        {
            "male": (0.432, 0.123, -0.041, -0.429, 0.033, 0.29, 0.15, 0.30, 0.07, -0.02, -0.07),
            "female": (0.379, 0.146, -0.077, -0.377, 0.009, 0.31, 0.19, 0.32, 0.07, -0.02, -0.07),
        },
    ),
    "shank": (
        "knee joint centre",
        "ankle joint centre",
        True,
        {
            "male": (0.433, 0.048, -0.048, -0.410, 0.007, 0.28, 0.10, 0.28, -0.04, -0.02, 0.05),
            "female": (0.388, 0.045, -0.049, -0.404, 0.031, 0.28, 0.10, 0.28, 0.02, 0.01, 0.06),
        },
    ),
    "foot": (
        "ankle joint centre",
        "1st-5th metatarsal heads",
        True,
        {
            "male": (0.183, 0.012, 0.382, -0.151, 0.026, 0.17, 0.37, 0.36, 0.13, -0.08, 0.0),
            "female": (0.165, 0.010, 0.270, -0.218, 0.039, 0.17, 0.36, 0.35, -0.10, 0.06, -0.04),
        },
    ),
}
_DUMAS_STATURE = {"male": 1.77, "female": 1.61}


def _dumas():
    out = {}
    for sex in ("male", "female"):
        seg = {}
        for name, (o, e, bil, rows) in _DUMAS_ROWS.items():
            ln, m, cx, cy, cz, rxx, ryy, rzz, rxy, rxz, ryz = rows[sex]
            # ISB -> ahbm: x' = x, y' = -z, z' = y. Tensor entries:
            # I'xx = Ixx, I'yy = Izz, I'zz = Iyy, I'xy = -Ixz, I'xz = Ixy, I'yz = -Iyz
            seg[name] = _s(
                m,
                ln / _DUMAS_STATURE[sex],
                (cx, -cz, cy),
                (rxx, rzz, ryy),
                (-rxz, rxy, -ryz),
                origin=o,
                end=e,
                bilateral=bil,
            )
        out[sex] = seg
    return out


# ---------------------------------------------------------------------------
# HeiMan (Felis 2015, dissertation, Tables 4.3-4.5; de Leva based).
# ---------------------------------------------------------------------------
def _heiman():
    rows = {
        # name: (length/H, mass/M, com z/L, r_sag, r_trans, r_long, bilateral)
        "pelvis": (0.0837, 0.1117, 0.3884, 0.615, 0.551, 0.587, False),
        "thigh": (0.2425, 0.1416, -0.4095, 0.329, 0.329, 0.149, True),
        "shank": (0.2529, 0.0433, -0.4458, 0.255, 0.249, 0.103, True),
        "foot": (0.1462, 0.0137, -0.4415, 0.257, 0.245, 0.124, True),
        "middle_trunk": (0.1238, 0.1633, 0.5498, 0.482, 0.383, 0.468, False),
        "upper_trunk": (0.0980, 0.1596, 0.7001, 0.716, 0.454, 0.659, False),
        "clavicula": (0.1200, 0.0, 0.0, 0.0, 0.0, 0.0, True),
        "upper_arm": (0.1618, 0.0271, -0.5772, 0.285, 0.269, 0.158, True),
        "lower_arm": (0.1545, 0.0162, -0.4574, 0.276, 0.265, 0.121, True),
        "hand": (0.1079, 0.0061, -0.3624, 0.288, 0.235, 0.184, True),
        "neck": (0.0638, 0.0, 0.0, 0.0, 0.0, 0.0, False),
        "head": (0.1168, 0.0694, 0.4024, 0.362, 0.376, 0.312, False),
    }
    seg = {
        k: _s(m, ln, (0, 0, c), (rs, rt, rl), origin="joint", end="", bilateral=b)
        for k, (ln, m, c, rs, rt, rl, b) in rows.items()
    }
    return {"male": seg}


TABLES: dict[str, BSPTable] = {
    "dempster_winter": BSPTable(
        "dempster_winter",
        "Dempster (1955) via Winter, D.A. (2009) Biomechanics and Motor Control of Human "
        "Movement, 4th ed., Table 4.1; segment lengths / stature from Drillis & Contini "
        "(1966), Winter Fig. 4.1",
        _dempster_winter(),
        "Only the radius of gyration for rotation in the sagittal plane is published; it is "
        "used for both transverse axes and the longitudinal one is NaN (also all radii of "
        "the trunk). No head-neck length (pass it in `segment_lengths`). Masses sum to 1.",
    ),
    "de_leva": BSPTable(
        "de_leva",
        "de Leva, P. (1996) Adjustments to Zatsiorsky-Seluyanov's segment inertia "
        "parameters. J. Biomech. 29(9):1223-1230, Table 4 (head to MIDG, whole trunk)",
        _de_leva("one"),
        "Lengths are the mean subject's divided by stature (1741 / 1735 mm). 'Sagittal' "
        "radii are taken about the anteroposterior (x) axis and 'transverse' about the "
        "mediolateral (y) axis. Female masses sum to 0.9999 (rounding in the source).",
    ),
    "de_leva_3trunk": BSPTable(
        "de_leva_3trunk",
        "de Leva (1996), Table 4, with the trunk split into upper (SUPR-XYPH), middle "
        "(XYPH-OMPH) and lower (OMPH-MIDH) parts",
        _de_leva("three"),
        "As 'de_leva'.",
    ),
    "dumas_2007": BSPTable(
        "dumas_2007",
        "Dumas, R., Cheze, L., Verriest, J.-P. (2007) Adjustments to McConville et al. and "
        "Young et al. body segment inertial parameters. J. Biomech. 40(3):543-553, Table 2",
        _dumas(),
        "Full inertia tensors with products of inertia. Segment lengths should be measured "
        "(joint centre to joint centre); the default scales the table's mean lengths by "
        "stature/1.77 m (male) or /1.61 m (female). Male masses sum to 1.002 (source "
        "rounding). Hand: wrist to metacarpal heads 2-5; foot: ankle to metatarsal heads 1-5. "
        "The female torso tensor (product radius 0.22) is positive definite but violates "
        "the triangle inequality of principal moments, i.e. no rigid body has it.",
    ),
    "heiman": BSPTable(
        "heiman",
        "Felis, M.L. (2015) Modeling Emotional Aspects in Human Locomotion, dissertation, "
        "Heidelberg University, Tables 4.3-4.5 (HeiMan; de Leva 1996 and Dumas et al. 2007)",
        _heiman(),
        "Male only. Two typos of the source are corrected: MiddleTrunkHeight is 0.1238 (de "
        "Leva's 215.5/1741 mm; printed 0.3752) and the pelvis sagittal radius is 0.615 (de "
        "Leva's LPT value; printed 1.615). Clavicula and neck have zero mass. Foot length, "
        "height and posterior point are 'guess' values in the source. As published, every "
        "HeiMan COM lies on the segment z axis, the foot's too (-0.4415 L), unlike the other "
        "tables whose foot long axis is x; pass `frame_rotations` to scale_model if needed.",
    ),
}


def get_table(table) -> BSPTable:
    """Return a :class:`BSPTable` given its name (see :data:`TABLES`) or the table itself."""
    if isinstance(table, BSPTable):
        return table
    try:
        return TABLES[str(table).lower()]
    except KeyError:
        raise DataError(
            f"Unknown BSP table {table!r}; available: {', '.join(sorted(TABLES))}"
        ) from None


def _norm_sex(tab: BSPTable, sex):
    if None in tab.segments:
        return None
    if sex is None and len(tab.sexes) == 1:
        return tab.sexes[0]
    if sex is None:
        raise DataError(
            f"Table {tab.name!r} needs `sex` ({' or '.join(repr(s) for s in tab.sexes)})"
        )
    if not isinstance(sex, str):
        raise DataError(f"Expected `sex` to be one of {tab.sexes}, got {sex!r}")
    s = {"m": "male", "f": "female"}.get(sex.lower(), sex.lower())
    if s not in tab.segments:
        raise DataError(
            f"Table {tab.name!r} has no data for sex={sex!r}; available: "
            f"{', '.join(repr(k) for k in tab.sexes)}"
        )
    return s


def _tensor(radii, products, mass, length, mirror):
    r = np.asarray(radii, float) * length
    p = np.asarray(products, float)
    off = np.sign(p) * (p * length) ** 2
    xy, xz, yz = off
    if mirror:
        xy, yz = -xy, -yz
    inertia = np.diag(r**2)
    inertia[0, 1] = inertia[1, 0] = xy
    inertia[0, 2] = inertia[2, 0] = xz
    inertia[1, 2] = inertia[2, 1] = yz
    return mass * inertia


def _length_dict(segment_lengths) -> dict:
    """None or a dict {segment: length in m}, else DataError naming `segment_lengths`."""
    if segment_lengths is None:
        return {}
    if not isinstance(segment_lengths, dict):
        raise DataError(
            f"Expected `segment_lengths` to be a dict {{segment: length in m}}, got "
            f"{type(segment_lengths).__name__}"
        )
    return dict(segment_lengths)


def segment_parameters(table, *, mass, height, segment_lengths=None, sex=None):
    """Masses, COM positions and inertia tensors of all segments from a table.

    Parameters
    ----------
    table : str or BSPTable
        ``"dempster_winter"``, ``"de_leva"``, ``"de_leva_3trunk"``,
        ``"dumas_2007"`` or ``"heiman"`` (see :data:`TABLES`).
    mass : float
        Body mass, kg.
    height : float
        Stature, m (scales segment lengths that are not given).
    segment_lengths : dict, optional
        Measured lengths in m, keyed by segment (``"thigh"`` applies to both
        sides, ``"thigh_l"`` to one side). They replace ``fraction * height``.
    sex : {"male", "female"}, optional
        Required for tables that give both sexes (de Leva, Dumas); ignored by
        tables without sex (Dempster/Winter); HeiMan is male only.

    Returns
    -------
    dict of str -> SegmentParameters
        Bilateral segments appear as ``<name>_r`` and ``<name>_l``.

    Raises
    ------
    DataError
        Unknown table or sex, non-positive mass/height/length, unknown
        segment in `segment_lengths`.

    Notes
    -----
    ``m_i = f_i M``, ``L_i = l_i H`` (or the measured length),
    ``c_i = c~_i L_i`` and ``I_i = m_i L_i^2 R~_i`` where ``R~_i`` holds the
    squared relative radii on the diagonal and the signed squared product
    radii off the diagonal (Dumas et al. 2007, eq. 1; Felis 2015, eq. 4.7, is
    its diagonal-only form).

    Examples
    --------
    >>> p = segment_parameters("heiman", mass=76.0, height=1.79)
    >>> round(p["upper_trunk"].length, 3), round(p["upper_trunk"].mass, 2)
    (0.175, 12.13)
    """
    tab = get_table(table)
    s = _norm_sex(tab, sex)
    m_body = as_positive_float(mass, "mass", unit="kg")
    h = as_positive_float(height, "height", unit="m")
    if not 0.3 < h < 3.0:
        raise DataError(f"`height` must be a stature in metres (0.3-3), got {height!r}")
    rows = tab.segments[s]
    lengths = _length_dict(segment_lengths)
    names = set(rows) | {f"{k}_{side}" for k, v in rows.items() if v.bilateral for side in "rl"}
    for k, v in lengths.items():
        if k not in names:
            raise DataError(
                f"`segment_lengths` key {k!r} is not a segment of table {tab.name!r}; "
                f"segments: {', '.join(sorted(names))}"
            )
        lengths[k] = as_positive_float(v, f"segment_lengths[{k!r}]", unit="m")
    out = {}
    for base, row in rows.items():
        sides = (("_r", False), ("_l", True)) if row.bilateral else (("", False),)
        for suffix, mirror in sides:
            name = base + suffix
            ln = float(lengths.get(name, lengths.get(base, row.length * h)))
            m = row.mass * m_body
            com = np.asarray(row.com, float) * ln
            if mirror:
                com = com * np.array([1.0, -1.0, 1.0])
            out[name] = SegmentParameters(
                name,
                m,
                ln,
                com,
                _tensor(row.radii, row.products, m, ln, mirror),
                row.origin,
                row.end,
            )
    return out


def parameters_to_dataframe(params):
    """Tabulate :func:`segment_parameters` output as a pandas DataFrame.

    Parameters
    ----------
    params : dict of str -> SegmentParameters

    Returns
    -------
    pandas.DataFrame
        One row per segment; columns ``mass`` (kg), ``length`` (m),
        ``com_x, com_y, com_z`` (m), ``Ixx, Iyy, Izz, Ixy, Ixz, Iyz``
        (kg m^2, about the COM, segment frame), ``origin``, ``end``.

    Examples
    --------
    >>> df = parameters_to_dataframe(segment_parameters("heiman", mass=76.0, height=1.79))
    >>> round(float(df.loc["upper_trunk", "mass"]), 2)
    12.13
    """
    import pandas as pd

    if not isinstance(params, dict):
        raise DataError(
            "Expected `params` to be a dict {name: SegmentParameters} from segment_parameters, "
            f"got {type(params).__name__}"
        )
    rows = {}
    for name, p in params.items():
        if not isinstance(p, SegmentParameters):
            raise DataError(f"`params[{name!r}]` is not a SegmentParameters")
        i = p.inertia
        rows[name] = {
            "mass": p.mass,
            "length": p.length,
            "com_x": p.com[0],
            "com_y": p.com[1],
            "com_z": p.com[2],
            "Ixx": i[0, 0],
            "Iyy": i[1, 1],
            "Izz": i[2, 2],
            "Ixy": i[0, 1],
            "Ixz": i[0, 2],
            "Iyz": i[1, 2],
            "origin": p.origin,
            "end": p.end,
        }
    return pd.DataFrame.from_dict(rows, orient="index")


def compare_tables(*, mass, height, tables=None, sex="male", segment_lengths=None):
    """Segment parameters of one subject from several tables, side by side.

    Parameters
    ----------
    mass, height : float
        Body mass (kg) and stature (m).
    tables : sequence of str, optional
        Table names (default: all of :data:`TABLES` that have `sex`).
    sex : {"male", "female"}, optional
        Used by tables that distinguish sex (default "male").
    segment_lengths : dict, optional
        Measured lengths applied to every table that has those segments.

    Returns
    -------
    pandas.DataFrame
        Rows indexed by ``(table, segment)``, columns as in
        :func:`parameters_to_dataframe`.

    Examples
    --------
    >>> df = compare_tables(mass=75.0, height=1.8, tables=["de_leva", "dumas_2007"])
    >>> sorted(set(df.index.get_level_values("table")))
    ['de_leva', 'dumas_2007']
    """
    import pandas as pd

    if not isinstance(sex, str):
        raise DataError(f"Expected `sex` to be 'male' or 'female', got {sex!r}")
    sex = {"m": "male", "f": "female"}.get(sex.lower(), sex.lower())
    if tables is not None and (
        isinstance(tables, (str, bytes, dict)) or not hasattr(tables, "__iter__")
    ):
        raise DataError(f"Expected `tables` to be a list of table names, got {tables!r}")
    names = list(TABLES) if tables is None else [get_table(t).name for t in tables]
    if not names:
        raise DataError("`tables` is empty; give at least one table name")
    lengths_all = _length_dict(segment_lengths)
    frames = {}
    for name in names:
        tab = TABLES[name]
        s = None if None in tab.segments else sex
        if s is not None and s not in tab.segments:
            if tables is None:
                continue
            raise DataError(f"Table {name!r} has no data for sex={sex!r}")
        own = tab.segments[s]
        bil = {f"{k}_{x}" for k, v in own.items() if v.bilateral for x in "rl"}
        lengths = {k: v for k, v in lengths_all.items() if k in own or k in bil}
        frames[name] = parameters_to_dataframe(
            segment_parameters(
                tab, mass=mass, height=height, segment_lengths=lengths or None, sex=s
            )
        )
    return pd.concat(frames, names=["table", "segment"])
