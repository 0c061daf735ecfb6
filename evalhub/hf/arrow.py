"""pyarrow, imported on first use. The Parquet exports are reached from views all over the
site, and pyarrow (with numpy) costs app loading, so every command and worker boot, a
quarter of a second it needs only when a dataset is written or read
(tests/evalhub/test_startup.py forbids it at start-up)."""

import importlib
from types import ModuleType


class _OnFirstUse:
    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attribute: str):
        module: ModuleType = importlib.import_module(self._name)
        return getattr(module, attribute)


pa = _OnFirstUse("pyarrow")
pq = _OnFirstUse("pyarrow.parquet")
