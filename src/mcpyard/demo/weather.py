"""A demo MCP server with made-up, deterministic weather, served over streamable HTTP.

Run it on its own with `python -m mcpyard.demo.weather --port 8765 [--host 127.0.0.1]`
(endpoint `http://127.0.0.1:8765/mcp`), or serve it in-process on a port of your choosing:
`uvicorn.Server(uvicorn.Config(asgi_app(build_server()), host="127.0.0.1", port=port))`.
"""

from __future__ import annotations

import argparse
import hashlib
from collections.abc import Sequence
from typing import Annotated, Literal

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field
from starlette.applications import Starlette

__all__ = [
    "DEFAULT_HOST",
    "INSTRUCTIONS",
    "MCP_PATH",
    "DayForecast",
    "Forecast",
    "asgi_app",
    "build_server",
    "forecast_for",
    "main",
]

DEFAULT_HOST = "127.0.0.1"
MCP_PATH = "/mcp"
"""Where the streamable HTTP endpoint lives (the SDK's default path)."""

INSTRUCTIONS = (
    "Demo weather service. Every figure is invented (derived from the city name), so the same "
    "question always gets the same answer and nothing leaves this machine. Temperatures are in "
    "degrees Celsius unless a conversion is asked for."
)

_CONDITIONS = ("sunny", "partly cloudy", "cloudy", "light rain", "showers", "windy", "fog", "snow")


class DayForecast(BaseModel):
    """One day of a made-up forecast."""

    day: int = Field(description="1 for tomorrow, 2 for the day after, and so on.")
    condition: str
    high_c: int
    low_c: int
    rain_chance_percent: int


class Forecast(BaseModel):
    """A made-up forecast for one city."""

    city: str
    days: list[DayForecast]


def forecast_for(city: str, days: int) -> Forecast:
    """Invent a forecast that depends only on the city name (case and outer spaces ignored) and `days`."""
    name = city.strip()
    digest = hashlib.sha256(name.casefold().encode()).digest()
    base = digest[0] % 30 - 5
    entries = []
    for day in range(1, days + 1):
        byte = digest[day % len(digest)]
        high = base + byte % 9
        entries.append(
            DayForecast(
                day=day,
                condition=_CONDITIONS[byte % len(_CONDITIONS)],
                high_c=high,
                low_c=high - 3 - byte % 6,
                rain_chance_percent=(byte * 7) % 101,
            )
        )
    return Forecast(city=name, days=entries)


def build_server() -> MCPServer:
    """Build the weather server (no network access; all data is invented)."""
    server = MCPServer("weather", instructions=INSTRUCTIONS, version="1.0", log_level="WARNING")

    @server.tool(title="Weather forecast", annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True))
    def forecast(
        city: Annotated[str, Field(min_length=1, max_length=100, description="City name, e.g. Lisbon.")],
        days: Annotated[int, Field(ge=1, le=7, description="How many days ahead, 1 to 7.")] = 3,
    ) -> Forecast:
        """Forecast the weather in a city for the next few days (invented but consistent figures)."""
        return forecast_for(city, days)

    @server.tool(title="Convert a temperature", annotations=ToolAnnotations(read_only_hint=True))
    def convert_temperature(value: float, to: Literal["celsius", "fahrenheit"]) -> float:
        """Convert a temperature to `to` from the other scale (Fahrenheit to Celsius, or back)."""
        converted = (value - 32) * 5 / 9 if to == "celsius" else value * 9 / 5 + 32
        return round(converted, 2)

    return server


def asgi_app(server: MCPServer, *, host: str = DEFAULT_HOST) -> Starlette:
    """Return a fresh Starlette app serving `server` over streamable HTTP at `/mcp`.

    Serve each app once: its lifespan runs the SDK's session manager, which cannot be
    started twice, so build a new app for every uvicorn server. `host` should be the
    address the app is served on; for a loopback address the SDK turns on its DNS
    rebinding protection (only `Host: 127.0.0.1:*`, `localhost:*`, `[::1]:*` accepted).
    """
    return server.streamable_http_app(streamable_http_path=MCP_PATH, host=host)


def main(argv: Sequence[str] | None = None) -> None:
    """Serve the weather demo over streamable HTTP until interrupted."""
    import uvicorn

    parser = argparse.ArgumentParser(description="mcpyard weather demo (streamable HTTP).")
    parser.add_argument("--port", type=int, default=8765, help="TCP port (default 8765)")
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"address to bind (default {DEFAULT_HOST})")
    args = parser.parse_args(argv)
    app = asgi_app(build_server(), host=args.host)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
