"""The table's rows on what survives compaction and on the meter's truth: prompts, paths
and the like still visible after rounds of compaction, and the meter's error against the
size the API reports."""

from __future__ import annotations

from typing import Any

from figures import Row


def retained(f: dict[str, Any], small: str, big: str, sizes: list[str]) -> Row:
    r = f["retention_rounds"]
    rounds = ", ".join(f"{pct:.0f}%" for pct in r["rounds_pct"])
    return Row(
        "retention",
        f"prompts ever typed still visible after three rounds of compaction `all`, "
        f"extractive, of a {r['tokens'] / 1e3:,.0f}K-token session",
        f"{r['prompts_pct']:.1f}% of {r['prompts']} prompts (after each round: {rounds}), "
        f"{r['paths_pct']:.1f}% of {r['paths']} paths, in {r['view_tokens']:,} tokens; "
        f"truncated to as many tokens: {r['truncated_prompts_pct']:.1f}% of prompts, "
        f"{r['truncated_paths_pct']:.1f}% of paths",
        "100% of prompts",
        r["prompts_pct"] >= 100.0,
        {
            "prompts_pct": r["prompts_pct"],
            "paths_pct": r["paths_pct"],
            "truncated_prompts_pct": r["truncated_prompts_pct"],
        },
    )


def continuity(f: dict[str, Any], small: str, big: str, sizes: list[str]) -> Row:
    r = f["retention_continuity"]
    shares = ", ".join(f"{pct:.1f}%" for pct in r["share_pct"])

    def pair(name: str, label: str) -> str:
        return (
            f"{r[name + '_pct']:.1f}% of {r[name]} {label} "
            f"(truncated: {r['truncated_' + name + '_pct']:.1f}%)"
        )

    kinds = ("prompts", "paths", "errors", "instructions", "todos", "symbols")
    labels = (
        "prompts",
        "paths",
        "errors",
        "standing instructions",
        "open todo items",
        "symbols edited",
    )
    met = (
        r["prompts_pct"] >= 100.0
        and r["paths_pct"] >= 95.0
        and r["errors_pct"] >= 95.0
        and r["instructions_pct"] >= 100.0
        and r["todos_pct"] >= 100.0
        and r["symbols_pct"] >= 100.0
        and max(r["share_pct"]) <= 5.0
    )
    return Row(
        "continuity",
        f"after three rounds of compaction `all`, extractive, of a {r['tokens'] / 1e3:,.0f}K-token "
        "session with standing instructions, task lists and defining edits: what stays visible, "
        "and the summary's share of the tokens it stands for",
        "; ".join(pair(k, label) for k, label in zip(kinds, labels, strict=True))
        + f"; the summary takes {shares} of what it stands for (after each round)",
        "100% of prompts, instructions, todo items and symbols; >= 95% of paths and errors; "
        "<= 5% of the tokens summarized",
        met,
        {
            "prompts_pct": r["prompts_pct"],
            "paths_pct": r["paths_pct"],
            "errors_pct": r["errors_pct"],
            "instructions_pct": r["instructions_pct"],
            "share_pct": max(r["share_pct"]),
        },
    )


def meter(f: dict[str, Any], small: str, big: str, sizes: list[str]) -> Row:
    m = f["meter_error"]

    def said(name: str) -> str:
        k = m[name]
        return (
            f"{name.replace('_', ' ')}: median {100 * k['median']:.2f}%, p90 {100 * k['p90']:.2f}% "
            f"of {k['requests']}, first after a compaction worst "
            f"{100 * k['after_compaction_worst']:.1f}% of {k['after_compaction']}"
        )

    judged = m["corpus"] if "corpus" in m else m["generated"]
    after = m.get("corpus_compacted", m["generated"])["after_compaction_worst"]
    met = judged["median"] <= 0.02 and judged["p90"] <= 0.05 and after <= 0.10
    figures = {"median": judged["median"] or 1e-9, "p90": judged["p90"] or 1e-9}
    figures["after_compaction"] = after or 1e-9
    return Row(
        "meter",
        "the meter's error, Claude Code files cut before each request (with compactions)",
        "; ".join(said(name) for name in ("generated", "corpus", "corpus_compacted") if name in m),
        "median <= 2%, p90 <= 5% (the corpus's when given), first after a compaction <= 10%",
        met,
        figures,
    )
