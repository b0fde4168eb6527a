"""`import ahbm` makes every subpackage an attribute, imported on first use."""

import subprocess
import sys

import pytest


def _run(code: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return out.stdout.strip()


def test_subpackages_load_on_first_access():
    code = (
        "import sys, ahbm\n"
        "before = [m for m in ('ahbm.io', 'ahbm.analysis', 'ahbm.graphics', 'ahbm.models',\n"
        "          'pandas', 'h5py', 'matplotlib') if m in sys.modules]\n"
        "f = ahbm.io.read_c3d\n"
        "print(before, 'ahbm.io' in sys.modules, f.__module__,\n"
        "      ahbm.analysis.butter_filtfilt.__name__, 'matplotlib' in sys.modules)"
    )
    assert _run(code) == "[] True ahbm.io.c3d.reader butter_filtfilt False"


def test_tab_completion_lists_the_subpackages():
    import ahbm

    names = dir(ahbm)
    packages = ("io", "analysis", "dynamics", "kinematics", "graphics", "models", "opensim", "gait")
    for name in packages:
        assert name in names
    assert "load_model" in names and "DataError" in names


def test_unknown_attribute_names_the_subpackages():
    import ahbm

    with pytest.raises(AttributeError, match="no attribute 'iox'.*io"):
        ahbm.iox  # noqa: B018
    assert not hasattr(ahbm, "nothing_here")
