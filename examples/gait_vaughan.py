"""Gait analysis with the seven-segment lower-extremity model (Vaughan / Plug-in Gait).

The model is the one of the AHBM report's gait bench problem (§5.1.3): seven
segments (pelvis, thighs, shanks, feet) and six joints (hips, knees, ankles),
after Vaughan, Davis et al.'s *Dynamics of Human Gait*. It carries Vaughan's
name but is not Vaughan's model as published; two parts differ:

* markers: ahbm uses the Plug-in Gait (Conventional Gait Model) lower-body
  marker set (LASI, RASI, SACR or LPSI/RPSI, THI, KNE, TIB, ANK, TOE, HEE),
  the Davis et al. (1991) hip regression and the chord function, whereas
  Vaughan's bench problem reconstructs the segments from its own set of
  eighteen markers (AHBM §5.1.3);
* segment parameters: de Leva (1996) ratios (``bsp="de_leva"``), whereas
  Vaughan's model computes the segment masses and inertias from its own
  regression equations (AHBM §5.1.3: "calculated from regression
  equations").

Vaughan's book is not among ahbm's source documents, so its marker names,
its regression equations and its bench data are neither reproduced nor
checked here (docs/sources.md).

Runs :func:`ahbm.gait.analyze_gait` on the shared walking trial gait-raw.c3d
(when the shared data folder is present) and on the synthetic walking trial of
the demo, prints the spatiotemporal parameters and peak values, compares the
synthetic result with its known truth, and saves the report figures and the
HDF5 results.

Usage::

    python examples/gait_vaughan.py [OUT_DIR]
"""

from __future__ import annotations

import sys
import tempfile
import warnings
from pathlib import Path

from ahbm.errors import AhbmWarning
from ahbm.gait import analyze_gait, save_gait_result, synthetic_walking_trial, write_gait_report
from ahbm.gait.demo import recovery_errors
from ahbm.io import read_c3d

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def main(out_dir=None) -> int:
    out = Path(out_dir) if out_dir else Path(tempfile.mkdtemp(prefix="ahbm_gait_"))
    out.mkdir(parents=True, exist_ok=True)

    raw = DATA / "c3d" / "gait-raw.c3d"
    if raw.is_file():
        trial = read_c3d(raw)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", AhbmWarning)
            result = analyze_gait(trial)  # mass estimated from the two force plates
        for w in caught:
            print("note:", w.message)
        print("\n== gait-raw.c3d")
        print(result.summary())
        save_gait_result(trial, result, out / "gait_raw_results.h5")
        write_gait_report(result, out / "gait_raw_report.png", title="gait-raw.c3d")
    else:
        print(f"(shared data not found under {DATA}: gait-raw.c3d skipped)")

    print("\n== synthetic walking trial (known truth)")
    trial, truth = synthetic_walking_trial()
    result = analyze_gait(trial)
    print(result.summary())
    errs = recovery_errors(result, truth)
    print(
        f"max angle error {max(errs['angles'].values()):.2f} deg, max moment error "
        f"{max(errs['moments'].values()):.2f} % of peak"
    )
    write_gait_report(result, out / "synthetic_report.png", title="synthetic walking trial")
    print(f"\noutputs in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else None))
