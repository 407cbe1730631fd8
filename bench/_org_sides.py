"""The sides of `bench/org_api.py`: the MCP server, `Host.call`, the organization service and ContextForge, each opened
in one exit stack with the processes it costs; and /proc readings of those processes (CPU, RSS).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import glob
import json
import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2

from _common import BENCH, PYTHON, SERVER_SCRIPT, Home
from _http_client import KeepAliveClient, McpSession
from gateway import Spawned, free_port, stop, wait_for_port

REPO = BENCH.parent
DEFAULT_CONTEXTFORGE_VENV = REPO / ".tools" / "contextforge-venv"
CONTEXTFORGE_VERSION = "1.1.0"
SERVER_NAME = "bench"
TOOL = f"{SERVER_NAME}__echo"
CLOCK_TICK = 1 / os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
REQUEST_SECONDS = 60.0
"""Bound on any one HTTP request of the benchmark."""


# ------------------------------------------------------------------ processes


@dataclass(frozen=True, slots=True)
class Proc:
    ppid: int
    cpu: float
    """CPU seconds so far (utime + stime)."""
    rss: int
    """Bytes resident now."""


def proc_table() -> dict[int, Proc]:
    """Every running process: pid -> parent, CPU so far and RSS, from /proc."""
    table: dict[int, Proc] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # it ended while we looked
            continue
        # After the command name: state(0) ppid(1) ... utime(11) stime(12) ... rss(21, pages)
        if fields[0] != "Z":
            table[int(entry.name)] = Proc(
                int(fields[1]), (int(fields[11]) + int(fields[12])) * CLOCK_TICK, int(fields[21]) * PAGE
            )
    return table


def tree(roots: Sequence[int], table: dict[int, Proc]) -> list[int]:
    """The running processes among `roots` and all their descendants."""
    children: dict[int, list[int]] = {}
    for pid, proc in table.items():
        children.setdefault(proc.ppid, []).append(pid)
    found: list[int] = []
    todo = list(roots)
    while todo:
        pid = todo.pop()
        if pid in table and pid not in found:
            found.append(pid)
            todo.extend(children.get(pid, ()))
    return found


def peak_rss(pid: int) -> int:
    """The process's peak resident size (VmHWM) in bytes, 0 if it is gone."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


# ------------------------------------------------------------------ sides

Call = Callable[[str], Awaitable[int]]
"""Calls `echo(text)` once and returns the length of the text that came back (checked by the caller)."""


@dataclass
class Side:
    """One way of making the call, and the processes it costs."""

    name: str
    call: Call
    service: list[int] = field(default_factory=list)
    """Root pids of the service the client talks to (none for `host`: it is this process)."""
    database: Callable[[], list[int]] = list
    """Root pids of the database server's processes (PostgreSQL), looked up when measured."""
    calls: int = 0
    """Calls per round."""
    about: str = ""


@dataclass
class Bench:
    """What a run opened: its processes, sides and the things to stop, in one exit stack."""

    args: argparse.Namespace
    home: Home
    stack: contextlib.AsyncExitStack
    spawned: list[Spawned] = field(default_factory=list)
    seen: set[int] = field(default_factory=set)
    server_pid: int = 0
    server_url: str = ""
    clusters: list[Any] = field(default_factory=list)
    """PostgreSQL clusters started (their processes are not our descendants: pg_ctl daemonizes them)."""
    unavailable: dict[str, str] = field(default_factory=dict)
    """Sides that could not be opened, and why."""

    def spawn(self, name: str, command: Sequence[str], env: dict[str, str], cwd: Path) -> Spawned:
        log = self.home.root / f"{name}.log"
        with log.open("wb") as err:
            process = subprocess.Popen(
                list(command),
                stdin=subprocess.DEVNULL,
                stdout=err,
                stderr=err,
                env=env,
                cwd=cwd,
                start_new_session=True,  # its own process group, to kill as one if it will not stop
            )
        spawned = Spawned(name, process, log)
        self.spawned.append(spawned)
        self.stack.callback(self._stop, spawned)
        return spawned

    def _stop(self, spawned: Spawned) -> None:
        self.seen.update(tree([spawned.process.pid], proc_table()))
        stop(spawned)
        self.seen.update(spawned.seen)

    def remember(self, pid: int) -> None:
        self.seen.update(tree([pid], proc_table()))


async def start_server(bench: Bench) -> None:
    """`bench/server.py --port P`: the one MCP server every side calls."""
    port = free_port()
    command = [PYTHON, str(SERVER_SCRIPT), "--port", str(port)]
    spawned = bench.spawn("mcp-server", command, bench.home.environ, bench.home.workspace)
    await wait_for_port(spawned, port)
    bench.server_pid = spawned.process.pid
    bench.server_url = f"http://127.0.0.1:{port}/mcp"


def _check_text(side: str, text: str, got: str) -> int:
    if got != text:
        raise RuntimeError(f"{side}: echo answered {got[:300]!r}, expected {text!r}")
    return len(got)


class RunFreely:
    """A `PolicySource`: every tool reviewed and `run_freely` (what the organization's owner sets for `echo`)."""

    def policy(self, server: str, tool: str, definition_hash: str) -> Any:
        del server, tool, definition_hash
        return "run_freely"

    def reviewed(self, server: str) -> dict[str, str]:
        del server
        return {}


async def open_host(bench: Bench) -> Side:
    """A Host in this process, opened on the server as an organization host is (`org/hosts/_server_spec.py`)."""
    from mcpyard import Host
    from mcpyard.config import HostSettings, LoadedConfig
    from mcpyard.connect import EgressGuard
    from mcpyard.org.hosts._server_spec import server_spec
    from mcpyard.org.store._models import RegisteredServer

    spec = server_spec(RegisteredServer(name=SERVER_NAME, url=bench.server_url), 0, None)
    source = spec.source_path
    config = LoadedConfig(servers=(spec,), settings=HostSettings(mode="ask"), warnings=(), sources=(("flag", source),))
    folder = bench.home.root / "host"
    workspace = folder / "workspace"
    workspace.mkdir(parents=True)
    host = await bench.stack.enter_async_context(
        Host.open(
            workspace=workspace,
            mode="ask",
            environ={},
            config_home=folder / "config",
            data_home=folder / "data",
            secrets={},
            policies=RunFreely(),
            lazy=True,
            config=config,
            egress=EgressGuard(dev=True),
        )
    )

    async def call(text: str) -> int:
        result = await host.call(TOOL, {"text": text})
        if not result.ok:
            raise RuntimeError(f"host: Host.call({TOOL}) failed: {result.error}")
        got = "".join(str(b.get("text", "")) for b in result.content if b.get("type") == "text")
        return _check_text("host", text, got)

    return Side("host", call, calls=bench.args.calls, about="Host.call in this process")


def _client(bench: Bench, base_url: str, token: str) -> httpx2.AsyncClient:
    limits = httpx2.Limits(max_connections=64, max_keepalive_connections=64)
    client = httpx2.AsyncClient(
        base_url=base_url, headers={"Authorization": f"Bearer {token}"}, timeout=REQUEST_SECONDS, limits=limits
    )
    bench.stack.push_async_callback(client.aclose)
    return client


Post = Callable[[str, Any], Awaitable[tuple[int, Any]]]


def _poster(bench: Bench, port: int, token: str) -> Post:
    """How the measured calls are sent: `--client lean` (a bare keep-alive HTTP/1.1 client, as a load
    generator would) or `--client httpx` (httpx2, whose own cost per request is then counted in)."""
    if bench.args.client == "httpx":
        client = _client(bench, f"http://127.0.0.1:{port}", token)

        async def post_httpx(path: str, payload: Any) -> tuple[int, Any]:
            response = await client.post(path, json=payload)
            return response.status_code, response.json() if response.content else None

        return post_httpx
    lean = KeepAliveClient("127.0.0.1", port, {"Authorization": f"Bearer {token}"})
    bench.stack.push_async_callback(lean.aclose)
    return lean.post


def _expect(answer: tuple[int, Any], expect: int, what: str) -> Any:
    status, body = answer
    if status != expect:
        raise RuntimeError(f"{what}: HTTP {status}: {json.dumps(body)[:500]}")
    return body


async def _json(response: httpx2.Response, expect: int, what: str) -> Any:
    if response.status_code != expect:
        raise RuntimeError(f"{what}: HTTP {response.status_code}: {response.text[:500]}")
    return response.json()


async def _postgres_url(bench: Bench) -> tuple[str, Callable[[], list[int]], str]:
    """A fresh database on a throwaway cluster (the tests' helper); its URL, its processes, its version."""
    if str(REPO) not in sys.path:  # the tests' helper, from a checkout
        sys.path.insert(0, str(REPO))
    from tests.org._postgres import TemporaryCluster

    cluster = await anyio.to_thread.run_sync(TemporaryCluster.start)
    bench.clusters.append(cluster)

    def cluster_pids() -> list[int]:
        pid_file = cluster.data / "postmaster.pid"
        with contextlib.suppress(OSError, ValueError, IndexError):
            return tree([int(pid_file.read_text().split()[0])], proc_table())
        return []

    def stop_cluster() -> None:
        bench.seen.update(cluster_pids())
        cluster.stop()
        cluster.remove()

    bench.stack.callback(stop_cluster)

    def create() -> str:
        import psycopg

        with psycopg.connect(cluster.dsn(), autocommit=True) as admin:
            admin.execute('CREATE DATABASE "bench"')
            row = admin.execute("SHOW server_version").fetchone()
        return str(row[0]) if row else "?"

    version = await anyio.to_thread.run_sync(create)
    return cluster.url("bench"), cluster_pids, version


async def open_org(bench: Bench, database: str, face: str = "api") -> Side:
    """`mcpyard org serve --dev` on its own database; the server registered and `echo` set `run_freely` by the owner.

    `face`: the member calls through `POST /api/v1/calls` (`api`, the side `org-<database>`) or as an MCP client
    of `/mcp`, one session shared by every caller, as one client's concurrent requests would be (`mcp`, the
    side `org-mcp-<database>`).
    """
    name = f"org-{database}" if face == "api" else f"org-mcp-{database}"
    folder = bench.home.root / name
    folder.mkdir()
    db_pids: Callable[[], list[int]] = list
    about = "SQLite (WAL, a temporary file)"
    if database == "sqlite":
        url = f"sqlite:///{folder / 'org.db'}"
    else:
        url, db_pids, version = await _postgres_url(bench)
        about = f"PostgreSQL {version} (throwaway cluster: fsync and synchronous_commit off)"
    setup = [PYTHON, str(BENCH / "_org_setup.py"), url]
    with anyio.fail_after(120):
        done = await anyio.run_process(setup, env=bench.home.environ, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{name}: setting up the database failed: {done.stderr.decode(errors='replace')[-800:]}")
    tokens = json.loads(done.stdout)
    owner_token, member_token = tokens["owner_token"], tokens["member_token"]
    port = free_port()
    env = {
        **bench.home.environ,
        "MCPYARD_DATA_HOME": str(folder / "data"),
        "MCPYARD_ORG_DATABASE": url,
        "MCPYARD_ORG_KEY": base64.b64encode(os.urandom(32)).decode(),
    }
    command = [PYTHON, "-m", "mcpyard", "org", "serve", "--dev", "--host", "127.0.0.1", "--port", str(port)]
    if bench.args.profile == name and bench.args.profiler == "cprofile":
        command[1:1] = ["-m", "cProfile", "-o", str(cprofile_path(bench.args, name))]
    elif bench.args.profile == name and bench.args.profiler == "cprofile-cpu":
        command[1:1] = [str(BENCH / "cpu_profile.py"), str(cprofile_path(bench.args, name))]
    spawned = bench.spawn(name, command, env, folder)
    await wait_for_port(spawned, port, within=60)
    base = f"http://127.0.0.1:{port}"
    owner_client = _client(bench, base, owner_token)
    registered = await _json(
        await owner_client.post("/api/v1/servers", json={"name": SERVER_NAME, "url": bench.server_url}),
        201,
        f"{name}: registering the server",
    )
    if registered.get("state") != "connected":
        raise RuntimeError(f"{name}: the registered server is {registered.get('state')!r}: {registered}")
    tools = await _json(await owner_client.get("/api/v1/tools"), 200, f"{name}: listing tools")
    [echo] = [t for t in tools if t["name"] == TOOL]
    await _json(
        await owner_client.put(
            f"/api/v1/tools/{echo['id']}/policy",
            json={"policy": "run_freely", "definition_hash": echo["definition_hash"]},
        ),
        200,
        f"{name}: setting {TOOL} run_freely",
    )
    bench.remember(spawned.process.pid)
    if face == "mcp":
        mcp_call = await _mcp_caller(bench, name, port, "/mcp", member_token, TOOL)
        return Side(name, mcp_call, [spawned.process.pid], db_pids, bench.args.calls, f"{about}, /mcp tools/call")
    post = _poster(bench, port, member_token)

    async def call(text: str) -> int:
        answer = await post("/api/v1/calls", {"tool": TOOL, "arguments": {"text": text}})
        body = _expect(answer, 200, f"{name}: POST /api/v1/calls")
        if not body.get("ok"):
            raise RuntimeError(f"{name}: the call failed: {body.get('error')}")
        got = "".join(str(b.get("text", "")) for b in body["content"] if b.get("type") == "text")
        return _check_text(name, text, got)

    return Side(name, call, [spawned.process.pid], db_pids, bench.args.calls, about)


async def _mcp_caller(bench: Bench, side: str, port: int, path: str, token: str, tool: str) -> Call:
    """`tools/call` of `tool` on one MCP session at `path`, opened now and closed with the run."""
    session = McpSession("127.0.0.1", port, path, {"Authorization": f"Bearer {token}"})
    bench.stack.push_async_callback(session.aclose)
    await session.open()

    async def call(text: str) -> int:
        answer = await session.request("tools/call", {"name": tool, "arguments": {"text": text}})
        result = answer.get("result") if isinstance(answer, dict) else None
        if not isinstance(result, dict) or result.get("isError"):
            raise RuntimeError(f"{side}: tools/call answered {json.dumps(answer)[:500]}")
        got = "".join(str(b.get("text", "")) for b in result.get("content", []) if b.get("type") == "text")
        if text not in got:  # the organization fences a result as untrusted data: the text is inside
            raise RuntimeError(f"{side}: echo answered {got[:300]!r}, expected {text!r} in it")
        return len(got)

    return call


# ------------------------------------------------------------------ ContextForge


def contextforge_python(args: argparse.Namespace) -> str:
    """A Python >= 3.12 for ContextForge's virtualenv (1.1.0 needs it): `--contextforge-python`, else found here."""
    if args.contextforge_python:
        return str(args.contextforge_python)
    candidates = [shutil.which(name) for name in ("python3.13", "python3.12")]
    home = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates += sorted(glob.glob(str(home / "versions" / "3.1[23]*" / "bin" / "python3")), reverse=True)
    for candidate in filter(None, candidates):
        check = [candidate, "-c", "import sys; sys.exit(sys.version_info[:2] < (3, 12))"]
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            if subprocess.run(check, capture_output=True, check=False, timeout=30).returncode == 0:
                return candidate
    return sys.executable


def contextforge_version(venv: Path) -> str | None:
    python = venv / "bin" / "python"
    if not python.exists():
        return None
    code = "import importlib.metadata as m; print(m.version('mcp-contextforge-gateway'))"
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=False, timeout=60)
    return done.stdout.strip() or None


def install_contextforge(args: argparse.Namespace) -> None:
    """Make the ContextForge virtualenv (`--install-contextforge`); a failure is reported, not raised."""
    venv: Path = args.contextforge_venv
    python = contextforge_python(args)
    spec = f"mcp-contextforge-gateway=={args.contextforge_version}"
    print(f"making {venv} with {python}: pip install {spec} py-spy", flush=True)
    steps = [[python, "-m", "venv", str(venv)], [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", spec]]
    steps.append([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "py-spy"])
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, check=False, timeout=900)
        if done.returncode != 0:
            lines = [line for line in (done.stderr or done.stdout).splitlines() if "WARNING: Location" not in line]
            print(f"could not install ContextForge ({' '.join(step[-3:])}):\n  " + "\n  ".join(lines[-8:]))
            return


def contextforge_env(folder: Path, port: int, jwt_secret: str) -> dict[str, str]:
    """ContextForge's settings for a local run: its own SQLite file, strong throwaway secrets, offline.

    Changed from its defaults, and why: the secrets and passwords (it refuses weak or default
    ones), `SSRF_ALLOW_LOCALHOST` (the server is on 127.0.0.1: what mcpyard's `--dev` allows),
    `RATE_LIMITING_ENABLED=false` (100 tool calls a minute by default would throttle the
    benchmark; mcpyard has no limit either), `CACHE_TYPE=memory` (no Redis here; a single
    process), the admin UI off (not used). Everything else as shipped: auth, RBAC, metrics,
    logging at ERROR, one uvicorn worker (as `mcpgateway` runs by default).
    """
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TZ")}
    return {
        **keep,
        "HOME": str(folder),
        "DATABASE_URL": f"sqlite:///{folder / 'contextforge.db'}",
        "JWT_SECRET_KEY": jwt_secret,
        "AUTH_ENCRYPTION_SECRET": secrets.token_urlsafe(32),
        "BASIC_AUTH_PASSWORD": secrets.token_urlsafe(24),
        "PLATFORM_ADMIN_EMAIL": "admin@bench.test",
        "PLATFORM_ADMIN_PASSWORD": secrets.token_urlsafe(24),
        "DEFAULT_USER_PASSWORD": secrets.token_urlsafe(24),
        "MCPGATEWAY_UI_ENABLED": "false",
        "MCPGATEWAY_ADMIN_API_ENABLED": "false",
        "SSRF_ALLOW_LOCALHOST": "true",
        "RATE_LIMITING_ENABLED": "false",
        "CACHE_TYPE": "memory",
        "LOG_LEVEL": "ERROR",
        "MCG_HOST": "127.0.0.1",
        "MCG_PORT": str(port),
    }


async def open_contextforge(bench: Bench, face: str = "rpc") -> Side:
    """ContextForge on a temporary SQLite database, the server registered through `POST /gateways`; the tool called
    through its JSON-RPC endpoint (`rpc`, the side `contextforge`) or as an MCP client of its own `/mcp` (`mcp`, the
    side `contextforge-mcp`: stateless, JSON answers, as it ships)."""
    side = "contextforge" if face == "rpc" else "contextforge-mcp"
    venv: Path = bench.args.contextforge_venv
    version = contextforge_version(venv)
    if version is None:
        raise RuntimeError(
            f"no ContextForge virtualenv at {venv}: make it with --install-contextforge (or: python3.12 -m venv"
            f" {venv} && {venv}/bin/pip install mcp-contextforge-gateway=={CONTEXTFORGE_VERSION})"
        )
    folder = bench.home.root / side
    folder.mkdir()
    port = free_port()
    jwt_secret = secrets.token_urlsafe(48)
    env = contextforge_env(folder, port, jwt_secret)
    command = [str(venv / "bin" / "mcpgateway"), "--host", "127.0.0.1", "--port", str(port)]
    spawned = bench.spawn(side, command, env, folder)
    await wait_for_port(spawned, port, within=180)  # it migrates its database first
    token_command = [
        *(str(venv / "bin" / "python"), "-m", "mcpgateway.utils.create_jwt_token"),
        *("--username", env["PLATFORM_ADMIN_EMAIL"], "--exp", "10080", "--secret", jwt_secret),
    ]
    with anyio.fail_after(120):
        done = await anyio.run_process(token_command, env=env, cwd=folder, check=False)
    token = done.stdout.decode().strip().splitlines()[0] if done.returncode == 0 and done.stdout.strip() else ""
    if not token:
        raise RuntimeError(f"contextforge: create_jwt_token failed: {done.stderr.decode()[-500:]}")
    client = _client(bench, f"http://127.0.0.1:{port}", token)
    await _json(await client.get("/health"), 200, "contextforge: /health")
    gateway = {"name": SERVER_NAME, "url": bench.server_url, "transport": "STREAMABLEHTTP"}
    await _json(await client.post("/gateways", json=gateway), 200, "contextforge: POST /gateways")
    tools = await _json(await client.get("/tools"), 200, "contextforge: GET /tools")
    listed = tools if isinstance(tools, list) else tools.get("items", tools.get("data", []))
    names = [t["name"] for t in listed if t.get("originalName", t.get("original_name")) == "echo"]
    if len(names) != 1:
        raise RuntimeError(f"contextforge: no single echo tool in {[t.get('name') for t in listed]}")
    [tool] = names
    bench.remember(spawned.process.pid)
    if face == "mcp":
        mcp_call = await _mcp_caller(bench, side, port, "/mcp", token, tool)
        about = f"ContextForge {version} (its /mcp, tools/call `{tool}`)"
        return Side(side, mcp_call, [spawned.process.pid], list, bench.args.contextforge_calls, about)
    ids = iter(range(1, 1 << 62))
    post = _poster(bench, port, token)

    async def call(text: str) -> int:
        request = {
            "jsonrpc": "2.0",
            "id": next(ids),
            "method": "tools/call",
            "params": {"name": tool, "arguments": {"text": text}},
        }
        body = _expect(await post("/rpc", request), 200, "contextforge: POST /rpc")
        result = body.get("result")
        if not isinstance(result, dict) or result.get("isError"):
            raise RuntimeError(f"contextforge: tools/call answered {json.dumps(body)[:500]}")
        got = "".join(str(b.get("text", "")) for b in result.get("content", []) if b.get("type") == "text")
        return _check_text("contextforge", text, got)

    about = f"ContextForge {version} (POST /rpc tools/call `{tool}`)"
    return Side("contextforge", call, [spawned.process.pid], list, bench.args.contextforge_calls, about)


def cprofile_path(args: argparse.Namespace, name: str) -> Path:
    path = Path(args.profile_dir)
    path.mkdir(parents=True, exist_ok=True)
    return path / f"{name}.cprofile"
