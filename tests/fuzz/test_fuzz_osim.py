"""Fuzz test of ``ahbm.opensim.read_osim`` on damaged copies of subject01.osim (fuzz_harness).

XML-level mutations: the text of a leaf element replaced by an extreme value
(NaN, 1e400, 5,000 digits, 100,000 numbers, words), elements deleted or
duplicated (duplicate bodies, joints, coordinates), ``name`` attributes
emptied or made to collide, tags renamed, elements nested 100,000 deep,
document type declarations with internal ("billion laughs") and external
entities, other encodings, bytes that are not UTF-8; and byte-level damage
(bit flips, truncations, splices). Each case runs in a memory-limited child;
it passes when ``read_osim`` returns a consistent model or raises an AhbmError
that names the file.

``osim_cases(n, seed)`` is shared with ``benchmarks/fuzz_readers.py``.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from fuzz_harness import Case, campaign, mutate
from sample_data import SHARED
from test_fuzz_model import check_model

DATA = SHARED / "opensim"
needs_data = pytest.mark.skipif(
    not (DATA / "subject01.osim").is_file(), reason=f"shared OpenSim data not found at {DATA}"
)

READ_CAP = 64 * 2**20
MEMORY_LIMIT = 768 * 2**20
ENV = {"AHBM_MAX_READ_BYTES": str(READ_CAP)}

_LEAF = re.compile(rb"<(\w+)>([^<]*)</\1>")
_ELEMENT = re.compile(
    rb"<(Body|CustomJoint|PinJoint|WeldJoint|Coordinate|Marker|TransformAxis|"
    rb"PhysicalOffsetFrame|Thelen2003Muscle|PathPoint)\b[^>]*>.*?</\1>",
    re.S,
)
_NAME = re.compile(rb'name="([^"]*)"')

_TEXTS = [
    b"", b"nan", b"NaN", b"inf", b"-inf", b"1e400", b"-1e400", b"1e-400", b"0", b"-1", b"abc",
    b"9" * 5000, b"1 2", b"0 0 0 0", b"1 " * 100_000, b"true", b"false", b"\xff\xfe",
    b"&amp;", b"&lt;x&gt;", b"1e308 1e308 1e308", b"nan nan nan", b"2147483648",
]  # fmt: skip

_DOCTYPES = [
    b'<!DOCTYPE m [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
    b'<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>',
    b'<!DOCTYPE m [<!ENTITY x SYSTEM "file:///etc/passwd">]>',
    b'<!DOCTYPE m SYSTEM "http://example.invalid/x.dtd">',
]


def mutate_xml(raw: bytes, rng) -> tuple[bytes, str]:
    """One XML-level mutation of an .osim file."""
    k = int(rng.integers(0, 10))
    if k <= 3:  # the text of a leaf element
        leaves = list(_LEAF.finditer(raw))
        m = leaves[int(rng.integers(0, len(leaves)))] if leaves else None
        if m is None:
            return mutate(raw, rng)
        text = _TEXTS[int(rng.integers(0, len(_TEXTS)))]
        out = raw[: m.start(2)] + text + raw[m.end(2) :]
        return out, f"<{m.group(1).decode()}> at {m.start()} = {text[:20]!r}"
    if k <= 5:  # delete or duplicate an element
        elements = list(_ELEMENT.finditer(raw))
        if not elements:
            return mutate(raw, rng)
        m = elements[int(rng.integers(0, len(elements)))]
        tag = m.group(1).decode()
        if rng.random() < 0.5:
            return raw[: m.start()] + raw[m.end() :], f"delete <{tag}> at {m.start()}"
        return raw[: m.end()] + raw[m.start() : m.end()] + raw[m.end() :], f"duplicate <{tag}>"
    if k == 6:  # a name attribute
        names = list(_NAME.finditer(raw))
        m = names[int(rng.integers(0, len(names)))]
        new = [b"", b"ground", b"pelvis", b"r_knee", b"a b", b"x" * 10_000][int(rng.integers(0, 6))]
        return raw[: m.start(1)] + new + raw[m.end(1) :], f"name at {m.start()} = {new[:20]!r}"
    if k == 7:  # deep nesting inside an element
        leaves = list(_LEAF.finditer(raw))
        m = leaves[int(rng.integers(0, len(leaves)))]
        depth = int(rng.choice([100, 10_000, 100_000]))
        nest = b"<a>" * depth + b"</a>" * depth
        return raw[: m.start(2)] + nest + raw[m.end(2) :], f"nested {depth} deep"
    if k == 8:  # a document type declaration or another encoding
        first = raw.find(b"?>") + 2 if raw.startswith(b"<?xml") else 0
        how = int(rng.integers(0, 5))
        if how < 3:
            out = raw[:first] + _DOCTYPES[how] + raw[first:]
            if how < 2:  # use the entity
                out = out.replace(
                    b"<gravity>", b"<gravity>&" + (b"d" if how == 0 else b"x") + b";", 1
                )
            return out, f"DOCTYPE {how}"
        if how == 3:
            return raw.replace(b'encoding="UTF-8"', b'encoding="UTF-16"', 1), "encoding UTF-16"
        return b"\xef\xbb\xbf" + raw, "byte order mark"
    return mutate(raw, rng)


def osim_cases(n: int, seed: int = 0):
    """`n` damaged .osim files (Case objects; the seed of case i is i)."""
    base = (DATA / "subject01.osim").read_bytes()
    for i in range(n):
        rng = np.random.default_rng([seed, i])
        raw, notes = base, []
        for _ in range(int(rng.choice([1, 1, 2, 3]))):
            raw, note = mutate_xml(raw, rng) if rng.random() < 0.8 else mutate(raw, rng)
            notes.append(note)
        yield Case(i, raw, ".osim", "; ".join(notes))


def warm_osim():
    """Load the model reader's compiled code (the XML scan) in a fuzz worker."""
    from ahbm.opensim import read_osim

    read_osim(DATA / "subject01.osim")


@needs_data
def test_fuzz_osim():
    campaign(
        "ahbm.opensim:read_osim", osim_cases(300, seed=19), what="read_osim", check=check_model,
        env=ENV, timeout=30.0, memory_limit=MEMORY_LIMIT, max_peak=READ_CAP,
        warmup=warm_osim,
    )  # fmt: skip
