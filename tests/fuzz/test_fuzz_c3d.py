"""Fuzz test of the C3D reader in a memory-limited child process (see ``fuzz_harness``).

Each case is a damaged copy of one of the real files in ``../shared/data/c3d``
(Intel, DEC and MIPS processors, integer and real storage): bit flips and byte
sets (mostly in the header and the parameter section, where the sizes live),
truncations, splices, extreme values written into header words, and edits of
parameter records (name lengths, offsets to the next record, types,
dimensions, and the values of the parameters that give sizes: POINT:USED,
SCALE, DATA_START, FRAMES, LONG_FRAMES, ANALOG:USED, TRIAL:ACTUAL_*_FIELD,
FORCE_PLATFORM:*). The read cap in the child is 64 MiB and the child may add
768 MiB of address space; a case passes when ``read_c3d`` returns a consistent
Trial or raises an AhbmError.

``c3d_cases(n, seed)`` is shared with ``benchmarks/fuzz_readers.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from fuzz_harness import Case, campaign, flip_bits, mutate, set_bytes, write_int
from sample_data import SHARED

DATA = SHARED / "c3d"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason=f"shared C3D data not found at {DATA}")

FILES = [
    "pc_int.c3d", "pc_real.c3d", "dec_int.c3d", "dec_real.c3d", "sgi_int.c3d", "sgi_real.c3d",
    "TYPE-2.C3D", "TYPE-4.C3D", "gait-raw.c3d", "MACsample.c3d", "Eb015pi.c3d", "Eb015pr.c3d",
    "16bitanalog.c3d", "bad_parameter_section.c3d",
]  # fmt: skip

READ_CAP = 64 * 2**20
MEMORY_LIMIT = 768 * 2**20
ENV = {"AHBM_MAX_READ_BYTES": str(READ_CAP)}

_SIZE_PARAMETERS = {
    b"USED", b"SCALE", b"DATA_START", b"FRAMES", b"LONG_FRAMES", b"RATE", b"ACTUAL_START_FIELD",
    b"ACTUAL_END_FIELD", b"GEN_SCALE", b"OFFSET", b"CHANNEL", b"CORNERS", b"ORIGIN", b"TYPE",
    b"ZERO", b"CAL_MATRIX", b"LABELS", b"FORMAT", b"BITS", b"UNITS",
}  # fmt: skip


def _byteorder(raw: bytes) -> str:
    p = max(raw[0] - 1, 0) * 512 if raw else 0
    return "big" if len(raw) > p + 3 and raw[p + 3] == 86 else "little"


def parameter_records(raw: bytes) -> list[dict]:
    """Byte offsets of the parameter records of an undamaged file (name, type, dims, data)."""
    order = _byteorder(raw)
    p = (raw[0] - 1) * 512 + 4
    end = min(len(raw), (raw[0] - 1) * 512 + 512 * max(raw[(raw[0] - 1) * 512 + 2], 1))
    out = []
    while p + 4 < end:
        nchars = abs(int.from_bytes(raw[p : p + 1], "little", signed=True))
        gid = int.from_bytes(raw[p + 1 : p + 2], "little", signed=True)
        if nchars == 0:
            break
        name = raw[p + 2 : p + 2 + nchars]
        q = p + 2 + nchars
        offset = int.from_bytes(raw[q : q + 2], order, signed=True)
        rec = {"start": p, "name": name, "group": gid, "offset_at": q}
        if gid > 0:
            rec["type_at"] = q + 2
            rec["ndims_at"] = q + 3
            ndims = raw[q + 3]
            rec["dims_at"] = q + 4
            rec["data_at"] = q + 4 + ndims
            rec["type"] = int.from_bytes(raw[q + 2 : q + 3], "little", signed=True)
        out.append(rec)
        if offset <= 0:
            break
        p = q + offset
    return out


def mutate_c3d(raw: bytes, records: list[dict], rng) -> tuple[bytes, str]:
    """One C3D-aware mutation: header words, parameter records, or bytes where sizes live."""
    order = _byteorder(raw)
    if not raw:
        return mutate(raw, rng)
    pstart = min(max(raw[0] - 1, 0) * 512, len(raw) - 1)
    blocks = raw[pstart + 2] if pstart + 2 < len(raw) else 1
    pend = min(len(raw), pstart + 512 * max(blocks, 1))
    k = int(rng.integers(0, 10))
    if k <= 1:  # a header word (1-based words 1-12, 150-151)
        word = int(rng.choice([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 150, 151]))
        return write_int(raw, rng, 2 * (word - 1), 2, byteorder=order)
    params = [r for r in records if r["group"] > 0]
    if k <= 5 and params:
        sized = [r for r in params if r["name"] in _SIZE_PARAMETERS] or params
        r = sized[int(rng.integers(0, len(sized)))]
        what = int(rng.integers(0, 6))
        name = r["name"].decode("latin-1")
        if what == 0:  # the parameter's values
            size = 4 if r["type"] == 4 else 2
            data, note = write_int(raw, rng, r["data_at"], size, byteorder=order)
            return data, f"{name}: {note}"
        if what == 1:
            data, note = write_int(raw, rng, r["dims_at"], 1)
            return data, f"{name} dimension: {note}"
        if what == 2:
            data, note = write_int(raw, rng, r["ndims_at"], 1)
            return data, f"{name} ndims: {note}"
        if what == 3:
            value = int(rng.choice([-1, 0, 1, 2, 3, 4, 5, 127, -128]))
            data, note = write_int(raw, rng, r["type_at"], 1, value=value)
            return data, f"{name} type: {note}"
        if what == 4:
            data, note = write_int(raw, rng, r["offset_at"], 2, byteorder=order)
            return data, f"{name} offset: {note}"
        data, note = write_int(raw, rng, r["start"], 1)
        return data, f"{name} name length: {note}"
    if k <= 7:  # bytes of the header or the parameter section
        region = (0, 512) if rng.random() < 0.3 else (pstart, pend)
        fn = flip_bits if rng.random() < 0.5 else set_bytes
        return fn(raw, rng, region=region)
    return mutate(raw, rng)


def c3d_cases(n: int, seed: int = 0, files=FILES):
    """`n` damaged C3D files (Case objects; the seed of case i is i)."""
    bases = [(DATA / f).read_bytes() for f in files]
    records = [parameter_records(b) for b in bases]
    for i in range(n):
        rng = np.random.default_rng([seed, i])
        b = i % len(bases)
        raw, notes = bases[b], []
        for _ in range(int(rng.integers(1, 4))):
            raw, note = mutate_c3d(raw, records[b], rng)
            notes.append(note)
        yield Case(i, raw, ".c3d", f"{files[b]}: " + "; ".join(notes))


def check_trial(trial):
    """A C3D read gives shapes that agree with each other and the labels."""
    n, m, three = trial.points.shape
    assert three == 3 and len(trial.point_labels) == m
    assert trial.point_mask.shape == (n, m) and trial.point_residuals.shape == (n, m)
    assert trial.analogs.ndim == 2 and len(trial.analog_labels) == trial.analogs.shape[1]
    if trial.point_rate > 0:  # a file without a valid rate reads with rate 0 and a warning
        assert trial.time.shape == (n,)


@needs_data
def test_parameter_records_are_found():
    recs = parameter_records((DATA / "sgi_int.c3d").read_bytes())  # big-endian
    names = {r["name"] for r in recs}
    assert {b"POINT", b"USED", b"SCALE", b"RATE", b"LABELS"} <= names


def warm_c3d():
    """Load the C3D reader (and what it imports on first use) in a fuzz worker."""
    from ahbm.io import read_c3d

    read_c3d(DATA / "gait-raw.c3d")


@needs_data
def test_fuzz_c3d():
    campaign(
        "ahbm.io:read_c3d", c3d_cases(700, seed=19), what="read_c3d", check=check_trial,
        env=ENV, timeout=20.0, memory_limit=MEMORY_LIMIT, max_peak=READ_CAP, min_ok=30,
        min_ahbm=30, warmup=warm_c3d,
    )  # fmt: skip
