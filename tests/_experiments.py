"""Load a script of an experiment (`experiments/NAME/SCRIPT.py`, by default its repro.py) for the tests.

Each is loaded under its own module name (`NAME_SCRIPT`), so two experiments' scripts of one name never
collide; its folder goes on sys.path for its sibling modules, which are imported by their plain names (two
experiments with a sibling of the same name would share the first one loaded).
"""

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "experiments"


def load_experiment(name: str, script: str = "repro"):
    folder = ROOT / name
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    module = f"{name}_{script}"
    if module in sys.modules:
        return sys.modules[module]
    spec = importlib.util.spec_from_file_location(module, folder / f"{script}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[module] = mod  # worker processes unpickle the runners by this name
    spec.loader.exec_module(mod)
    return mod
