"""Gateway tests that serve from this process reach the fixture servers in memory (not their subject)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Home


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home.at(tmp_path, in_memory=True)
