"""Fixtures for configuration tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from ._support import Setup


@pytest.fixture
def cfg(tmp_path: Path) -> Setup:
    """A fresh workspace, user config home and flag folder in a temporary directory."""
    return Setup(root=tmp_path)
