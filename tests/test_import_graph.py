"""The import graph of vitcore/: no cycles, and every import points down the layers, imports inside
functions and under `if TYPE_CHECKING:` included (read with ast)."""

import ast
import functools

from conftest import ROOT
from sources import tree

PACKAGE = ROOT / "vitcore"
# The layers, lowest first (docs/contributing.md): a module may import its own layer and the ones below.
# Layers on one line are peers and import neither each other nor anything above.
# The package itself (vitcore/__init__.py, the public API `from vitcore import ...`) is the top: it imports from
# the layers, nothing imports it.
LAYERS = (("config",), ("data",), ("model",), ("store",), ("stats",), ("run",), ("analysis",), ("article",),
          ("study",), ("app", "cli"), ("__main__", "vitcore"))
RANK = {layer: rank for rank, peers in enumerate(LAYERS) for layer in peers}


def module_name(path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path, modules: set[str]) -> set[str]:
    """The vitcore modules `path` imports anywhere in its body: inside functions and under `if TYPE_CHECKING:`
    too (an annotation-only import still ties the layers; `from a.b import c` counts a.b.c when c is a module,
    else a.b)."""
    found = set()
    for node in ast.walk(tree(path)):
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
    """{module: the vitcore modules it imports}: a copy a test may change (the package's is read once per process)."""
    return {name: set(targets) for name, targets in package_graph().items()}


@functools.cache
def package_graph() -> dict[str, frozenset[str]]:
    paths = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    modules = set(paths)
    return {name: frozenset(imports_of(path, modules) - {name}) for name, path in paths.items()}


def layer(module: str) -> str:
    """vitcore.stats.compare -> 'stats'; the package itself (vitcore/__init__.py, the public API) -> 'vitcore'."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


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
    edges = {"vitcore.store.validate": {"vitcore.model.anatomy", "vitcore.article.sources"},
             "vitcore.app.cli_helper": set(), "vitcore.cli.common": {"vitcore.app.state"},
             "vitcore.app.tables": {"vitcore.app.ablations.cards", "vitcore.app.fmt"},
             "vitcore.app.ablations.cards": {"vitcore.app.fmt"}, "vitcore.app.fmt": set()}
    assert upward(edges) == ["vitcore.cli.common -> vitcore.app.state (cli -> app)",
                             "vitcore.store.validate -> vitcore.article.sources (store -> article)"]
    assert shared_to_page(edges) == ["vitcore.app.tables -> vitcore.app.ablations.cards"]


def test_function_level_and_type_checking_imports_are_read(tmp_path):
    edges = graph()
    assert "vitcore.run.train" in edges["vitcore.cli.runs"]  # imported inside _run: training is lazy
    source = tmp_path / "m.py"
    source.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from vitcore.store.runs import "
                      "RunStore\ndef f():\n    import vitcore.stats.compare\n")
    assert imports_of(source, set(edges)) == {"vitcore.store.runs", "vitcore.stats.compare"}


def test_the_public_apis_lazy_imports_are_edges_at_the_top():
    """vitcore/__init__.py loads its names on first use through plain import statements (once through a table of
    module-path strings no probe saw): each is an edge here, and an import of the package from a layer is upward."""
    assert {"vitcore.config.run", "vitcore.store.runs", "vitcore.study.study", "vitcore.stats.records",
            "vitcore.model.build", "vitcore.data.patches"} <= graph()["vitcore"]
    assert upward({"vitcore.study.study": {"vitcore"}}) == ["vitcore.study.study -> vitcore (study -> vitcore)"]


def test_every_layer_is_placed():
    assert {layer(name) for name in graph()} - {None} == set(RANK)


def test_every_import_points_down_the_layers():
    assert upward(graph()) == []


def test_shared_app_modules_import_no_page():
    assert shared_to_page(graph()) == []


def test_no_import_cycles():
    assert cycles(graph()) == []


PAGE_LAYERS = ("app", "study", "config")  # what a page (views/*.py) may import: the app, the Study, the shared facts
# What a page may take from below those, each not a statistic of the store: pure data and the model's own counts.
PAGE_FACTS = {"vitcore.data.fashion": "the class names", "vitcore.data.samples": "the source article's sample rows",
              "vitcore.data.patches": "the patch split the Patching page shows and prints",
              "vitcore.model.anatomy": "a config's parameter count", "vitcore.model.work": "a config's multiply-adds",
              "vitcore.article.sources": "the source article's quoted numbers"}
# The files under views/ and vitcore/app that may import vitcore.stats or vitcore.analysis, each with its reason.
STATISTICS = ("vitcore.stats", "vitcore.analysis")
DIRECT = {"views/attention.py": "the probes' readings of one model's attention scores (analysis.attention), not the "
                                "store's statistics",
          "vitcore/app/walkthrough/probes.py": "the attention probes themselves (analysis.attention: one model's "
                                               "forward pass, permutation test and weights), not the store's numbers"}


def test_pages_import_the_app_and_the_study_not_the_layers_below():
    """A page describes the UI: it reaches the library through vitcore.app and the Study, never stats, analysis, store
    or run directly; from data, model and article only the facts of PAGE_FACTS, and statistics only where DIRECT
    says why."""
    modules = set(graph())
    below = {f"{page.name}: {target}" for page in sorted((ROOT / "views").glob("*.py"))
             for target in imports_of(page, modules | {f"vitcore.{layer}" for layer in RANK})
             if layer(target) not in PAGE_LAYERS and target not in PAGE_FACTS
             and f"views/{page.name}" not in DIRECT}
    assert below == set()


# -- what pages and the app CALL ----------------------------------------------------------------------
def bindings(path) -> dict[str, str]:
    """The names a file binds by importing, anywhere in it, each to what it names: `from vitcore.stats import
    percell as p` binds p -> vitcore.stats.percell; `import vitcore.stats.seconds` binds vitcore ->
    vitcore (attribute chains resolve from there)."""
    found = {}
    for node in ast.walk(tree(path)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    found[alias.asname] = alias.name
                else:
                    found[alias.name.split(".")[0]] = alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                found[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return found


def resolver():
    """resolve(qualified name) -> where it is defined, following re-exports through every module of vitcore/ (a name
    a module binds by importing it is that import's target, again and again)."""
    tables = package_bindings()

    def resolve(name: str, seen=()) -> str:
        module, _, attr = name.rpartition(".")
        if name in seen or module not in tables or attr not in tables[module]:
            return name
        return resolve(tables[module][attr], (*seen, name))

    return resolve


@functools.cache
def package_bindings() -> dict[str, dict[str, str]]:
    """{module: bindings(its file)} for every module of vitcore/, read once per process (resolve only reads it)."""
    return {module_name(p): bindings(p) for p in PACKAGE.rglob("*.py")}


def dotted(node) -> list[str] | None:
    """['state', 'study'] for state.study, None for what is not a name or a chain of attributes of one."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.insert(0, node.attr)
        node = node.value
    return [node.id, *parts] if isinstance(node, ast.Name) else None


def statistics_called(path, resolve, modules: set[str] | None = None) -> set[str]:
    """The functions (and classes) of vitcore.stats / vitcore.analysis `path` calls, through any alias or re-export:
    'line 12: vitcore.analysis.pairing.survey'."""
    names, found, modules = bindings(path), set(), modules or set(graph())
    for node in ast.walk(tree(path)):
        if not isinstance(node, ast.Call) or (parts := dotted(node.func)) is None or parts[0] not in names:
            continue
        target = resolve(names[parts[0]])
        for part in parts[1:]:
            target = resolve(f"{target}.{part}")
        target = resolve(target)
        if target.rpartition(".")[0] in modules and target.startswith(tuple(f"{name}." for name in STATISTICS)):
            found.add(f"line {node.lineno}: {target}")
    return found


# vitcore/app modules that still call statistics themselves, beside DIRECT's (each a table or a chart the Study
# does not hand out yet); the list only shrinks. Pages (views/) call none but DIRECT's.
STILL_CALLING: set[str] = set()


def calling(resolve) -> dict[str, set[str]]:
    files, modules = [*sorted((ROOT / "views").glob("*.py")), *sorted((PACKAGE / "app").rglob("*.py"))], set(graph())
    return {str(path.relative_to(ROOT)): called for path in files
            if (called := statistics_called(path, resolve, modules))}


def test_the_call_probe_sees_a_statistic_through_an_alias_and_a_re_export(tmp_path):
    resolve = resolver()
    page = tmp_path / "page.py"
    page.write_text("from vitcore.study import words as w\nfrom vitcore.analysis import pairing as p\n"
                    "import vitcore.stats.seconds\nfrom vitcore.app import state\nfrom vitcore.stats import summaries\n"
                    "w.group_text('')\np.survey(None)\nvitcore.stats.seconds.one_group(None)\n"
                    "state.study().timed()\nlen([])\nsummaries.runs_of(None, None)\n")
    assert statistics_called(page, resolve) == {"line 7: vitcore.analysis.pairing.survey",
                                                "line 8: vitcore.stats.seconds.one_group",
                                                "line 11: vitcore.stats.families.runs_of"}
    assert resolve("vitcore.stats.summaries.runs_of") == "vitcore.stats.families.runs_of"
    assert resolve("vitcore.study.words.MARGIN") == "vitcore.stats.estimates.MARGIN"  # the vocabulary, said once


def test_pages_call_no_statistics_the_study_computes():
    """Every number a page shows comes from the Study: a page (views/*.py) calls no function of vitcore.stats or
    vitcore.analysis, whatever alias or re-export it is reached through (DIRECT's reasons aside), and the app's
    modules only those of STILL_CALLING."""
    called = calling(resolver())
    pages = {name: found for name, found in called.items() if name.startswith("views/") and name not in DIRECT}
    assert pages == {}
    assert set(called) - set(DIRECT) <= STILL_CALLING, {name: called[name] for name in set(called) - STILL_CALLING}


# -- what the CLI CALLS ---------------------------------------------------------------------------------
# The CLI asks the Study for every number it prints or writes (vitcore.study.committed for the package's own
# measurements); what it still calls in vitcore.stats / vitcore.analysis itself, each with its reason: words, configs
# and writers of what the Study handed out, and the benchmarks that measure anew, none a statistic of the store
# computed beside the Study. The list only shrinks.
CLI_CALLS = {
    "vitcore.stats.estimates.definitions_text": "the verdicts' glossary `--help` prints: words, no number",
    "vitcore.stats.readings.definitions_text": "the readings' glossary `--help` prints: words, no number",
    "vitcore.stats.plan.planned": "whether a row the Study judged came from a plan: reads the row",
    "vitcore.stats.centres.filled": "compare's config, the fields it does not name from the store's one value",
    "vitcore.stats.centres.spelled": "the fields compare took from the store, as flags: words",
    "vitcore.stats.centres.changes_text": "a config as --base / --baseline items: words",
    "vitcore.stats.centres.store_centre": "compare's hint naming the store's centre when its baseline has no runs",
    "vitcore.stats.centres.off_article": "effects' centre as changes to the article's ViT: a config",
    "vitcore.stats.testset.sentence": "the test-set line under a row the Study judged: words",
    "vitcore.stats.compare.write": "writes the Comparison the Study computed as compare's CSVs",
    "vitcore.analysis.flips.summary": "the line under compare of the Study's flip report: words",
    "vitcore.analysis.timing.bench_timing": "bench-timing trains the timing set: a measurement, not a statistic",
    "vitcore.analysis.cost.bench_attention": "bench-attention times one attention layer: a measurement",
    "vitcore.analysis.cost.write_attention_bench": "writes that measurement in the committed file's format",
}
# What the CLI gets only through the Study (Study.draft_plan / register_plan / plans_checked) or vitcore.study.committed
# (diagnose_bn): plan registration, `check`'s plan audit and the BatchNorm diagnosis.
THROUGH_THE_STUDY = ("vitcore.stats.plans.", "vitcore.stats.plan_store.", "vitcore.stats.plan_report.",
                     "vitcore.analysis.bn.")


def shadowed(path) -> list[str]:
    """'line 64: bn' for each name `path` binds by importing vitcore.stats / vitcore.analysis (a module or a name of
    one) and binds again (an assignment, an argument, a loop variable): the call probe would read `bn.set_defaults()`
    on a parser as a call of vitcore.analysis.bn, and a real call through the other binding could hide behind it."""
    imported = {name for name, target in bindings(path).items()
                if target.startswith(tuple(f"{top}." for top in STATISTICS)) or target in STATISTICS}
    found = set()
    for node in ast.walk(tree(path)):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id in imported:
            found.add((node.lineno, node.id))
        elif isinstance(node, ast.arg) and node.arg in imported:
            found.add((node.lineno, node.arg))
    return [f"line {line}: {name}" for line, name in sorted(found)]


def cli_calls(paths, resolve) -> dict[str, set[str]]:
    """{file: its calls of vitcore.stats / vitcore.analysis that CLI_CALLS does not list} ('line 91:
    vitcore.stats.plan_report.judged_ids')."""
    modules, out = set(graph()), {}
    for path in paths:
        unlisted = {call for call in statistics_called(path, resolve, modules) if call.split(": ")[1] not in CLI_CALLS}
        if unlisted:
            out[path.name] = unlisted
    return out


def cli_files() -> list:
    return sorted((PACKAGE / "cli").rglob("*.py"))


def test_the_cli_probes_see_a_direct_plan_call_and_a_local_shadowing_a_module(tmp_path):
    """The old `plan register` (the plan store's functions called from the CLI) and the old `diagnose-bn` parser
    (a local named after the module it imports) are both seen."""
    command = tmp_path / "plans.py"
    command.write_text("from vitcore.stats import plan_report, plan_store\nfrom vitcore.analysis import bn\n"
                       "from vitcore.study import Study\n"
                       "def add(sub):\n    bn = sub.add_parser('diagnose-bn')\n    bn.set_defaults(handler=None)\n"
                       "def register(plan, store):\n    stored = plan_report.judged_ids(plan, store.scan().table())\n"
                       "    Study.open(store.root).draft_plan('mine', [], (1000,), (0, 9))\n"
                       "    return plan_store.register(store.root, plan)\n")
    assert cli_calls([command], resolver()) == {"plans.py": {
        "line 6: vitcore.analysis.bn.set_defaults", "line 8: vitcore.stats.plan_report.judged_ids",
        "line 10: vitcore.stats.plan_store.register"}}
    assert shadowed(command) == ["line 5: bn"]


def test_the_cli_calls_no_statistics_beside_the_study():
    """Every number a command prints or writes comes from the Study: the CLI calls no function of vitcore.stats or
    vitcore.analysis but CLI_CALLS's (words, configs, writers and benchmarks, each with its reason), none of plan
    registration, the plan audit or the BatchNorm diagnosis, and no local hides a module it imports."""
    assert cli_calls(cli_files(), resolver()) == {}
    assert not [name for name in CLI_CALLS if name.startswith(THROUGH_THE_STUDY)]
    assert {str(path.relative_to(ROOT)): found for path in cli_files() if (found := shadowed(path))} == {}


# -- what pages and the app IMPORT from the statistics, and what they re-export ------------------------------
def statistics_imports(path) -> list[tuple[int, str]]:
    """(line, that line's text) of every import of vitcore.stats / vitcore.analysis in `path`, anywhere in it."""
    lines, found = path.read_text().splitlines(), []
    for node in ast.walk(tree(path)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        else:
            continue
        if any(name == top or name.startswith(f"{top}.") for name in names for top in STATISTICS):
            found.append((node.lineno, lines[node.lineno - 1]))
    return sorted(found)


def reason(line: str) -> str:
    """The comment of an import line, lint switches (noqa) aside: why it imports what it does ('' for none)."""
    _, hash_, comment = line.partition("#")
    return comment.split("noqa")[0].strip(" :(") if hash_ else ""


def re_exported_statistics(path, resolve) -> list[str]:
    """'line 18: config_of_row -> vitcore.stats.centres.config_of_row' for every name a `noqa: F401` import of
    `path` binds (a re-export: imported for others to take) that is a name of vitcore.stats / vitcore.analysis,
    whatever module it is taken through."""
    lines, found = path.read_text().splitlines(), []
    for node in ast.walk(tree(path)):
        if not (isinstance(node, ast.ImportFrom) and node.module and node.level == 0):
            continue
        if not any("noqa: F401" in line for line in lines[node.lineno - 1:node.end_lineno]):
            continue
        for alias in node.names:
            target = resolve(f"{node.module}.{alias.name}")
            if target.startswith(tuple(f"{top}." for top in STATISTICS)) or target in STATISTICS:
                found.append(f"line {node.lineno}: {alias.asname or alias.name} -> {target}")
    return found


def app_files() -> list:
    return [*sorted((ROOT / "views").glob("*.py")), *sorted((PACKAGE / "app").rglob("*.py"))]


def test_the_import_probes_see_a_direct_import_its_reason_and_a_re_export(tmp_path):
    resolve = resolver()
    page = tmp_path / "page.py"
    page.write_text("import pandas\nfrom vitcore.stats.estimates import MARGIN  # noqa: F401\n"
                    "from vitcore.study.words import (  # noqa: F401 (the shared words)\n"
                    "    borderline,\n    METRICS,\n)\n"
                    "def f():\n    import vitcore.analysis.noise  # the probe's own numbers, not the store's\n")
    assert [line for line, _ in statistics_imports(page)] == [2, 8]
    assert [reason(text) for _, text in statistics_imports(page)] == ["", "the probe's own numbers, not the store's"]
    assert re_exported_statistics(page, resolve) == ["line 2: MARGIN -> vitcore.stats.estimates.MARGIN",
                                                     "line 3: METRICS -> vitcore.stats.estimates.METRICS"]


def test_the_app_takes_the_statistics_from_the_study_layer():
    """No file under views/ or vitcore/app re-exports a name of vitcore.stats or vitcore.analysis, and at most 2
    import them directly (DIRECT's), each saying why on its import line: everything else a page shows comes
    through vitcore.study (the Study's methods, and the words every view says in vitcore.study.words)."""
    resolve = resolver()
    direct = {str(path.relative_to(ROOT)): statistics_imports(path) for path in app_files()}
    direct = {name: found for name, found in direct.items() if found}
    assert set(direct) <= set(DIRECT) and len(DIRECT) <= 2, sorted(direct)
    unexplained = [f"{name}:{line}" for name, found in direct.items() for line, text in found
                   if len(reason(text).split()) < 3]
    assert unexplained == []
    re_exports = {str(path.relative_to(ROOT)): found for path in app_files()
                  if (found := re_exported_statistics(path, resolve))}
    assert re_exports == {}
