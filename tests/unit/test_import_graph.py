"""The library never imports a reproduction: no module under python/ccscope imports anything from
experiments/ or a repro module (read from the source's syntax tree, so a lazy import inside a function
counts too)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ROOT / "python" / "ccscope"
EXPERIMENTS = ROOT / "experiments"


def _experiment_modules() -> set[str]:
    """The module names experiments/*/ define (repro, cmt_scenarios, ...)."""
    return {p.stem for p in EXPERIMENTS.glob("*/*.py")}


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, dotted module) of every import in `path`, `from ccscope import x` giving `ccscope.x`, and every
    importlib.import_module("literal")."""
    tree = ast.parse(path.read_text(), str(path))
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            out.append((node.lineno, base))
            out += [(node.lineno, f"{base}.{a.name}" if base else a.name) for a in node.names]
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module":
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                out.append((node.lineno, node.args[0].value))
    return out


def _forbidden(module: str, experiment_modules: set[str]) -> bool:
    parts = module.split(".")
    return parts[0] == "experiments" or any(p.startswith("repro") or p in experiment_modules for p in parts)


def test_no_library_module_imports_an_experiment_or_a_repro_module():
    mods = _experiment_modules()
    assert {"repro", "cmt_scenarios"} <= mods  # the check knows what it is looking for
    found = [f"{p.relative_to(ROOT)}:{line}: imports {m}"
             for p in sorted(LIBRARY.rglob("*.py")) for line, m in _imports(p) if _forbidden(m, mods)]
    assert found == [], "\n".join(found)


def test_no_repro_module_is_left_in_the_library():
    assert sorted(p.name for p in LIBRARY.rglob("repro*.py")) == []


def test_the_check_catches_a_lazy_import_of_a_repro_module(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("def f():\n    from ccscope import repro_verus as rv\n    import importlib\n"
                   "    importlib.import_module('experiments.cmt.repro')\n    from cmt_scenarios import Path\n")
    mods = _experiment_modules()
    assert sorted({line for line, m in _imports(src) if _forbidden(m, mods)}) == [2, 4, 5]
