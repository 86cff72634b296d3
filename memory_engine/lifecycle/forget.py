"""Explicit forgetting (seed 002: one memory, by condition, or everything of an owner).

* :func:`forget_where` deletes the owner's memories matching a filter (type,
  topic, creation-time range), every status, archived or not.
* :func:`erase_user` removes every record of the owner from the vector store
  and then deletes or pseudonymises the owner's rows in the DuckDB trace
  warehouse (spans, retrievals, writes, answers, and reviewer verdicts on the
  owner's retrievals), returning counts per place.

Forgetting is a hard delete, unlike the lifecycle job's soft archive.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import EraseMode
from ..errors import ValidationError
from ..models import MemoryType
from ..observability.tracing import SPAN_FORGET, set_attrs
from ..paths import PSEUDONYM_SALT_FILE, workspace_paths
from ..store.base import StoreFilter
from ..validation import epoch_now, require_owner

if TYPE_CHECKING:
    from ..observability.warehouse import Warehouse
    from ..ports import Eraser, Host

__all__ = ["EraseMode", "EraseReport", "ForgetReport", "erase_user", "erase_user_warehouse", "forget_where", "pseudonym"]


#: span attributes that carry user text; pseudonymising drops them
CONTENT_ATTRIBUTES: tuple[str, ...] = (
    "memory.query", "memory.rewritten_query", "memory.retrieved_contents", "memory.content", "memory.answer_text",
    "memory.session_id",
)
#: attribute prefixes of other conventions that carry user text (OpenInference, OTel GenAI); pseudonymising drops them
_FOREIGN_CONTENT_PREFIXES: tuple[str, ...] = (
    "input.value", "output.value", "retrieval.documents", "llm.input_messages", "llm.output_messages",
    "gen_ai.prompt", "gen_ai.completion", "gen_ai.input", "gen_ai.output", "session.id",
)
#: derived-table columns that carry user text; pseudonymising nulls them
_CONTENT_COLUMNS: dict[str, tuple[str, ...]] = {
    "retrievals": ("query", "rewritten_query", "retrieved_contents", "session_id"),
    "writes": ("content", "session_id"),
    "answers": ("answer_text", "session_id"),
}


@dataclass(frozen=True)
class ForgetReport:
    """Memories deleted by :func:`forget_where` (ids, in store order)."""

    user_id: str
    tenant_id: str
    deleted_ids: tuple[str, ...]

    @property
    def count(self) -> int:
        return len(self.deleted_ids)


@dataclass(frozen=True)
class EraseReport:
    """Counts removed by :func:`erase_user`: ``store`` records deleted and, per
    warehouse table, rows deleted (mode ``delete``) or pseudonymised (mode
    ``pseudonymise``); ``pseudonym`` is the replacement user id in that mode
    (salted); ``elsewhere`` what went from files and process memory."""

    tenant_id: str
    store: int
    warehouse_mode: str
    warehouse: dict[str, int] = field(default_factory=dict)
    pseudonym: str | None = None
    elsewhere: dict[str, int] = field(default_factory=dict)
    """Removed outside store and warehouse: ``dead_letters`` requests, ``working_sessions``,
    ``embedding_cache`` entries."""

    @property
    def total(self) -> int:
        return self.store + sum(self.warehouse.values())


def forget_where(
    eng: Host,
    *,
    user_id: str,
    tenant_id: str = "default",
    memory_types: Sequence[str] | None = None,
    topic: str | None = None,
    created_after: datetime | None = None,
    created_before: datetime | None = None,
    metadata: dict[str, Any] | None = None,
    dry_run: bool = False,
) -> ForgetReport:
    """Delete the owner's memories that match every given condition.

    ``memory_types``: any of the :class:`MemoryType` values; ``topic``: exact
    ``metadata.topic``; ``created_after``/``created_before``: inclusive bounds
    on ``created_at`` (timezone-aware); ``metadata``: further exact matches.
    At least one condition is required (use :func:`erase_user` for
    everything). Returns the deleted ids; emits one ``memory.forget`` span.
    Raises ValidationError for a missing owner, no condition, an unknown type
    or a naive time.
    """
    user_id, tenant_id = require_owner(user_id, tenant_id)
    if memory_types is not None:
        bad = [t for t in memory_types if t not in {m.value for m in MemoryType}]
        if bad:
            raise ValidationError(f"unknown memory type(s) {bad}; valid: {', '.join(m.value for m in MemoryType)}",
                                  field="memory_types")
    meta = dict(metadata or {})
    if topic is not None:
        meta["topic"] = topic
    after = epoch_now(created_after) if created_after is not None else None
    before = epoch_now(created_before) if created_before is not None else None
    if not memory_types and not meta and after is None and before is None:
        raise ValidationError("forget_where needs at least one condition (type, topic, time range, metadata)",
                              field="filter")
    flt = StoreFilter(tenant_id=tenant_id, user_id=user_id, statuses=None, include_archived=True,
                      memory_types=tuple(memory_types) if memory_types else None, created_after=after,
                      created_before=before, metadata=meta)
    with eng.tracing.tracer.start_as_current_span(SPAN_FORGET) as span:
        ids = tuple(p.id for p in eng.store.scroll(flt) if p.payload.get("user_id") == user_id)
        if ids and not dry_run:
            eng.store.delete(list(ids))
        set_attrs(span, {"memory.tenant_id": tenant_id, "memory.user_id": user_id, "memory.forgotten_count": len(ids),
                         "memory.forget_filter": json.dumps({"types": list(memory_types or []), "metadata": meta,
                                                              "created_after": after, "created_before": before}),
                         "memory.forget_dry_run": dry_run})
        return ForgetReport(user_id, tenant_id, ids)


def _count(con: Any, sql: str, args: Sequence[Any]) -> int:
    """Value of a ``SELECT count(*) ...`` on DuckDB connection ``con``."""
    row = con.execute(sql, args).fetchone()
    # an aggregate without GROUP BY always yields one row; fetchone is typed as possibly None
    assert row is not None
    return int(row[0])


SALT_ENV = "MEMWB_PSEUDONYM_SALT"
SALT_FILE = PSEUDONYM_SALT_FILE


def workspace_salt(workspace: str | os.PathLike[str] | None) -> str:
    """The secret salt of pseudonyms: ``$MEMWB_PSEUDONYM_SALT`` when set, else a random one kept in
    ``<workspace>/pseudonym.salt`` (created on first use, mode 0600). Never empty, so an erase never
    writes a guessable unsalted hash of a user id."""
    env = os.environ.get(SALT_ENV)
    if env:
        return env
    if workspace is None:
        return secrets.token_hex(16)  # nothing to keep it in: a one-off salt (pseudonyms stay unlinkable)
    f = workspace_paths(workspace).pseudonym_salt
    try:
        return f.read_text(encoding="utf-8").strip() or _new_salt(f)
    except FileNotFoundError:
        return _new_salt(f)


def _new_salt(f: Path) -> str:
    f.parent.mkdir(parents=True, exist_ok=True)
    salt = secrets.token_hex(16)
    fd = os.open(f, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(salt)
    return salt


def pseudonym(user_id: str, tenant_id: str, salt: str = "") -> str:
    """Stable replacement id ``anon-<12 hex>`` = sha256(salt | tenant | user); without the salt it cannot be reversed
    by guessing only if user ids are not guessable, so pass a secret salt in production."""
    return "anon-" + hashlib.sha256(f"{salt}|{tenant_id}|{user_id}".encode()).hexdigest()[:12]


def erase_user_warehouse(
    wh: Warehouse, user_id: str, *, tenant_id: str = "default", mode: EraseMode | str = EraseMode.DELETE, salt: str = ""
) -> tuple[dict[str, int], str | None]:
    """Delete or pseudonymise the owner's warehouse rows, in one transaction.

    Rows belong to the owner when their ``user_id`` column (retrievals, writes,
    answers) or span attribute ``memory.user_id`` (spans) equals ``user_id``
    within ``tenant_id``; reviewer verdicts belong to the owner when they judge
    one of the owner's retrievals. ``pseudonymise`` replaces the user id by
    :func:`pseudonym` and nulls every column/attribute that carries user text
    (queries, contents, answers, session ids, verdict notes), keeping the
    numbers metrics need. Returns ({table: rows}, pseudonym or None).
    Raises ValidationError for an unknown mode, WarehouseError from DuckDB.
    """
    user_id, tenant_id = require_owner(user_id, tenant_id)
    try:
        m = EraseMode(mode)
    except ValueError as e:
        raise ValidationError(f"unknown erase mode {mode!r}; valid: {', '.join(x.value for x in EraseMode)}",
                              field="mode") from e
    if m == EraseMode.KEEP:
        return {}, None
    queue = getattr(wh, "queue_erase", None)
    if callable(queue):  # a spool writer: another process owns the warehouse and erases (queued, durable)
        queue(user_id=user_id, tenant_id=tenant_id, mode=m.value, salt=salt)
        return {"queued": 1}, (pseudonym(user_id, tenant_id, salt) if m == EraseMode.PSEUDONYMISE else None)
    import duckdb

    from ..errors import WarehouseError

    wh._require_writable()
    # a span belongs to the owner under any convention that names a user: memwb's memory.user_id,
    # OpenInference's user.id, OTel's enduser.id (a foreign agent's spans carry no tenant: they match any)
    span_pred = ("? IN (json_extract_string(attributes, '$.\"memory.user_id\"'), "
                 "json_extract_string(attributes, '$.\"user.id\"'), json_extract_string(attributes, '$.\"enduser.id\"')) "
                 "AND coalesce(json_extract_string(attributes, '$.\"memory.tenant_id\"'), ?) = ?")
    span_args = [user_id, tenant_id, tenant_id]
    row_pred = "user_id = ? AND coalesce(tenant_id, ?) = ?"
    row_args = [user_id, tenant_id, tenant_id]
    counts: dict[str, int] = {}
    alias = pseudonym(user_id, tenant_id, salt) if m == EraseMode.PSEUDONYMISE else None
    with wh._write_lock, wh.connection() as con:
        try:
            con.execute("BEGIN TRANSACTION")
            # derived rows: the owner's by column, and every row of the owner's spans (whatever its columns say)
            con.execute("CREATE OR REPLACE TEMP TABLE _erase_spans AS SELECT trace_id, span_id FROM spans WHERE "
                        + span_pred, span_args)
            of_spans = "(trace_id, span_id) IN (SELECT trace_id, span_id FROM _erase_spans)"
            retrieve_ids = [r[0] for r in con.execute(
                f"SELECT span_id FROM retrievals WHERE ({row_pred}) OR {of_spans}", row_args).fetchall()]
            span_rows = con.execute(f"SELECT trace_id, span_id, attributes FROM spans WHERE {span_pred}", span_args).fetchall()
            if retrieve_ids:
                placeholders = ",".join("?" * len(retrieve_ids))
                vq = f"verdicts WHERE retrieve_span_id IN ({placeholders})"
                counts["verdicts"] = _count(con, f"SELECT count(*) FROM {vq}", retrieve_ids)
                if m == EraseMode.DELETE:
                    con.execute(f"DELETE FROM {vq}", retrieve_ids)
                else:
                    con.execute(f"UPDATE verdicts SET note = NULL WHERE retrieve_span_id IN ({placeholders})", retrieve_ids)
            else:
                counts["verdicts"] = 0
            for table in ("retrievals", "writes", "answers"):
                pred = f"(({row_pred}) OR {of_spans})"
                counts[table] = _count(con, f"SELECT count(*) FROM {table} WHERE {pred}", row_args)
                if m == EraseMode.DELETE:
                    con.execute(f"DELETE FROM {table} WHERE {pred}", row_args)
                else:
                    sets = ", ".join(f"{c} = NULL" for c in _CONTENT_COLUMNS[table])
                    con.execute(f"UPDATE {table} SET user_id = ?, {sets} WHERE {pred}", [alias, *row_args])
            con.execute("DROP TABLE IF EXISTS _erase_spans")
            # evaluation rows naming the owner (a miss reason 'stored for user <id>/...', a quoted id)
            eval_pred = "(contains(details::VARCHAR, ?) OR contains(details::VARCHAR, ?))"
            eval_args = [f'"{user_id}"', f"user {user_id}/"]
            counts["eval_queries"] = _count(con, f"SELECT count(*) FROM eval_queries WHERE {eval_pred}", eval_args)
            if counts["eval_queries"]:
                if m == EraseMode.DELETE:
                    con.execute(f"DELETE FROM eval_queries WHERE {eval_pred}", eval_args)
                else:
                    con.execute(f"UPDATE eval_queries SET details = NULL WHERE {eval_pred}", eval_args)
            counts["spans"] = len(span_rows)
            if m == EraseMode.DELETE:
                con.execute(f"DELETE FROM spans WHERE {span_pred}", span_args)
            else:
                for trace_id, span_id, attrs in span_rows:
                    a = json.loads(attrs) if isinstance(attrs, str) else dict(attrs or {})
                    for k in CONTENT_ATTRIBUTES:
                        a.pop(k, None)
                    for k in _FOREIGN_CONTENT_PREFIXES:
                        for key in [x for x in a if x.startswith(k)]:
                            a.pop(key, None)
                    for k in ("memory.user_id", "user.id", "enduser.id"):
                        if k in a:
                            a[k] = alias
                    con.execute("UPDATE spans SET attributes = ? WHERE trace_id = ? AND span_id = ?",
                                [json.dumps(a, ensure_ascii=False), trace_id, span_id])
            con.execute("COMMIT")
        except duckdb.Error as e:
            con.execute("ROLLBACK")
            raise WarehouseError(f"erasing user from warehouse {wh.path} failed: {e}") from e
    return counts, alias


def erase_user(
    eng: Eraser,
    user_id: str,
    *,
    tenant_id: str = "default",
    warehouse: Warehouse | None = None,
    mode: EraseMode | str = EraseMode.DELETE,
    salt: str = "",
    now: datetime | None = None,
) -> EraseReport:
    """GDPR-style erase (seed 002): every record of the owner leaves the vector
    store (all statuses, archived, every embedding version), then the owner's
    rows in ``warehouse`` are deleted or pseudonymised (``mode``; ``keep`` leaves them).

    This is the one place an owner is erased across store and warehouse; the
    workspace (:meth:`memory_engine.workspace.Workspace.erase_user`) calls it
    with its warehouse and the caller's mode. ``warehouse`` None (an in-memory
    engine, or no warehouse file) touches the store only and reports mode
    ``none``. The engine's spans are flushed into the warehouse before it is
    cleaned, so the erase's own ``memory.forget`` span is erased too; the
    summary span this function emits carries only the pseudonym.
    Returns an :class:`EraseReport` with counts. Raises ValidationError for a
    missing owner or an unknown mode, before anything is deleted.
    """
    user_id, tenant_id = require_owner(user_id, tenant_id)
    try:
        m = EraseMode(getattr(mode, "value", mode))
    except ValueError as e:
        raise ValidationError(f"unknown erase mode {mode!r}; valid: {', '.join(x.value for x in EraseMode)}",
                              field="mode") from e
    ts = epoch_now(now)
    cfg = getattr(eng, "config", None)
    salt = salt or workspace_salt(getattr(cfg, "workspace", None))  # never an unsalted, guessable hash
    texts = owner_texts(eng, user_id, tenant_id) if hasattr(eng, "store") else []
    n_store = eng.erase_user(user_id, tenant_id=tenant_id)
    elsewhere = erase_process_state(eng, user_id, tenant_id, texts=texts) if cfg is not None else {}
    counts: dict[str, int] = {}
    alias = None
    if warehouse is not None:
        eng.tracing.force_flush()
        counts, alias = erase_user_warehouse(warehouse, user_id, tenant_id=tenant_id, mode=m, salt=salt)
    with eng.tracing.tracer.start_as_current_span(SPAN_FORGET) as span:
        set_attrs(span, {"memory.tenant_id": tenant_id, "memory.user_id": pseudonym(user_id, tenant_id, salt),
                         "memory.erase": True, "memory.forgotten_count": n_store, "memory.erase_mode": m.value,
                         "memory.erase_warehouse_rows": sum(counts.values()), "memory.erase_at": ts})
    return EraseReport(tenant_id=tenant_id, store=n_store, warehouse_mode=m.value if warehouse is not None else "none",
                       warehouse=counts, pseudonym=alias, elsewhere=elsewhere)


def owner_texts(eng: Any, user_id: str, tenant_id: str) -> list[str]:
    """The stored texts of the owner (every status, archived too): read before the store erase so that
    :func:`erase_process_state` can drop their cached vectors."""
    flt = StoreFilter(tenant_id=tenant_id, user_id=user_id, statuses=None, include_archived=True)
    return [str(p.payload.get("content", "")) for p in eng.store.scroll(flt)]


def erase_process_state(
    eng: Any, user_id: str, tenant_id: str, *, texts: Sequence[str] = (), dead_letters: str | os.PathLike[str] | None = None
) -> dict[str, int]:
    """Erase what an owner leaves outside the store and the warehouse: requests in the dead-letter file,
    working-memory sessions, and cached vectors keyed by their texts (the documents' entries, and every
    cached query, since raw queries are kept nowhere to tell the owner's apart). Returns counts per place."""
    from ..lifecycle.writer import purge_dead_letters
    from ..working import sessions_for

    counts: dict[str, int] = {}
    dl = Path(dead_letters) if dead_letters is not None else workspace_paths(eng.config).dead_letters
    counts["dead_letters"] = purge_dead_letters(dl, user_id, tenant_id=tenant_id)
    counts["working_sessions"] = sessions_for(eng).drop_user(user_id, tenant_id=tenant_id)
    emb = getattr(eng, "embedder", None)
    if emb is not None and hasattr(emb, "evict"):
        counts["embedding_cache"] = emb.evict([t for t in texts if t]) + emb.clear_queries()
    return counts
