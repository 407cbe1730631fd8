"""FastMCP's proxy in front of the stdio bench server: the comparison point of `gateway.py`.

Runs only with the separate bench virtualenv (fastmcp is never a dependency of mcpyard):

    python3 -m venv .tools/bench-venv && .tools/bench-venv/bin/pip install fastmcp py-spy
    .tools/bench-venv/bin/python bench/fastmcp_proxy.py --server-python .venv/bin/python [--port 8766]

With `--port` it serves streamable HTTP on 127.0.0.1:PORT/mcp, otherwise stdio. The proxy is
FastMCP's documented default, `create_proxy(<stdio transport>)`: a fresh proxy client per
request over one kept-alive server process, the backend era mirroring the front's.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from fastmcp.client.transports import StdioTransport  # type: ignore[import-not-found, unused-ignore]
from fastmcp.server import create_proxy  # type: ignore[import-not-found, unused-ignore]

SERVER_SCRIPT = Path(__file__).resolve().parent / "server.py"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server-python", required=True, help="the interpreter that runs bench/server.py (mcp 2.3)")
    parser.add_argument("--port", type=int, default=None, help="serve streamable HTTP on 127.0.0.1:PORT (else stdio)")
    args = parser.parse_args()
    backend = StdioTransport(command=args.server_python, args=[str(SERVER_SCRIPT)])
    proxy = create_proxy(backend, name="fastmcp-proxy")
    if args.port is None:
        proxy.run("stdio", show_banner=False, log_level="WARNING")
    else:
        proxy.run("http", show_banner=False, host="127.0.0.1", port=args.port, log_level="WARNING")


if __name__ == "__main__":
    main()
