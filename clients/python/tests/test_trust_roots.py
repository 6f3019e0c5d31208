"""A tenant's trust roots in the bucket (protocol v1.2, docs/trust.md "Trust roots in the bucket") on a
real registry: ``set_trust_roots`` stores an entry that ``get_trust_roots`` reads back with its revision,
a stale revision is ConflictError, a ``jwks_file`` is refused as InvalidRequestError storing nothing,
and ``delete_trust_roots`` removes the entry (NotFoundError once nothing is stored)."""

from __future__ import annotations

import pytest

from agent_registry import (
    ConflictError,
    InvalidRequestError,
    NotFoundError,
    RegistryClient,
    TenantTrust,
    TrustJwks,
    TrustSigner,
)

from .conftest import unique

# The public Ed25519 key of RFC 8037 appendix A.2: the registry imports every key before storing it.
KEY = {"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "alg": "EdDSA"}


def entry(kid: str, tenant: str) -> TenantTrust:
    return TenantTrust(
        mode="require",
        approval="auto",  # the default, which the registry writes into the stored entry
        jwks=TrustJwks(keys=[{**KEY, "kid": kid}]),
        signers=[TrustSigner(kid=kid, publisher="Globex Inc", agent_types=[f"{tenant}-*"])],
    )


async def test_set_then_get_returns_the_roots_and_their_revision(client: RegistryClient) -> None:
    tenant = unique("globex")
    assert (await client.get_trust_roots(tenant)).model_dump() == {
        "tenant": tenant,
        "trust": None,
        "by": None,
        "revision": None,
        "in_force": "none",
    }

    stored = await client.set_trust_roots(tenant, entry("globex-2026", tenant), by="alice", revision=0)
    assert stored.tenant == tenant
    assert stored.by == "alice"
    assert stored.revision is not None
    assert stored.in_force == "bucket"
    assert stored.trust is not None
    assert stored.trust.mode == "require"

    got = await client.get_trust_roots(tenant)
    assert got.revision == stored.revision
    assert got.by == "alice"
    assert got.trust == entry("globex-2026", tenant)
    assert got.trust is not None
    assert got.trust.signers is not None
    assert got.trust.signers[0].agent_types == [f"{tenant}-*"]
    assert got.trust.jwks is not None
    assert got.trust.jwks.keys[0]["kid"] == "globex-2026"

    # A plain mapping is sent as is; replacing the entry at the revision read moves the revision on.
    replaced = await client.set_trust_roots(
        tenant, {**entry("globex-2027", tenant).model_dump(mode="json", exclude_none=True)}, revision=got.revision
    )
    assert replaced.revision is not None
    assert replaced.revision > stored.revision
    assert replaced.by is None
    after = await client.get_trust_roots(tenant)
    assert after.revision == replaced.revision
    assert after.trust == entry("globex-2027", tenant)


async def test_a_stale_revision_is_a_conflict_and_changes_nothing(client: RegistryClient) -> None:
    tenant = unique("initech")
    first = await client.set_trust_roots(tenant, entry("initech-1", tenant), by="alice", revision=0)
    assert first.revision is not None
    second = await client.set_trust_roots(tenant, entry("initech-2", tenant), by="bob", revision=first.revision)

    with pytest.raises(ConflictError) as stale_set:
        await client.set_trust_roots(tenant, entry("initech-3", tenant), by="alice", revision=first.revision)
    assert stale_set.value.status == 409
    with pytest.raises(ConflictError):
        await client.set_trust_roots(tenant, entry("initech-3", tenant), revision=0)  # "none stored": one is
    with pytest.raises(ConflictError):
        await client.delete_trust_roots(tenant, by="alice", revision=first.revision)

    got = await client.get_trust_roots(tenant)
    assert got.revision == second.revision
    assert got.by == "bob"
    assert got.trust == entry("initech-2", tenant)


async def test_a_jwks_file_is_refused_and_nothing_is_stored(client: RegistryClient) -> None:
    tenant = unique("hooli")
    body = {**entry("hooli-1", tenant).model_dump(mode="json", exclude_none=True), "jwks_file": "/etc/passwd"}
    with pytest.raises(InvalidRequestError) as refused:
        await client.set_trust_roots(tenant, body, by="mallory", revision=0)
    assert refused.value.status == 400
    assert "trust.jwks_file" in [issue.path for issue in refused.value.issues]
    nothing = await client.get_trust_roots(tenant)
    assert (nothing.trust, nothing.revision, nothing.in_force) == (None, None, "none")

    # Over an entry already stored, the refusal leaves it as it was.
    stored = await client.set_trust_roots(tenant, entry("hooli-1", tenant), by="alice")
    with pytest.raises(InvalidRequestError):
        await client.set_trust_roots(tenant, TenantTrust.model_validate(body), by="mallory")
    kept = await client.get_trust_roots(tenant)
    assert (kept.revision, kept.by, kept.trust) == (stored.revision, "alice", entry("hooli-1", tenant))

    with pytest.raises(InvalidRequestError):
        await client.get_trust_roots("not.a.tenant")  # refused here: it would build another subject


async def test_delete_removes_the_roots(client: RegistryClient) -> None:
    tenant = unique("umbrella")
    with pytest.raises(NotFoundError):
        await client.delete_trust_roots(tenant, by="alice")

    stored = await client.set_trust_roots(tenant, entry("umbrella-1", tenant), by="alice", revision=0)
    assert stored.revision is not None
    deleted = await client.delete_trust_roots(tenant, by="bob", revision=stored.revision)
    assert (deleted.tenant, deleted.trust, deleted.by, deleted.revision) == (tenant, None, "bob", None)
    assert deleted.in_force == "none"

    got = await client.get_trust_roots(tenant)
    assert (got.trust, got.by, got.revision, got.in_force) == (None, None, None, "none")
    with pytest.raises(NotFoundError) as again:
        await client.delete_trust_roots(tenant)
    assert again.value.status == 404
    # Deleted, the tenant has none stored: a set at revision 0 is accepted again.
    again_stored = await client.set_trust_roots(tenant, entry("umbrella-2", tenant), revision=0)
    assert again_stored.revision is not None
    assert again_stored.revision > stored.revision
