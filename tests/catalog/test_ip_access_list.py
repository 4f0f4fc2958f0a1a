"""IP access lists: what an entry may be, how it is stored, which addresses it admits,
and the bound on their number (in the store, the commands and the admin API)."""

from __future__ import annotations

from pathlib import Path

import pytest

from deltaport.catalog.recipient_access import IpAccessList, ip_access_problem, normalised
from deltaport.catalog.rows import CatalogError, RecipientSpec
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.cli import main as cli
from deltaport.config.loading import parse_config
from deltaport.config.model import ConfigError
from deltaport.protocol.errors import PermissionDeniedError


def test_entries_are_addresses_or_ranges_of_both_families() -> None:
    assert ip_access_problem(["10.0.0.0/8", "192.0.2.1", "2001:db8::/32", "::1"], 10) is None
    assert "entry 2" in (ip_access_problem(["10.0.0.0/8", "example.com"], 10) or "")
    assert "host bits" in (ip_access_problem(["10.1.2.3/8"], 10) or "")
    assert "10.0.0.0/8" in (ip_access_problem(["10.1.2.3/8"], 10) or "")
    assert "at most 2" in (ip_access_problem(["::1", "::2", "::3"], 2) or "")
    assert ip_access_problem([""], 10) is not None
    assert ip_access_problem(["1" * 100], 10) is not None


def test_entries_are_stored_in_their_own_spelling_once() -> None:
    assert normalised(["2001:DB8::/32", "10.0.0.1/32", "10.0.0.1", " 10.0.0.0/8 "]) == (
        "2001:db8::/32",
        "10.0.0.1",
        "10.0.0.0/8",
    )


def test_a_list_admits_only_its_addresses() -> None:
    anywhere = IpAccessList()
    assert anywhere.allows("198.51.100.1") and anywhere.allows(None)
    listed = IpAccessList.of(["10.0.0.0/8", "2001:db8::/32"])
    assert listed.allows("10.200.0.1")
    assert listed.allows("::ffff:10.0.0.1")  # an IPv4 client on a dual-stack socket
    assert listed.allows("2001:db8:1::7")
    assert not listed.allows("11.0.0.1")
    assert not listed.allows("2001:db9::1")
    assert not listed.allows(None)
    assert not listed.allows("not an address")
    with pytest.raises(PermissionDeniedError) as refused:
        listed.admit("11.0.0.1")
    assert refused.value.status == 403
    assert "10.0.0.0" not in refused.value.message


def test_the_store_refuses_a_bad_list_before_writing(tmp_path: Path) -> None:
    store = SqlCatalog(f"sqlite:///{tmp_path}/c.db")
    with pytest.raises(CatalogError, match="IP access list"):
        store.create_recipient("r", RecipientSpec(ip_access_list=["10.0.0.0/8", "nope"]))
    with pytest.raises(CatalogError, match="at most 1"):
        store.create_recipient("r", RecipientSpec(ip_access_list=["::1", "::2"]), max_ip_entries=1)
    assert store.contents().recipients == {}
    store.create_recipient("r", RecipientSpec(ip_access_list=["10.0.0.1/32"]))
    assert store.contents().recipients["r"].ip_access_list == ("10.0.0.1",)
    assert store.set_ip_access_list("R", []) == ()
    assert store.contents().recipients["r"].ip_access_list == ()
    with pytest.raises(CatalogError):
        store.set_ip_access_list("r", ["300.0.0.1"])


def test_the_commands_take_ips_and_the_configured_bound(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path}/c.db"
    config = tmp_path / "server.yaml"
    config.write_text("maxIpAccessListEntries: 1\n")
    assert cli(["catalog", "init", "--catalog", url]) == 0
    two = ["--ip", "10.0.0.0/8", "--ip", "::1"]
    create = ["recipient", "create", "r", "--catalog", url, "-o", str(tmp_path / "r.share")]
    assert cli([*create, *two, "--config", str(config)]) != 0
    assert "at most 1" in capsys.readouterr().err
    assert not (tmp_path / "r.share").exists()
    assert cli([*create, *two]) == 0
    assert SqlCatalog(url).contents().recipients["r"].ip_access_list == ("10.0.0.0/8", "::1")
    assert cli(["recipient", "set-ip", "r", "--catalog", url]) == 0
    assert "anywhere" in capsys.readouterr().out
    assert SqlCatalog(url).contents().recipients["r"].ip_access_list == ()


def test_the_configuration_checks_trusted_proxies_and_the_bound() -> None:
    config = parse_config({"trustedProxies": ["10.0.0.0/24", "fd00::/64"]}, {})
    assert config.trusted_proxies == ["10.0.0.0/24", "fd00::/64"]
    with pytest.raises(ConfigError, match=r"trustedProxies\[1\]"):
        parse_config({"trustedProxies": ["10.0.0.0/24", "proxy.local"]}, {})
    with pytest.raises(ConfigError, match="maxIpAccessListEntries"):
        parse_config({"maxIpAccessListEntries": 0}, {})
