"""Import structure of the library (docs/architecture.md): the stages and the jobs
around the engine never import the engine, write/ and retrieve/ never import the
layers above them, and the import graph (TYPE_CHECKING and lazy imports included)
has no circle."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "memory_engine"


def _module(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _graph() -> dict[str, set[str]]:
    mods = {_module(p): p for p in PKG.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        pkg = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom):
                base = pkg.split(".")
                if node.level:
                    base = base[: len(base) - (node.level - 1)]
                    prefix = ".".join(base + ([node.module] if node.module else []))
                else:
                    prefix = node.module or ""
                targets = [f"{prefix}.{a.name}" for a in node.names] + [prefix]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            for t in targets:
                if t in mods and t != mod:
                    graph[mod].add(t)
                    break
    return graph


def _imports_of(prefixes: tuple[str, ...]) -> dict[str, set[str]]:
    return {m: deps for m, deps in _graph().items() if m.startswith(prefixes)}


def test_stages_and_jobs_never_import_the_engine():
    users = _imports_of(("memory_engine.write", "memory_engine.retrieve", "memory_engine.lifecycle",
                         "memory_engine.working", "memory_engine.ports", "memory_engine.scope",
                         "memory_engine.validation"))
    assert {m for m, deps in users.items() if "memory_engine.engine" in deps} == set()


def test_stages_do_not_import_upper_layers():
    upper = ("memory_engine.lifecycle", "memory_engine.evaluation", "memory_engine.cli", "memory_engine.working",
             "memory_engine.demo", "memory_engine.service", "memory_engine.engine")
    bad = {m: sorted(d for d in deps if d.startswith(upper))
           for m, deps in _imports_of(("memory_engine.write", "memory_engine.retrieve")).items()}
    assert {m: d for m, d in bad.items() if d} == {}


def test_no_import_circle():
    graph = _graph()
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(m: str, stack: list[str]) -> None:
        state[m] = 1
        for d in sorted(graph.get(m, ())):
            if state.get(d) == 1:
                cycles.append(stack[stack.index(d):] + [d] if d in stack else [m, d])
            elif d not in state:
                visit(d, stack + [d])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert cycles == []
