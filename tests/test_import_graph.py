"""The import graph of vitcore/: no cycles, and every import points down the layers, imports inside
functions and under `if TYPE_CHECKING:` included (read with ast)."""

import ast

from conftest import ROOT

PACKAGE = ROOT / "vitcore"
# The layers, lowest first (README "Contributing"): a module may import its own layer and the ones below.
# Layers on one line are peers and import neither each other nor anything above.
LAYERS = (("config",), ("data",), ("model",), ("store",), ("stats",), ("run",), ("analysis",), ("article",),
          ("study",), ("app", "cli"), ("__main__",))
RANK = {layer: rank for rank, peers in enumerate(LAYERS) for layer in peers}


def module_name(path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path, modules: set[str]) -> set[str]:
    """The vitcore modules `path` imports anywhere in its body: inside functions and under `if TYPE_CHECKING:`
    too (an annotation-only import still ties the layers; `from a.b import c` counts a.b.c when c is a module,
    else a.b)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in modules else node.module
                     for alias in node.names]
        else:
            continue
        found |= {name for name in names if name in modules}
    return found


def graph() -> dict[str, set[str]]:
    paths = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    modules = set(paths)
    return {name: imports_of(path, modules) - {name} for name, path in paths.items()}


def layer(module: str) -> str | None:
    """vitcore.stats.compare -> 'stats'; the package itself (vitcore/__init__.py) has none."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def upward(edges: dict[str, set[str]]) -> list[str]:
    """Every import that does not point down the layers: 'a -> b (layer a, layer b)'."""
    wrong = []
    for source, targets in sorted(edges.items()):
        for target in sorted(targets):
            a, b = layer(source), layer(target)
            if a != b and (a is None or b is None or RANK[a] <= RANK[b]):
                wrong.append(f"{source} -> {target} ({a} -> {b})")
    return wrong


def shared_to_page(edges: dict[str, set[str]]) -> list[str]:
    """The app's shared core (vitcore/app/*.py) importing page code (vitcore/app/<page>/): pages build on the
    core, never the reverse."""
    core = {name for name in edges if name.count(".") == 2 and name.startswith("vitcore.app.")}
    pages = {name.split(".")[2] for name in edges if name.count(".") == 3 and name.startswith("vitcore.app.")}
    return [f"{source} -> {target}" for source in sorted(core) for target in sorted(edges[source])
            if target.startswith("vitcore.app.") and target.split(".")[2] in pages]


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


def test_the_probes_see_an_upward_import_and_a_core_module_importing_a_page():
    edges = {"vitcore.store.validate": {"vitcore.model.anatomy", "vitcore.article.seed_reference"},
             "vitcore.app.cli_helper": set(), "vitcore.cli.common": {"vitcore.app.state"},
             "vitcore.app.tables": {"vitcore.app.ablations.cards", "vitcore.app.fmt"},
             "vitcore.app.ablations.cards": {"vitcore.app.fmt"}, "vitcore.app.fmt": set()}
    assert upward(edges) == ["vitcore.cli.common -> vitcore.app.state (cli -> app)",
                             "vitcore.store.validate -> vitcore.article.seed_reference (store -> article)"]
    assert shared_to_page(edges) == ["vitcore.app.tables -> vitcore.app.ablations.cards"]


def test_function_level_and_type_checking_imports_are_read(tmp_path):
    edges = graph()
    assert "vitcore.run.train" in edges["vitcore.cli.runs"]  # imported inside _run: training is lazy
    source = tmp_path / "m.py"
    source.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from vitcore.store.runs import "
                      "RunStore\ndef f():\n    import vitcore.stats.compare\n")
    assert imports_of(source, set(edges)) == {"vitcore.store.runs", "vitcore.stats.compare"}


def test_every_layer_is_placed():
    assert {layer(name) for name in graph()} - {None} == set(RANK)


def test_every_import_points_down_the_layers():
    assert upward(graph()) == []


def test_shared_app_modules_import_no_page():
    assert shared_to_page(graph()) == []


def test_no_import_cycles():
    assert cycles(graph()) == []


PAGE_LAYERS = ("app", "study", "config")  # what a page (views/*.py) may import: the app, the Study, the shared facts


def test_pages_import_the_app_and_the_study_not_the_layers_below():
    """A page describes the UI: it reaches the library through vitcore.app (its helpers, and
    vitcore.app.walkthrough.library for what the walkthrough shows) and the Study, never stats, analysis, data,
    model, store or run directly (issue 42: 11 such imports in 6 pages)."""
    modules = set(graph())
    below = {f"{page.name}: {target}" for page in sorted((ROOT / "views").glob("*.py"))
             for target in imports_of(page, modules | {f"vitcore.{layer}" for layer in RANK})
             if layer(target) not in PAGE_LAYERS}
    assert below == set()
    assert imports_of(ROOT / "views" / "attention.py", modules) >= {"vitcore.app.walkthrough.library"}  # it can fail
