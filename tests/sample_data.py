"""Where the tests find the shared sample files, and how they skip without them.

The shared data (real C3D files, the OpenSim walking trial) live next to the
repository, in ``../shared/data``. A test module imports what it needs:

    from sample_data import SHARED, needs_shared

    @needs_shared
    @pytest.mark.parametrize("name", ["gait-raw.c3d", "16bitanalog.c3d"])
    def test_read(name):
        trial = read_c3d(SHARED / "c3d" / name)

or asks for the ``shared_data`` fixture (tests/conftest.py), which skips the
test with the same reason when the folder is absent. Nothing here reads a
file at import time beyond one ``is_dir`` check.
"""

from pathlib import Path

import pytest

#: The repository's root folder.
ROOT = Path(__file__).resolve().parents[1]
#: The shared sample data: ``../shared/data`` relative to the repository.
SHARED = ROOT.parent / "shared" / "data"
#: True when the shared sample data are there.
HAVE_SHARED = SHARED.is_dir()
#: Why a test that needs them is skipped.
SKIP_REASON = f"shared sample data not found at {SHARED} (../shared/data next to the repository)"
#: Skip a test, a class or a module (``pytestmark = needs_shared``) without the shared data.
needs_shared = pytest.mark.skipif(not HAVE_SHARED, reason=SKIP_REASON)
