"""Fixtures for local-file tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from ._support import Places


@pytest.fixture
def places(tmp_path: Path) -> Places:
    """Empty `workspace`, `granted` and `outside` folders side by side in a temporary directory."""
    root = tmp_path.resolve()
    made = Places(workspace=root / "workspace", granted=root / "granted", outside=root / "outside")
    for folder in (made.workspace, made.granted, made.outside):
        folder.mkdir()
    return made
