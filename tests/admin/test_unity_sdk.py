"""The Databricks SDK for Python drives deltaport's provider API in Unity Catalog's shape:
a real ``deltaport serve`` on a catalog database, ``WorkspaceClient(host, token)``."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from databricks.sdk import WorkspaceClient
from databricks.sdk.errors import (
    InvalidParameterValue,
    NotFound,
    PermissionDenied,
    ResourceAlreadyExists,
)
from databricks.sdk.service.sharing import (
    AuthenticationType,
    IpAccessList,
    PermissionsChange,
    SecurablePropertiesKvPairs,
    SharedDataObject,
    SharedDataObjectHistoryDataSharingStatus,
    SharedDataObjectUpdate,
    SharedDataObjectUpdateAction,
)
from deltalake import DeltaTable

from admin_support import ADMIN_TOKEN, CatalogAdminServer
from corpus import corpus_table
from emulators import official_call, official_client_python, official_client_results  # noqa: F401
from waiting import wait_until


@pytest.fixture
def workspace(catalog_admin_server: CatalogAdminServer) -> WorkspaceClient:
    return WorkspaceClient(host=catalog_admin_server.running.admin, token=ADMIN_TOKEN)


def test_the_sdk_manages_shares_recipients_and_grants(
    workspace: WorkspaceClient, admin_tables: dict[str, Path]
) -> None:
    w = workspace
    share = w.shares.create("sdk_share", comment="made by the SDK")
    assert (share.name, share.comment) == ("sdk_share", "made by the SDK")
    with pytest.raises(ResourceAlreadyExists):
        w.shares.create("sdk_share")

    corpus = str(admin_tables["dvcm"])
    updated = w.shares.update(
        "sdk_share",
        updates=[
            SharedDataObjectUpdate(
                action=SharedDataObjectUpdateAction.ADD,
                data_object=SharedDataObject(
                    name=corpus,
                    shared_as="corpus.dvcm",
                    history_data_sharing_status=SharedDataObjectHistoryDataSharingStatus.ENABLED,
                    comment="deletion vectors and column mapping",
                ),
            )
        ],
    )
    (table,) = updated.objects or []
    assert (table.name, table.shared_as, table.comment) == (
        corpus,
        "corpus.dvcm",
        "deletion vectors and column mapping",
    )
    assert table.history_data_sharing_status == SharedDataObjectHistoryDataSharingStatus.ENABLED
    with pytest.raises(InvalidParameterValue, match="shared_as"):
        w.shares.update(
            "sdk_share",
            updates=[
                SharedDataObjectUpdate(
                    action=SharedDataObjectUpdateAction.ADD,
                    data_object=SharedDataObject(name=corpus, shared_as="a-b.c"),
                )
            ],
        )

    created = w.recipients.create(
        "sdk_partner",
        AuthenticationType.TOKEN,
        comment="a partner",
        properties_kvpairs=SecurablePropertiesKvPairs(properties={"region": "eu"}),
        expiration_time=int((time.time() + 7 * 86400) * 1000),
    )
    assert created.authentication_type == AuthenticationType.TOKEN
    assert created.properties_kvpairs is not None
    assert created.properties_kvpairs.properties == {"region": "eu"}
    assert created.comment == "a partner"
    assert [t.activation_url for t in created.tokens or []] == [created.activation_url]
    assert w.recipient_activation.retrieve_token(_link(created.activation_url)).bearer_token

    granted = w.shares.update_permissions(
        "sdk_share", changes=[PermissionsChange(principal="sdk_partner", add=["SELECT"])]
    )
    assert [
        (p.principal, [v.value for v in p.privileges or []])
        for p in granted.privilege_assignments or []
    ] == [("sdk_partner", ["SELECT"])]
    assert "sdk_share" in {s.name for s in w.shares.list_shares()}
    assert "sdk_partner" in {r.name for r in w.recipients.list()}
    permissions = w.shares.share_permissions("sdk_share")
    assert [p.principal for p in permissions.privilege_assignments or []] == ["sdk_partner"]

    before = time.time()
    rotated = w.recipients.rotate_token("sdk_partner", existing_token_expire_in_seconds=3600)
    tokens = rotated.tokens or []
    assert len(tokens) == 2
    old_end = min(t.expiration_time for t in tokens if t.expiration_time) / 1000
    assert before + 3600 - 1 <= old_end <= time.time() + 3600

    shared = w.recipients.share_permissions("sdk_partner")
    assert [s.share_name for s in shared.permissions_out or []] == ["sdk_share"]

    w.shares.update_permissions(
        "sdk_share", changes=[PermissionsChange(principal="sdk_partner", remove=["SELECT"])]
    )
    assert w.recipients.share_permissions("sdk_partner").permissions_out in (None, [])

    w.recipients.delete("sdk_partner")
    with pytest.raises(NotFound):
        w.recipients.get("sdk_partner")
    w.shares.delete("sdk_share")
    with pytest.raises(NotFound):
        w.shares.get("sdk_share")


def test_lists_follow_pages(
    workspace: WorkspaceClient, catalog_admin_server: CatalogAdminServer
) -> None:
    """More shares than a page: the SDK follows next_page_token (max_results=0 asks for
    the server's page size) and sees each share once."""
    names = [f"paged_{i:03d}" for i in range(105)]
    with catalog_admin_server.catalog.batch():
        for name in names:
            catalog_admin_server.catalog.create_share(name)
    listed = [s.name for s in workspace.shares.list_shares()]
    assert [n for n in listed if n and n.startswith("paged_")] == names
    assert len(listed) == len(set(listed))
    limited = [s.name for s in workspace.shares.list_shares(max_results=7)]
    assert limited == listed
    with catalog_admin_server.catalog.batch():
        for name in names:
            catalog_admin_server.catalog.drop_share(name)


CORPUS = "dat__basic_append"


def _expected_rows() -> list[Any]:
    frame = DeltaTable(str(corpus_table(CORPUS).path)).to_pandas()
    return sorted(frame.to_dict("records"), key=lambda r: json.dumps(r, default=str))


def _eventually(check: Callable[[], bool]) -> None:
    wait_until(check, 10, "the sharing listener to see the change")


def _link(url: str | None) -> str:
    """The activation token: the last part of the link (what ``retrieve_token`` takes)."""
    assert url is not None
    return url.rsplit("/", 1)[1]


def test_the_sdk_runs_a_partner_from_share_to_read_and_back(
    workspace: WorkspaceClient,
    catalog_admin_server: CatalogAdminServer,
    official_client_python: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    """The issue's scenario: share, table, recipient with properties and an IP list,
    grant, list, rotate with a grace period, share permissions, revoke, delete; the
    official client reads with the profile the SDK retrieved through the activation link."""
    w = workspace
    w.shares.create("partner_share")
    w.shares.update(
        "partner_share",
        updates=[
            SharedDataObjectUpdate(
                action=SharedDataObjectUpdateAction.ADD,
                data_object=SharedDataObject(
                    name=str(corpus_table(CORPUS).path), shared_as="corpus.basic"
                ),
            )
        ],
    )
    created = w.recipients.create(
        "partner",
        AuthenticationType.TOKEN,
        properties_kvpairs=SecurablePropertiesKvPairs(properties={"country": "FR"}),
        ip_access_list=IpAccessList(allowed_ip_addresses=["127.0.0.0/8", "2001:db8::/32"]),
    )
    assert created.activated is False
    assert created.ip_access_list is not None
    assert created.ip_access_list.allowed_ip_addresses == ["127.0.0.0/8", "2001:db8::/32"]
    sharing = catalog_admin_server.running.sharing.url
    assert (created.activation_url or "").startswith(
        sharing.split("/delta-sharing")[0] + "/api/2.1/unity-catalog/public/"
    )
    w.shares.update_permissions(
        "partner_share", changes=[PermissionsChange(principal="partner", add=["SELECT"])]
    )
    assert "partner_share" in {s.name for s in w.shares.list_shares()}
    assert "partner" in {r.name for r in w.recipients.list()}

    # the profile, through the SDK's activation call on the admin listener, once
    w.recipient_activation.get_activation_url_info(_link(created.activation_url))
    retrieved = w.recipient_activation.retrieve_token(_link(created.activation_url))
    assert retrieved.bearer_token and retrieved.endpoint == sharing
    with pytest.raises(NotFound):
        w.recipient_activation.retrieve_token(_link(created.activation_url))
    assert w.recipients.get("partner").activated is True
    profile = tmp_path / "partner.share"
    profile.write_text(json.dumps(retrieved.as_dict()))
    call = official_call("load_as_pandas", f"{profile}#partner_share.corpus.basic")
    _eventually(
        lambda: (
            httpx.get(
                sharing + "/shares", headers={"Authorization": f"Bearer {retrieved.bearer_token}"}
            ).status_code
            == 200
        )
    )
    (official,) = official_client_results(official_client_python, [call])
    assert "rows" in official, official
    assert sorted(official["rows"], key=lambda r: json.dumps(r, default=str)) == _expected_rows()

    # rotate with a grace period: the old token lasts an hour more, the new one comes by link
    before = time.time()
    rotated = w.recipients.rotate_token("partner", existing_token_expire_in_seconds=3600)
    (old,) = [t for t in rotated.tokens or [] if t.id]
    assert before + 3600 - 1 <= (old.expiration_time or 0) / 1000 <= time.time() + 3600
    assert rotated.activation_url and rotated.activation_url != created.activation_url
    shared = w.recipients.share_permissions("partner")
    assert [s.share_name for s in shared.permissions_out or []] == ["partner_share"]

    w.shares.update_permissions(
        "partner_share", changes=[PermissionsChange(principal="partner", remove=["SELECT"])]
    )
    assert w.recipients.share_permissions("partner").permissions_out in (None, [])
    w.recipients.delete("partner")
    with pytest.raises(NotFound):
        w.recipients.get("partner")
    w.shares.delete("partner_share")


def test_the_sdk_makes_an_oauth_recipient_and_an_ip_list_holds_on_the_link(
    workspace: WorkspaceClient,
) -> None:
    w = workspace
    oauth = w.recipients.create(
        "sdk_oauth",
        AuthenticationType.OAUTH_CLIENT_CREDENTIALS,
        ip_access_list=IpAccessList(allowed_ip_addresses=["127.0.0.1"]),
    )
    assert oauth.authentication_type == AuthenticationType.OAUTH_CLIENT_CREDENTIALS
    profile = httpx.get(
        workspace.config.host
        + "/api/2.1/unity-catalog/public/data_sharing_activation/"
        + _link(oauth.activation_url)
    ).json()
    assert profile["type"] == "oauth_client_credentials"
    assert profile["clientId"].startswith("dpc_") and profile["clientSecret"].startswith("dps_")
    assert w.recipients.get("sdk_oauth").activated is True

    elsewhere = w.recipients.create(
        "sdk_elsewhere",
        AuthenticationType.TOKEN,
        ip_access_list=IpAccessList(allowed_ip_addresses=["192.0.2.0/24"]),
    )
    with pytest.raises(PermissionDenied):
        w.recipient_activation.retrieve_token(_link(elsewhere.activation_url))
    with pytest.raises(PermissionDenied):
        w.recipient_activation.get_activation_url_info(_link(elsewhere.activation_url))
    # refused, not used up: a list that lets it in makes the link work
    w.recipients.update(
        "sdk_elsewhere", ip_access_list=IpAccessList(allowed_ip_addresses=["127.0.0.1"])
    )
    assert w.recipient_activation.retrieve_token(_link(elsewhere.activation_url)).bearer_token
    with pytest.raises(InvalidParameterValue, match=r"ip_access_list\.allowed_ip_addresses"):
        w.recipients.update(
            "sdk_elsewhere", ip_access_list=IpAccessList(allowed_ip_addresses=["10.1.2.3/8"])
        )
    w.recipients.delete("sdk_oauth")
    w.recipients.delete("sdk_elsewhere")
