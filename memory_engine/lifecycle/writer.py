"""Asynchronous, batched memory writes (seed 000: "writes are asynchronous and
batched, one writer per user; a write failure is logged and queued, never
fails the user's request").

:class:`AsyncWriter` keeps one bounded queue and one worker thread per owner
(tenant + user), so one user's writes apply in submission order and never
race each other, while different users write in parallel. ``submit`` only
validates and enqueues; when a user's queue is full it blocks up to
``put_timeout_s`` and then raises :class:`WriterBackpressure` (back-pressure,
nothing is dropped silently). A worker takes up to ``batch_size`` requests at a
time and applies them:

* ``pipeline`` mode: the texts are embedded in one batched call (which warms
  the engine's embedding cache), then each request runs the engine's full
  write pipeline (``eng.add``: rules, dedup, supersede, candidates, facts);
* ``events`` mode (:func:`ingest_events`): an episodic event log - every
  request becomes its own timestamped record (PII redaction, chit-chat
  rejection and importance still apply; no dedup or supersede), embedded and
  upserted as one batch. Record ids derive from request ids, so a retried
  batch rewrites the same points and never duplicates.

A failing apply is retried with exponential back-off (tenacity); after
``max_attempts`` the requests are appended to a JSON-lines dead-letter file
that :func:`replay_dead_letters` (``memwb replay-dead-letters``) re-applies.
Retrieval never waits for the queue: it reads the store directly.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import queue
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from ..errors import MemoryEngineError, ValidationError, WriterBackpressure
from ..models import MemoryRecord, MemoryType, WriteOutcome, WriteResult, from_epoch
from ..observability.tracing import SPAN_WRITE, set_attrs
from ..paths import workspace_paths
from ..validation import (
    check_write_bounds,
    epoch_now,
    parse_memory_type,
    require_owner,
    require_role,
    require_text,
)
from ..write import rules
from ..write.records import build_record, upsert_records

if TYPE_CHECKING:
    from ..ports import Adder, Host

log = logging.getLogger(__name__)

__all__ = [
    "AsyncWriter",
    "ReplayReport",
    "WriteMode",
    "WriteRequest",
    "WriterBackpressure",
    "WriterStats",
    "apply_pipeline",
    "ingest_events",
    "purge_dead_letters",
    "replay_dead_letters",
]

class WriteMode(StrEnum):
    """How queued requests are applied (see the module docstring)."""

    PIPELINE = "pipeline"
    EVENTS = "events"



@dataclass(frozen=True)
class WriteRequest:
    """One queued write: the arguments of ``eng.add`` plus ``request_id`` and
    ``at`` (epoch seconds of the event: the caller's ``now`` or the submit time)."""

    request_id: str
    text: str
    user_id: str
    tenant_id: str = "default"
    session_id: str | None = None
    role: str = "user"
    memory_type: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    fact: dict[str, Any] | None = None
    at: float = 0.0
    permanent: bool = False

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> WriteRequest:
        names = set(cls.__dataclass_fields__)
        unknown = set(d) - names
        if unknown:
            raise ValidationError(f"unknown fields {sorted(unknown)}")
        return cls(**d)


@dataclass(frozen=True)
class WriterStats:
    """Counters since the writer started: requests submitted, applied (a result
    came back, including ``rejected``), retried (extra attempts), dead-lettered,
    and still queued or in flight."""

    submitted: int
    applied: int
    retried: int
    dead_lettered: int
    queued: int
    workers: int


@dataclass(frozen=True)
class ReplayReport:
    """Outcome of :func:`replay_dead_letters`: requests applied, still failing
    (kept in the file), and malformed lines (kept, with their line numbers)."""

    replayed: int
    failed: int
    malformed_lines: tuple[int, ...] = ()
    results: tuple[WriteResult, ...] = ()


def _request_record_id(request_id: str) -> str:
    return hashlib.sha256(request_id.encode()).hexdigest()[:16]


def _add_kwargs(r: WriteRequest) -> dict[str, Any]:
    return dict(user_id=r.user_id, tenant_id=r.tenant_id, session_id=r.session_id, role=r.role,
                memory_type=r.memory_type, metadata=dict(r.metadata), fact=r.fact, now=from_epoch(r.at),
                permanent=r.permanent)


def apply_pipeline(eng: Adder, requests: Sequence[WriteRequest]) -> list[WriteResult]:
    """Apply requests in order through ``eng.add`` after one batched embedding
    call over their cleaned texts (so each ``add`` finds its vector in the cache).
    Raises what ``eng.add`` raises (the first failure stops the batch)."""
    texts = []
    cleaner = eng.write_pipeline.clean
    for r in requests:
        clean = cleaner(r.text).text
        if clean and not rules.reject_reason(clean, eng.config.write):
            texts.append(clean)
    if texts:
        eng.embedder.embed_documents(sorted(set(texts)))
    return [eng.add(r.text, **_add_kwargs(r)) for r in requests]


def ingest_events(eng: Host, requests: Sequence[WriteRequest]) -> list[WriteResult]:
    """Write each request as its own episodic event record (the caller's
    ``memory_type`` hint wins), one embedding call and one upsert per batch.

    Rules still applied: owner required, PII redaction, chit-chat / one-off
    rejection (outcome ``rejected``), importance score (seed 000). No dedup,
    supersede or candidate pool: this is the event log, not the semantic
    pipeline. Record id = first 16 hex digits of sha256(request_id), so
    re-applying a request overwrites its own record. Emits one
    ``memory.write`` span per request. Raises StoreError/EmbeddingError.
    """
    wcfg = eng.config.write
    cleaner = eng.write_pipeline.clean
    results: list[WriteResult | None] = [None] * len(requests)
    recs: list[MemoryRecord] = []
    for i, r in enumerate(requests):
        cleaned = cleaner(r.text)
        clean, kinds = cleaned.text, cleaned.redactions
        reason = rules.reject_reason(clean, wcfg)
        if reason:
            results[i] = WriteResult(WriteOutcome.REJECTED.value, None, reason, redactions=kinds)
            continue
        sig = rules.signals(clean)
        mtype = MemoryType(r.memory_type) if r.memory_type else MemoryType.EPISODIC
        # events keep the time they were written at; no date resolution (an event log, not the semantic pipeline)
        rec = build_record(clean, tenant_id=r.tenant_id, user_id=r.user_id, memory_type=mtype,
                           embedding_version=eng.embedding_version, ts=r.at, session_id=r.session_id, role=r.role,
                           metadata={**cleaner.value(r.metadata), "_request_id": r.request_id},
                           importance=rules.importance(clean, sig, wcfg), permanent=r.permanent,
                           record_id=_request_record_id(r.request_id), resolve_dates=False)
        recs.append(rec)
        results[i] = WriteResult(WriteOutcome.STORED.value, rec.id, "event", importance=rec.importance,
                                 memory_type=mtype.value, redactions=kinds)
    if recs:
        upsert_records(eng.store, recs, eng.embedder.embed_documents([r.content for r in recs]), eng.config.keyword)
    for i, r in enumerate(requests):
        res = results[i]
        assert res is not None
        with eng.tracing.tracer.start_as_current_span(SPAN_WRITE) as span:
            set_attrs(span, {"memory.tenant_id": r.tenant_id, "memory.user_id": r.user_id,
                             "memory.session_id": r.session_id, "memory.id": res.memory_id,
                             "memory.type": res.memory_type, "memory.write_outcome": res.outcome,
                             "memory.reject_reason": res.reason if res.outcome == "rejected" else None,
                             "memory.importance": res.importance, "memory.config_hash": eng.config_hash,
                             "memory.embedding_version": eng.embedding_version, "memory.write_mode": "events"})
    return [r for r in results if r is not None]


_APPLIERS: dict[WriteMode, Callable[[Any, Sequence[WriteRequest]], list[WriteResult]]] = {
    WriteMode.PIPELINE: apply_pipeline,
    WriteMode.EVENTS: ingest_events,
}


class _DeadLetters:
    """The dead-letter file. With ``clean`` (the write stage's cleaner) every text, metadata and fact
    value of a request and the error message are redacted before they reach the disk: a replay stores
    exactly what the write would have stored, and no raw PII sits in the file meanwhile."""

    def __init__(self, path: Path, clean: Any = None) -> None:
        self.path = path
        self.clean = clean
        self._lock = threading.Lock()

    def _entry(self, r: WriteRequest, error: str) -> dict[str, Any]:
        req = r.to_json()
        if self.clean is not None and self.clean.redact_pii:  # owner and request ids stay as they are
            req["text"] = self.clean.value(req["text"])
            req["metadata"] = self.clean.value(req["metadata"])
            if req.get("fact") is not None:
                req["fact"] = {**req["fact"], "value": self.clean.value(req["fact"].get("value"))}
            error = self.clean.value(error)
        return {"request": req, "error": error}

    def append(self, reqs: Sequence[WriteRequest], error: BaseException, attempts: int, ts: float) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        msg = f"{type(error).__name__}: {error}"
        lines = [json.dumps(self._entry(r, msg) | {"attempts": attempts, "failed_at": ts}, ensure_ascii=False)
                 for r in reqs]
        with self._lock, self.path.open("a", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
            f.flush()
            os.fsync(f.fileno())


class _Worker:
    def __init__(self, key: tuple[str, str], maxsize: int) -> None:
        self.key = key
        self.queue: queue.Queue[WriteRequest] = queue.Queue(maxsize=maxsize)
        self.pending = 0  # submitted and not yet finished (guarded by the writer lock)
        self.thread: threading.Thread | None = None


class AsyncWriter:
    """One bounded queue and worker thread per owner; see the module docstring.

    ``batch_size``: requests applied together; ``max_queue``: queued requests
    per user before back-pressure; ``put_timeout_s``: how long ``submit``
    waits for room (0 = fail at once, None = wait forever); ``max_attempts``,
    ``backoff_s``, ``backoff_max_s``: retry policy (exponential back-off, in
    seconds) before a batch goes to ``dead_letter_path`` (default
    ``<workspace>/dead_letters.jsonl``); ``idle_exit_s``: an idle worker thread
    ends after this many seconds (a new submit starts another);
    ``on_result(request, result)`` is called for every applied request;
    ``apply`` replaces the mode's apply function (e.g. a remote write API).
    Raises ValueError for non-positive sizes.
    """

    def __init__(
        self,
        eng: Adder,
        *,
        mode: WriteMode | str = WriteMode.PIPELINE,
        batch_size: int = 64,
        max_queue: int = 1024,
        put_timeout_s: float | None = 5.0,
        max_attempts: int = 4,
        backoff_s: float = 0.05,
        backoff_max_s: float = 2.0,
        dead_letter_path: str | os.PathLike[str] | None = None,
        idle_exit_s: float = 30.0,
        on_result: Callable[[WriteRequest, WriteResult], None] | None = None,
        apply: Callable[[Any, Sequence[WriteRequest]], list[WriteResult]] | None = None,
    ) -> None:
        try:
            self.mode = WriteMode(mode)
        except ValueError as e:
            raise ValidationError(f"unknown write mode {mode!r}; valid: {', '.join(m.value for m in WriteMode)}",
                                  field="mode") from e
        if batch_size < 1 or max_queue < 1 or max_attempts < 1:
            raise ValidationError("batch_size, max_queue and max_attempts must be >= 1")
        self.eng = eng
        self.batch_size = batch_size
        self.max_queue = max_queue
        self.put_timeout_s = put_timeout_s
        self.max_attempts = max_attempts
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s
        self.idle_exit_s = idle_exit_s
        self.on_result = on_result
        self._apply = apply or _APPLIERS[self.mode]
        dl = Path(dead_letter_path) if dead_letter_path else workspace_paths(eng.config).dead_letters
        self.dead_letters = _DeadLetters(dl, getattr(getattr(eng, "write_pipeline", None), "clean", None))
        self._workers: dict[tuple[str, str], _Worker] = {}
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._closed = False
        self._submitted = self._applied = self._retried = self._dead = 0

    @property
    def dead_letter_path(self) -> Path:
        return self.dead_letters.path

    # ---------------------------------------------------------------- submit
    def submit(
        self,
        text: str,
        *,
        user_id: str,
        tenant_id: str = "default",
        session_id: str | None = None,
        role: str = "user",
        memory_type: str | None = None,
        metadata: dict[str, Any] | None = None,
        fact: dict[str, Any] | None = None,
        now: datetime | None = None,
        permanent: bool = False,
        request_id: str | None = None,
    ) -> str:
        """Validate and enqueue one write; returns its request id.

        Raises ValidationError at once (nothing queued) for a missing owner, a
        non-string text, an unknown role or memory type; WriterBackpressure
        when the user's queue stays full; MemoryEngineError after close().
        """
        user_id, tenant_id = require_owner(user_id, tenant_id)
        require_text(text)
        require_role(role)
        parse_memory_type(memory_type)
        limits = getattr(getattr(self.eng, "config", None), "limits", None)
        if limits is not None:
            check_write_bounds(limits, text=text, user_id=user_id, tenant_id=tenant_id, session_id=session_id,
                               metadata=metadata, fact=fact)
        req = WriteRequest(request_id or secrets.token_hex(12), text, user_id, tenant_id, session_id, role,
                           str(memory_type) if memory_type else None, dict(metadata or {}), fact, epoch_now(now),
                           permanent)
        self.put(req)
        return req.request_id

    def put(self, req: WriteRequest) -> None:
        """Enqueue a prepared request (used by ``submit`` and dead-letter replays)."""
        key = (req.tenant_id, req.user_id)
        with self._lock:
            if self._closed:
                raise MemoryEngineError("the writer is closed")
            w = self._workers.get(key)
            if w is None:
                w = self._workers[key] = _Worker(key, self.max_queue)
            w.pending += 1
            self._submitted += 1
            if w.thread is None:
                w.thread = threading.Thread(target=self._run, args=(w,), name=f"memwb-writer-{req.user_id}",
                                            daemon=True)
                w.thread.start()
        try:
            if self.put_timeout_s == 0:
                w.queue.put_nowait(req)
            else:
                w.queue.put(req, timeout=self.put_timeout_s)
        except queue.Full as e:
            with self._lock:
                w.pending -= 1
                self._submitted -= 1
                self._idle.notify_all()
            raise WriterBackpressure(
                f"write queue of user {req.user_id!r} is full ({self.max_queue} requests) for {self.put_timeout_s}s"
            ) from e

    # ---------------------------------------------------------------- worker
    def _run(self, w: _Worker) -> None:
        while True:
            try:
                first = w.queue.get(timeout=self.idle_exit_s)
            except queue.Empty:
                with self._lock:
                    if w.pending == 0 and w.queue.empty():
                        del self._workers[w.key]
                        w.thread = None
                        return
                continue
            batch = [first]
            while len(batch) < self.batch_size:
                try:
                    batch.append(w.queue.get_nowait())
                except queue.Empty:
                    break
            self._apply_batch(batch)
            with self._lock:
                w.pending -= len(batch)
                self._idle.notify_all()

    def _apply_batch(self, batch: list[WriteRequest]) -> None:
        attempts = 0

        def once() -> list[WriteResult]:
            nonlocal attempts
            attempts += 1
            return self._apply(self.eng, batch)

        retrying = Retrying(
            stop=stop_after_attempt(self.max_attempts),
            wait=wait_exponential(multiplier=self.backoff_s, max=self.backoff_max_s),
            retry=retry_if_exception(lambda e: not isinstance(e, ValidationError)),
            reraise=True,
        )
        try:
            results = retrying(once)
        except Exception as e:  # never raise into the caller's request: log and dead-letter (seed 000)
            log.warning("write batch of %d for %s failed after %d attempts: %s", len(batch), batch[0].user_id,
                        attempts, self.dead_letters.clean.value(str(e)) if self.dead_letters.clean else e)
            try:
                self.dead_letters.append(batch, e, attempts, time.time())
            except OSError:
                log.exception("dead-letter file %s is not writable; %d requests lost", self.dead_letters.path,
                              len(batch))
            with self._lock:
                self._retried += attempts - 1
                self._dead += len(batch)
            return
        with self._lock:
            self._retried += attempts - 1
            self._applied += len(batch)
        if self.on_result:
            for r, res in zip(batch, results, strict=True):
                with contextlib.suppress(Exception):
                    self.on_result(r, res)

    # ---------------------------------------------------------------- control
    def stats(self) -> WriterStats:
        with self._lock:
            return WriterStats(self._submitted, self._applied, self._retried, self._dead,
                               sum(w.pending for w in self._workers.values()), len(self._workers))

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every submitted request is applied or dead-lettered; False on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            while any(w.pending for w in self._workers.values()):
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._idle.wait(left)
            return True

    def close(self, timeout: float | None = None) -> bool:
        """Stop accepting writes and drain the queues (``flush``); True when drained."""
        with self._lock:
            self._closed = True
        return self.flush(timeout)

    def __enter__(self) -> AsyncWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def purge_dead_letters(path: str | os.PathLike[str], user_id: str, *, tenant_id: str = "default") -> int:
    """Remove the owner's requests from a dead-letter file (erase); other lines, malformed ones included,
    are kept byte for byte. The file is rewritten through a temporary file and an atomic rename. Returns
    how many requests went (0 when the file does not exist)."""
    p = Path(path)
    if not p.exists():
        return 0
    kept: list[str] = []
    gone = 0
    for line in p.read_text(encoding="utf-8").splitlines(keepends=True):
        try:
            req = json.loads(line).get("request") or {}
        except (ValueError, AttributeError):
            kept.append(line)
            continue
        if req.get("user_id") == user_id and (req.get("tenant_id") or "default") == tenant_id:
            gone += 1
        else:
            kept.append(line)
    if gone:
        tmp = p.with_suffix(p.suffix + ".tmp")
        tmp.write_text("".join(kept), encoding="utf-8")
        os.replace(tmp, p)
    return gone


def replay_dead_letters(
    eng: Adder,
    path: str | os.PathLike[str],
    *,
    mode: WriteMode | str = WriteMode.PIPELINE,
    apply: Callable[[Any, Sequence[WriteRequest]], list[WriteResult]] | None = None,
) -> ReplayReport:
    """Re-apply every request of a dead-letter file, one at a time, synchronously.

    Applied requests leave the file; failing ones stay (with the new error and
    attempt count) and malformed lines stay verbatim, reported by line number;
    the file is rewritten atomically and removed when empty. A missing file
    replays nothing. ``mode`` must match how the requests were first written
    (``events`` requests keep their record ids, so a replay never duplicates).
    """
    p = Path(path)
    if not p.exists():
        return ReplayReport(0, 0)
    fn = apply or _APPLIERS[WriteMode(mode)]
    keep: list[str] = []
    malformed: list[int] = []
    results: list[WriteResult] = []
    replayed = failed = 0
    for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            req = WriteRequest.from_json(entry["request"])
        except (ValueError, KeyError, TypeError):
            malformed.append(n)
            keep.append(line)
            continue
        try:
            results.extend(fn(eng, [req]))
            replayed += 1
        except Exception as e:
            failed += 1
            entry.update(error=f"{type(e).__name__}: {e}", attempts=int(entry.get("attempts", 0)) + 1)
            keep.append(json.dumps(entry, ensure_ascii=False))
    if keep:
        tmp = p.with_suffix(p.suffix + ".tmp")
        tmp.write_text("\n".join(keep) + "\n", encoding="utf-8")
        tmp.replace(p)
    else:
        p.unlink()
    return ReplayReport(replayed, failed, tuple(malformed), tuple(results))
