"""A failure inside mcpyard during a call: the caller reads one line naming it, the log keeps its traceback, redacted
(ERR-1, SEC-3; STYLE 6: `except Exception` only in the last-resort handlers).

The fixture server is reached in memory: the subject is what happens after a call's record fails to be kept.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from mcpyard.pipeline import CallRecord
from tests.conftest import Home, fixture_server

pytestmark = pytest.mark.anyio

TOKEN = "tok-4f1c9a7e2b8d6035"


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home.at(tmp_path, in_memory=True)


class BrokenRecorder:
    """A recorder with a bug: it fails holding a secret the host sends, as an unexpected error would."""

    async def record(self, record: CallRecord) -> None:
        raise RuntimeError(f"the recorder broke while it held {TOKEN} for {record.tool}")


async def test_err1_a_call_that_fails_inside_mcpyard_is_one_line_and_its_traceback_is_logged_redacted(
    home: Home, caplog: pytest.LogCaptureFixture
) -> None:
    config = home.write_config({"a": {**fixture_server("named", "ping"), "env": {"API_TOKEN": TOKEN}}})
    with caplog.at_level(logging.ERROR, logger="mcpyard"):
        async with home.open(config, recorder=BrokenRecorder()) as host:
            result = await host.call("a__ping", {})
    assert result.error is not None
    assert result.error["code"] == "internal_error"
    assert result.error["message"] == "a__ping failed inside mcpyard: RuntimeError; please report it"
    logged = [entry for entry in caplog.records if entry.name == "mcpyard"]
    assert len(logged) == 1
    text = logged[0].getMessage()
    assert "Traceback (most recent call last)" in text
    assert "the recorder broke while it held ${env:API_TOKEN}" in text, "the secret is named, never shown"
    assert TOKEN not in text
