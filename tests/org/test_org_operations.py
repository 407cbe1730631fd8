"""OBS-1, API-8 on the organization service as deployed: `/metrics` for an owner or admin (their organization's
series only) and for the operator on `--metrics-port`; a call through the API is a span in the caller's trace,
carrying its record's id; `--log-format json` makes every line a JSON object, one per call and per decision.

`mcpyard org serve` runs as a process; the metrics are read with Prometheus' own parser, the traces by a
loopback OTLP receiver, the logs from its standard error.
"""

from __future__ import annotations

import json
import re
import secrets

import httpx2
import pytest

from tests._otlp import otlp_receiver
from tests._scrape import samples, value
from tests.conftest import Home
from tests.org._flows import by_tool, call, register, set_policy
from tests.org.test_serve import said, services

pytestmark = pytest.mark.anyio


async def test_obs1_api8_metrics_traces_and_json_logs_of_real_calls(
    home: Home, database_url: str, upstream: str
) -> None:
    trace_id, parent_id = secrets.token_hex(16), secrets.token_hex(8)
    with otlp_receiver() as receiver:
        async with services(
            home,
            database_url,
            1,
            "--dev",
            "--metrics-port",
            "0",
            "--log-format",
            "json",
            environ=receiver.environment(),
        ) as [(served, service)]:
            org = service.org.org_id
            tools = by_tool(await register(service, upstream))
            await set_policy(service, tools["lookup"], "run_freely")
            await set_policy(service, tools["write"], "ask_first")
            for key in ("a", "b"):
                await call(service, "tools__lookup", {"key": key})
            traced = await service.client.post(
                "/api/v1/calls",
                json={"tool": "tools__lookup", "arguments": {"key": "traced-key-value"}},
                headers={**service.headers(), "traceparent": f"00-{trace_id}-{parent_id}-01"},
            )
            assert traced.status_code == 200, traced.text
            parked = await call(service, "tools__write", {"note": "secret-note-value"}, expect=202)

            member = await service.add_member("member@acme.test")
            assert (await service.client.get("/metrics")).status_code == 401
            assert (await service.request("GET", "/metrics", token=member)).status_code == 403
            scraped = await service.request("GET", "/metrics")
            assert scraped.status_code == 200, scraped.text
            mine = samples(scraped.text)

            other = await service.add_org("globex", "owner@globex.test")
            theirs = await service.request("GET", "/metrics", token=other.owner_token)
            assert "tools__lookup" not in theirs.text, "another organization's servers and tools are not theirs to see"

            line = next(said(line) for line in served.log if "metrics for every organization at" in said(line))
            operator_url = re.search(r"http://\S+/metrics", line)
            assert operator_url is not None
            async with httpx2.AsyncClient(trust_env=False) as http:
                everything = samples((await http.get(operator_url.group(0))).text)

            await service.post(f"/api/v1/approvals/{parked['approval']['id']}/approve")
            span = receiver.wait_for("execute_tool tools__lookup")
            spans = [s for s in receiver.spans if s.name == "execute_tool tools__lookup" and s.trace_id == trace_id]
            log = list(served.log)

    ran = {"org": org, "server": "tools", "tool": "tools__lookup", "outcome": "ran"}
    assert value(mine, "mcpyard_calls_total", **ran) == 3
    assert value(mine, "mcpyard_call_duration_seconds_count", org=org, server="tools", tool="tools__lookup") == 3
    assert value(mine, "mcpyard_approvals_waiting", org=org) == 1
    assert value(mine, "mcpyard_servers", org=org, state="connected") == 1
    assert all(labels and dict(labels).get("org") == org for (_, labels) in mine), "one organization's series only"
    assert value(everything, "mcpyard_calls_total", **ran) == 3
    assert value(everything, "mcpyard_approvals_waiting", org=org) == 1

    assert span is not None
    [joined] = spans
    assert joined.service == "mcpyard-org"
    assert joined.attributes["mcpyard.call_id"] == traced.json()["call_id"]
    assert joined.attributes["mcpyard.outcome"] == "ran"
    assert joined.attributes["mcpyard.decision"] == "run"
    assert "traced-key-value" not in json.dumps(joined.attributes)

    lines = [json.loads(line) for line in log]  # every line is one JSON object
    calls = [line for line in lines if line.get("event") == "call"]
    assert {line["tool"] for line in calls} >= {"tools__lookup", "tools__write"}
    traced_line = next(line for line in calls if line.get("call_id") == traced.json()["call_id"])
    assert traced_line["org"] == org
    assert traced_line["outcome"] == "ran"
    assert traced_line["who"]
    [decision] = [line for line in lines if line.get("event") == "decision"]
    assert decision["decision"] == "approved"
    assert decision["approval_id"] == parked["approval"]["id"]
    assert upstream not in "\n".join(log), "the HTTP clients' lines, which name every address, are not logged"
    everything_logged = "\n".join(log)
    assert "secret-note-value" not in everything_logged
    assert "traced-key-value" not in everything_logged


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_obs1_replicas_on_one_machine_sharing_a_metrics_folder_count_together(
    home: Home, database_url: str, upstream: str
) -> None:
    """With `PROMETHEUS_MULTIPROC_DIR`, either replica's `/metrics` counts the calls both ran."""
    folder = home.root / "prometheus"
    folder.mkdir()
    async with services(home, database_url, 2, "--dev", environ={"PROMETHEUS_MULTIPROC_DIR": str(folder)}) as [
        (_, first),
        (_, second),
    ]:
        tools = by_tool(await register(first, upstream))
        await set_policy(first, tools["lookup"], "run_freely")
        for n, service in enumerate([first, second, second]):
            await call(service, "tools__lookup", {"key": f"k{n}"})
        scrapes = [samples((await service.request("GET", "/metrics")).text) for service in (first, second)]
    ran = {"org": first.org.org_id, "server": "tools", "tool": "tools__lookup", "outcome": "ran"}
    assert [value(scrape, "mcpyard_calls_total", **ran) for scrape in scrapes] == [3, 3]
