"""The session list's index: each transcript's summary (`transcript_summary.py`) kept per
file identity, one packed record per session, and brought up to date by each list; names
that are not regular files are listed as damaged, unread. The list is answered from its
summaries, the sessions open here as they are (`listed`)."""

from __future__ import annotations

import logging
import marshal
import os
import re
import stat
import threading
import time
from collections import Counter
from collections.abc import Container, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from baton.core.conversation.files import cause, kind_of, storage_error
from baton.core.conversation.summary_entry import Entry, Summary, odd
from baton.core.conversation.transcript_summary import identity, summarize
from baton.core.conversation.writer_lock import write_locked
from baton.core.errors import StorageError

if TYPE_CHECKING:
    from baton.core.conversation.session import Session

log = logging.getLogger(__name__)

SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")
LIST_SECONDS = 5.0  # after this, the rest of a list is summarized from the headers alone
__all__ = ["SESSION_ID", "SessionIndex", "Summary", "file_of", "listed"]


_FIELDS = tuple(Entry.__dataclass_fields__)


def _pack(entry: Entry) -> bytes:
    """One bytes object per session is all the index keeps (a list of 10,000 sessions then
    leaves a few MB behind, not tens of MB of small objects spread over the heap)."""
    fields = tuple(getattr(entry, name) for name in _FIELDS)
    key = entry.identity if entry.complete else 0  # an incomplete one is read again
    return key.to_bytes(8, "little") + marshal.dumps(fields)


def _unpack(data: bytes) -> Entry:
    return Entry(*marshal.loads(data[8:]))


def _packed_identity(data: bytes) -> int:
    return int.from_bytes(data[:8], "little")


class SessionIndex:
    """The summaries of one sessions folder, kept between lists (a few hundred bytes each).

    A list may bring it up to date in a worker thread while the event loop notes the sizes
    its changes leave: one list reads at a time (`_listing`), and the sizes are changed
    under `_lock` alone."""

    def __init__(self) -> None:
        self._listing = threading.Lock()
        self._lock = threading.Lock()
        self._entries: dict[str, bytes] = {}  # id -> the packed `Entry`
        # id -> (the context size its last change left, the file's `identity` then)
        self._sizes: dict[str, tuple[int, int]] = {}
        self._linked: set[str] = set()  # files a hard link gives a second name: never written
        self._reading: Counter[str] = Counter()  # sessions loads read (`being_read`), under `_lock`
        self._handed: dict[str, bytes] = {}  # id -> an import's packed entry (`note_written`)

    def note_size(self, session_id: str, tokens: int, file: int | None) -> None:
        """The context size a change of the session left (what its meter showed), for the
        file as `file` (its `identity`) says it was then: a file another process changed
        since (it wrote a reply, replaced the file) is read for its size again. None (the
        file is not the one the session read, or another process may write it) notes
        nothing, and forgets what was noted before."""
        with self._lock:
            if file is None:
                self._sizes.pop(session_id, None)
            else:
                self._sizes[session_id] = (tokens, file)

    def drop_size(self, session_id: str) -> None:
        """Forget a deleted session's size (its file stays, hidden; nothing lists it)."""
        with self._lock:
            self._sizes.pop(session_id, None)

    def size(self, session_id: str, file: int | None) -> int | None:
        """The last known context size of the file whose `identity` is `file` now: the
        last change's here while the file is as it left it, else the last reply's (from
        the transcript, when a list has read it); None when unknown."""
        noted = self._sizes.get(session_id)
        if noted is not None and noted[1] == file:
            return noted[0]
        packed = self._entries.get(session_id)
        tokens = _unpack(packed).tokens if packed is not None else -1
        return tokens if tokens >= 0 else None

    def summaries(
        self, folder: Path, seconds: float = LIST_SECONDS, held: Container[str] = ()
    ) -> list[Summary]:
        """Every `<id>.jsonl` of `folder` summarized; never opens anything but a regular
        file, and reads each one at most up to the size it had when the list began. A file
        with no whole line yet that a writer holds, not one of the sessions `held` here,
        is left out: another process is creating it, its header not yet written. The index
        is brought up to date first and the summaries made after, so that what a list
        leaves behind (the index) is not spread among what it drops."""
        with self._listing:
            return self._summaries(folder, seconds, held)

    def _summaries(self, folder: Path, seconds: float, held: Container[str]) -> list[Summary]:
        found = self._refresh(folder, seconds)
        locked = {hash(key) for key in write_locked()}  # the entries' `file` hashes
        out: list[Summary] = []
        for sid, problem in found:
            if problem:
                out.append(odd(sid, problem))
                continue
            entry = _unpack(self._entries[sid])
            if entry.first and not entry.bad_lines and entry.file in locked and sid not in held:
                continue  # no line yet, its writer's lock held elsewhere: a create under way
            summary = entry.summary(sid)
            noted = self._sizes.get(sid)  # `_refresh` kept only those of the file as it is
            if noted is not None:
                summary.context_tokens = noted[0]
            if entry.file in locked or sid in self._linked:  # open for writing elsewhere,
                summary.read_only = True  # or a file with a second name: read-only here
            out.append(summary)
        return out

    def _refresh(self, folder: Path, seconds: float) -> list[tuple[str, str]]:
        """(id, "") for each session, brought up to date in the index; (id, problem) for a
        name that cannot be read as one."""
        deadline = time.monotonic() + seconds
        seen: dict[str, bytes] = {}
        out: list[tuple[str, str]] = []
        self._linked = set()
        try:
            entries = os.scandir(folder)  # one entry at a time (each holds its stat)
        except (FileNotFoundError, NotADirectoryError):
            return out  # no sessions yet (the start's warning names a data dir that cannot be)
        except OSError as exc:
            raise storage_error("list the sessions in", folder, exc) from None
        with entries:
            for found in entries:
                self._refresh_one(found, deadline, seen, out)
        self._entries = seen
        with self._lock:  # the sizes of files gone are forgotten
            self._sizes = {sid: n for sid, n in self._sizes.items() if sid in seen}
        return out

    def _refresh_one(
        self,
        found: os.DirEntry[str],
        deadline: float,
        seen: dict[str, bytes],
        out: list[tuple[str, str]],
    ) -> None:
        name = found.name
        if not name.endswith(".jsonl") or not SESSION_ID.fullmatch(name[:-6]):
            return
        sid = name[:-6]
        try:
            st = found.stat(follow_symlinks=False)
        except FileNotFoundError:
            return
        except OSError as exc:  # a folder that may be read but not searched
            out.append((sid, f"{name} cannot be read: {cause(exc)}"))
            return
        if not stat.S_ISREG(st.st_mode):
            out.append((sid, f"{name} is {kind_of(st.st_mode)}, not a regular file; not read"))
            return
        if st.st_nlink > 1:
            self._linked.add(sid)
        packed = self._entries.get(sid)
        key = identity(st)
        with self._lock:
            noted = self._sizes.get(sid)
            if noted is not None and noted[1] != key:
                del self._sizes[sid]  # noted for the file as it was: another process changed it
            loading = sid in self._reading
            handed = self._handed.pop(sid, None)
        if handed is not None and (packed is None or _packed_identity(packed) != key):
            packed = handed  # the file as its import left it: a list goes on from there
        try:
            if loading and packed is not None and _packed_identity(packed) != key:
                last = _unpack(packed)  # as last read: the load's summary takes its place
                last.complete = False
                packed = _pack(last)
            elif packed is None or _packed_identity(packed) != key:
                before = _unpack(packed) if packed is not None else None
                whole = time.monotonic() < deadline and not loading  # a load's: its header
                entry = summarize(found.path, st, before, whole=whole, deadline=deadline)
                packed = _pack(entry)
        except FileNotFoundError:
            return  # removed since its entry was seen: no session to list
        except (OSError, StorageError) as exc:
            why = exc.message if isinstance(exc, StorageError) else cause(exc)
            out.append((sid, f"{name} cannot be read: {why}"))
            return
        seen[sid] = packed
        out.append((sid, ""))

    @contextmanager
    def being_read(self, session_id: str) -> Iterator[None]:
        """While a caller (a load) reads the session whole in a worker thread, its entry
        brought up to date there first (`note_read`, 0.3-0.6 s for 100,000 messages): a
        list meanwhile does not read it but lists it from its last entry, or from its
        header alone (`Summary.partial`), and leaves the rest to the load."""
        with self._lock:
            self._reading[session_id] += 1
        try:
            yield
        finally:
            with self._lock:
                self._reading[session_id] -= 1
                if not self._reading[session_id]:
                    del self._reading[session_id]

    def note_read(self, folder: Path, session_id: str) -> None:
        """One session's entry brought up to date as a list would, for a caller about to
        read its transcript whole in a worker thread (a load, `being_read`): the next
        list reads no more of it than was appended since. A file a list would not read is
        left to the list, which says why. The summary is made with no list waiting."""
        path = folder / f"{session_id}.jsonl"
        try:
            with self._listing:
                st = os.lstat(path)
                packed = self._entries.get(session_id)
                if not stat.S_ISREG(st.st_mode) or (
                    packed is not None and _packed_identity(packed) == identity(st)
                ):
                    return
            before = _unpack(packed) if packed is not None else None
            entry = summarize(str(path), st, before, whole=True, give_way=self._after_list)
            with self._listing:
                self._entries[session_id] = _pack(entry)
        except (OSError, StorageError) as exc:
            log.debug("%s: left to the list: %s", path.name, exc)

    def note_written(self, session_id: str, entry: Entry) -> None:
        """The entry made from all its writer wrote (an import's, `written_summary`): the
        next list reads none of the file. A list under way is not waited for: the entry is
        handed to the next one that finds the file (this one, if it has not yet)."""
        if not self._listing.acquire(blocking=False):
            with self._lock:
                self._handed[session_id] = _pack(entry)
            return
        try:
            packed = self._entries.get(session_id)
            if packed is None or _packed_identity(packed) != entry.identity:
                self._entries[session_id] = _pack(entry)
        finally:
            self._listing.release()

    def _after_list(self) -> None:
        """Wait for a list under way: both reading at once, each waits for the other at
        every read (the interpreter switching between them every 5 ms at best)."""
        if self._listing.locked():
            with self._listing:
                pass

    def forget(self, session_id: str) -> None:
        self._entries.pop(session_id, None)
        with self._lock:
            self._sizes.pop(session_id, None)


def file_of(session: Session | None) -> int | None:
    """The list index's identity of the file `session` holds, as the session left it; None
    when it is not so (or the session is another process's)."""
    st = session.transcript.file_state() if session is not None else None
    return identity(st) if st is not None else None


def listed(
    summaries: list[Summary] | None, held: Mapping[str, Session], folder: Path
) -> list[Session | Summary]:
    """The list of the `summaries` read from the sessions `folder`: the sessions open here
    (`held`) as they are, most recently updated first."""
    out: list[Session | Summary] = []
    if summaries is None:
        return out
    writable = os.access(folder, os.W_OK)  # a read-only data dir: all read-only
    for summary in summaries:
        summary.read_only = summary.read_only or not writable
        session = held.get(summary.session_id)
        if session is not None and not session.transcript.read_only:
            if not session.deleted:
                out.append(session)
            continue
        if session is not None and session.transcript.locked:
            summary.read_only = True
        if not summary.deleted:
            out.append(summary)
    return sorted(out, key=lambda s: s.updated_at, reverse=True)
