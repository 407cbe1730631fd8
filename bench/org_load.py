"""Load on the organization service: K members calling a tool through haproxy in front of 1, 2 and 3 replicas on one
PostgreSQL, against IBM's ContextForge at its best configuration for this machine, in the same run (ORG-9).

Every side calls `echo(text)` of one `bench/server.py` served over streamable HTTP on 127.0.0.1. The load is
`wrk` (Debian's), one thread and K connections (`--members`, default 16), each request a member's own (K members,
each with an API token; for ContextForge, K downstream sessions), for `--seconds` (20) after a 3-second warm-up:

- `mcpyard xN`: `POST /api/v1/calls` through Debian's haproxy (round robin, health-checked on `/readyz`) in front of
  N `mcpyard org serve` replicas sharing one PostgreSQL database;
- `ContextForge`: `mcp-contextforge-gateway` (from `--contextforge-venv`, a virtualenv of its own) under gunicorn
  with `--contextforge-workers` uvicorn workers on its own database in the same PostgreSQL, `POST /rpc` `tools/call`
  with a JWT and an `Mcp-Session-Id` per member (so its upstream session registry reuses one upstream session per
  downstream session: its fastest documented call path), rate limiting off, the in-memory cache, its database
  created before the workers start (`bootstrap_db`, as its gunicorn script does), its admin UI and API off.

Each run reports calls/s, p50 and p99 latency (wrk's), errors (a status other than 200, or an answer without the
echoed text), the CPU each group of processes took (of the 2 cores: the service's processes, PostgreSQL, haproxy,
the MCP server, wrk) and the resident memory of each replica (or ContextForge worker). The CPU column is what says
what limits more replicas on 2 cores.

Needs `wrk` and `haproxy` (Debian's: `apt-get install wrk haproxy`) and, for ContextForge,
`python3.12 -m venv .tools/contextforge-venv && .tools/contextforge-venv/bin/pip install
'mcp-contextforge-gateway[postgres]==1.1.0'`.

Run: `.venv/bin/python bench/org_load.py [--members 16] [--seconds 20] [--replicas 1,2,3] [--contextforge-workers 2,5]
[--skip-contextforge]`.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx2

from _common import BENCH, PYTHON, load_line, print_table, stop_leftovers, temp_home
from _org_sides import (
    DEFAULT_CONTEXTFORGE_VENV,
    SERVER_NAME,
    TOOL,
    Bench,
    _postgres_url,
    contextforge_env,
    contextforge_version,
    proc_table,
    start_server,
    tree,
)
from gateway import free_port, wait_for_port

TEXT = "bench-load-ok"
WARM_UP_SECONDS = 3
DEPLOY = BENCH.parent / "deploy"


@dataclass
class Run:
    name: str
    calls_per_second: float
    p50_ms: float
    p99_ms: float
    errors: int
    requests: int
    cpu: dict[str, float]
    """Share of the 2 cores per group of processes over the run, in percent of one core."""
    rss_mib: list[float]


WRK_SCRIPT = """
local tokens = {TOKENS}
local sessions = {SESSIONS}
local path = [==[{PATH}]==]
local body = [==[{BODY}]==]
local marker = [==[{MARKER}]==]
local count = 0
bad = 0
local threads = {{}}

function setup(thread)
  table.insert(threads, thread)
end

function request()
  count = count + 1
  local i = (count % #tokens) + 1
  local headers = {{["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. tokens[i]}}
  if #sessions > 0 then headers["Mcp-Session-Id"] = sessions[i] end
  return wrk.format("POST", path, headers, body)
end

function response(status, headers, answer)
  if status ~= 200 or not string.find(answer, marker, 1, true) then bad = bad + 1 end
end

function done(summary, latency, requests)
  local total = 0
  for _, thread in ipairs(threads) do total = total + thread:get("bad") end
  io.write(string.format("BAD %d\\n", total))
end
"""


def _lua_list(values: Sequence[str]) -> str:
    return "{" + ", ".join(json.dumps(value) for value in values) + "}"


def write_script(folder: Path, name: str, *, tokens: Sequence[str], sessions: Sequence[str], path: str, body: str,
                 marker: str) -> Path:  # fmt: skip
    script = folder / f"{name}.lua"
    text = WRK_SCRIPT.format(
        TOKENS=_lua_list(tokens), SESSIONS=_lua_list(sessions), PATH=path, BODY=body, MARKER=marker
    )
    script.write_text(text, encoding="utf-8")
    return script


def _found(pattern: str, text: str) -> str:
    match = re.search(pattern, text)
    if match is None:
        raise RuntimeError(f"wrk said nothing matching {pattern!r}: {text[-600:]}")
    return match.group(1)


def _ms(text: str) -> float:
    number, unit = float(_found(r"([\d.]+)", text)), _found(r"[\d.]+(us|ms|s)", text)
    return number * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


async def wrk(url: str, script: Path, members: int, seconds: float) -> tuple[float, float, float, int, int]:
    """Calls/s, p50 and p99 (ms), errors and requests of one wrk run."""
    command = ["wrk", "-t1", f"-c{members}", f"-d{seconds:g}s", "--latency", "--timeout", "30s", "-s", str(script), url]
    with anyio.fail_after(seconds + 60):
        done = await anyio.run_process(command, check=False)
    out = done.stdout.decode(errors="replace")
    if done.returncode != 0 or "Requests/sec" not in out or done.stderr.strip():
        raise RuntimeError(f"wrk failed ({done.returncode}): {out[-800:]} {done.stderr.decode()[-400:]}")
    rate = float(_found(r"Requests/sec:\s+([\d.]+)", out))
    p50 = _ms(_found(r"\n\s+50%\s+(\S+)", out))
    p99 = _ms(_found(r"\n\s+99%\s+(\S+)", out))
    requests = int(_found(r"(\d+) requests in", out))
    bad = int(_found(r"BAD (\d+)", out))
    socket = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    if socket:
        bad += sum(int(part) for part in socket.groups())
    return rate, p50, p99, bad, requests


Groups = dict[str, Callable[[], list[int]]]


def cpu_of(groups: Groups) -> dict[str, float]:
    table = proc_table()
    return {name: sum(table[pid].cpu for pid in tree(roots(), table) if pid in table) for name, roots in groups.items()}


def rss_of(pids: Sequence[int]) -> list[float]:
    table = proc_table()
    return [sum(table[p].rss for p in tree([pid], table)) / 2**20 for pid in pids]


async def measure(
    name: str, url: str, script: Path, groups: Groups, service: Sequence[int], args: argparse.Namespace
) -> Run:
    await wrk(url, script, args.members, WARM_UP_SECONDS)
    before, started = cpu_of(groups), time.monotonic()
    rate, p50, p99, bad, requests = await wrk(url, script, args.members, args.seconds)
    elapsed = time.monotonic() - started
    after = cpu_of(groups)
    cpu = {group: 100 * (after[group] - before.get(group, 0.0)) / elapsed for group in groups}
    run = Run(name, rate, p50, p99, bad, requests, cpu, rss_of(service))
    print(f"{name}: {rate:.0f} calls/s, p50 {p50:.1f} ms, p99 {p99:.1f} ms, {bad} errors of {requests}", flush=True)
    return run


@contextlib.asynccontextmanager
async def replicas(bench: Bench, count: int, url: str, key: str) -> AsyncIterator[tuple[str, list[int], int]]:
    """`count` replicas of `mcpyard org serve` on one database behind haproxy; the balancer's URL, the replicas'
    pids and haproxy's."""
    async with contextlib.AsyncExitStack() as stack:
        ports = [free_port() for _ in range(count)]
        pids = []
        for number, port in enumerate(ports, 1):
            folder = bench.home.root / f"replica{number}-of-{count}"
            folder.mkdir()
            env = {**bench.home.environ, "MCPYARD_DATA_HOME": str(folder), "MCPYARD_ORG_DATABASE": url}
            env["MCPYARD_ORG_KEY"] = key
            command = [PYTHON, "-m", "mcpyard", "org", "serve", "--dev", "--host", "127.0.0.1", "--port", str(port)]
            spawned = bench.spawn(f"replica{number}-of-{count}", command, env, folder)
            stack.callback(_stop_now, spawned.process)
            await wait_for_port(spawned, port, within=120)
            pids.append(spawned.process.pid)
        lb, stats = free_port(), free_port()
        config = (DEPLOY / "haproxy.cfg").read_text(encoding="utf-8")
        lines = "\n".join(f"    server replica{n} 127.0.0.1:{port}" for n, port in enumerate(ports, 1))
        config = re.sub(r"    server replica1 .*\n    server replica2 .*\n", lines + "\n", config)
        path = bench.home.root / f"haproxy-{count}.cfg"
        path.write_text(config, encoding="utf-8")
        env = {"PATH": os.environ.get("PATH", ""), "MCPYARD_LB_BIND": f"127.0.0.1:{lb}"}
        env["MCPYARD_LB_STATS"] = f"127.0.0.1:{stats}"
        haproxy = bench.spawn(f"haproxy-{count}", ["haproxy", "-db", "-f", str(path)], env, bench.home.root)
        stack.callback(_stop_now, haproxy.process)
        await wait_for_port(haproxy, lb)
        await _all_up(stats, count)
        yield f"http://127.0.0.1:{lb}", pids, haproxy.process.pid


def _stop_now(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(40)
    if process.poll() is None:
        process.kill()


async def _all_up(stats_port: int, count: int) -> None:
    async with httpx2.AsyncClient(trust_env=False) as client:
        with anyio.fail_after(60):
            while True:
                csv = (await client.get(f"http://127.0.0.1:{stats_port}/stats;csv")).text
                rows = [row.split(",") for row in csv.splitlines() if row.startswith("replicas,replica")]
                if sum(1 for row in rows if row[17] == "UP") == count:
                    return
                await anyio.sleep(0.2)


async def set_up_mcpyard(bench: Bench, url: str, members: int) -> tuple[str, list[str]]:
    setup = [PYTHON, str(BENCH / "_org_setup.py"), url, str(members)]
    with anyio.fail_after(300):
        done = await anyio.run_process(setup, env=bench.home.environ, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"setting up the database failed: {done.stderr.decode(errors='replace')[-800:]}")
    tokens = json.loads(done.stdout)
    return tokens["owner_token"], tokens["member_tokens"]


async def register(base: str, owner: str, server_url: str) -> None:
    headers = {"Authorization": f"Bearer {owner}"}
    async with httpx2.AsyncClient(base_url=base, headers=headers, timeout=60, trust_env=False) as client:
        registered = await client.post("/api/v1/servers", json={"name": SERVER_NAME, "url": server_url})
        if registered.status_code != 201 or registered.json().get("state") != "connected":
            raise RuntimeError(f"registering the server: {registered.text[:500]}")
        [echo] = [tool for tool in registered.json()["tools"] if tool["name"] == TOOL]
        policy = {"policy": "run_freely", "definition_hash": echo["definition_hash"]}
        answered = await client.put(f"/api/v1/tools/{echo['id']}/policy", json=policy)
        if answered.status_code != 200:
            raise RuntimeError(f"setting the policy: {answered.text[:500]}")


async def contextforge(bench: Bench, workers: int, cf_url: str, members: int, db_pids: Callable[[], list[int]]) -> Run:
    """ContextForge under gunicorn with `workers` uvicorn workers on PostgreSQL, the server registered, measured."""
    venv: Path = bench.args.contextforge_venv
    folder = bench.home.root / f"contextforge-{workers}"
    folder.mkdir()
    port = free_port()
    jwt_secret = secrets.token_urlsafe(48)
    env = contextforge_env(folder, port, jwt_secret)
    env.update(
        {
            "DATABASE_URL": cf_url,
            "CACHE_TYPE": "memory",
            "RATE_LIMITING_ENABLED": "false",
            "USE_STATEFUL_SESSIONS": "false",
            "JSON_RESPONSE_ENABLED": "true",
            "LOG_LEVEL": "ERROR",
            "HOST": "127.0.0.1",
            "PORT": str(port),
        }
    )
    python = str(venv / "bin" / "python")
    with anyio.fail_after(300):
        boot = await anyio.run_process([python, "-m", "mcpgateway.bootstrap_db"], env=env, cwd=folder, check=False)
    if boot.returncode != 0:
        raise RuntimeError(f"contextforge bootstrap_db failed: {boot.stderr.decode()[-800:]}")
    command = [
        str(venv / "bin" / "gunicorn"),
        "mcpgateway.main:app",
        *("--worker-class", "uvicorn.workers.UvicornWorker"),
        *("--workers", str(workers), "--bind", f"127.0.0.1:{port}", "--timeout", "600"),
        *("--max-requests", "0", "--log-level", "error"),
    ]
    spawned = bench.spawn(f"contextforge-{workers}", command, env, folder)
    try:
        await wait_for_port(spawned, port, within=300)
        token_command = [python, "-m", "mcpgateway.utils.create_jwt_token", "--username", env["PLATFORM_ADMIN_EMAIL"]]
        token_command += ["--exp", "10080", "--secret", jwt_secret]
        with anyio.fail_after(120):
            made = await anyio.run_process(token_command, env=env, cwd=folder, check=False)
        token = made.stdout.decode().strip().splitlines()[0]
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx2.AsyncClient(
            base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=60, trust_env=False
        ) as client:
            with anyio.fail_after(120):
                while (await client.get("/health")).status_code != 200:  # noqa: ASYNC110 (another process)
                    await anyio.sleep(0.5)
            gateway = {"name": SERVER_NAME, "url": bench.server_url, "transport": "STREAMABLEHTTP"}
            added = await client.post("/gateways", json=gateway)
            if added.status_code != 200:
                raise RuntimeError(f"contextforge: POST /gateways: {added.text[:500]}")
            tools = (await client.get("/tools")).json()
            listed = tools if isinstance(tools, list) else tools.get("items", tools.get("data", []))
            [tool] = [t["name"] for t in listed if t.get("originalName", t.get("original_name")) == "echo"]
        body = json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": {"text": TEXT}}}
        )
        sessions = [] if bench.args.contextforge_no_sessions else [secrets.token_hex(16) for _ in range(members)]
        script = write_script(
            bench.home.root, f"cf-{workers}", tokens=[token], sessions=sessions, path="/rpc", body=body, marker=TEXT
        )
        groups: Groups = {
            "service": lambda: [spawned.process.pid],
            "PostgreSQL": db_pids,
            "MCP server": lambda: [bench.server_pid],
        }
        about = f"ContextForge {contextforge_version(venv)} x{workers}"
        run = await measure(about, f"http://127.0.0.1:{port}/rpc", script, groups, [spawned.process.pid], bench.args)
        table = proc_table()
        workers_rss = [table[pid].rss / 2**20 for pid in tree([spawned.process.pid], table)]
        run.rss_mib = workers_rss
        return run
    finally:
        _stop_now(spawned.process)


def _groups(service: list[int], db: Callable[[], list[int]], balancer: list[int], server: int) -> Groups:
    return {
        "service": lambda: service,
        "PostgreSQL": db,
        "haproxy": lambda: balancer,
        "MCP server": lambda: [server],
    }


async def main(args: argparse.Namespace) -> None:
    for tool in ("wrk", "haproxy"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is needed: apt-get install {tool}")
    print(load_line(), flush=True)
    runs: list[Run] = []
    with temp_home() as home:
        async with contextlib.AsyncExitStack() as stack:
            bench = Bench(args, home, stack)
            await start_server(bench)
            url, db_pids, version = await _postgres_url(bench)
            print(f"PostgreSQL {version}; {args.members} members; {args.seconds:g} s a run", flush=True)
            owner, tokens = await set_up_mcpyard(bench, url, args.members)
            key = base64.b64encode(os.urandom(32)).decode()
            body = json.dumps({"tool": TOOL, "arguments": {"text": TEXT}})
            script = write_script(
                home.root, "mcpyard", tokens=tokens, sessions=[], path="/api/v1/calls", body=body, marker='"ok":true'
            )
            registered = False
            for count in args.replicas:
                async with replicas(bench, count, url, key) as (base, pids, haproxy_pid):
                    if not registered:
                        await register(base, owner, bench.server_url)
                        registered = True
                    groups = _groups(pids, db_pids, [haproxy_pid], bench.server_pid)
                    runs.append(await measure(f"mcpyard x{count}", f"{base}/api/v1/calls", script, groups, pids, args))
            if not args.skip_contextforge:
                if contextforge_version(args.contextforge_venv) is None:
                    print(f"no ContextForge at {args.contextforge_venv}: see this script's docstring")
                else:
                    cluster = bench.clusters[0]
                    import psycopg

                    with psycopg.connect(cluster.dsn(), autocommit=True) as admin:
                        for workers in args.contextforge_workers:
                            admin.execute(f'CREATE DATABASE "contextforge{workers}"')
                    for workers in args.contextforge_workers:
                        cf_url = cluster.url(f"contextforge{workers}")
                        runs.append(await contextforge(bench, workers, cf_url, args.members, db_pids))
    print()
    print(load_line())
    names = sorted({group for run in runs for group in run.cpu})
    print_table(
        ["side", "calls/s", "p50 ms", "p99 ms", "errors", *[f"CPU {g} %" for g in names], "RSS MiB each"],
        [
            [
                run.name,
                f"{run.calls_per_second:.0f}",
                f"{run.p50_ms:.1f}",
                f"{run.p99_ms:.1f}",
                f"{run.errors}/{run.requests}",
                *[f"{run.cpu[g]:.0f}" if g in run.cpu else "—" for g in names],
                ", ".join(f"{rss:.0f}" for rss in run.rss_mib),
            ]
            for run in runs
        ],
    )
    best_cf = max((run for run in runs if run.name.startswith("ContextForge")), key=lambda r: r.calls_per_second,
                  default=None)  # fmt: skip
    if best_cf is not None:
        for run in runs:
            if run.name.startswith("mcpyard"):
                ratio = run.calls_per_second / best_cf.calls_per_second
                p99s = f"p99 {run.p99_ms:.1f} vs {best_cf.p99_ms:.1f} ms"
                print(f"{run.name}: {ratio:.1f}x the calls/s of {best_cf.name}; {p99s}")
    left = stop_leftovers()
    if left:
        print(f"warning: {left} processes were left running and were stopped")


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    numbers = lambda text: [int(part) for part in text.split(",") if part]  # noqa: E731
    parser.add_argument("--members", type=int, default=16, help="concurrent members (wrk connections)")
    parser.add_argument("--seconds", type=float, default=20.0, help="length of each measured run")
    parser.add_argument("--replicas", type=numbers, default=[1, 2, 3], help="replica counts to measure")
    parser.add_argument("--contextforge-workers", type=numbers, default=[2, 5], help="ContextForge worker counts")
    parser.add_argument("--contextforge-venv", type=Path, default=DEFAULT_CONTEXTFORGE_VENV)
    parser.add_argument("--skip-contextforge", action="store_true")
    parser.add_argument(
        "--contextforge-no-sessions", action="store_true", help="send ContextForge no Mcp-Session-Id (to compare)"
    )
    parser.add_argument("--client", default="httpx", help=argparse.SUPPRESS)
    parser.add_argument("--profile", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--calls", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--contextforge-calls", type=int, default=0, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(anyio.run(main, parse()))
