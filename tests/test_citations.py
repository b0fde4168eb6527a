"""Every citation of the source documents has a checked verdict (docs/sources.md, issue 34).

``benchmarks/list_citations.py --unchecked`` lists the citations in ``ahbm/``,
``docs/`` and ``examples/`` that have no verdict in
``benchmarks/citation_verdicts.py``; a new or edited citation must be checked
against the source text and given one.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_citation_has_a_verdict():
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "list_citations.py"), "--unchecked"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, (
        "citations without a verdict (check them against ../shared/sources and add a "
        f"verdict in benchmarks/citation_verdicts.py):\n{done.stdout[-3000:]}{done.stderr[-2000:]}"
    )
