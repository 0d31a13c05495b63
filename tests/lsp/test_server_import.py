"""`baton/session/import` over stdio: work-done progress, other requests answered while a
large file is read, and the cancel button leaving nothing behind."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from lsp_harness import Harness
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from baton import protocol
from baton_testkit.claude_code_gen import generate

REQUEST_CANCELLED = -32800


def large_file(path: Path, files: int) -> Path:
    """Generated sessions one after another (each with its own session id): a few MB."""
    with path.open("w", encoding="utf-8") as out:
        for seed in range(files):
            for record in generate(seed, era="newest", turns=30, media=False).records:
                out.write(json.dumps(record, separators=(",", ":")) + "\n")
    return path


def progress_of(lsp: Harness, token: Any, after: int = 0) -> list[dict[str, Any]]:
    return [
        p.value
        for m, p in lsp.recorder.received[after:]
        if m == types.PROGRESS and p.token == token
    ]


async def test_an_import_reports_progress_on_the_clients_token(
    lsp: Harness, tmp_path: Path
) -> None:
    source = large_file(tmp_path / "big.jsonl", 3)
    lsp.client.progress_reports.setdefault("import-1", [])
    mark = lsp.recorder.mark()
    imported = await lsp.request(
        protocol.SESSION_IMPORT, {"path": str(source), "workDoneToken": "import-1"}
    )
    end = await lsp.progress_end("import-1")

    values = progress_of(lsp, "import-1", after=mark)
    assert values[0] == {"kind": "begin", "title": "Baton: import", "cancellable": True,
                         "percentage": 0}  # fmt: skip
    reports = [v for v in values if v["kind"] == "report"]
    assert reports[0]["message"] == "Reading big.jsonl"  # later ones at most every 0.25 s
    assert reports[-1] == {"kind": "report", "message": "Opening the imported session",
                           "percentage": 100}  # fmt: skip
    percentages = [v["percentage"] for v in reports]
    assert percentages == sorted(percentages)
    assert end.value["kind"] == "end"
    assert imported["sessionId"] in {
        s["sessionId"] for s in (await lsp.request(protocol.SESSION_LIST))["sessions"]
    }


async def test_other_requests_are_answered_while_a_large_file_is_imported(
    lsp: Harness, tmp_path: Path
) -> None:
    source = large_file(tmp_path / "big.jsonl", 12)
    sid = (await lsp.create(title="meanwhile"))["sessionId"]
    importing = asyncio.ensure_future(
        lsp.client.protocol.send_request_async(protocol.SESSION_IMPORT, {"path": str(source)})
    )
    await asyncio.sleep(0)  # the import goes out first

    usage = await lsp.request(protocol.USAGE, {"sessionId": sid})

    assert not importing.done()  # answered before the import, which was sent before it
    assert usage["usedTokens"] >= 0
    imported = await importing
    assert imported["sessionId"] != sid


async def test_the_progress_cancel_button_cancels_the_import(lsp: Harness, tmp_path: Path) -> None:
    source = large_file(tmp_path / "big.jsonl", 12)
    mark = lsp.recorder.mark()
    importing = asyncio.ensure_future(
        lsp.client.protocol.send_request_async(protocol.SESSION_IMPORT, {"path": str(source)})
    )
    begin = await lsp.progress_begin("Baton: import", after=mark)
    lsp.client.window_work_done_progress_cancel(
        types.WorkDoneProgressCancelParams(token=begin.token)
    )
    try:
        await importing
        raise AssertionError("the import finished despite the cancel")
    except JsonRpcException as exc:
        assert exc.code == REQUEST_CANCELLED
    await lsp.progress_end(begin.token)

    assert (await lsp.request(protocol.SESSION_LIST))["sessions"] == []
    assert list((lsp.data_dir / "sessions").glob("*")) == []  # nor a file being written


async def test_an_imports_summarized_turns_come_with_their_token_counts(
    lsp: Harness, tmp_path: Path
) -> None:
    """They are stored without one (the import counts only what may end up in the view):
    `replaced` and, after an undo, `get` count them as they serve them."""
    source = generate(31, era="newest", compactions=3, turns=16, repairs=False).write(
        tmp_path / "compacted.jsonl"
    )
    sid = (await lsp.request(protocol.SESSION_IMPORT, {"path": str(source)}))["sessionId"]
    stored = [
        json.loads(line)
        for line in (lsp.data_dir / "sessions" / f"{sid}.jsonl").read_text().splitlines()
    ]
    messages = [e["message"] for e in stored if e["type"] == "message"]
    uncounted = {m["id"] for m in messages if not m["tokens"]}
    assert uncounted
    await lsp.request(protocol.UNCOMPACT, {"sessionId": sid})  # counted in the lane first
    view = (await lsp.get(sid))["messages"]
    assert {m["id"] for m in view} & uncounted
    assert all(m["tokens"] > 0 for m in view)
    summary = view[0]  # the compaction before the one undone
    assert summary["kind"] == "summary"
    replaced = await lsp.request(
        protocol.SESSION_REPLACED, {"sessionId": sid, "boundaryId": summary["boundaryId"]}
    )
    shown = replaced["messages"]
    assert {m["id"] for m in shown} & uncounted
    assert all(m["tokens"] > 0 for m in shown)


async def test_an_import_answers_what_it_skipped_and_repaired(lsp: Harness, tmp_path: Path) -> None:
    """The notes `baton import` prints come with the answer: a client has no other way to
    learn that the file's last line was cut short (Claude Code still writing it) and left
    out, or that two Claude Code sessions were joined."""
    source = tmp_path / "torn.jsonl"
    with source.open("w", encoding="utf-8") as out:
        for seed in (1, 2):  # two files, two session ids
            for record in generate(seed, era="newest", turns=4, repairs=False).records:
                out.write(json.dumps(record) + "\n")
        out.write('{"type": "user", "message": {"role": "us')  # torn mid-write
    lines = len(source.read_text().splitlines())

    imported = await lsp.request(protocol.SESSION_IMPORT, {"path": str(source)})

    assert imported["notes"][:2] == [
        "2 Claude Code session ids joined in one session",
        f"skipped 1 unreadable line(s): line {lines}",
    ]
    clean = generate(3, era="old", repairs=False).write(tmp_path / "clean.jsonl")
    assert (await lsp.request(protocol.SESSION_IMPORT, {"path": str(clean)}))["notes"] == []

    many = tmp_path / "many.jsonl"  # 60 results of calls the file does not hold: 60 repairs
    orphans = [
        {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": "x"} for n in range(60)
    ]
    records = [{"type": "user", "uuid": "u1", "message": {"role": "user", "content": "hi"}}]
    records += [
        {"type": "user", "uuid": f"r{n}", "message": {"role": "user", "content": [result]}}
        for n, result in enumerate(orphans)
    ]
    many.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    notes = (await lsp.request(protocol.SESSION_IMPORT, {"path": str(many)}))["notes"]
    assert len(notes) == 50 and notes[-1] == "11 more notes (`baton import` lists them all)"


async def test_importing_a_file_again_says_it_was_imported_before(
    lsp: Harness, tmp_path: Path
) -> None:
    """As `baton import --again` does: the second import is another copy, and the answer
    names the earlier one (the panel would otherwise list two alike with no word why)."""
    source = generate(4, era="old", repairs=False).write(tmp_path / "again.jsonl")
    first = await lsp.request(protocol.SESSION_IMPORT, {"path": str(source)})
    second = await lsp.request(protocol.SESSION_IMPORT, {"path": str(source)})

    assert second["sessionId"] != first["sessionId"]
    assert second["notes"] == [
        f"another copy: this file was imported before as {first['sessionId']}",
        *first["notes"],
    ]


async def test_a_folder_or_a_fifo_named_for_import_is_refused_as_what_it_is(
    lsp: Harness, tmp_path: Path
) -> None:
    """'no file at' sent the user looking for a missing file where a folder of sessions (or
    a FIFO) was; `baton import` says what it is, and so does the request."""
    folder = tmp_path / "projects"
    folder.mkdir()
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    missing = tmp_path / "gone.jsonl"
    for path, said in (
        (folder, f"{str(folder)!r} is a directory, not a Claude Code session file"),
        (fifo, f"{str(fifo)!r} is a FIFO, not a Claude Code session file"),
        (missing, f"no file at {str(missing)!r}"),
    ):
        error = await lsp.error(protocol.SESSION_IMPORT, {"path": str(path)})
        assert error.message == said
        assert error.baton_code == "invalid_params"


async def test_an_import_while_baton_import_imports_the_file_waits_and_says_another_copy(
    lsp: Harness,
) -> None:
    """The server's import of a file `baton import` was importing into the same data dir
    made a second session, its notes naming no earlier import: both looked for earlier
    imports before either's session was in place."""
    from test_import_at_once import held_import

    from baton.cli.main import EXAMPLE_SESSION

    cli = held_import(lsp.data_dir, EXAMPLE_SESSION)
    try:
        lsp.client.progress_reports.setdefault("import-held", [])
        importing = asyncio.ensure_future(
            lsp.request(
                protocol.SESSION_IMPORT,
                {"path": str(EXAMPLE_SESSION), "workDoneToken": "import-held"},
            )
        )
        while not any(
            v.get("message", "").startswith("Waiting") for v in progress_of(lsp, "import-held")
        ):
            assert not importing.done(), importing.result()
            await asyncio.sleep(0.02)
        out, err = await asyncio.to_thread(cli.communicate, b"\n", 60)
    finally:
        cli.kill()
        cli.wait()
    assert cli.returncode == 0, err
    sid = out.decode().splitlines()[0].split(" as session ")[1].split()[0]
    imported = await importing
    assert imported["notes"][0] == f"another copy: this file was imported before as {sid}"
    reports = [v for v in progress_of(lsp, "import-held") if v["kind"] == "report"]
    assert reports[0]["message"] == f"Waiting for another import of {EXAMPLE_SESSION.name} to end"
