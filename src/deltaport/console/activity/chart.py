"""The overview's chart: bars of requests (errors drawn over them) as inline SVG
geometry, drawn by the template; no script, no chart library."""

from __future__ import annotations

from dataclasses import dataclass

from deltaport.observe.audit_store import Volume

WIDTH = 480
HEIGHT = 120
GAP = 2


@dataclass(frozen=True)
class Bar:
    x: float
    width: float
    requests_y: float
    requests_height: float
    errors_y: float
    errors_height: float
    label: str
    """What a pointer over the bar shows (its ``<title>``)."""


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    bars: tuple[Bar, ...]
    peak: int
    """The most requests of one bar: the top of the scale."""


def bars(volumes: list[Volume], labels: list[str]) -> Chart:
    """One bar a volume, scaled so that the busiest reaches the top."""
    peak = max((v.requests for v in volumes), default=0)
    step = WIDTH / max(len(volumes), 1)
    drawn = []
    for i, (v, label) in enumerate(zip(volumes, labels, strict=True)):
        tall = HEIGHT * v.requests / peak if peak else 0.0
        red = HEIGHT * v.errors / peak if peak else 0.0
        errors = f", {_counted(v.errors, 'error')}" if v.errors else ""
        drawn.append(
            Bar(
                x=round(i * step + GAP / 2, 2),
                width=round(step - GAP, 2),
                requests_y=round(HEIGHT - tall, 2),
                requests_height=round(tall, 2),
                errors_y=round(HEIGHT - red, 2),
                errors_height=round(red, 2),
                label=f"{label}: {_counted(v.requests, 'request')}{errors}",
            )
        )
    return Chart(WIDTH, HEIGHT, tuple(drawn), peak)


def _counted(n: int, noun: str) -> str:
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"
