"""The documentation site builds without a warning and shows the whole API.

The site is built the way the README says (``python -m mkdocs build
--strict``) into a temporary folder; any warning (a broken link, a missing
page, a docstring that refers to an ahbm object that does not exist) fails
the build and the test prints the builder's output.
"""

from __future__ import annotations

import importlib.util
import logging
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXT = ROOT / "docs" / "_ext"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"ahbm_docs_{name}", EXT / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _public_modules() -> list[str]:
    """Dotted names of every public module of the ahbm source tree."""
    names = []
    for path in sorted((ROOT / "ahbm").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts[-1] == "__main__" or any(part.startswith("_") for part in parts):
            continue
        names.append(".".join(parts))
    return names


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = proc.stdout + proc.stderr
    problems = [line for line in output.splitlines() if re.match(r"(WARNING|ERROR)\b", line)]
    if proc.returncode != 0 or problems:
        pytest.fail(
            f"`python -m mkdocs build --strict` failed (exit {proc.returncode}):\n{output}",
            pytrace=False,
        )
    return out


def _html(site: Path, page: str) -> str:
    return (site / page / "index.html").read_text(encoding="utf-8")


def test_site_has_every_page(site):
    for page in ["", "conventions", "api-rules", "glossary", "hdf5-schema", "examples"]:
        assert (site / page / "index.html").is_file(), page
    for page in ["tour", "design", "performance", "history", "changelog", "contributing"]:
        assert (site / page / "index.html").is_file(), page
    for package in ["kinematics", "dynamics", "muscles", "optimize", "bsp", "analysis", "io"]:
        assert (site / "api" / package / "index.html").is_file(), package
    for package in ["opensim", "graphics", "models", "gait", "cli"]:
        assert (site / "api" / package / "index.html").is_file(), package
    for page in ["ahbm", "errors", "types", "testing"]:
        assert (site / "api" / page / "index.html").is_file(), page


def test_every_public_module_is_in_the_reference(site):
    anchors = set()
    for page in (site / "api").glob("*/index.html"):
        anchors |= set(re.findall(r'id="(ahbm[\w.]*)"', page.read_text(encoding="utf-8")))
    missing = [name for name in _public_modules() if name not in anchors]
    assert not missing, f"modules without a section in the API reference: {missing}"


def test_reference_shows_signatures_and_docstrings(site):
    html = _html(site, "api/dynamics")
    assert 'id="ahbm.dynamics.inverse.rnea"' in html
    assert "rnea(" in html and "Parameters:" in html
    html = _html(site, "api/kinematics")
    assert re.search(r'id="ahbm\.kinematics\.rotations[\w.]*\.euler_to_matrix"', html)
    # a package's names are documented in the public module that defines them
    assert 'id="ahbm.graphics.figures.save_figure"' in _html(site, "api/graphics")


def test_docstring_roles_become_links(site):
    # ahbm.analysis's docstring says :func:`butter_filtfilt`
    html = _html(site, "api/analysis")
    assert re.search(r'<a[^>]+href="#ahbm\.analysis\.filters\.butter_filtfilt"', html)
    assert ":func:" not in html


def test_gallery_shows_every_example_with_source(site):
    html = _html(site, "examples")
    for script in sorted((ROOT / "examples").glob("*.py")):
        if script.name == "make_gallery.py":
            continue
        assert f"Source: examples/{script.name}" in html, script.name
    assert "def run(" in html  # the sources themselves, not just their names
    for image in re.findall(r'<img[^>]+src="([^"]+)"', html):
        assert (site / "examples" / image).resolve().is_file(), image


def test_home_page_carries_the_readme(site):
    html = _html(site, "")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "pip install -e" in html and "python -m pytest -q" in html
    first_heading = re.search(r"^## (.+)$", readme, flags=re.M).group(1)
    assert first_heading in html


def test_roles_resolve_in_scope_and_report_unknown_names(caplog):
    import griffe

    roles = _load("griffe_roles")
    package = griffe.load("ahbm", search_paths=[str(ROOT)], resolve_aliases=False)
    roles.expand_lazy_packages(package)  # as the extension does: lazy packages' names
    analysis = package["analysis"]
    exported = roles._exported_paths(package)

    text = roles.rewrite(package, analysis, "see :func:`butter_filtfilt`", exported)
    assert text == "see [`butter_filtfilt`][ahbm.analysis.filters.butter_filtfilt]"
    text = roles.rewrite(package, analysis, ":class:`~ahbm.io.Trial` and :func:`numpy.gradient`",
                         exported)  # fmt: skip
    assert text == "[`Trial`][ahbm.io.trial.Trial] and `numpy.gradient`"
    with caplog.at_level(logging.WARNING, logger="mkdocs.plugins.ahbm.roles"):
        text = roles.rewrite(package, analysis, ":func:`no_such_function`", exported)
    assert text == "`no_such_function`"
    assert "no_such_function" in caplog.text and "not an ahbm object" in caplog.text


def test_prose_names_link_to_the_reference(site):
    # the README's module table on the home page links the functions it names
    html = _html(site, "")
    assert re.search(r'href="api/io/#ahbm\.io\.[\w.]*read_c3d"', html)


def test_autolink_only_outside_code_blocks_and_only_ahbm_names():
    hooks = _load("hooks")
    targets = hooks.link_targets(hooks.load_ahbm())
    assert targets["rnea"] == targets["ahbm.dynamics.rnea"]  # not reference.rnea
    text = "Use `read_c3d(path)` or `ahbm.io.read_c3d`, not `q`.\n```python\n`read_c3d`\n```"
    out = hooks.autolink(text, targets)
    target = targets["read_c3d"]
    assert out.splitlines()[0] == (
        f"Use [`read_c3d(path)`][{target}] or [`ahbm.io.read_c3d`][{target}], not `q`."
    )
    assert out.splitlines()[2] == "`read_c3d`"  # code blocks are left alone


def test_comment_lines_document_constants():
    import griffe

    roles = _load("griffe_roles")
    code = "#: Gravity, m/s^2.\n#: Z up.\nGRAVITY = (0.0, 0.0, -9.81)\nOTHER = 1\n"
    with griffe.temporary_visited_module(code) as module:
        roles._comment_docstring(module["GRAVITY"])
        roles._comment_docstring(module["OTHER"])
        assert module["GRAVITY"].docstring.value == "Gravity, m/s^2.\nZ up."
        assert module["OTHER"].docstring is None


def test_inline_code_naming_a_function_links_but_parameters_do_not():
    import griffe

    roles = _load("griffe_roles")
    package = griffe.load("ahbm", search_paths=[str(ROOT)], resolve_aliases=False)
    roles.expand_lazy_packages(package)  # as the extension does: lazy packages' names
    exported = roles._exported_paths(package)
    function = package["analysis.filters.butter_filtfilt"]
    text = "Like ``moving_average(x)``; `x` and ``events`` stay code.\n>>> `moving_average`"
    out = roles.link_code(package, function, text, exported)
    assert out.splitlines()[0] == (
        "Like [`moving_average(x)`][ahbm.analysis.filters.moving_average]; "
        "`x` and ``events`` stay code."
    )
    assert out.splitlines()[1] == ">>> `moving_average`"


def test_lazy_packages_get_their_modules_names():
    # ahbm.io = lazy_package(__name__, [...]): griffe sees no import, the extension adds them
    import griffe

    roles = _load("griffe_roles")
    package = griffe.load("ahbm", search_paths=[str(ROOT)], resolve_aliases=False)
    roles.expand_lazy_packages(package)
    io = package["io"]
    assert "read_c3d" in io.exports and "Trial" in io.exports
    assert io.members["read_c3d"].target_path.startswith("ahbm.io.c3d")
    assert package.members["load_model"].target_path == "ahbm.kinematics.model_file.load_model"
