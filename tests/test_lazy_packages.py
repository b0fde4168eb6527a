"""Packages built with ahbm._internal.lazy: names from their modules' __all__, loaded on use."""

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from ahbm._internal.lazy import lazy_package, module_exports

PACKAGE = Path(__file__).resolve().parents[1] / "ahbm"


def _lazy_packages():
    for init in sorted(PACKAGE.rglob("__init__.py")):
        if "lazy_package(" in init.read_text(encoding="utf-8"):
            rel = init.parent.relative_to(PACKAGE.parent)
            yield ".".join(rel.parts)


@pytest.mark.parametrize("package", list(_lazy_packages()))
def test_package_exports_exactly_its_modules_all(package):
    pkg = importlib.import_module(package)
    seen = []
    for name in pkg.__all__:
        value = getattr(pkg, name)  # imports the owning module
        module = sys.modules[getattr(value, "__module__", "") or package]
        seen.append(name)
        assert value is not None, name
        del module
    # the union of the modules' __all__, each name once
    assert len(set(seen)) == len(seen)
    star = {}
    exec(f"from {package} import *", star)  # noqa: S102 - the package's own names
    assert set(pkg.__all__) <= set(star)


def test_module_exports_reads_the_source_without_importing(tmp_path, monkeypatch):
    (tmp_path / "lazypkg").mkdir()
    (tmp_path / "lazypkg" / "__init__.py").write_text(
        "from ahbm._internal.lazy import lazy_package\n"
        "__getattr__, __dir__, __all__ = lazy_package(__name__, ['a', 'b'])\n"
    )
    (tmp_path / "lazypkg" / "a.py").write_text("__all__ = ['f']\n\n\ndef f():\n    return 1\n")
    (tmp_path / "lazypkg" / "b.py").write_text("__all__: list = [\n    'g',  # one\n]\ng = 2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import lazypkg

    assert lazypkg.__all__ == ["f", "g"]
    assert "lazypkg.a" not in sys.modules
    assert lazypkg.f() == 1 and "lazypkg.a" in sys.modules
    assert lazypkg.g == 2
    assert "f" in dir(lazypkg) and "b" in dir(lazypkg)
    with pytest.raises(AttributeError, match="no attribute 'h'"):
        lazypkg.h  # noqa: B018
    assert module_exports("lazypkg.b") == ["g"]
    for m in ("lazypkg", "lazypkg.a", "lazypkg.b"):
        sys.modules.pop(m, None)


def test_a_name_exported_twice_is_an_error(tmp_path, monkeypatch):
    (tmp_path / "twice").mkdir()
    (tmp_path / "twice" / "__init__.py").write_text("")
    for m in ("a", "b"):
        (tmp_path / "twice" / f"{m}.py").write_text("__all__ = ['f']\nf = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import twice

    with pytest.raises(RuntimeError, match="'f' is exported by both 'a' and 'b'"):
        lazy_package("twice", ["a", "b"])
    del twice
    for m in ("twice", "twice.a", "twice.b"):
        sys.modules.pop(m, None)


def test_importing_ahbm_opensim_loads_no_tool():
    code = (
        "import sys, ahbm.opensim\n"
        "print(sorted(m for m in sys.modules if m.startswith('ahbm.opensim.')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    assert out.strip() == "[]", out
