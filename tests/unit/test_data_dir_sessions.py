"""Many sessions, and transcripts another program replaces or deletes (issue 26).

A list opens no session (it reads the index), shows what a full replay would, and follows
files that grew; open sessions are bounded; before each append the file held is checked
to still be the one on disk, so nothing is ever acknowledged into a file that is gone."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conversations import summary_boundary

from baton.core.conversation.messages import ApiUsage, MessageInput
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.conversation.transcript import Transcript
from baton.core.errors import SessionLocked, SessionNotFound, StorageError, TranscriptChanged
from baton.core.settings import Settings
from baton.core.usage.estimator import Estimator
from baton.core.usage.session_usage import compute_usage

SEED = int(os.environ.get("BATON_SEED", "20261201"))


def say(text: str, mid: str | None = None) -> MessageInput:
    return MessageInput(id=mid, role="user", content=text)


def reply(text: str, mid: str | None = None, usage: ApiUsage | None = None) -> MessageInput:
    return MessageInput(id=mid, role="assistant", content=text, usage=usage)


def descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def random_session(store: SessionStore, rng: random.Random, n: int) -> Session:
    session = store.create(title=f"t{n}", model=rng.choice(["m1", "m2"]))
    for turn in range(rng.randint(1, 4)):
        session.append([say(f"p{n}.{turn} " * rng.randint(1, 30)), reply(f"a{n}.{turn}")])
        if rng.random() < 0.3:
            session.set_meta(title=f"renamed {n}.{turn}")
        if rng.random() < 0.3 and len(session.view) >= 4:
            session.commit_boundary(summary_boundary(session, session.view[:2]))
        if rng.random() < 0.2 and session.active:
            session.uncompact()
    return session


def shown(item: object) -> tuple[object, ...]:
    fields = ("session_id", "title", "model", "created_at", "updated_at", "compactions")
    damaged = bool(item.damage.any)  # type: ignore[attr-defined]
    return (*(getattr(item, name) for name in fields), damaged)


# ---- the list (item 4) ----------------------------------------------------------------------


def test_a_list_shows_what_a_full_replay_would_and_opens_no_session(
    store: SessionStore, estimator: object
) -> None:
    rng = random.Random(SEED)
    made = [random_session(store, rng, n) for n in range(40)]
    store.delete(made[3].session_id)
    replayed = sorted((shown(s) for s in made if not s.deleted), key=str)
    store.close()
    fds = descriptors()

    listed = store.list()

    assert descriptors() == fds  # nothing left open
    assert store.open_ids() == []
    assert sorted(map(shown, listed), key=str) == replayed
    stamps = [s.updated_at for s in listed]
    assert stamps == sorted(stamps, reverse=True)  # most recently updated first
    fresh = SessionStore(store.data_dir, store.count)  # another process, its own index
    assert sorted(map(shown, fresh.list()), key=str) == replayed


def test_the_index_follows_a_file_that_grew_or_was_replaced(store: SessionStore) -> None:
    rng = random.Random(SEED + 1)
    session = random_session(store, rng, 1)
    sid = session.session_id
    store.close()
    assert [s.title for s in store.list()] == [session.title]

    other = SessionStore(store.data_dir, store.count)  # another Baton process appends
    grown = other.get(sid)
    grown.append([say("later")])
    grown.set_meta(title="grown")
    other.close()
    assert [(s.title, s.updated_at) for s in store.list()] == [("grown", grown.updated_at)]

    path = store.path_for(sid)
    copy = path.with_suffix(".tmp")
    shutil.copyfile(path, copy)
    with copy.open("ab") as handle:
        handle.write(b'{"type": "meta", "title": "replaced", "at": "2030-01-01T00:00:00Z"}\n')
    copy.replace(path)
    assert [(s.title, s.updated_at) for s in store.list()] == [("replaced", "2030-01-01T00:00:00Z")]


def test_open_sessions_are_bounded_and_an_evicted_one_still_writes(tmp_path: Path) -> None:
    store = SessionStore(tmp_path, lambda m: 1, max_open=4)
    fds = descriptors()
    sessions = [store.create(title=f"t{n}") for n in range(12)]
    assert len(store.open_ids()) == 4
    assert descriptors() - fds <= 4
    busy = sessions[8]
    busy.compacting = True  # in use: never closed under it
    store.in_use = lambda sid: sid == sessions[9].session_id
    for session in sessions[:4]:
        store.get(session.session_id)
    assert busy.session_id in store.open_ids() and sessions[9].session_id in store.open_ids()
    assert len(store.open_ids()) == 4
    # a session closed while a caller still holds it (a turn in progress) is the one
    # `get` hands back, and it writes into the same file: never two objects of one session
    held = sessions[5]
    assert held.session_id not in store.open_ids()
    assert store.get(held.session_id) is held
    held.append([say("held")])
    assert held.session_id in store.open_ids() and len(store.open_ids()) == 4
    # a caller that kept a released session still appends, into the same file
    evicted = sessions[0]
    store.release(evicted.session_id)
    evicted.append([say("still here")])
    store.close()
    assert [m.text() for m in store.get(evicted.session_id).view_messages()] == ["still here"]
    store.close()


def test_many_sessions_list_and_open_within_a_small_descriptor_limit(tmp_path: Path) -> None:
    """2,000 sessions under a limit of 256 descriptors (in a process of its own)."""
    script = textwrap.dedent(
        f"""
        import resource, sys
        from pathlib import Path
        from baton.core.conversation.messages import ApiUsage, MessageInput
        from baton.core.conversation.store import SessionStore
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
        store = SessionStore(Path({str(tmp_path)!r}), lambda m: 1)
        ids = []
        for n in range(2000):
            s = store.create(title=f"t{{n}}")
            s.append([MessageInput(role="user", content=f"hello {{n}}")])
            ids.append(s.session_id)
        listed = store.list()
        assert len(listed) == 2000, len(listed)
        for sid in ids:
            store.get(sid)
        store.create(title="one more")
        assert len(store.list()) == 2001
        print("ok", len(store.open_ids()))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[0] == "ok" and int(done.stdout.split()[1]) <= store_bound()


def store_bound() -> int:
    from baton.core.conversation.store import MAX_OPEN

    return MAX_OPEN


# ---- the file changed under an open session (item 5) -----------------------------------------


def acknowledged(store: SessionStore, sid: str) -> list[str]:
    store.close()
    return [m.text() for m in store.get(sid).view_messages()]


def test_a_safe_save_replacing_the_file_loses_nothing_acknowledged(store: SessionStore) -> None:
    session = store.create(title="saved")
    session.append([say("one"), reply("two")])
    path = session.transcript.path
    copy = path.with_suffix(".tmp")  # cp f f.tmp; mv f.tmp f
    shutil.copyfile(path, copy)
    copy.rename(path)

    session.append([say("three")])  # re-read, then written into the file that is there

    assert session.transcript.path.stat().st_ino == path.stat().st_ino
    assert acknowledged(store, session.session_id) == ["one", "two", "three"]


def test_usage_after_a_safe_save_is_the_new_files_not_a_figure_kept_from_before(
    store: SessionStore, settings: Settings, estimator: Estimator
) -> None:
    """A session read again starts its events over; a revision must never repeat, or the
    usage kept for the old file (as many events in) answers for the new one."""
    session = store.create(title="saved")
    for n in range(1, 5):
        session.append([say(f"p{n} " * 40 * n, f"u{n}"), reply(f"a{n} " * 40 * n, f"a{n}")])
    before = compute_usage(session, settings, estimator).used_tokens
    path = session.transcript.path
    kept = [line for line in path.read_bytes().splitlines(keepends=True) if b'"u4"' not in line]
    copy = path.with_suffix(".tmp")  # another program drops turn 4: copy, then rename over
    copy.write_bytes(b"".join(line for line in kept if b'"a4"' not in line))
    copy.rename(path)

    session.append([say("p5", "u5"), reply("a5", "a5")])  # read again, then written

    fresh = Session(Transcript.open(path, writable=False), estimator.count_message)
    truth = compute_usage(fresh, settings, estimator).used_tokens
    assert truth < before
    assert compute_usage(session, settings, estimator).used_tokens == truth
    fresh.transcript.close()


def test_a_file_another_program_appended_to_is_read_again_first(store: SessionStore) -> None:
    session = store.create(title="grown")
    session.append([say("one"), reply("two")])
    with session.transcript.path.open("ab") as handle:
        handle.write(b'{"type": "meta", "title": "from elsewhere", "at": "2030-01-01T00:00:00Z"}\n')
    session.append([say("three")])
    assert session.title == "from elsewhere"
    assert acknowledged(store, session.session_id) == ["one", "two", "three"]


@pytest.mark.parametrize("how", ["rm -rf", "unlink", "truncate"])
def test_a_deleted_or_truncated_file_is_never_acknowledged_into(
    store: SessionStore, how: str
) -> None:
    session = store.create(title="doomed")
    session.append([say("one"), reply("two")])
    sid, path = session.session_id, session.transcript.path
    if how == "rm -rf":
        shutil.rmtree(store.data_dir)
    elif how == "unlink":
        path.unlink()
    else:
        os.truncate(path, 0)

    with pytest.raises(TranscriptChanged) as caught:
        session.append([say("three")])
    assert str(path) in caught.value.message
    assert session.read_only
    with pytest.raises((StorageError, SessionLocked, TranscriptChanged)):  # and again
        session.append([say("four")])
    if how == "truncate":
        assert path.read_bytes() == b""
        assert store.get(sid).damage.header_missing
    else:
        assert not path.exists()
        with pytest.raises(SessionNotFound):
            store.get(sid)


def test_a_file_rewritten_in_place_without_growing_is_summarized_again(
    store: SessionStore,
) -> None:
    """Two lines swapped by an editor that saves over the file (same inode, same size, the
    bytes before the end unchanged): the index took it for one that only grew and kept
    listing "title two" where a replay reads "title one"."""
    session = store.create(title="x")
    sid, path = session.session_id, session.transcript.path
    store.rename(sid, "title one")
    store.rename(sid, "title two")
    session.append([say("one"), reply("two")])
    store.release(sid)
    assert next(s for s in store.list() if s.session_id == sid).title == "title two"
    lines = path.read_bytes().splitlines(keepends=True)
    i = next(n for n, line in enumerate(lines) if b'"title one"' in line)
    lines[i], lines[i + 1] = lines[i + 1], lines[i]
    st = path.stat()
    with path.open("r+b") as handle:  # in place: same inode, same size
        handle.write(b"".join(lines))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # whatever the clock

    listed = next(s for s in store.list() if s.session_id == sid)

    assert listed.title == store.get(sid).title == "title one"


def test_a_held_session_closed_to_stay_within_max_open_sees_an_in_place_rewrite(
    tmp_path: Path,
) -> None:
    """A session closed because another was opened past `max_open`, still held by a caller,
    missed its file saved over itself in place at the same size: the check at its next
    `get` compared the file's identity and size only (the one before an append compared
    its mtime too), so the get showed the old text. Both checks are one rule now."""
    store = SessionStore(tmp_path, lambda m: 1, max_open=1)
    held = store.create("held")
    held.append([say("the word is alpha")])
    store.create("other")  # past max_open: `held` is closed, its caller keeps it
    assert held.session_id not in store.open_ids()
    path = held.transcript.path
    data, st = path.read_bytes(), path.stat()
    with path.open("r+b") as handle:  # in place: same inode, same size
        handle.write(data.replace(b"alpha", b"omega"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # whatever the clock

    got = store.get(held.session_id)

    assert got is held
    assert [m.text() for m in got.view_messages()] == ["the word is omega"]
    got.append([say("next")])  # what it holds now is the file's: the append goes on
    assert [m.text() for m in got.view_messages()] == ["the word is omega", "next"]
    store.close()


def test_a_list_out_of_time_shows_headers_and_the_next_one_completes_them(
    store: SessionStore,
) -> None:
    rng = random.Random(SEED + 2)
    made = [random_session(store, rng, n) for n in range(5)]
    for session in made:
        session.set_meta(title=f"late {session.session_id}")
    store.close()

    hurried = store._index.summaries(store.sessions_dir, seconds=0)  # no time for any body
    assert sorted(s.title for s in hurried) == sorted(f"t{n}" for n in range(5))  # headers
    assert sorted(s.title for s in store.list()) == sorted(s.title for s in made)


def test_lines_too_long_to_parse_are_summarized_from_their_ends(store: SessionStore) -> None:
    rng = random.Random(SEED + 3)
    session = store.create(title="long")
    big = "".join(rng.choice("abcdefgh ") for _ in range(1_500_000))  # past LONG_LINE
    session.append([say(big), reply("short"), say("x"), reply(big)])
    session.commit_boundary(summary_boundary(session, session.view[:2], text=big))
    expected = shown(session)
    store.close()
    fds = descriptors()
    assert [shown(s) for s in store.list()] == [expected]
    assert descriptors() == fds


@pytest.mark.parametrize("separators", [(",", ":"), (", ", ": ")])  # now, and before
def test_long_lines_are_read_from_their_ends_whichever_separators_wrote_them(
    store: SessionStore, separators: tuple[str, str]
) -> None:
    """Baton wrote its lines with `json.dumps`'s spaced separators and writes them compact
    now: the list reads a line too long to parse the same from either."""
    rng = random.Random(SEED + 4)
    session = store.create(title="long")
    big = "".join(rng.choice("abcdefgh ") for _ in range(1_500_000))  # past LONG_LINE
    usage = ApiUsage(input_tokens=11, output_tokens=22, cache_read_input_tokens=33)
    session.append([say("x"), reply(big, usage=usage)])
    session.commit_boundary(summary_boundary(session, session.view[:2], text=big))
    session.append([say("y"), reply(big, usage=usage)])
    expected = (*shown(session), 66)
    path = session.transcript.path
    store.close()
    events = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text(
        "".join(json.dumps(e, ensure_ascii=False, separators=separators) + "\n" for e in events)
    )
    assert [(*shown(s), s.context_tokens) for s in store.list()] == [expected]
    [summary] = store.list()
    assert summary.compactions == 1


def test_a_listed_session_counts_its_compactions_as_an_open_one_does(
    store: SessionStore,
) -> None:
    """A rewind is not a compaction (PROTOCOL.md), nor is an idle microcompaction: the
    index counted the rewind (1 where the session says 0)."""
    session = store.create(title="rewound")
    for n in range(3):
        session.append([say(f"p{n}", f"u{n}"), reply(f"a{n}", f"a{n}")])
    session.commit_boundary(summary_boundary(session, session.view[:2]))
    session.rewind("u2")
    assert session.compactions == 1
    sid = session.session_id
    store.release(sid)

    listed = next(s for s in store.list() if s.session_id == sid)

    assert listed.compactions == session.compactions == 1


@pytest.mark.parametrize("summary_chars", [100, 2 << 20])  # parsed, and too long to parse
def test_a_compaction_is_activity_its_session_moves_up_the_list(
    store: SessionStore, summary_chars: int
) -> None:
    early = store.create(title="early")
    early.append([say("one"), reply("two"), say("three"), reply("four")])
    later = store.create(title="later")
    later.append([say("hello")])
    boundary = summary_boundary(early, early.view[:2], text="s" * summary_chars)
    boundary.created_at = "2099-01-01T00:00:00.000Z"
    early.commit_boundary(boundary)
    assert early.updated_at == boundary.created_at
    store.close()
    assert [s.title for s in store.list()] == ["early", "later"]
    assert store.list()[0].updated_at == boundary.created_at
    assert store.get(early.session_id).updated_at == boundary.created_at
