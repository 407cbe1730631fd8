"""A package's names imported on first use, so importing the package itself stays cheap."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(package: str, modules: Mapping[str, str]) -> Callable[[str], Any]:
    """The package's `__getattr__`: each name in `modules` is imported from the module named there when first
    asked for, then kept in the package like any other name."""

    def __getattr__(name: str) -> Any:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
