"""The layers hold: doors get use cases only from ``memory_layer.api``, storage imports
nothing above it, the inner layers import no door, and no module imports itself back.

Read from the source with ``ast``, counting imports inside functions (a cycle hidden in
a function is still a cycle) and ``importlib.import_module("...")`` strings.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "memory_layer"
WEB = REPO / "web"  # installed as memory_layer.web

DOORS = (
    "memory_layer.cli",
    "memory_layer.hooks",
    "memory_layer.mcp_server",
    "memory_layer.engine",
    "memory_layer.web",
    "memory_layer.mirror",
    "memory_layer.team_http",  # the team server's HTTP API
    "memory_layer.team_mcp",  # and its remote MCP endpoint
    "memory_layer.__main__",
)
# What a door may import besides memory_layer.api: values and settings every layer
# shares, the frozen values doors parse their input into (requests, task signals),
# and the engine's transport (a door talking to the engine door over its socket, or
# starting and stopping it). ``memory_layer`` itself is only ``__version__``.
DOOR_MAY_IMPORT = (
    "memory_layer.api",
    "memory_layer.outcomes.signals",
    "memory_layer.errors",
    "memory_layer.models",
    "memory_layer.config",
    "memory_layer.paths",
    "memory_layer.requests",
    "memory_layer.team.wire",  # the team API's frozen request values
    "memory_layer.frozen",
    "memory_layer.engine.client",
    "memory_layer.engine.lifecycle",
    "memory_layer",
)
# The use-case package may use every layer; these may use the ones below them only.
INNER = (
    "memory_layer.trust",
    "memory_layer.outcomes",
    "memory_layer.retrieval",
    "memory_layer.team",
)
STORAGE = "memory_layer.storage"
# memory_layer.text: the lexical rules (word regex, stopwords, stem rule) the FTS index
# shares with retrieval and outcomes; memory_layer.frozen: the light frozen-record base.
# Leaf modules like models, errors and paths.
STORAGE_MAY_IMPORT = (
    STORAGE,
    "memory_layer.models",
    "memory_layer.errors",
    "memory_layer.paths",
    "memory_layer.text",
    "memory_layer.frozen",
)


def module_name(path: Path) -> str:
    if path.is_relative_to(WEB):
        parts = ["memory_layer", "web", *path.relative_to(WEB).with_suffix("").parts]
    else:
        parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def sources() -> dict[str, Path]:
    files = [*PACKAGE.rglob("*.py"), *WEB.rglob("*.py")]
    return {module_name(p): p for p in files if "__pycache__" not in p.parts}


def imports(path: Path, name: str, known: set[str]) -> set[str]:
    """Every memory_layer module ``path`` imports, anywhere in it."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".")
                anchor = anchor if is_package else anchor[:-1]
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # `from pkg import name`: the module pkg.name when there is one, else pkg.
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                for alias in node.names
            ]
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            targets = [node.args[0].value]
        for target in targets:
            if target.startswith("memory_layer"):
                # `from pkg import name` names a module only when it is one.
                while target not in known and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target in known and target != name:
                    found.add(target)
    return found


def graph() -> dict[str, set[str]]:
    files = sources()
    known = set(files)
    return {name: imports(path, name, known) for name, path in files.items()}


def within(name: str, prefixes: tuple[str, ...] | str) -> bool:
    """``name`` is one of ``prefixes`` or inside one (``memory_layer`` alone is exact)."""
    prefixes = (prefixes,) if isinstance(prefixes, str) else prefixes
    return any(name == p or (p != "memory_layer" and name.startswith(p + ".")) for p in prefixes)


def test_the_graph_sees_the_whole_package() -> None:
    edges = graph()
    assert "memory_layer.api" in edges and "memory_layer.web.app" in edges
    assert "memory_layer.api" in edges["memory_layer.mcp_server"]
    # imports inside functions count
    assert "memory_layer.trust.facts" in edges["memory_layer.api.writing"]


def test_doors_get_use_cases_only_from_the_api() -> None:
    edges = graph()
    wrong = sorted(
        f"{door} imports {target}"
        for door, targets in edges.items()
        if within(door, DOORS)
        for target in targets
        # Another door is not a use case: the CLI starts the MCP server, the dashboard
        # and the hooks; the engine runs the hooks' handlers (no cycles: see below).
        if not within(target, (*DOOR_MAY_IMPORT, *DOORS))
    )
    assert wrong == []


def test_storage_imports_nothing_above_it() -> None:
    edges = graph()
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in edges.items()
        if within(module, STORAGE)
        for target in targets
        if not within(target, STORAGE_MAY_IMPORT)
    )
    assert wrong == []


def test_inner_layers_import_no_door_and_not_the_api() -> None:
    edges = graph()
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in edges.items()
        if within(module, INNER)
        for target in targets
        if within(target, (*DOORS, "memory_layer.api"))
    )
    assert wrong == []


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
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

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def package_edges(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """A package's ``__init__`` re-exporting its own modules is not a cycle: drop the
    edges from a package to its submodules, keep everything else."""
    return {
        name: {t for t in targets if not t.startswith(name + ".")}
        for name, targets in edges.items()
    }


def test_no_import_cycles() -> None:
    assert cycles(package_edges(graph())) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
