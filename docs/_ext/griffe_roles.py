"""Griffe extension: Sphinx cross-reference roles in ahbm docstrings become links.

ahbm's numpydoc docstrings refer to other objects with Sphinx roles
(``:func:`butter_filtfilt```, ``:class:`~ahbm.io.Trial```, ``:mod:`ahbm.io```).
Once the whole package is loaded, each role naming an ahbm object is
rewritten as a Markdown cross-reference to the object's documented (canonical)
path, resolved the way a reader would: the object's own members, its class,
its module, the enclosing packages, then ``ahbm``. A role naming another
library (``numpy.gradient``) becomes inline code, and reST's ``Usage::``
before a literal block reads ``Usage:``. A role naming an ahbm
object that does not exist is logged as a warning, which fails the strict
build: the docstring refers to something that is gone or misspelt.

Packages made with ``ahbm._internal.lazy.lazy_package`` compute their names
at import time, from their modules' ``__all__``; griffe reads the source
only, so ``expand_lazy_packages`` gives them those exports as aliases first.
"""

from __future__ import annotations

import ast
import builtins
import logging
import re
from pathlib import Path

import griffe

log = logging.getLogger("mkdocs.plugins.ahbm.roles")

ROLE = re.compile(r":(?:py:)?(func|meth|class|mod|data|attr|obj|exc|const):`([^`]+)`")
#: reST's ``Usage::`` before an indented literal block (Markdown makes the block code).
LITERAL_MARKER = re.compile(r"(?<=\S)::(?=\n[ \t]*\n)")
FOREIGN = ("numpy.", "np.", "scipy.", "pandas.", "matplotlib.", "h5py.", "numba.", "pinocchio.")
FOREIGN += ("pin.", "ezc3d.", "casadi.", "opensim.", "concurrent.", "dask.", "typing.", "pathlib.")


def _find(package: griffe.Module, path: str):
    """The object at dotted ``path`` inside ``package`` (through aliases), or None."""
    names = path.split(".")
    if names[0] != package.name:
        return None
    obj = package
    for name in names[1:]:
        try:
            obj = obj.members[name]
            if obj.is_alias:
                obj = obj.final_target
        except (KeyError, griffe.AliasResolutionError, griffe.CyclicAliasError):
            return None
    return obj


def _canonical(obj) -> str | None:
    try:
        return obj.final_target.path if obj.is_alias else obj.path
    except (griffe.AliasResolutionError, griffe.CyclicAliasError):
        return None


def _exported_paths(package: griffe.Module) -> set[str]:
    """Canonical paths of everything the public modules of ``package`` export."""
    paths = set()
    stack = [package]
    while stack:
        module = stack.pop()
        stack.extend(
            sub
            for name, sub in module.members.items()
            if not name.startswith("_") and not sub.is_alias and sub.is_module
        )
        for name in module.exports or []:
            if isinstance(name, str) and name in module.members:
                target = _canonical(module.members[name])
                if target is not None:
                    paths.add(target)
    return paths


def _documented(obj, exported: set[str]) -> bool:
    """Whether the API reference renders ``obj``: public all the way down from
    ahbm, or exported by a public package (``ahbm.kinematics.Kinematics``)."""
    try:
        obj = obj.final_target if obj.is_alias else obj
    except (griffe.AliasResolutionError, griffe.CyclicAliasError):
        return False
    if obj.path in exported:
        return True
    while obj.parent is not None:
        if obj.name.startswith("_") and not obj.name.startswith("__"):
            return False
        if obj.is_attribute or obj.is_function or obj.is_class:
            if obj.parent.is_module and not obj.is_public:
                return False
        obj = obj.parent
    return True


def _scopes(obj) -> list[str]:
    """Paths in which a short name is looked up, innermost first."""
    scopes = []
    current = obj
    while current is not None:
        scopes.append(current.path)
        current = current.parent
    return scopes


def resolve(package: griffe.Module, obj, name: str, role: str = "obj"):
    """The ahbm object that ``name`` means in ``obj``'s docstring.

    Returns None when no ahbm object has that name; a module named like the
    function it defines (``ahbm.dynamics.simulate``) gives the function for
    the ``func`` and ``class`` roles.
    """
    if name.startswith(package.name + "."):
        candidates = [name]
    else:
        candidates = [f"{scope}.{name}" for scope in _scopes(obj)]
        # an object defined in a private module is read where a package exports it
        candidates += [
            f"{sub.path}.{name}" for key, sub in package.modules.items() if not key.startswith("_")
        ]
    for candidate in candidates:
        found = _find(package, candidate)
        if found is not None:
            last = name.rsplit(".", 1)[-1]
            if role != "mod" and found.is_module and last in found.members:
                found = found.members[last]
            return found
    return None


def rewrite(package: griffe.Module, obj, text: str, exported: set[str]) -> str:
    def replace(match: re.Match) -> str:
        raw = match.group(2).strip()
        shorten = raw.startswith("~")
        name = raw.lstrip("~.")
        if "<" in name and name.endswith(">"):  # :func:`title <target>`
            title, name = name[:-1].split("<", 1)
            title, name = title.strip(), name.strip()
        else:
            title = name.rsplit(".", 1)[-1] if shorten else name
        if name.startswith(FOREIGN) or hasattr(builtins, name):
            return f"`{title}`"
        found = resolve(package, obj, name, match.group(1))
        if found is None:
            where = obj.filepath if not isinstance(obj.filepath, list) else obj.filepath[0]
            log.warning(
                "%s:%s: docstring of %s refers to %s, which is not an ahbm object",
                where,
                obj.docstring.lineno if obj.docstring else "?",
                obj.path,
                match.group(0),
            )
            return f"`{title}`"
        target = _canonical(found)
        if target is None or not _documented(found, exported):
            return f"`{title}`"  # a private helper or an internal name: named, not linked
        return f"[`{title}`][{target}]"

    return ROLE.sub(replace, text)


#: Inline code (``name``, `name`, ``name(args)``) that may name a function or class.
CODE = re.compile(
    r"(?<![`\[\w])(?P<ticks>``?)(?P<name>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)"
    r"(?P<call>\([^`\n]*\))?(?P=ticks)(?![`\]])"
)


def link_code(package: griffe.Module, obj, text: str, exported: set[str]) -> str:
    """Link the inline code of a docstring that names an ahbm function or class
    (resolved like a role; anything else, a parameter name included, stays code)."""
    try:
        own = {parameter.name for parameter in obj.parameters} if obj.is_function else set()
    except (AttributeError, griffe.AliasResolutionError):
        own = set()

    def replace(match: re.Match) -> str:
        name = match.group("name")
        code = f"`{name}{match.group('call') or ''}`"
        if name in own or name.startswith(FOREIGN) or hasattr(builtins, name.split(".")[0]):
            return match.group(0)
        found = resolve(package, obj, name)
        if found is None or not (found.is_function or found.is_class):
            return match.group(0)
        target = _canonical(found)
        if target is None or target == obj.path or not _documented(found, exported):
            return match.group(0)
        return f"[{code}][{target}]"

    lines = text.split("\n")
    for i, line in enumerate(lines):
        if "`" in line and not line.lstrip().startswith((">>>", "...")):
            lines[i] = CODE.sub(replace, line)
    return "\n".join(lines)


def _comment_docstring(attribute) -> None:
    """Give an attribute the ``#:`` comment lines above it as its docstring
    (the Sphinx convention ahbm uses for module constants)."""
    module = attribute.module
    try:
        lines = module.lines
    except (AttributeError, OSError):
        return
    if not attribute.lineno or not lines:
        return
    comments = []
    index = attribute.lineno - 2
    while index >= 0 and lines[index].strip().startswith("#:"):
        comments.insert(0, lines[index].strip()[2:].strip())
        index -= 1
    if comments:
        attribute.docstring = griffe.Docstring(
            "\n".join(comments), lineno=index + 2, parent=attribute
        )


def _walk(obj):
    yield obj
    for member in obj.members.values():
        if member.is_alias:
            continue
        yield from _walk(member)


def _keep_numpydoc_types() -> None:
    """Show numpydoc types as written (``ndarray, shape (n_frames, 3)``).

    griffe reads a docstring's type as a Python expression, which turns
    ``ndarray, shape (n, 3)`` into the tuple ``(ndarray, shape(n, 3))``. Types
    with a shape, a comma or words (``int or None``) are kept as text; a
    plain name (``Model``) is still parsed, so that it links to its class.
    Done only where griffe's numpy parser has the expected hook.
    """
    try:
        from griffe._internal.docstrings import numpy as numpy_parser
    except ImportError:  # another griffe layout: its default rendering stays
        return
    parse = getattr(numpy_parser, "parse_docstring_annotation", None)
    if parse is None or getattr(parse, "_ahbm", False):
        return

    def parse_keeping_text(annotation, docstring, *args, **kwargs):
        if re.search(r"[,(\[{]|\s", annotation.strip()):
            return annotation
        return parse(annotation, docstring, *args, **kwargs)

    parse_keeping_text._ahbm = True
    numpy_parser.parse_docstring_annotation = parse_keeping_text


#: Names the package root defines in its module ``__getattr__``: {name: defining module}.
ROOT_LAZY = {"load_model": "ahbm.kinematics.model_file", "save_model": "ahbm.kinematics.model_file"}


def _lazy_modules(module: griffe.Module) -> list[str] | None:
    """The module list of ``lazy_package(__name__, [...])`` in a package's ``__init__``."""
    if not module.is_init_module or module.filepath is None:
        return None
    source = Path(module.filepath).read_text(encoding="utf-8")
    if "lazy_package" not in source:
        return None
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Call)
            and getattr(node.func, "id", getattr(node.func, "attr", None)) == "lazy_package"
            and len(node.args) >= 2
        ):
            try:
                return [str(name) for name in ast.literal_eval(node.args[1])]
            except ValueError:
                return None
    return None


def _expand_lazy(module: griffe.Module) -> None:
    """Give a lazy package (``ahbm._internal.lazy``) the exports and aliases griffe cannot see.

    Its public names are its modules' ``__all__``, computed at import time; griffe
    reads source only, so the names become aliases to where they are defined,
    the same for a package's subpackages (deepest first).
    """
    for sub in list(module.members.values()):
        if not sub.is_alias and sub.is_module:
            _expand_lazy(sub)
    modules = _lazy_modules(module)
    if modules is None:
        return
    names = []
    for mod in modules:
        sub = module.members.get(mod)
        if sub is None or sub.is_alias or not sub.is_module:
            log.warning("%s lists %r in lazy_package, which is not a module", module.path, mod)
            continue
        for name in [n for n in sub.exports or [] if isinstance(n, str)]:
            names.append(name)
            if name not in module.members:
                module.set_member(name, griffe.Alias(name, f"{sub.path}.{name}", parent=module))
    module.exports = names


def expand_lazy_packages(package: griffe.Module) -> None:
    """Exports and aliases of every lazy package of ``ahbm``, and of the root's lazy names."""
    _expand_lazy(package)
    for name, where in ROOT_LAZY.items():
        if name not in package.members:
            package.set_member(name, griffe.Alias(name, f"{where}.{name}", parent=package))


class SphinxRoles(griffe.Extension):
    """Rewrite Sphinx roles as Markdown cross-references once ``ahbm`` is loaded."""

    def __init__(self) -> None:
        super().__init__()
        _keep_numpydoc_types()

    def on_package(self, *, pkg: griffe.Module, **kwargs) -> None:
        if pkg.name != "ahbm":
            return
        expand_lazy_packages(pkg)
        exported = _exported_paths(pkg)
        for obj in _walk(pkg):
            if obj.docstring is None and obj.is_attribute:
                _comment_docstring(obj)
            if obj.docstring is None:
                continue
            text = LITERAL_MARKER.sub(":", obj.docstring.value)
            if ":`" in text:
                text = rewrite(pkg, obj, text, exported)
            if "`" in text:
                text = link_code(pkg, obj, text, exported)
            obj.docstring.value = text
