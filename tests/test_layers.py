"""The import order of DESIGN.md: a module imports only from the layers above it.

errors, _internal → kinematics.rotations → kinematics.tree, _engine, kinematics.* →
dynamics → muscles → optimize → bsp, analysis → io → opensim → graphics → models →
gait → cli (imports inside functions count too).

And no private name crosses a package boundary (the package is the first
component after ``ahbm.``: kinematics, dynamics, io, ...): a module never
imports a name with a leading underscore, or anything from a private module,
of another package, except from the shared private rooms ``ahbm._internal.*``
(argument checks, safe files, text files) and ``ahbm._engine.*`` (compiled code).
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "ahbm"
BASE = ("errors", "_internal", "types")
_BASE_ENGINE = ("arrays", "backend", "jit_common", "jit_text", "jit_xml")
RANK = {
    "kinematics.rotations": 1,
    "kinematics": 2,
    "_engine": 2,
    "dynamics": 3,
    "muscles": 3.3,
    "optimize": 3.6,
    "bsp": 4,
    "analysis": 4,
    "io": 5,
    "opensim": 5.5,
    "graphics": 6,
    "models": 7,
    "gait": 7.5,
    "cli": 8,
    "testing": None,
}


def _layer(module: str):
    parts = module.split(".")[1:]
    if not parts:
        return None
    if parts[0] in BASE:
        return 0
    if parts[0] == "_engine" and len(parts) > 1 and parts[1] in _BASE_ENGINE:
        return 0  # numpy and numba only (array helpers, kernel policy, compiled readers)
    if parts[:2] == ["kinematics", "rotations"]:
        return RANK["kinematics.rotations"]
    return RANK.get(parts[0])


def _modules():
    for f in sorted(PACKAGE.rglob("*.py")):
        rel = f.relative_to(PACKAGE.parent).with_suffix("")
        name = ".".join(rel.parts).removesuffix(".__init__")
        if _layer(name) is not None:  # the package root and ahbm.testing may import anything
            yield f, name


@pytest.mark.parametrize("path,name", list(_modules()), ids=lambda x: str(x)[-40:])
def test_imports_follow_the_layers(path, name):
    me = _layer(name)
    bad = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ahbm."):
            other = _layer(node.module)
            if other is not None and other > me:
                bad.append(f"line {node.lineno}: imports {node.module}")
    assert not bad, f"{name} imports from a lower layer: {bad}"


def test_checker_sees_a_violation(tmp_path):
    src = "def f():\n    from ahbm.models import human15\n"
    tree = ast.parse(src)
    found = [
        n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and _layer(n.module) == 7
    ]
    assert found == ["ahbm.models"] and _layer("ahbm.dynamics.forces") < 7


# ----------------------------------------------------------------------------
# private names across packages
# ----------------------------------------------------------------------------

SHARED_PRIVATE = ("ahbm._engine", "ahbm._internal")


def _package(module: str):
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def _shared(module: str) -> bool:
    return any(module == s or module.startswith(s + ".") for s in SHARED_PRIVATE)


def _private_imports(source: str, me: str) -> list[str]:
    """Private names that module `me` imports from another package (absolute imports)."""
    mine = _package(me)
    bad = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            mod = node.module
            if not mod.startswith("ahbm.") or _package(mod) == mine or _shared(mod):
                continue
            private_module = any(p.startswith("_") for p in mod.split(".")[2:])
            for alias in node.names:
                if private_module or alias.name.startswith("_"):
                    bad.append(f"line {node.lineno}: {mod}.{alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                mod = alias.name
                if (
                    mod.startswith("ahbm.")
                    and _package(mod) != mine
                    and not _shared(mod)
                    and any(p.startswith("_") for p in mod.split(".")[2:])
                ):
                    bad.append(f"line {node.lineno}: {mod}")
    return bad


@pytest.mark.parametrize("path,name", list(_modules()), ids=lambda x: str(x)[-40:])
def test_no_private_name_crosses_a_package(path, name):
    bad = _private_imports(path.read_text(encoding="utf-8"), name)
    assert not bad, (
        f"{name} imports private names of another package: {bad}; use a public name, or move "
        "a genuinely shared helper into ahbm._internal (ahbm._engine for compiled code)"
    )


def test_private_name_checker_sees_violations():
    me = "ahbm.dynamics.constraints"
    assert _private_imports("from ahbm.kinematics.forward import _Kin\n", me) == [
        "line 1: ahbm.kinematics.forward._Kin"
    ]
    assert _private_imports("def f():\n    from ahbm.io.c3d._common import warn\n", me) == [
        "line 2: ahbm.io.c3d._common.warn"
    ]
    assert _private_imports("import ahbm.graphics._common\n", me) == [
        "line 1: ahbm.graphics._common"
    ]
    # allowed: the same package, the shared private helpers, public names, relative imports
    ok = (
        "from ahbm.dynamics.forces import _body\n"
        "from ahbm._engine.state import point_bl\n"
        "from ahbm._engine import dispatch as _dispatch\n"
        "from ahbm._internal.validation import as_float_array\n"
        "from ahbm.kinematics.forward import point_position\n"
        "from .forces import _vec3\n"
    )
    assert _private_imports(ok, me) == []


# ----------------------------------------------------------------------------
# module size and import circles
# ----------------------------------------------------------------------------

MAX_LINES = 800
#: Modules that are data tables (published parameter tables), exempt from MAX_LINES by name.
DATA_TABLES = {"ahbm.bsp.tables"}


def _all_modules():
    for f in sorted(PACKAGE.rglob("*.py")):
        rel = f.relative_to(PACKAGE.parent).with_suffix("")
        yield f, ".".join(rel.parts).removesuffix(".__init__")


@pytest.mark.parametrize("path,name", list(_all_modules()), ids=lambda x: str(x)[-40:])
def test_modules_are_at_most_800_lines(path, name):
    if name in DATA_TABLES:
        return
    n = len(path.read_text(encoding="utf-8").splitlines())
    assert n <= MAX_LINES, (
        f"{name} has {n} lines (at most {MAX_LINES}): split it along its sections into "
        "modules of the same package"
    )


def _import_graph() -> dict[str, set[str]]:
    """Module -> the ahbm modules it imports (anywhere in it; packages' __init__ left out)."""
    modules = dict((n, p) for p, n in _all_modules())
    packages = {n for n, p in modules.items() if p.name == "__init__.py"}
    graph = {}
    for name, path in modules.items():
        if name in packages:
            continue
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            edges |= {t for t in targets if t in modules and t not in packages and t != name}
        graph[name] = edges
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        found.append(sorted(comp))
    return found


def test_no_import_circles():
    """No module imports, directly or through others, a module that imports it back
    (imports inside functions count: they hide a circle, they do not remove it)."""
    found = _cycles(_import_graph())
    assert not found, f"import circles: {found}; move the shared part into a module both import"


def test_cycle_finder_sees_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
