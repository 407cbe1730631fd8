"""Local per-tool policies bound to the definition hash that was reviewed (POL-5, `mcpyard pin`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import get_args

from mcpyard._atomic import read_private, write_atomic
from mcpyard.errors import ConfigError
from mcpyard.policy._decide import PinPolicy

__all__ = ["POLICIES", "Pin", "PinStore"]

MAX_PINS_BYTES = 4 * 1024 * 1024
"""The most the pins file may hold."""

POLICIES: tuple[PinPolicy, ...] = get_args(PinPolicy)


@dataclass(frozen=True, slots=True)
class Pin:
    """One reviewed tool: its policy and the definition it was reviewed at."""

    server: str
    tool: str
    policy: PinPolicy
    definition_hash: str


class PinStore:
    """A JSON file of pins keyed by server id and the tool's name on its server; written atomically, 0600."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> dict[tuple[str, str], Pin]:
        """Every pin; a missing file is none, an unreadable one is a clear error.

        Raises:
            ConfigError: the file exists but cannot be used.
        """
        # Pins decide what runs without asking: a file anyone else could have written is refused.
        data = read_private(self.path, max_bytes=MAX_PINS_BYTES, what=f"the pins file {self.path}")
        if data is None:
            return {}
        try:
            raw = json.loads(data.decode("utf-8"))
        except (ValueError, RecursionError) as exc:
            raise ConfigError(
                f"cannot read the pins file {self.path}: {exc}; fix or delete it", source=self.path
            ) from None
        pins: dict[tuple[str, str], Pin] = {}
        for item in raw.get("pins", []) if isinstance(raw, dict) else []:
            try:
                pin = Pin(str(item["server"]), str(item["tool"]), item["policy"], str(item["definition_hash"]))
            except (KeyError, TypeError):
                continue
            if pin.policy in POLICIES:
                pins[(pin.server, pin.tool)] = pin
        return pins

    def save(self, pins: dict[tuple[str, str], Pin]) -> None:
        items = [
            {"server": p.server, "tool": p.tool, "policy": p.policy, "definition_hash": p.definition_hash}
            for p in sorted(pins.values(), key=lambda p: (p.server, p.tool))
        ]
        write_atomic(self.path, (json.dumps({"version": 1, "pins": items}, indent=2) + "\n").encode(), mode=0o600)

    def pin(self, pin: Pin) -> None:
        pins = self.load()
        pins[(pin.server, pin.tool)] = pin
        self.save(pins)

    def unpin(self, server: str, tool: str) -> bool:
        pins = self.load()
        removed = pins.pop((server, tool), None) is not None
        if removed:
            self.save(pins)
        return removed
