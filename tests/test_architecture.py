"""The package's layers (docs/architecture.md): every import, inside functions too, points
down or sideways within a layer; there is no import cycle; the command line reaches the
library only through its public doors; and the library never imports the command line.

The graph is read from the source (ast), so an import placed inside a function to dodge a
cycle counts as much as one at the top of a module.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "irwarehouse"

# Bottom to top. A module may import modules of its own layer and of the layers below.
LAYERS = [
    ("foundation", ["irwarehouse.version", "irwarehouse.errors", "irwarehouse.numbers", "irwarehouse.output",
                    "irwarehouse.result", "irwarehouse.stats*", "irwarehouse.significance_tests",
                    "irwarehouse.systems", "irwarehouse.power", "irwarehouse.repro_stats",
                    "irwarehouse.sql", "irwarehouse.pages", "irwarehouse.files", "irwarehouse.names", "irwarehouse.statements",
                    "irwarehouse.options", "irwarehouse.citations", "irwarehouse.judgment_kinds", "irwarehouse.irds", "irwarehouse.trec_families",
                    "irwarehouse.measure_def", "irwarehouse.measures_diversity", "irwarehouse.measures_cwl", "irwarehouse.measures", "irwarehouse.measure_rows", "irwarehouse.trec_names", "irwarehouse.experiments"]),
    ("connection", ["irwarehouse.connection*", "irwarehouse.state"]),
    ("catalogue", ["irwarehouse.catalogue", "irwarehouse.runsets"]),
    ("engine", ["irwarehouse.engine*"]),
    ("schema", ["irwarehouse.schema"]),
    ("analyses", ["irwarehouse.significance", "irwarehouse.repro", "irwarehouse.judges", "irwarehouse.summary", "irwarehouse.ties", "irwarehouse.standardize*",
                  "irwarehouse.report*", "irwarehouse.export", "irwarehouse.experiments.*", "irwarehouse.spark",
                  "irwarehouse.trec_eval"]),
    ("facade", ["irwarehouse.api", "irwarehouse.door", "irwarehouse.inputs",
                "irwarehouse.door_statistics", "irwarehouse.door_standardization", "irwarehouse"]),
    ("faces", ["irwarehouse.cli*"]),
]
# What the command line may import from the library: its public doors.
DOORS = {"irwarehouse", "irwarehouse.api", "irwarehouse.spark", "irwarehouse.experiments",
         "irwarehouse.output", "irwarehouse.errors"}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _imports(name: str, path: Path, modules: dict) -> set[str]:
    """The package's modules that ``name`` imports, anywhere in its source."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "irwarehouse"}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else []))
            elif (node.module or "").split(".")[0] == "irwarehouse":
                base = node.module
            else:
                continue
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.add(full if full in modules else base)
    return {m for m in found if m in modules and m != name}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _matches(module: str, pattern: str) -> bool:
    """``a.b*``: a.b and its submodules; ``a.b.*``: its submodules only; else the module."""
    if not pattern.endswith("*"):
        return module == pattern
    stem = pattern[:-1].rstrip(".")
    return module.startswith(stem + ".") or (module == stem and not pattern.endswith(".*"))


def _layer(module: str) -> int:
    found = [i for i, (_, patterns) in enumerate(LAYERS) if any(_matches(module, p) for p in patterns)]
    assert len(found) == 1, f"{module} is in {len(found)} layers: give it one in LAYERS (and docs/architecture.md)"
    return found[0]


def test_every_module_has_a_layer():
    for module in _graph():
        _layer(module)


def test_imports_point_down():
    wrong = [f"{m} ({LAYERS[_layer(m)][0]}) imports {t} ({LAYERS[_layer(t)][0]})"
             for m, targets in sorted(_graph().items()) for t in sorted(targets) if _layer(t) > _layer(m)]
    assert wrong == []


def test_no_import_cycle():
    graph = _graph()
    state: dict[str, int] = {}
    cycles = []

    def visit(node, trail):
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(trail[trail.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, trail + [nxt])
        state[node] = 2
    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert cycles == []


def test_the_command_line_uses_the_doors_only():
    graph = _graph()
    past = {m: sorted(t for t in targets if not t.startswith("irwarehouse.cli") and t not in DOORS)
            for m, targets in graph.items() if m.startswith("irwarehouse.cli")}
    assert {m: t for m, t in past.items() if t} == {}
    assert [m for m, targets in graph.items() if not m.startswith("irwarehouse.cli")
            and any(t.startswith("irwarehouse.cli") for t in targets)] == []


def test_the_library_does_not_use_the_command_line_toolkit():
    """typer is the command line's: the library runs without it (a notebook, Spark)."""
    for name, path in _modules().items():
        if name.startswith("irwarehouse.cli"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        used = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        used |= {(n.module or "").split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert not used & {"typer", "click"}, name


def test_the_checks_see_an_import_inside_a_function(tmp_path):
    """The graph counts imports inside functions (a test that cannot fail is no test)."""
    path = tmp_path / "m.py"
    path.write_text("def f():\n    from . import api\n")
    modules = {"irwarehouse.m": path, "irwarehouse.api": path}
    assert _imports("irwarehouse.m", path, modules) == {"irwarehouse.api"}


def _oversized(name: str, source: str) -> set[str]:
    """The module ``name`` if its source is over 800 lines, and its classes over 600 lines and
    functions over 120 (Python's ast)."""
    over = {name} if len(source.splitlines()) > 800 else set()
    for node in ast.walk(ast.parse(source)):
        size = getattr(node, "end_lineno", 0) - getattr(node, "lineno", 0) + 1
        if isinstance(node, ast.ClassDef) and size > 600 or \
                isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and size > 120:
            over.add(f"{name}.{node.name}")
    return over


def test_rooms_sized_to_their_purpose():
    """No module over 800 lines, no class over 600, no function over 120: none at all."""
    over = set()
    for name, path in _modules().items():
        over |= _oversized(name, path.read_text(encoding="utf-8"))
    assert sorted(over) == []


def test_the_size_check_sees_an_oversized_room():
    """A function of 121 lines, a class of 601 and a module of 801 are each found."""
    function = "def f():\n" + "    x = 1\n" * 120
    assert _oversized("m", function) == {"m.f"}
    assert _oversized("m", "def f():\n" + "    x = 1\n" * 119) == set()
    klass = "class C:\n" + "".join(f"    def g{i}(self):\n        pass\n" for i in range(300))
    assert _oversized("m", klass) == {"m.C"}
    assert _oversized("m", "x = 1\n" * 801) == {"m"}
