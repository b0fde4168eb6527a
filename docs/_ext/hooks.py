"""MkDocs hooks of the ahbm documentation (loaded through ``hooks:`` in mkdocs.yml).

- ``on_files`` writes one API reference page per public package or top-level
  module of ahbm (``api/<name>.md``), found by reading the source tree with
  griffe (nothing is imported), so that a new module appears in the reference
  without anyone editing the docs.
- ``on_config`` appends to ``nav`` the reference pages and the pages of
  ``docs/`` that it does not list yet (a new page is never left unreachable).
- ``on_files`` also publishes the repository's CHANGELOG.md and
  CONTRIBUTING.md as the pages ``changelog.md`` and ``contributing.md``.
- ``on_page_markdown`` puts the README (install, tests, example, package
  map) into the home page where it says ``<!-- README -->``, appends to the example gallery
  every script of ``examples/`` whose source the gallery page does not
  include, and links the inline code that names an ahbm function, class or
  module (```read_c3d```, ```ahbm.io.read_c3d```) to its reference.
"""

from __future__ import annotations

import importlib.util
import logging
import re
from pathlib import Path

import griffe
from mkdocs.structure.files import File

log = logging.getLogger("mkdocs.plugins.ahbm")

ROOT = Path(__file__).resolve().parents[2]
EXT = Path(__file__).resolve().parent
#: Pages of the API reference whose title or grouping is not simply the module name.
#: Any other public package or top-level module of ahbm gets a page of its own.
GROUPS: dict[str, tuple[str, list[str]]] = {}
#: Order of the reference pages in the navigation (the package's layers).
ORDER = [
    "ahbm",
    "kinematics",
    "dynamics",
    "muscles",
    "optimize",
    "bsp",
    "analysis",
    "io",
    "opensim",
    "graphics",
    "models",
    "gait",
    "cli",
    "errors",
    "types",
    "testing",
]
#: Scripts of examples/ that are tools, not examples (left out of the gallery).
NOT_EXAMPLES = {"make_gallery.py"}


def _public(module: griffe.Module) -> list[griffe.Module]:
    """Public submodules and subpackages defined in a package, by name."""
    return [
        sub
        for name, sub in sorted(module.members.items())
        if not name.startswith("_")
        and name != "__main__"
        and not sub.is_alias  # an imported module is documented where it is defined
        and sub.is_module
    ]


def _target(module: griffe.Module, name: str):
    """The object that ``module`` exports as ``name``, or None (with a warning)."""
    member = module.members.get(name)
    try:
        return member.final_target if member.is_alias else member
    except (AttributeError, griffe.AliasResolutionError, griffe.CyclicAliasError):
        where = f" (imported from {member.target_path})" if member is not None else ""
        log.warning("%s exports %r, which is not defined%s", module.path, name, where)
        return None


def _exports(module: griffe.Module) -> list[str]:
    return [name for name in module.exports or [] if isinstance(name, str)]


def _exported_elsewhere(module: griffe.Module) -> list[str]:
    """Names a package exports that its public submodules do not document.

    They are defined in the package's ``__init__`` or in a private module
    (``ahbm.graphics._common.save_figure``); the package block renders them.
    """
    names = []
    public = tuple(f"{sub.path}." for sub in _public(module))
    for name in _exports(module):
        target = _target(module, name)
        if target is None or target.is_module:
            continue
        member = module.members[name]
        if member.is_alias and member.target_path.startswith(public):
            continue  # a public submodule documents it (ahbm.io.safety.max_read_bytes)
        if target.parent is module or any(
            part.startswith("_") and part != "__init__" for part in target.path.split(".")[:-1]
        ):
            names.append(name)
    return names


def _block(path: str, *, members=None, heading_level: int = 2) -> str:
    options = [f"      heading_level: {heading_level}"]
    if members is not None:
        options.append(f"      members: {members if members else 'false'}")
    return f"::: {path}\n    options:\n" + "\n".join(options) + "\n"


def _importable(module: griffe.Module) -> str:
    """A line linking every name ``module`` exports to its documentation."""
    links = []
    for name in _exports(module):
        target = _target(module, name)
        if target is not None:
            links.append(f"[`{name}`][{target.path}]")
    return f"Importable from `{module.path}`: " + ", ".join(links) + ".\n" if links else ""


def _package_page(module: griffe.Module, level: int = 1) -> str:
    parts = [_block(module.path, members=_exported_elsewhere(module), heading_level=level)]
    parts.append(_importable(module))
    for sub in _public(module):
        if sub.is_init_module:
            parts.append(_package_page(sub, level + 1))
        else:
            parts.append(_block(sub.path, heading_level=level + 1))
    return "\n".join(parts)


def _roles():
    """docs/_ext/griffe_roles.py (loaded by file: this hook is not in a package)."""
    spec = importlib.util.spec_from_file_location("ahbm_docs_griffe_roles", EXT / "griffe_roles.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_ahbm() -> griffe.Module:
    """The ahbm package as griffe reads it from the source tree (no import)."""
    package = griffe.load("ahbm", search_paths=[str(ROOT)], resolve_aliases=False)
    _roles().expand_lazy_packages(package)
    return package


def link_targets(package: griffe.Module) -> dict[str, str]:
    """``{name as written in prose: documented path}`` for the autolinks.

    Every public module (``ahbm.io.c3d``), every exported name qualified by
    the package that exports it (``ahbm.io.read_c3d``), and the bare name
    (``read_c3d``) when it means one object only, or one among the names the
    top-level packages export.
    """
    qualified: dict[str, str] = {}
    bare: dict[str, set[str]] = {}
    stack = [package]
    while stack:
        module = stack.pop()
        qualified[module.path] = module.path
        subs = _public(module)
        stack.extend(subs)
        names = _exports(module) if module.exports else []
        for name in names:
            member = module.members.get(name)
            try:
                target = member.final_target if member.is_alias else member
            except (AttributeError, griffe.AliasResolutionError, griffe.CyclicAliasError):
                continue
            qualified[f"{module.path}.{name}"] = target.path
            bare.setdefault(name, set()).add(target.path)
    for name, targets in bare.items():
        if len(targets) > 1:  # rnea: ahbm.dynamics.rnea, not ahbm.dynamics.reference.rnea
            targets = {
                qualified[f"{sub.path}.{name}"]
                for sub in _public(package)
                if f"{sub.path}.{name}" in qualified
            }
        if len(targets) == 1 and name not in qualified:
            qualified[name] = next(iter(targets))
    return qualified


INLINE_CODE = re.compile(r"(?<![`\[])`(?P<name>[A-Za-z_][\w.]*)(?P<call>\([^`]*\))?`(?!`)")
FENCE = re.compile(r"^( {0,4})(```|~~~)", flags=re.M)


def autolink(markdown: str, targets: dict[str, str]) -> str:
    """Make inline code that names an ahbm object (``read_c3d``,
    ``ahbm.io.read_c3d(path)``) a link to its reference, outside code blocks
    and headings."""

    def link(match: re.Match) -> str:
        target = targets.get(match.group("name"))
        return f"[{match.group(0)}][{target}]" if target else match.group(0)

    out, in_fence = [], False
    for line in markdown.split("\n"):
        if FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and not line.startswith("#"):
            line = INLINE_CODE.sub(link, line)
        out.append(line)
    return "\n".join(out)


def api_pages(package: griffe.Module | None = None) -> dict[str, tuple[str, str]]:
    """``{page name: (title, markdown)}`` for every page of the API reference."""
    package = package or load_ahbm()
    grouped = {path for _, paths in GROUPS.values() for path in paths}
    pages = {
        "ahbm": (
            "ahbm",
            _block("ahbm", members=_exported_elsewhere(package), heading_level=1)
            + "\n"
            + _importable(package),
        )
    }
    for key, (title, paths) in GROUPS.items():
        blocks = [f"# {title}\n"]
        for path in paths:
            if path.split(".")[-1] in package.modules:
                blocks.append(_block(path, heading_level=2))
        pages[key] = (title, "\n".join(blocks))
    for sub in _public(package):
        if sub.path in grouped:
            continue
        if sub.is_init_module:
            pages[sub.name] = (sub.path, _package_page(sub))
        else:
            pages[sub.name] = (sub.path, _block(sub.path, heading_level=1))
    known = [key for key in ORDER if key in pages]
    return {key: pages[key] for key in known + sorted(set(pages) - set(known))}


_PAGES: dict[str, tuple[str, str]] = {}
_TARGETS: dict[str, str] = {}


def _nav_files(nav) -> set[str]:
    files = set()
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        if isinstance(value, list):
            files |= _nav_files(value)
        else:
            files.add(value)
    return files


def _title(path: Path) -> str:
    match = re.search(r"^# (.+)$", path.read_text(encoding="utf-8"), flags=re.M)
    return match.group(1).strip() if match else path.stem


def on_config(config, **kwargs):
    package = load_ahbm()
    _PAGES.clear()
    _PAGES.update(api_pages(package))
    _TARGETS.clear()
    _TARGETS.update(link_targets(package))
    nav = config.get("nav") or []
    listed = _nav_files(nav)
    reference = next(
        (i for i, entry in enumerate(nav) if isinstance(entry, dict) and "API reference" in entry),
        len(nav),
    )
    docs = Path(config["docs_dir"])
    for path in sorted(docs.glob("*.md")):
        if path.name not in listed:
            nav.insert(reference, {_title(path): path.name})
            reference += 1
    for entry in nav:
        if isinstance(entry, dict) and "API reference" in entry:
            listed = {
                next(iter(item.values())) if isinstance(item, dict) else item
                for item in entry["API reference"]
            }
            for key, (title, _) in _PAGES.items():
                if f"api/{key}.md" not in listed:
                    entry["API reference"].append({title: f"api/{key}.md"})
    return config


#: Files of the repository's top level published as pages of the site.
TOP_LEVEL_PAGES = {"CHANGELOG.md": "changelog.md", "CONTRIBUTING.md": "contributing.md"}


def site_links(text: str) -> str:
    """Links of a top-level file (``docs/x.md``, ``CHANGELOG.md``) made relative to docs/."""
    text = re.sub(r"\]\(docs/", "](", text)
    for name, page in TOP_LEVEL_PAGES.items():
        text = text.replace(f"]({name})", f"]({page})")
    return text


def on_files(files, config, **kwargs):
    for key, (_, markdown) in _PAGES.items():
        files.append(File.generated(config, f"api/{key}.md", content=markdown))
    for name, page in TOP_LEVEL_PAGES.items():
        text = site_links((ROOT / name).read_text(encoding="utf-8"))
        files.append(File.generated(config, page, content=text))
    return files


def readme_body() -> str:
    """The README without its title, its links made relative to docs/."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    text = re.sub(r"\A# [^\n]*\n", "", text)
    return site_links(text)


def on_page_markdown(markdown, page, config, files, **kwargs):
    if page.file.src_uri.startswith("api/"):
        return markdown
    if page.file.src_uri == "index.md":
        markdown = markdown.replace("<!-- README -->", readme_body())
    if page.file.src_uri == "examples.md":
        markdown = _gallery(markdown)
    return autolink(markdown, _TARGETS)


def _gallery(markdown: str) -> str:
    missing = [
        path
        for path in sorted((ROOT / "examples").glob("*.py"))
        if path.name not in NOT_EXAMPLES and f'"examples/{path.name}"' not in markdown
    ]
    if not missing:
        return markdown
    extra = ["", "## More examples", ""]
    for path in missing:
        extra += [
            f"### {path.stem}",
            "",
            f'??? example "Source: examples/{path.name}"',
            "",
            "    ```python",
            f'    --8<-- "examples/{path.name}"',
            "    ```",
            "",
        ]
    return markdown + "\n".join(extra)
