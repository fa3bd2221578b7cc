"""Load a reproduction's `experiments/NAME/repro.py` for the claim tests.

Every experiment has a repro.py, so each is loaded under its own module name (`NAME_repro`), with its
folder on sys.path for its sibling modules; two experiments in one pytest run never collide.
"""

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "experiments"


def load_experiment(name: str):
    folder = ROOT / name
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    module = f"{name}_repro"
    if module in sys.modules:
        return sys.modules[module]
    spec = importlib.util.spec_from_file_location(module, folder / "repro.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[module] = mod  # worker processes unpickle the runners by this name
    spec.loader.exec_module(mod)
    return mod
