"""The house plan holds: imports only go down the pipeline's layers, and no module imports itself
back through others (no cycle), lazy imports inside functions included.

The layers (the README's package map and each package's docstring say the same):

    core < sources, normalize < signatures < scan < correlate < classify < advise < report
         < pipeline < the ways in (api, triage, batch, serve, live, integrations, watch; evaluation beside)
         < cli < the package root and ``__main__``

A stage may import only packages below it; ways in may also use one another (an integration runs
a batch worker); nothing but ``cli``, the root and ``__main__`` imports ``cli``.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "dllogscan"
NAME = "dllogscan"
LAYERS = {
    "core": 0,
    "sources": 1, "normalize": 1,
    "signatures": 2,
    "scan": 3,
    "correlate": 4,
    "classify": 5,
    "advise": 6,
    "report": 7,
    "pipeline": 8,
    "api": 9, "triage": 9, "batch": 9, "serve": 9, "live": 9, "integrations": 9, "evaluation": 9, "watch": 9,
    "cli": 10,
    "": 11, "__main__": 11,  # the package root (``dllogscan/__init__.py``) and ``python -m dllogscan``
}
WAYS_IN = 9  # the one layer whose packages may import each other


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _type_checking_lines(tree: ast.AST) -> set[int]:
    """Lines under ``if TYPE_CHECKING:`` (imports for annotations only, never run)."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def _resolve(module: str, is_package: bool, level: int, target: str | None) -> str:
    base = module.split(".") if is_package else module.split(".")[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def imports_of(module: str) -> set[str]:
    """Every dllogscan module ``module`` imports, at the top or inside a function."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_lines(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", 0) in skip:
            continue
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names if a.name == NAME or a.name.startswith(NAME + ".")]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or "" if node.level == 0 else _resolve(module, path.name == "__init__.py",
                                                                      node.level, node.module)
            if base != NAME and not base.startswith(NAME + "."):
                continue
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        else:
            continue
        for name in names:
            while name not in MODULES and "." in name:  # an attribute of a module, not a module
                name = name.rsplit(".", 1)[0]
            if name != module:
                found.add(name)
    return found


GRAPH = {m: imports_of(m) for m in MODULES}


def package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_every_package_has_a_layer():
    unknown = sorted({package_of(m) for m in MODULES} - set(LAYERS))
    assert not unknown, f"give these packages a layer here, in their docstring and in the README map: {unknown}"


def test_imports_only_go_down():
    upward = []
    for module, targets in GRAPH.items():
        here = package_of(module)
        for target in sorted(targets):
            there = package_of(target)
            if there == here or target == NAME:
                continue
            if LAYERS[there] > LAYERS[here] or (LAYERS[there] == LAYERS[here] and LAYERS[here] != WAYS_IN):
                upward.append(f"{module} -> {target}")
    assert not upward, "imports that go up or sideways:\n" + "\n".join(upward)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        component.append(top)
                        if top == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def test_no_import_cycles():
    # the root imports the API, which every ``import dllogscan.x`` runs first; it is not a cycle
    graph = {m: {t for t in targets if t != NAME} for m, targets in GRAPH.items()}
    assert _cycles(graph) == []


def test_the_checker_sees_cycles_and_lazy_imports():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
    # a lazy import inside a function is an import: the fast entry reaches the typer app that way
    assert "dllogscan.cli.app" in GRAPH["dllogscan.cli.fast"]


@pytest.mark.parametrize("package", sorted({package_of(m) for m in MODULES} - {"", "__main__"}))
def test_each_package_says_what_it_owns_and_may_import(package):
    init = PACKAGE / package / "__init__.py"
    if not init.exists():  # a top-level module (api, triage): its docstring says what it is
        init = PACKAGE / f"{package}.py"
    doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
    assert len(doc) > 80, f"{init}: say what the package owns"
    if init.name == "__init__.py":
        assert "May import" in doc or "may import" in doc, f"{init}: say what it may import"
