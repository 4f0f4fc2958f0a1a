"""The Databricks SDK for Python drives deltaport's provider API in Unity Catalog's shape:
a real ``deltaport serve`` on a catalog database, ``WorkspaceClient(host, token)``."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from databricks.sdk import WorkspaceClient
from databricks.sdk.errors import InvalidParameterValue, NotFound, ResourceAlreadyExists
from databricks.sdk.service.sharing import (
    AuthenticationType,
    PermissionsChange,
    SecurablePropertiesKvPairs,
    SharedDataObject,
    SharedDataObjectHistoryDataSharingStatus,
    SharedDataObjectUpdate,
    SharedDataObjectUpdateAction,
)

from admin_support import ADMIN_TOKEN, CatalogAdminServer


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
    assert len(created.tokens or []) == 1

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
    old_end = min(t.expiration_time or 0 for t in tokens) / 1000
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
