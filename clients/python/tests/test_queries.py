"""Every query op of PROTOCOL.md against a real registry, through RegistryClient."""

from __future__ import annotations

import json

import pytest
from nats.aio.client import Client as NatsClient

from agent_registry import (
    Capability,
    Dependency,
    RegistryClient,
    RegistryUnreachableError,
)
from agent_registry.replies import RegisterReply

from .conftest import make_spec, unique
from .harness import REPO


async def register(client: RegistryClient, agent_type: str, **fields: object) -> RegisterReply:
    return await client.register(make_spec(agent_type, **fields))  # type: ignore[arg-type]


async def test_lookup_finds_the_provider_with_its_schema_and_reads_its_own_write(client: RegistryClient) -> None:
    agent_type = unique("lookup")
    cap = f"text.{agent_type}"
    reply = await register(client, agent_type, capability=cap)
    found = await client.lookup(cap, min_revision=reply.revision)
    assert [p.agent_type for p in found.providers] == [agent_type]
    provider = found.providers[0]
    assert provider.nats_subject == f"agents.{agent_type}.tasks"
    assert provider.ready_instances == 1
    assert provider.input_schema == {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    }
    assert found.revision >= reply.revision
    assert (await client.lookup("nobody.offers.this")).providers == []


async def test_lookup_orders_by_confidence_and_lookup_all_follows_pages(client: RegistryClient) -> None:
    cap = f"rank.{unique('c')}"
    low, high = unique("low"), unique("high")
    await register(
        client,
        low,
        capabilities=[Capability(name=cap, description="x", input_schema={}, output_schema={}, confidence_hint=0.2)],
    )
    reply = await register(
        client,
        high,
        capabilities=[Capability(name=cap, description="x", input_schema={}, output_schema={}, confidence_hint=0.9)],
    )
    page = await client.lookup(cap, limit=1, min_revision=reply.revision)
    assert [p.agent_type for p in page.providers] == [high]
    assert page.next_cursor is not None
    assert [p.agent_type async for p in client.lookup_all(cap, min_revision=reply.revision)] == [high, low]


async def test_get_shows_the_spec_with_its_defaults_and_instances(client: RegistryClient) -> None:
    agent_type = unique("get")
    reply = await client.register(make_spec(agent_type), metadata={"zone": "a"})
    view = (await client.get(agent_type, min_revision=reply.revision)).agent
    assert view.status == "ready"
    assert view.max_concurrent_tasks == 10
    assert view.instance_count == 1
    assert view.instances[0].instance_id == reply.instance_id
    assert view.instances[0].metadata == {"zone": "a"}
    assert view.capabilities[0].name == "text.echo"
    # v1.2: a spec never changed was last updated when it was registered.
    assert view.updated_at == view.registered_at


async def test_list_pages_through_a_team_as_an_async_iterator(client: RegistryClient) -> None:
    team = unique("team")
    types = sorted(unique("list") for _ in range(3))
    revision = 0
    for t in types:
        revision = (await register(client, t, owner_team=team)).revision
    first = await client.list(owner_team=team, limit=1, min_revision=revision)
    assert len(first.agents) == 1
    assert first.next_cursor is not None
    listed = [a.agent_type async for a in client.list_all(owner_team=team, limit=1, min_revision=revision)]
    assert listed == types


async def test_list_by_agent_types_is_one_request_for_those_agents(client: RegistryClient) -> None:
    types = sorted(unique("batch") for _ in range(3))
    revision = 0
    for t in types:
        revision = (await register(client, t)).revision
    asked = [types[2], "no-such-agent", types[0]]
    page = await client.list(agent_types=asked, instances_limit=1, min_revision=revision)
    assert [a.agent_type for a in page.agents] == [types[0], types[2]]
    assert all(len(a.instances) == 1 for a in page.agents)
    assert page.next_cursor is None


async def test_capabilities_is_the_projection_a_planner_reads(client: RegistryClient) -> None:
    agent_type = unique("proj")
    cap = f"proj.{agent_type}"
    reply = await register(client, agent_type, capability=cap)
    entries = {e.name: e async for e in client.capabilities_all(min_revision=reply.revision)}
    assert entries[cap].providers == [agent_type]
    assert entries[cap].input_schema is not None
    lean = await client.capabilities(schemas=False, min_revision=reply.revision)
    assert all(e.input_schema is None for e in lean.capabilities)


async def test_route_scores_skill_tags_and_runtime(client: RegistryClient) -> None:
    agent_type = unique("route")
    cap = f"route.{agent_type}"
    reply = await register(client, agent_type, capability=cap, runtime="python")
    route = await client.route(skill=cap, tags=["echo"], preferred_runtime="python", min_revision=reply.revision)
    assert route.agent_type == agent_type
    assert route.score == 1.6
    assert route.runtime == "python"
    assert route.candidates[0].agent_type == agent_type


async def test_find_by_skill_tag_and_name(client: RegistryClient) -> None:
    agent_type = unique("find")
    cap = f"find.{agent_type}"
    reply = await register(client, agent_type, capability=cap)
    by_skill = await client.find(skill=cap, min_revision=reply.revision)
    assert [a.agent_type for a in by_skill.agents] == [agent_type]
    assert [a.agent_type for a in (await client.find(name=agent_type)).agents] == [agent_type]
    assert agent_type in [a.agent_type async for a in client.find_all(tag="echo", limit=1)]


async def test_search_ranks_by_keywords(client: RegistryClient) -> None:
    agent_type = unique("search")
    word = f"zyx{agent_type.split('-')[1]}"
    caps = [Capability(name=f"s.{word}", description=f"translates {word} text", input_schema={}, output_schema={})]
    reply = await register(client, agent_type, capabilities=caps)
    results = (await client.search(word, limit=5, min_revision=reply.revision)).results
    assert results[0].agent_type == agent_type
    assert results[0].capability == f"s.{word}"


async def test_discover_lists_agents_with_their_state(client: RegistryClient) -> None:
    agent_type = unique("disc")
    cap = f"disc.{agent_type}"
    reply = await register(client, agent_type, capability=cap)
    found = await client.discover(capability=cap, min_revision=reply.revision)
    assert [(a.id, a.capabilities, a.status) for a in found.agents] == [(agent_type, [cap], "ready")]
    assert agent_type in [a.id async for a in client.discover_all(limit=1)]


async def test_card_and_toolspec_export_any_agent(client: RegistryClient) -> None:
    agent_type = unique("export")
    reply = await register(client, agent_type)
    card = (await client.card(agent_type, min_revision=reply.revision)).card
    assert card["version"] == "1.0.0"
    assert [s["id"] for s in card["skills"]] == ["text.echo"]
    old = (await client.card(agent_type, a2a_version="0.3")).card
    assert old["protocolVersion"].startswith("0.3")
    tools = (await client.toolspec(agent_type)).tools
    assert tools[0]["name"] == "text.echo"
    assert tools[0]["inputSchema"]["required"] == ["text"]


async def test_check_judges_a_payload_against_the_schema(client: RegistryClient) -> None:
    agent_type = unique("check")
    cap = f"check.{agent_type}"
    reply = await register(client, agent_type, capability=cap)
    good = await client.check(cap, {"text": "hi"}, min_revision=reply.revision)
    assert good.valid
    assert good.agent_type == agent_type
    bad = await client.check(cap, {"text": 3}, agent_type=agent_type)
    assert not bad.valid
    assert bad.errors[0].path == "payload.text"
    out = await client.check(cap, {}, direction="output")
    assert not out.valid


async def test_graph_and_sbom_follow_dependencies(client: RegistryClient) -> None:
    base, user = unique("base"), unique("user")
    await register(client, base)
    deps = [Dependency(type="agent", name=base, version="1.0.0")]
    reply = await register(client, user, depends=deps)
    graph = await client.graph(agent_type=user, min_revision=reply.revision)
    ids = {n.id: n.state for n in graph.nodes}
    assert ids[f"agent:{base}@1.0.0"] == "live"
    assert [(e.from_, e.to) for e in graph.edges] == [(f"agent:{user}@1.0.0", f"agent:{base}@1.0.0")]
    dependents = await client.graph(agent_type=base, direction="dependents")
    assert f"agent:{user}@1.0.0" in {n.id for n in dependents.nodes}
    bom = await client.sbom(agent_type=user)
    assert bom["bomFormat"] == "CycloneDX"
    spdx = await client.sbom(format="spdx", agent_type=user)
    assert spdx["spdxVersion"] == "SPDX-2.3"


async def test_named_schemas_are_stored_listed_and_used(client: RegistryClient) -> None:
    name = unique("Address").replace("-", "_")
    put = await client.put_schema(name, "1.0.0", {"type": "object", "required": ["city"]}, description="postal")
    assert put.created
    again = await client.put_schema(name, "1.0.0", {"type": "object", "required": ["city"]}, description="postal")
    assert not again.created
    agent_type = unique("refs")
    cap = f"ship.{agent_type}"
    caps = [Capability(name=cap, description="ships", input_schema={"$ref": f"#{name}:1.0.0"}, output_schema={})]
    reply = await register(client, agent_type, capabilities=caps)
    listed = [s async for s in client.schemas_all(name=name, min_revision=reply.revision)]
    assert [(s.name, s.version, s.description) for s in listed] == [(name, "1.0.0", "postal")]
    one = (await client.schemas(name=name)).schemas
    assert len(one) == 1
    stored = await client.schema(name, "1.0.0")
    assert stored.schema_ == {"type": "object", "required": ["city"]}
    assert stored.used_by == [agent_type]
    provider = (await client.lookup(cap)).providers[0]
    assert provider.input_schema == {"type": "object", "required": ["city"]}


async def test_history_is_answered_by_the_audit_mirror_only(client: RegistryClient) -> None:
    # No mirror runs beside this registry (it needs PostgreSQL): the request finds nobody to answer.
    with pytest.raises(RegistryUnreachableError, match="audit mirror"):
        await client.history(agent_type="anyone", timeout=1)


async def test_tenant_scoping_hides_a_tenants_agents_from_others(nc: NatsClient, client: RegistryClient) -> None:
    tenant = unique("acme")
    acme = RegistryClient(nc, tenant=tenant)
    agent_type = unique("tenant")
    cap = f"tenant.{agent_type}"
    reply = await acme.register(make_spec(agent_type, capability=cap))
    assert [p.agent_type for p in (await acme.lookup(cap, min_revision=reply.revision)).providers] == [agent_type]
    assert (await acme.get(agent_type)).agent.tenant_scope == tenant
    assert (await client.lookup(cap, min_revision=reply.revision)).providers == []
    other = RegistryClient(nc, tenant=unique("other"))
    assert (await other.lookup(cap, min_revision=reply.revision)).providers == []


async def test_writes_heartbeat_and_deregister(client: RegistryClient) -> None:
    agent_type = unique("writes")
    reply = await client.register(make_spec(agent_type), heartbeat_interval_ms=5000)
    assert reply.heartbeat_interval_ms == 5000
    beat = await client.heartbeat(agent_type, reply.instance_id, status="draining", active_tasks=2)
    assert beat.status == "draining"
    gone = await client.deregister(agent_type, reply.instance_id, reason="test")
    assert gone.agent_removed
    view = (await client.get(agent_type, min_revision=gone.revision)).agent
    assert view.status == "deregistered"


async def test_register_with_an_a2a_card_and_an_mcp_toolspec(client: RegistryClient) -> None:
    card_type, mcp_type = unique("card"), unique("mcp")
    card = {
        "name": "Translator",
        "description": "Translates text",
        "version": "2.1.0",
        "supportedInterfaces": [{"url": "https://example.test/a2a", "protocolBinding": "JSONRPC"}],
        "skills": [{"id": f"translate.{card_type}", "name": "Translate", "description": "any language", "tags": []}],
        "capabilities": {},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
    }
    reply = await client.register(agent_type=card_type, a2a_card=card, extra={"owner_team": "py"})
    assert reply.a2a_version == "1.0"
    view = (await client.get(card_type, min_revision=reply.revision)).agent
    assert view.capabilities[0].name == f"translate.{card_type}"
    assert view.version == "2.1.0"
    toolspec = {
        "tools": [{"name": "read_file", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}}]
    }
    extra = {"kind": "mcp_server", "description": "files", "version": "0.1.0", "owner_team": "py"}
    mcp = await client.register(agent_type=mcp_type, mcp_toolspec=toolspec, extra=extra)
    view = (await client.get(mcp_type, min_revision=mcp.revision)).agent
    assert view.kind == "mcp_server"
    assert view.capabilities[0].effective_annotations is not None
    assert view.capabilities[0].effective_annotations.readOnlyHint is True


async def test_register_with_a_server_json(client: RegistryClient) -> None:
    # The repository's fixture: an MCP Registry server.json with its tools inside its _meta.
    server = json.loads((REPO / "test" / "fixtures" / "cli" / "weather.server.json").read_text())
    agent_type = unique("weather")
    reply = await client.register(agent_type=agent_type, mcp_server=server, extra={"owner_team": "py"})
    # The server is named io.example.acme/weather, not after this agent type; packages are not kept.
    assert any(w.startswith("mcp_server.name: ") for w in reply.warnings)
    assert any("mcp_server.packages" in w for w in reply.warnings)
    found = await client.lookup("weather.forecast", min_revision=reply.revision)
    provider = next(p for p in found.providers if p.agent_type == agent_type)
    assert provider.kind == "mcp_server"
    assert provider.nats_subject == f"mcp.tools.{agent_type}"
    view = (await client.get(agent_type, min_revision=reply.revision)).agent
    assert view.display_name == "Weather"
    assert view.url == "https://weather.example.com/mcp"
    assert view.kind == "mcp_server"
    assert (view.version, view.owner_team) == ("1.4.0", "py")
    assert sorted(c.name for c in view.capabilities) == ["weather.alerts", "weather.forecast"]

    # The tools beside a server.json that lists none, as its tools/list result.
    bare_type = unique("tides")
    bare = {k: v for k, v in server.items() if k != "_meta"}
    tool = {"name": f"tides.{bare_type}", "description": "High and low water", "inputSchema": {"type": "object"}}
    tools = {"tools": [tool]}
    beside = await client.register(agent_type=bare_type, mcp_server=bare, mcp_toolspec=tools, extra={"kind": "tool"})
    view = (await client.get(bare_type, min_revision=beside.revision)).agent
    assert (view.kind, view.display_name) == ("tool", "Weather")
    assert [c.name for c in view.capabilities] == [f"tides.{bare_type}"]
