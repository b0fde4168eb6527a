"""Fixtures shared by every test.

``shared_data`` is the folder of shared sample files (``../shared/data``
relative to the repository); a test that asks for it is skipped, with the
reason, when the folder is absent. Test modules that parametrize over those
files import ``SHARED`` and ``needs_shared`` from tests/sample_data.py
(a helper module, not this conftest: pytest imports every conftest.py as
``conftest``, so ``from conftest import ...`` could find another folder's).
"""

import pytest
from sample_data import HAVE_SHARED, SHARED, SKIP_REASON


@pytest.fixture(scope="session")
def shared_data():
    """The shared sample data folder (a ``pathlib.Path``); skips the test without it."""
    if not HAVE_SHARED:
        pytest.skip(SKIP_REASON)
    return SHARED
