"""The import graph of vitcore/ has no cycles, imports inside functions included (read with ast)."""

import ast

from conftest import ROOT

PACKAGE = ROOT / "vitcore"


def module_name(path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path, modules: set[str]) -> set[str]:
    """The vitcore modules `path` imports anywhere in its body, functions included (`from a.b import c`
    counts a.b.c when c is a module, else a.b), except under `if TYPE_CHECKING:`."""
    tree = ast.parse(path.read_text(), str(path))
    skipped = {id(inner) for node in ast.walk(tree) if isinstance(node, ast.If) and _type_checking(node.test)
               for inner in ast.walk(node)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in modules else node.module
                     for alias in node.names]
        else:
            continue
        found |= {name for name in names if name in modules}
    return found


def _type_checking(test: ast.expr) -> bool:
    """`if TYPE_CHECKING:` (annotations only, never run): not an import at run time."""
    return isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"


def graph() -> dict[str, set[str]]:
    paths = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    modules = set(paths)
    return {name: imports_of(path, modules) - {name} for name, path in paths.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component with more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on.add(node)
        for nxt in edges.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            part = []
            while True:
                top = stack.pop()
                on.discard(top)
                part.append(top)
                if top == node:
                    break
            if len(part) > 1:
                out.append(sorted(part))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return out


def test_the_probe_sees_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_function_level_imports_are_read_and_type_checking_ones_are_not():
    edges = graph()
    assert "vitcore.run.train" in edges["vitcore.cli.runs"]  # imported inside _run: training is lazy
    assert "vitcore.store.runs" not in edges["vitcore.store.upkeep"]  # under `if TYPE_CHECKING:` only


def test_no_import_cycles():
    assert cycles(graph()) == []
