"""Regenerate every figure of the example gallery (docs/examples.md).

Runs each example script in turn (each has ``run(out, quick)``) and writes
its figures into one folder (default docs/img). Each script can also be run
on its own. The gait example (examples/gait_vaughan.py) is not part of the
gallery: it needs the shared walking trial and writes large report figures.

Usage: python examples/make_gallery.py [OUTPUT_FOLDER] [--quick]
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: Example models of AHBM chapter 5 (issue 9), in the order of docs/examples.md.
EXAMPLES = ["whole_body", "head_neck", "airbag_inverse", "heiman", "pendulum_ID"]
#: The test-problem examples of the dynamics modules shown in the gallery too.
OTHERS = [
    "spring_mass",
    "double_pendulum_3d",
    "four_bar",
    "triple_pendulum_contact",
    "rolling_disk",
    "knife_edge",
]


def load_example(name: str):
    """Import ``examples/<name>.py`` as a module (the examples are not a package)."""
    spec = importlib.util.spec_from_file_location(f"ahbm_example_{name}", HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(out: Path, quick: bool = False, names=None) -> dict:
    results = {}
    for name in names or EXAMPLES + OTHERS:
        print(f"--- {name}")
        start = time.perf_counter()
        results[name] = load_example(name).run(out, quick=quick)
        print(f"    ({time.perf_counter() - start:.1f} s)")
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default=str(HERE.parent / "docs" / "img"),
                        help="output folder (default docs/img)")  # fmt: skip
    parser.add_argument("--quick", action="store_true", help="short runs (for tests)")
    args = parser.parse_args()
    main(Path(args.out), quick=args.quick)
