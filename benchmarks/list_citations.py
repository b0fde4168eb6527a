"""List every citation of ahbm's source documents, so the check can be repeated.

ahbm's docstrings and pages cite the documents it is built from by equation,
section, table, algorithm or figure ("AHBM eq. 4.5", "Felis (2015) §3.3",
"Chung eqs 7.33–7.34", "Schwienbacher Table 6.1", "Simonidis eq. 33",
"Featherstone (2008) Table 5.1"). This script finds them in the package, the
documentation and the examples and prints one row per citation: file, line,
cited source, year when written, and the locators (equation, section, table,
…) that follow the source's name, or ``-`` where the citation names the
document only. ``docs/sources.md`` holds the verdict of each checked
citation against the source text; rerun this script after editing a
docstring to see what must be checked again.

Usage::

    python benchmarks/list_citations.py                 # all rows, tab-separated
    python benchmarks/list_citations.py --unique        # one row per (source, locator)
    python benchmarks/list_citations.py --summary       # counts only
    python benchmarks/list_citations.py ahbm/dynamics   # some folders or files only
    python benchmarks/list_citations.py --unchecked     # citations without a verdict
    python benchmarks/list_citations.py --write docs/sources.md   # refresh its list

The verdicts (agrees / corrected / departure / unverified) are kept in
``benchmarks/citation_verdicts.py``; ``--unchecked`` lists the citations
that have none (exit status 1 if there are any), which is what must be
checked against the source texts after an edit. ``--write`` replaces the
list between the ``citations:start`` and ``citations:end`` markers of a page.

The search is lexical: a source is recognized by its author's name (the AHBM
report also by "AHBM" and "Stuhmiller"), and its locators are read from the
next ~110 characters (line breaks, comment marks and indentation removed),
up to the next source's name, a ``;``, an unmatched ``)`` or the end of the
sentence. Environment variables such as ``AHBM_KERNELS`` are not citations.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from citation_verdicts import verdict  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_PATHS = ("ahbm", "docs", "examples")
#: The page that holds the verdicts (its tables cite every source) is not scanned.
EXCLUDE = {"docs/sources.md"}

#: Cited source → pattern of its name. The first five are the shared source
#: documents (the AHBM report and four texts built on the same methods);
#: Featherstone's book is cited for the spatial-algebra algorithms that Felis
#: (2015, ch. 3) restates.
SOURCES = {
    "AHBM": r"\bAHBM\b(?![_\-])(?:\s+report)?|\bStuhmiller\b(?:\s*(?:&|and)\s*Shen)?",
    "Felis": r"\bFelis\b",
    "Schwienbacher": r"\bSchwienbacher\b",
    "Chung": r"\bChung\b",
    "Simonidis": r"\bSimonidis\b",
    "Featherstone": r"\bFeatherstone\b",
}
_ANY_SOURCE = re.compile("|".join(f"(?:{p})" for p in SOURCES.values()))
_SOURCE = {key: re.compile(pattern) for key, pattern in SOURCES.items()}

_NUM = r"\(?(?:[A-Z]\.)?\d+(?:[.\-]\d+)*[a-z]?\)?"
_RANGE = rf"{_NUM}(?:\s*(?:[-–,/]|and|to|or)\s*{_NUM})*"
_KIND = (
    r"(?P<kind>§§?|[Ee]q(?:uation)?s?\.?|[Tt]ables?|[Tt]ab\.|[Aa]lg(?:orithm)?s?\.?|"
    r"[Ff]ig(?:ure)?s?\.?|[Cc]h(?:apter)?s?\.?|[Ss]ections?|[Pp]art)"
)
_LOCATOR = re.compile(rf"{_KIND}\s*(?P<num>{_RANGE})")
#: A bare equation number right after the name ("Schwienbacher 6.34",
#: "Chung 7.33–7.34"), not a year.
_BARE = re.compile(r"^\s*(?P<num>(?!(?:19|20)\d\d\b)\d+\.\d+(?:\s*[-–]\s*\d+\.\d+)?)")
_YEAR = re.compile(r"^[\s(,]*(?:et al\.?,?\s*)?(?:'s\s*)?\(?((?:19|20)\d\d)\b")
#: Another author's citation ("Craig's eq. 3.6", "Piegl & Tiller eq 2.9") ends the window.
_OTHER_AUTHOR = re.compile(r"\b[A-Z][a-z]+(?:'s\b| &| and [A-Z][a-z]+ \(?(?:19|20)\d\d)")
_ABBREV = re.compile(r"(?:\b(?:eqs?|Eqs?|Alg|Fig|Tab|ch|al|e\.g|i\.e|cf|vs|[A-Z])\.)$")

_KIND_NAME = {
    "§": "§",
    "e": "eq",
    "t": "table",
    "a": "algorithm",
    "f": "figure",
    "c": "chapter",
    "s": "§",
    "p": "part",
}


def _flatten(text: str, start: int, width: int = 110) -> str:
    """Text after ``start`` with line breaks, comment marks and indentation removed."""
    chunk = text[start : start + 3 * width]
    chunk = re.split(r"\n[ \t]*\n", chunk, maxsplit=1)[0]  # a paragraph ends it
    chunk = re.sub(r"\s*\n\s*(?:#:?|>>>|\.\.\.|\*|-)?\s*", " ", chunk)
    return chunk[:width]


def _window(after: str) -> str:
    """Cut the text after a source's name where its citation ends."""
    cut = len(after)
    for other in (_ANY_SOURCE.search(after), _OTHER_AUTHOR.search(after)):
        if other:
            cut = min(cut, other.start())
    depth = 0
    for i, ch in enumerate(after[:cut]):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                cut = i
                break
        elif ch == ";" or after[i : i + 3] == '"""':
            cut = i
            break
        elif (
            ch == "."
            and after[i + 1 : i + 3].startswith(" ")
            and not _ABBREV.search(after[max(0, i - 4) : i + 1])
        ):
            nxt = after[i + 2 : i + 3]
            if not (nxt.islower() or nxt.isdigit()):
                cut = i
                break
    return after[:cut]


def _kind(word: str) -> str:
    return _KIND_NAME.get(word[0].lower(), word)


def _locators(window: str) -> list[str]:
    found = []
    bare = _BARE.match(window)
    if bare:
        found.append(f"eq {bare.group('num')}")
    for match in _LOCATOR.finditer(window):
        num = re.sub(r"\s+", " ", match.group("num")).strip(" ,")
        while num.endswith(")") and num.count(")") > num.count("("):
            num = num[:-1]
        found.append(f"{_kind(match.group('kind'))} {num}".replace("§ ", "§"))
    return found


def citations(paths):
    """Yield ``(file, line, source, year, locators, context)`` for each citation."""
    files = []
    for path in paths:
        path = (ROOT / path) if not Path(path).is_absolute() else Path(path)
        if path.is_file():
            files.append(path)
        else:
            files.extend(sorted(p for p in path.rglob("*") if p.suffix in {".py", ".md"}))
    for path in files:
        if "__pycache__" in path.parts or str(path.relative_to(ROOT)) in EXCLUDE:
            continue
        text = path.read_text(encoding="utf-8")
        starts = [0] + [m.end() for m in re.finditer("\n", text)]
        for match in _ANY_SOURCE.finditer(text):
            source = next(k for k, rx in _SOURCE.items() if rx.fullmatch(match.group()))
            line = _line_of(starts, match.start())
            after = _flatten(text, match.end())
            window = _window(after)
            year = _YEAR.match(after)
            locs = _locators(window)
            context = (match.group() + window).strip()
            yield (
                str(path.relative_to(ROOT)),
                line,
                source,
                year.group(1) if year else "",
                locs,
                context,
            )


def _line_of(starts: list[int], offset: int) -> int:
    lo, hi = 0, len(starts)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if starts[mid] <= offset:
            lo = mid
        else:
            hi = mid
    return lo + 1


_RANK = {"unchecked": 4, "corrected": 3, "departure": 2, "unverified": 1, "agrees": 0}


def _row_verdict(row) -> tuple[str, str]:
    """Verdict of a citation: the most notable one of its locators."""
    file, _line, source, _year, locs, _context = row
    found = [verdict(file, source, loc) for loc in locs or ["-"]]
    word = max((v for v, _ in found), key=_RANK.__getitem__)
    notes = [n for v, n in found if v == word and n]
    return word, "; ".join(dict.fromkeys(notes))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("`", "'")


def _markdown(judged) -> str:
    lines = [
        "| place | source | locator | verdict | note |",
        "| --- | --- | --- | --- | --- |",
    ]
    for file, line, source, year, locs, _context, word, note in judged:
        name = f"{source} {year}".strip()
        loc = "; ".join(locs) or "(document)"
        lines.append(f"| `{file}:{line}` | {_cell(name)} | {_cell(loc)} | {word} | {_cell(note)} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", default=list(DEFAULT_PATHS))
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--unique", action="store_true", help="one row per (source, locator)")
    group.add_argument("--summary", action="store_true", help="counts only")
    group.add_argument("--markdown", action="store_true", help="markdown table with verdicts")
    group.add_argument("--unchecked", action="store_true", help="citations without a verdict")
    group.add_argument("--write", metavar="PAGE", help="refresh the list in a markdown page")
    parser.add_argument(
        "--with-locator", action="store_true", help="only citations that name a locator"
    )
    args = parser.parse_args(argv)

    rows = list(citations(args.paths))
    if args.with_locator:
        rows = [r for r in rows if r[4]]
    judged = [(*row, *_row_verdict(row)) for row in rows]
    if args.unchecked:
        bad = [r for r in judged if r[6] == "unchecked"]
        for file, line, source, _y, locs, context, *_ in bad:
            print(f"{file}:{line}\t{source}\t{'; '.join(locs) or '-'}\t{context}")
        return 1 if bad else 0
    if args.markdown or args.write:
        table = _markdown(judged)
        if args.markdown:
            print(table)
            return 0
        page = ROOT / args.write
        text = page.read_text(encoding="utf-8")
        start, end = "<!-- citations:start -->", "<!-- citations:end -->"
        if start not in text or end not in text:
            print(f"{args.write} has no {start} ... {end} block", file=sys.stderr)
            return 2
        head, rest = text.split(start, 1)
        tail = rest.split(end, 1)[1]
        page.write_text(f"{head}{start}\n{table}\n{end}{tail}", encoding="utf-8")
        print(f"{args.write}: {len(judged)} citations written")
        return 0
    if args.summary:
        verdicts = Counter(r[6] for r in judged)
        print("verdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())))
        per_source = Counter(r[2] for r in rows)
        per_folder = Counter(r[0].split("/")[0] for r in rows)
        located = sum(1 for r in rows if r[4])
        print(f"citations: {len(rows)} ({located} with a locator)")
        for key in SOURCES:
            print(f"  {key}: {per_source[key]}")
        for folder, n in sorted(per_folder.items()):
            print(f"  in {folder}/: {n}")
        return 0
    if args.unique:
        where = defaultdict(list)
        for file, line, source, _year, locs, _context in rows:
            for loc in locs or ["-"]:
                where[(source, loc)].append(f"{file}:{line}")
        for (source, loc), places in sorted(where.items()):
            print(f"{source}\t{loc}\t{len(places)}\t{' '.join(places)}")
        return 0
    for file, line, source, year, locs, context in rows:
        print(f"{file}:{line}\t{source}\t{year}\t{'; '.join(locs) or '-'}\t{context}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
