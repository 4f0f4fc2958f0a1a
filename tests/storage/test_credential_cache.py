"""The credential cache: reuse while enough life is left, one cloud call per burst."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

from deltaport.protocol.credentials import GcpOauthToken
from deltaport.storage import Location, parse_location
from deltaport.storage.credentials import CredentialCache, Vended

LIFETIME = timedelta(hours=1)
START = datetime(2030, 1, 1, tzinfo=UTC)


class FakeCloud:
    def __init__(self, now: list[datetime]) -> None:
        self.calls: list[str] = []
        self.now = now
        self.lock = threading.Lock()

    def vend(self, location: Location) -> Vended:
        time.sleep(0.05)  # a slow STS: concurrent requests arrive meanwhile
        with self.lock:
            self.calls.append(location.uri)
            n = len(self.calls)
        return Vended(GcpOauthToken(f"token-{n}"), self.now[0] + LIFETIME)


def test_reuse_until_less_than_the_margin_is_left() -> None:
    now = [START]
    cloud = FakeCloud(now)
    cache = CredentialCache(cloud.vend, LIFETIME / 2, clock=lambda: now[0])
    table = parse_location("gs://b/t")
    first = cache.get(table)
    assert first.fresh and first.vended.secret == GcpOauthToken("token-1")
    now[0] = START + timedelta(minutes=30)  # exactly half the life left: still handed out
    again = cache.get(table)
    assert not again.fresh and again.vended is first.vended
    now[0] = START + timedelta(minutes=30, seconds=1)
    renewed = cache.get(table)
    assert renewed.fresh and renewed.vended.secret == GcpOauthToken("token-2")
    assert renewed.vended.expires_at - now[0] == LIFETIME  # never longer than issued
    # other directories have their own credentials
    assert cache.get(parse_location("gs://b/other")).fresh
    assert len(cloud.calls) == 3


def test_a_burst_makes_one_call() -> None:
    now = [START]
    cloud = FakeCloud(now)
    cache = CredentialCache(cloud.vend, LIFETIME / 2, clock=lambda: now[0])
    table = parse_location("s3://b/t")
    with ThreadPoolExecutor(16) as pool:
        issued = list(pool.map(lambda _: cache.get(table), range(64)))
    assert cloud.calls == ["s3://b/t"]
    assert sum(i.fresh for i in issued) == 1
    assert all(i.vended.secret == GcpOauthToken("token-1") for i in issued)
