"""The house's rules (docs/architecture.md), read off the code's own imports: libraries
never import upward, `analytic` and `forkjoin_sim` never import each other, argparse
lives in the command line only, and no modules import each other in a circle (imports
inside functions included: a lazy import is still a tie)."""

import ast
from pathlib import Path

import numpy as np
import pytest
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

ROOT = Path(__file__).resolve().parent.parent
#: The packages of the house, each with those it may import (besides itself).
MAY_IMPORT = {
    "analytic": set(),
    "forkjoin_sim": set(),
    "sizing": {"analytic", "forkjoin_sim"},
    "validation": {"analytic", "forkjoin_sim", "sizing"},
    "forkjoin_cli": {"analytic", "forkjoin_sim", "sizing", "validation"},
}


def _modules() -> dict[str, Path]:
    """Dotted name -> file of every module of the house's packages."""
    out = {}
    for package in MAY_IMPORT:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The modules of the house that module ``name`` imports, anywhere in its body; a
    name taken from a package is its submodule where one exists, else the package."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES
                       else base for alias in node.names]
        else:
            continue
        for target in targets:
            # `import a.b.c` ties to the deepest module of the house it names
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


IMPORTS = {name: _imports(name, path) for name, path in MODULES.items()}


@pytest.mark.parametrize("package", sorted(MAY_IMPORT))
def test_a_package_imports_only_the_floors_below_it(package):
    wrong = sorted(f"{name} imports {target}" for name, targets in IMPORTS.items()
                   if name.split(".")[0] == package for target in targets
                   if target.split(".")[0] not in MAY_IMPORT[package] | {package})
    assert wrong == []


def test_argparse_is_imported_by_the_command_line_only():
    users = []
    for name, path in MODULES.items():
        if name.startswith("forkjoin_cli"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module] if isinstance(node, ast.ImportFrom) else [])
            if "argparse" in names:
                users.append(name)
    assert users == []


def test_no_modules_import_each_other_in_a_circle():
    names = sorted(MODULES)
    index = {name: i for i, name in enumerate(names)}
    edges = [(index[a], index[b]) for a in names for b in IMPORTS[a]]
    rows, cols = np.array(edges).T
    graph = coo_matrix((np.ones(len(edges)), (rows, cols)), shape=(len(names),) * 2)
    count, labels = connected_components(graph, directed=True, connection="strong")
    circles = [sorted(names[i] for i in np.flatnonzero(labels == label))
               for label in range(count) if np.sum(labels == label) > 1]
    assert circles == []


def test_the_rules_see_the_ties_they_judge(tmp_path):
    # the reader finds a lazy import (inside a function) and a plain one, and resolves
    # relative imports and names taken from a package to the module they load
    assert "sizing.calibration_figure" in IMPORTS["sizing.cluster_calibration"]
    assert "forkjoin_sim.errors" in IMPORTS["sizing.closed_network"]
    assert len(MODULES) > 100 and sum(map(len, IMPORTS.values())) > 300
    fake = tmp_path / "fake.py"
    fake.write_text("from .closed_network import predict\nfrom . import geography\n"
                    "def f():\n    from forkjoin_sim import errors\n    import analytic\n")
    assert _imports("sizing.fake", fake) == {"sizing.closed_network", "sizing.geography",
                                             "forkjoin_sim.errors", "analytic"}
