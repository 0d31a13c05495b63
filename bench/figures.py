"""Medians and spreads of a run's series, and the `Row` each line of the table is."""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field
from typing import Any

MB = 1e6


def stats(values: list[float]) -> dict[str, float]:
    """Median, quartiles and extremes of one series."""
    ordered = sorted(values)
    if len(ordered) >= 2:
        q1, _, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
    else:
        q1 = q3 = ordered[0]
    return {
        "median": statistics.median(ordered),
        "q1": q1,
        "q3": q3,
        "min": ordered[0],
        "max": ordered[-1],
        "n": len(ordered),
    }


def med(series: dict[str, Any], name: str) -> float:
    return float(series[name]["median"])


def ms(series: dict[str, Any], name: str) -> str:
    """'94 ms [90-101]': the median and the interquartile range."""
    s = series[name]
    digits = 1 if s["median"] < 0.1 else 0
    low, mid, high = (f"{s[k] * 1e3:.{digits}f}" for k in ("q1", "median", "q3"))
    return f"{mid} ms [{low}-{high}]"


@dataclass
class Row:
    key: str
    goal: str
    measured: str
    target: str
    met: bool
    figures: dict[str, float] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def label(size: str) -> str:
    return size.upper()
