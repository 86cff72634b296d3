"""Citations of other agents' answers: which retrieved documents an LLM output references.

memwb's own ``memory.answer`` spans carry their citations (``memory.cited_ids``).
Other agents' spans do not: an OpenInference ``LLM`` span or an OTel GenAI
``chat``/``text_completion`` span carries only the model's output text, and the
documents it could cite are on a retriever span of the same trace. At ingest
every such LLM span becomes an ``answers`` row with no retrieval and no
citations; :func:`link_foreign_answers` then links it (the rule is in
``docs/foreign-agents.md``):

* **which retrieval**: among the retrievals of the same trace that started no
  later than the LLM span, the one whose documents the output references most;
  ties go to the latest one. An LLM span with no such retrieval stays unlinked
  (retried whenever more spans of its trace arrive).
* **which documents are cited**: a retrieved document id is cited when the
  output contains it in brackets (``[doc-7]``) or, for ids of at least
  :data:`MIN_BARE_ID_CHARS` characters, as a whole word (not part of a longer
  word or id), so ``1`` never matches a number in the text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import duckdb

MIN_BARE_ID_CHARS = 6
"""Shortest document id matched without brackets; shorter ids must appear as ``[id]``."""


def cited_ids(text: str | None, retrieved: Sequence[str] | None, *, min_bare_chars: int = MIN_BARE_ID_CHARS) -> list[str]:
    """Retrieved ids referenced in ``text``, in retrieval order, each once.

    ``[id]`` always counts; a bare id counts when it has at least
    ``min_bare_chars`` characters and stands as a whole word (neighbours are
    not letters, digits, ``_`` or ``-``). Empty ids never match.
    """
    if not text or not retrieved:
        return []
    out: list[str] = []
    for did in dict.fromkeys(retrieved):
        if not did:
            continue
        if f"[{did}]" in text:
            out.append(did)
        elif len(did) >= min_bare_chars and re.search(rf"(?<![\w-]){re.escape(did)}(?![\w-])", text):
            out.append(did)
    return out


_PENDING_SQL = """
SELECT a.trace_id, a.span_id, a.start_ns, a.answer_text
FROM answers a JOIN spans s ON s.trace_id = a.trace_id AND s.span_id = a.span_id
WHERE a.retrieve_span_id IS NULL AND a.cited_ids IS NULL AND s.name <> 'memory.answer'
  AND list_contains(?, a.trace_id)
"""
_CANDIDATES_SQL = """
SELECT trace_id, span_id, start_ns, retrieved_ids FROM retrievals
WHERE list_contains(?, trace_id) ORDER BY start_ns
"""


def link_foreign_answers(con: duckdb.DuckDBPyConnection, trace_ids: Iterable[str]) -> int:
    """Link the unlinked foreign answers of ``trace_ids`` to a retrieval and set their citations.

    Runs inside the caller's transaction (``con`` is the inserting
    connection). Returns the number of answers linked.
    """
    traces = sorted(set(trace_ids))
    if not traces:
        return 0
    pending = con.execute(_PENDING_SQL, [traces]).fetchall()
    if not pending:
        return 0
    by_trace: dict[str, list[tuple[str, int, list[str]]]] = {}
    for tid, sid, start, ids in con.execute(_CANDIDATES_SQL, [traces]).fetchall():
        by_trace.setdefault(tid, []).append((sid, start, list(ids or ())))
    updates: list[tuple[str, list[str], str, str]] = []
    for tid, sid, start, text in pending:
        best: tuple[int, int, str, list[str]] | None = None
        for rsid, rstart, ids in by_trace.get(tid, ()):
            if rstart > start:
                continue
            cited = cited_ids(text, ids)
            key = (len(cited), rstart)
            if best is None or key >= best[:2]:
                best = (len(cited), rstart, rsid, cited)
        if best is not None:
            updates.append((best[2], best[3], tid, sid))
    if updates:
        con.executemany(
            "UPDATE answers SET retrieve_span_id = ?, cited_ids = ? WHERE trace_id = ? AND span_id = ?", updates
        )
    return len(updates)
