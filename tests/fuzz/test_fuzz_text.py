"""Fuzz tests of the OpenSim text readers (TRC, MOT/STO) on damaged copies of real files.

Each case is a mutation of a file in ``../shared/data/opensim``: byte-level damage
(bit flips, byte sets, truncation, splices) and text-level damage (a header or
data token replaced by an extreme value, lines deleted, duplicated or swapped,
thousands of extra labels, extra or missing fields, other line ends, bytes
that are not UTF-8). Every case runs through ``read_trc``/``read_mot`` in a
memory-limited child process (see ``fuzz_harness``) with the read cap lowered
to 64 MiB; the test passes when every case reads or raises an AhbmError (no
other exception, no hang, no crash, no allocation beyond the limit).

``trc_cases(n, seed)`` and ``mot_cases(n, seed)`` are shared with
``benchmarks/fuzz_readers.py``, which runs them at full size.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from fuzz_harness import Case, assert_clean, campaign, mutate, run_cases
from sample_data import SHARED

DATA = SHARED / "opensim"
needs_data = pytest.mark.skipif(
    not DATA.is_dir(), reason=f"shared OpenSim data not found at {DATA}"
)

TRC_FILES = ["subject01_walk.trc", "subject01_static.trc"]
MOT_FILES = ["subject01_walk_IK.mot", "subject01_walk_grf.mot"]

#: The read cap in the child and the memory the child may add on top of its imports.
READ_CAP = 64 * 2**20
MEMORY_LIMIT = 768 * 2**20

_TOKENS = [
    "", "nan", "NaN", "-nan(ind)", "inf", "-inf", "1e400", "-1e400", "1e-400", "0", "-0", "-1",
    "2147483648", "-9223372036854775809", "18446744073709551616", "9" * 400, "9" * 5000,
    "1.5", "0.0001", "abc", "0x10", "1_000", "\u0661\u0662", "yes", "=", "\t", "  ", "#",
    "mm", "endheader", "Frame#", "PathFileType",
]  # fmt: skip


def _base(name: str, n_rows: int | None) -> bytes:
    """The file's header and its first `n_rows` data lines (all of it if None)."""
    raw = (DATA / name).read_bytes()
    if n_rows is None:
        return raw
    lines = raw.split(b"\n")
    return b"\n".join(lines[: _header_lines(lines) + n_rows]) + b"\n"


def _header_lines(lines: list[bytes]) -> int:
    for i, line in enumerate(lines[:60]):
        if line.strip() == b"endheader":
            return i + 2
    return 6


def mutate_text(raw: bytes, rng) -> tuple[bytes, str]:
    """One text-level mutation of a TRC/MOT file (tokens, lines, labels, line ends)."""
    lines = raw.split(b"\n")
    n_head = min(_header_lines(lines), len(lines))
    k = int(rng.integers(0, 12))
    if k >= 10:  # a number that gives a rate, a count, a frame number or a time
        token = _TOKENS[int(rng.integers(0, len(_TOKENS)))].encode("utf-8")
        keyed = [j for j, x in enumerate(lines[:n_head]) if b"=" in x]
        if keyed and rng.random() < 0.5:  # MOT/STO key=value
            j = keyed[int(rng.integers(0, len(keyed)))]
            lines[j] = lines[j].split(b"=", 1)[0] + b"=" + token
            return b"\n".join(lines), f"line {j + 1} value -> {token[:20]!r}"
        j = 2 if lines[0].lower().startswith(b"pathfiletype") and rng.random() < 0.5 else n_head
        j = min(j, len(lines) - 1)
        fields = lines[j].split(b"\t") if b"\t" in lines[j] else lines[j].split()
        f = int(rng.integers(0, min(len(fields), 3))) if fields else 0
        fields[f : f + 1] = [token]
        lines[j] = b"\t".join(fields)
        return b"\n".join(lines), f"line {j + 1} field {f} -> {token[:20]!r}"
    # mostly the header and the first data lines, where the sizes live
    if rng.random() < 0.7:
        i = int(rng.integers(0, max(n_head + 2, 1)))
    else:
        i = int(rng.integers(0, len(lines)))
    i = min(i, len(lines) - 1)
    if k <= 2:  # replace a token
        fields = lines[i].split(b"\t") if b"\t" in lines[i] else lines[i].split(b" ")
        j = int(rng.integers(0, len(fields)))
        token = _TOKENS[int(rng.integers(0, len(_TOKENS)))]
        fields[j] = token.encode("utf-8")
        lines[i] = (b"\t" if b"\t" in lines[i] else b" ").join(fields)
        return b"\n".join(lines), f"line {i + 1} field {j} -> {token[:20]!r}"
    if k == 3:  # delete, duplicate or swap lines
        how = int(rng.integers(0, 3))
        if how == 0:
            del lines[i]
            return b"\n".join(lines), f"delete line {i + 1}"
        if how == 1:
            lines.insert(i, lines[i])
            return b"\n".join(lines), f"duplicate line {i + 1}"
        j = int(rng.integers(0, len(lines)))
        lines[i], lines[j] = lines[j], lines[i]
        return b"\n".join(lines), f"swap lines {i + 1} and {j + 1}"
    if k == 4:  # many extra labels on the label line
        lab = 3 if lines[0].lower().startswith(b"pathfiletype") else n_head - 1
        lab = min(lab, len(lines) - 1)
        n = int(rng.choice([10, 1000, 30_000]))
        lines[lab] = lines[lab] + b"".join(b"\tX%d" % m for m in range(n))
        return b"\n".join(lines), f"{n} extra labels on line {lab + 1}"
    if k == 5:  # extra or missing fields on data rows
        rows = range(n_head, len(lines))
        if not rows:
            return raw, "no data rows"
        extra = int(rng.choice([-3, -1, 1, 3, 100]))
        pick = [int(r) for r in rng.choice(list(rows), size=min(3, len(rows)), replace=False)]
        for r in pick if rng.random() < 0.5 else rows:
            parts = lines[r].split(b"\t")
            parts = parts[:extra] if extra < 0 else parts + [b"1.0"] * extra
            lines[r] = b"\t".join(parts)
        return b"\n".join(lines), f"{extra:+d} fields on data rows"
    if k == 6:  # line ends
        end = [b"\r\n", b"\r", b"\n\n", b"\n\r"][int(rng.integers(0, 4))]
        return end.join(lines), f"line ends {end!r}"
    if k == 7:  # bytes that are not UTF-8, or NUL
        junk = [b"\xff", b"\xc3", b"\x80\x80", b"\x00", b"\xef\xbb\xbf"][int(rng.integers(0, 5))]
        lines[i] = junk + lines[i] if rng.random() < 0.5 else lines[i] + junk
        return b"\n".join(lines), f"{junk!r} on line {i + 1}"
    head = sum(len(x) + 1 for x in lines[:n_head])
    return mutate(raw, rng, region=(0, head) if rng.random() < 0.6 else None)


def _cases(files, suffix, n, seed, n_rows):
    bases = [_base(f, n_rows) for f in files] + [_base(files[0], None)]
    for i in range(n):
        rng = np.random.default_rng([seed, i])
        b = int(rng.integers(0, len(bases))) if i % 10 == 0 else i % len(files)
        raw = bases[b]
        notes = []
        for _ in range(int(rng.integers(1, 4))):
            fn = mutate_text if rng.random() < 0.75 else mutate
            raw, note = fn(raw, rng)
            notes.append(note)
        yield Case(i, raw, suffix, f"{files[b % len(files)]}: " + "; ".join(notes))


def trc_cases(n: int, seed: int = 0, n_rows: int | None = 12):
    """`n` damaged TRC files (Case objects; the seed of case i is i)."""
    return _cases(TRC_FILES, ".trc", n, seed, n_rows)


def mot_cases(n: int, seed: int = 0, n_rows: int | None = 12):
    """`n` damaged MOT/STO files (every third one with the suffix .sto)."""
    for case in _cases(MOT_FILES, ".mot", n, seed, n_rows):
        yield Case(case.seed, case.data, ".sto" if case.seed % 3 == 2 else ".mot", case.note)


def check_trc(trial):
    """A TRC read gives consistent shapes and a positive rate."""
    n, m, three = trial.points.shape
    assert three == 3 and len(trial.point_labels) == m, trial.points.shape
    assert np.isfinite(trial.point_rate) and trial.point_rate > 0
    assert trial.time.shape == (n,)


def check_mot(table):
    """A MOT read gives a table whose columns follow the labels."""
    assert table.data.ndim == 2 and len(table.columns) == table.data.shape[1]
    assert table.time.shape == (len(table),)


ENV = {"AHBM_MAX_READ_BYTES": str(READ_CAP)}


def warm_text():
    """Load the compiled number reader (shared by the TRC and MOT readers) in a fuzz worker."""
    import tempfile

    from ahbm.opensim import read_mot

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "warm.mot"
        path.write_bytes(_base(MOT_FILES[0], 12))
        read_mot(path)


@needs_data
def test_fuzz_trc():
    campaign(
        "ahbm.io:read_trc", trc_cases(300, seed=19), what="read_trc", check=check_trc,
        env=ENV, timeout=20.0, memory_limit=MEMORY_LIMIT, max_peak=READ_CAP,
        warmup=warm_text,
    )  # fmt: skip


@needs_data
def test_fuzz_mot_sto():
    campaign(
        "ahbm.opensim:read_mot", mot_cases(300, seed=19), what="read_mot", check=check_mot,
        env=ENV, timeout=20.0, memory_limit=MEMORY_LIMIT, max_peak=READ_CAP,
        warmup=warm_text,
    )  # fmt: skip


@needs_data
def test_trc_with_400000_extra_labels_does_not_allocate():
    """The issue's case: a 4 MB TRC with 400,000 extra labels (1.35 GiB of NaN before)."""
    lines = _base(TRC_FILES[0], None).split(b"\n")
    lines[3] += b"".join(b"\tEXTRA%d" % m for m in range(400_000))
    raw = b"\n".join(lines)
    assert len(raw) > 4_000_000
    report = run_cases(
        "ahbm.io:read_trc",
        [Case(0, raw, ".trc", "400000 extra labels")],
        timeout=60.0,
        memory_limit=256 * 2**20,  # the padded points would need 1.45 GB
    )
    assert_clean(report)
    (outcome,) = report.outcomes
    assert outcome.kind == "ahbm" and "line 4: 400041 marker labels" in outcome.message


def _wide_mot(n_columns: int) -> bytes:
    labels = "\t".join(["time"] + [f"angle{k}" for k in range(n_columns)])
    rows = "".join("\t".join([str(t)] + ["90"] * n_columns) + "\n" for t in (0.0, 0.01))
    return f"wide\nversion=1\ninDegrees=yes\nendheader\n{labels}\n{rows}".encode()


def check_wide(table):
    assert table.data.shape == (2, 40_000) and len(table.angle_columns) == 40_000
    assert np.allclose(table.data.to_numpy(), np.pi / 2)


def test_mot_with_40000_angle_columns_does_not_hang():
    """Degrees to radians was done column by column in pandas (62 s for 30,000 columns)."""
    report = run_cases(
        "ahbm.opensim:read_mot", [Case(0, _wide_mot(40_000), ".mot", "40000 angle columns")],
        check=check_wide, timeout=60.0, memory_limit=MEMORY_LIMIT,
    )  # fmt: skip
    assert_clean(report)
    assert report.counts()["ok"] == 1
