"""Compiled scan of the element structure of an XML text (internal, for :mod:`ahbm.opensim._xml`).

:func:`scan_xml` finds, in one pass over the bytes, each element's tag,
attribute text, direct text, line, parent and extent, so that
:func:`ahbm.opensim._xml.parse_xml` can build its tree without a Python call per
element event. It is only ever run on a text that expat has already read
whole without an error (well-formed, no DOCTYPE), and it reads only the
plain subset that it can reproduce exactly; it declines (status 1) anything
else, and the caller then builds the tree from expat's events as before:

- an ``&`` anywhere outside comments (entity and character references);
- a CDATA section or any ``<!`` other than a comment;
- a tab, line feed or carriage return in an attribute value (expat
  normalizes those to spaces);
- text beside a comment or processing instruction inside an element without
  child elements (the comment would split it), and non-space text beside
  child elements (mixed content).

Lines are counted as expat counts them (a line feed, a carriage return, or
the pair), each element's line being that of its ``<``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_CACHE = True


@njit(cache=_CACHE, nogil=True)
def _space(c):  # pragma: no cover - compiled
    return c == 32 or c == 9 or c == 10 or c == 13


@njit(cache=_CACHE, nogil=True)
def scan_xml(buf):  # pragma: no cover - compiled
    """The elements of the UTF-8 bytes `buf` (uint8), in document order.

    Returns ``(status, table)``: status 0 and ``table`` (n, 10) int64 with, per
    element, ``[name_start, name_end, attr_start, attr_end, text_start, text_end,
    line, parent, end, depth]`` (byte spans; text -1 when the element has child
    elements, only comments or is empty-tagged; parent -1 for the root; ``end``
    the index after its last descendant; depth 1 for the root); or status 1
    (declined) and an empty table.
    """
    n = buf.shape[0]
    cap = 1
    for k in range(n):
        if buf[k] == 60:
            cap += 1
    out = np.full((cap, 10), -1, dtype=np.int64)
    declined = np.zeros((0, 10), dtype=np.int64)
    stack = np.empty(cap, dtype=np.int64)
    has_child = np.zeros(cap, dtype=np.bool_)
    has_misc = np.zeros(cap, dtype=np.bool_)
    has_text = np.zeros(cap, dtype=np.bool_)
    sp = 0
    count = 0
    line = 1
    i = 0
    while i < n:
        c = buf[i]
        if c != 60:  # text
            if c == 38:
                return 1, declined
            if c == 10:
                line += 1
            elif c == 13:
                if i + 1 >= n or buf[i + 1] != 10:
                    line += 1
            elif sp > 0 and c != 32 and c != 9:
                has_text[stack[sp - 1]] = True
            i += 1
            continue
        if i + 1 >= n:
            return 1, declined
        d = buf[i + 1]
        if d == 33 or d == 63:  # <!-- comment -->, <? instruction ?>
            if d == 33 and not (i + 3 < n and buf[i + 2] == 45 and buf[i + 3] == 45):
                return 1, declined
            j = i + 4 if d == 33 else i + 2
            while True:
                if j >= n:
                    return 1, declined
                b = buf[j]
                if d == 33 and b == 45 and j + 2 < n and buf[j + 1] == 45 and buf[j + 2] == 62:
                    j += 3
                    break
                if d == 63 and b == 63 and j + 1 < n and buf[j + 1] == 62:
                    j += 2
                    break
                if b == 10:
                    line += 1
                elif b == 13 and (j + 1 >= n or buf[j + 1] != 10):
                    line += 1
                j += 1
            if sp > 0:
                has_misc[stack[sp - 1]] = True
            i = j
            continue
        if d == 47:  # </name>
            if sp == 0:
                return 1, declined
            e = stack[sp - 1]
            a = out[e, 0]
            length = out[e, 1] - a
            j = i + 2
            if j + length > n:
                return 1, declined
            for m in range(length):
                if buf[j + m] != buf[a + m]:
                    return 1, declined
            j += length
            while j < n and _space(buf[j]):
                if buf[j] == 10:
                    line += 1
                elif buf[j] == 13 and (j + 1 >= n or buf[j + 1] != 10):
                    line += 1
                j += 1
            if j >= n or buf[j] != 62:
                return 1, declined
            if has_child[e]:
                if has_text[e]:
                    return 1, declined
                out[e, 4] = -1
                out[e, 5] = -1
            elif has_misc[e]:  # comments only (text beside them: declined)
                if has_text[e]:
                    return 1, declined
                out[e, 4] = -1
                out[e, 5] = -1
            else:
                out[e, 5] = i  # text_start was set at the start tag
            sp -= 1
            out[e, 8] = count
            i = j + 1
            continue
        # <name attributes> or <name attributes/>
        e = count
        count += 1
        out[e, 6] = line
        out[e, 7] = stack[sp - 1] if sp > 0 else -1
        out[e, 9] = sp + 1
        if sp > 0:
            has_child[stack[sp - 1]] = True
        j = i + 1
        out[e, 0] = j
        while j < n:
            b = buf[j]
            if _space(b) or b == 62 or b == 47:
                break
            j += 1
        out[e, 1] = j
        out[e, 2] = j
        while j < n:
            b = buf[j]
            if b == 34 or b == 39:
                j += 1
                while j < n and buf[j] != b:
                    v = buf[j]
                    if v == 38 or v == 9 or v == 10 or v == 13 or v == 60:
                        return 1, declined
                    j += 1
                j += 1
                continue
            if b == 62:
                break
            if b == 10:
                line += 1
            elif b == 13 and (j + 1 >= n or buf[j + 1] != 10):
                line += 1
            j += 1
        if j >= n:
            return 1, declined
        if buf[j - 1] == 47:  # <name/>: no text, no children
            out[e, 3] = j - 1
            out[e, 8] = count
        else:
            out[e, 3] = j
            out[e, 4] = j + 1
            stack[sp] = e
            sp += 1
        i = j + 1
    if sp != 0 or count == 0:
        return 1, declined
    return 0, out[:count]


@njit(cache=_CACHE, nogil=True)
def _tag_is(buf, table, row, names, s, e):  # pragma: no cover - compiled
    """Whether element `row`'s tag is the name ``names[s:e]``."""
    a = table[row, 0]
    if table[row, 1] - a != e - s:
        return False
    for k in range(e - s):
        if buf[a + k] != names[s + k]:
            return False
    return True


@njit(cache=_CACHE, nogil=True)
def _tag_in(buf, table, row, names, offsets):  # pragma: no cover - compiled
    """Whether element `row`'s tag is one of `names` (concatenated, split at `offsets`)."""
    for m in range(offsets.shape[0] - 1):
        if _tag_is(buf, table, row, names, offsets[m], offsets[m + 1]):
            return True
    return False


@njit(cache=_CACHE, nogil=True)
def select_elements(
    buf, table, skip, skip_offsets, grand, grand_offsets, parents, parent_offsets
):  # pragma: no cover - compiled
    """The elements that :func:`ahbm.opensim._xml.parse_xml` keeps, and their kept parents.

    `skip` (tags concatenated, split at `skip_offsets`): elements left out with
    everything inside them. `grand`, `parents` (likewise, pair by pair): the
    ``(grandparent tag, parent tag)`` pairs that make an element shallow; a
    shallow element keeps only the child elements that hold no element but
    left-out ones (without those). Returns ``(rows, parent)``: the kept rows of
    `table` in order, and for each the position in `rows` of its parent (-1
    for the root).
    """
    n = table.shape[0]
    rows = np.empty(n, dtype=np.int64)
    kept_parent = np.empty(n, dtype=np.int64)
    position = np.full(n, -1, dtype=np.int64)
    shallow = np.zeros(n, dtype=np.bool_)
    n_pairs = grand_offsets.shape[0] - 1
    k = 0
    i = 0
    while i < n:
        end = table[i, 8]
        if _tag_in(buf, table, i, skip, skip_offsets):
            i = end
            continue
        p = table[i, 7]
        if p >= 0 and shallow[p]:  # a property of a shallow element
            j = i + 1
            while j < end and _tag_in(buf, table, j, skip, skip_offsets):
                j = table[j, 8]
            if j >= end:
                rows[k] = i
                kept_parent[k] = position[p]
                position[i] = k
                k += 1
            i = end
            continue
        rows[k] = i
        kept_parent[k] = position[p] if p >= 0 else -1
        position[i] = k
        k += 1
        g = table[p, 7] if p >= 0 else -1
        if g >= 0:
            for m in range(n_pairs):
                if _tag_is(
                    buf, table, g, grand, grand_offsets[m], grand_offsets[m + 1]
                ) and _tag_is(buf, table, p, parents, parent_offsets[m], parent_offsets[m + 1]):
                    shallow[i] = True
                    break
        i += 1
    return rows[:k], kept_parent[:k]
