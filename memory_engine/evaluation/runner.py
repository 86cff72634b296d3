"""Replay runner: golden cases through the real engine, under a simulated clock.

Each case gets its own in-memory engine (``MemoryEngine.in_memory``): nothing
leaks between cases. Events go through the normal ``add()`` with
``now=<event time>``, queries through the normal ``retrieve(..., explain=True)``
with ``now=<query time>``; no evaluation-only shortcuts. Labels map to the
real memory ids the writes return (a ``merged`` event maps to the id it merged
into). One embedder instance (``memory_engine.embedding.make_embedder``) is
shared by every case's engine, so each distinct text is embedded once per
embedding version for the whole process.

The result is an :class:`EvalRun` of frozen dataclasses: per query the
assertions, the rank of every relevant label, rank metrics, latency and a
why-not :class:`Miss` for every relevant label that was not returned; per case
the write outcomes and supersession judgements.
"""

from __future__ import annotations

import hashlib
import subprocess
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..config import EngineConfig
from ..models import to_epoch
from .metrics import rank_metrics, ranks_of
from .suite import Case, Event, Query, ResolvedSuite

#: Extra recall cutoffs reported next to recall@k when the query's top_k reaches them.
DEFAULT_CUTOFFS: tuple[int, ...] = (1, 5, 10)
#: Case categories whose queries are in the scope of stale@k (an update or a forget request precedes them).
STALE_CATEGORIES: frozenset[str] = frozenset({"conflict_update", "forget_intent"})
#: Case or query tags that put a query in the scope of stale@k.
STALE_TAGS: frozenset[str] = frozenset({"supersede", "correction", "scoped-correction", "fact-overwrite", "forget",
                                        "flip", "provisional", "update"})
#: Tags marking a never-stored question besides ``empty: true`` (LoCoMo category 5 is adversarial).
UNANSWERABLE_TAGS: tuple[str, ...] = ("unanswerable", "locomo-cat-5")
#: Token-set Jaccard similarity at or above which two context hits count as duplicates.
DUPLICATE_JACCARD = 0.9
#: ``dropped_at`` of candidates that were live (not filtered by status) for ``top_relevance``.
_LIVE_DROPS = (None, "floor", "hop_focus", "top_k", "token_budget")


class MissKind(StrEnum):
    """Why a relevant label was not in the top_k."""

    NEVER_STORED = "never_stored"
    FILTERED = "filtered"
    BELOW_FLOOR = "below_floor"
    OUTRANKED = "outranked"
    NOT_CANDIDATE = "not_candidate"
    UNEXPLAINED = "unexplained"


@dataclass(frozen=True)
class Miss:
    """Why-not for one missed relevant label; ``detail`` is a human sentence."""

    label: str
    kind: MissKind
    detail: str
    write_outcome: str | None = None
    fused_score: float | None = None
    relevance: float | None = None
    route_ranks: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Assertion:
    """One checked expectation (``relevant``, ``irrelevant``, ``empty``, ``fact``, ``not_contains``)."""

    name: str
    passed: bool
    detail: str = ""


@dataclass(frozen=True)
class Retrieved:
    """One returned hit: 1-based rank, the case labels mapped to its id, content and fused score."""

    rank: int
    memory_id: str
    labels: tuple[str, ...]
    content: str
    score: float
    sources: tuple[str, ...]


@dataclass(frozen=True)
class ContextStats:
    """What the prompt would receive for one query (``MemoryEngine.context_block`` of its hits).

    ``tokens``: tokens of the block (``text.count_tokens``, each memory id counted as the fixed
    :data:`COUNTED_ID`, so identical runs give identical counts); ``full_tokens``:
    tokens of every event of the case the querying user wrote up to the query
    (the whole history a memoryless agent would inject); ``relevant_inside``:
    share (0..1) of the positive relevant labels whose memory is in the block
    (None without relevant labels); ``duplicates``: hits repeating an earlier
    hit (same normalised text, or token-set Jaccard >= :data:`DUPLICATE_JACCARD`);
    ``stale``: hits holding a stale memory (superseded, corrected, forgotten);
    ``wasted_tokens``: tokens of the duplicate and stale hits.
    """

    tokens: int
    full_tokens: int
    relevant_inside: float | None
    duplicates: int
    stale: int
    wasted_tokens: int

    @property
    def share_of_full(self) -> float | None:
        return self.tokens / self.full_tokens if self.full_tokens else None

    def scores(self) -> dict[str, float | None]:
        return {"context_tokens": float(self.tokens), "full_context_tokens": float(self.full_tokens),
                "context_share": self.share_of_full, "context_recall": self.relevant_inside,
                "context_duplicates": float(self.duplicates), "context_stale": float(self.stale),
                "context_wasted_tokens": float(self.wasted_tokens)}


@dataclass(frozen=True)
class QueryResult:
    """Outcome of one query. Metric fields are ``None`` when the query has no relevant labels.

    ``k`` is the top_k used; ``recall_at`` maps extra cutoffs (<= k) to recall;
    ``latency_ms`` is the engine's retrieval latency in milliseconds.
    """

    suite: str
    case_id: str
    query_id: str
    category: str
    lang: str
    tags: tuple[str, ...]
    must_pass: bool
    text: str
    k: int
    passed: bool
    assertions: tuple[Assertion, ...]
    relevant: dict[str, float]
    relevant_ranks: dict[str, int | None]
    retrieved: tuple[Retrieved, ...]
    hit: float | None
    recall: float | None
    rr: float | None
    ndcg: float | None
    recall_at: dict[int, float | None]
    latency_ms: float
    irrelevant_violations: tuple[str, ...]
    leaks: tuple[str, ...]
    misses: tuple[Miss, ...]
    degraded: bool = False
    error: str | None = None
    answer: str | None = None
    relevant_ids: dict[str, str | None] = field(default_factory=dict)
    relevant_texts: dict[str, str] = field(default_factory=dict)
    #: rank (or None) of each stale label (superseded, corrected or forgotten before the query); None when the
    #: case has no supersession/correction/forget expectation (out of scope of stale@k)
    stale_ranks: dict[str, int | None] | None = None
    unanswerable: bool = False  #: never-stored question (``empty: true``, LoCoMo cat 5, LongMemEval ``_abs``)
    top_relevance: float | None = None  #: highest relevance (0..1) of any candidate, returned or not
    context: ContextStats | None = None
    official: dict[str, float] = field(default_factory=dict)  #: benchmark metrics under their official names

    @property
    def key(self) -> str:
        """Stable id across runs: ``suite/case/query``."""
        return f"{self.suite}/{self.case_id}/{self.query_id}"

    @property
    def stale_at_k(self) -> float | None:
        """1.0 when the top k holds a stale memory, 0.0 when not, None out of scope."""
        if self.stale_ranks is None:
            return None
        return 1.0 if any(r is not None for r in self.stale_ranks.values()) else 0.0

    @property
    def first_stale_rank(self) -> int | None:
        """Best (lowest) rank of a stale memory in the top k, None when none is there."""
        ranks = [r for r in (self.stale_ranks or {}).values() if r is not None]
        return min(ranks) if ranks else None

    @property
    def unanswerable_returned(self) -> float | None:
        """For a never-stored question: 1.0 when anything was returned (it should abstain), else 0.0."""
        if not self.unanswerable:
            return None
        return 1.0 if self.retrieved else 0.0

    def scores(self) -> dict[str, float | None]:
        """Per-query numbers under their report names (``recall@k``, ``mrr``, ``stale@k``, ``context_tokens``...)."""
        out: dict[str, float | None] = {
            "pass": 1.0 if self.passed else 0.0,
            "hit@k": self.hit,
            "recall@k": self.recall,
            "mrr": self.rr,
            "ndcg@k": self.ndcg,
        }
        for c, v in self.recall_at.items():
            out[f"recall@{c}"] = v
        out["stale@k"] = self.stale_at_k
        fr = self.first_stale_rank
        out["stale_rank"] = None if fr is None else float(fr)
        out["unanswerable_returned"] = self.unanswerable_returned
        out["top_relevance"] = self.top_relevance
        if self.context is not None:
            out |= self.context.scores()
        out |= {k: v for k, v in self.official.items()}
        return out


@dataclass(frozen=True)
class WriteRecord:
    """One replayed event: the write outcome and what was expected of it.

    ``supersession`` lists ``(superseded_label, verdict)`` with verdict
    ``right``/``wrong``/``unjudged``; ``duplicate`` marks a stored event that
    repeats an earlier stored text of the case or was expected to merge.
    """

    label: str
    outcome: str
    memory_id: str | None
    reason: str
    expected: str | None
    superseded: tuple[str, ...]
    supersession: tuple[tuple[str, str], ...]
    missed_supersessions: tuple[str, ...]
    duplicate: bool

    @property
    def expectation_ok(self) -> bool | None:
        return None if self.expected is None else self.expected == self.outcome


@dataclass(frozen=True)
class CaseResult:
    suite: str
    case_id: str
    category: str
    lang: str
    tags: tuple[str, ...]
    must_pass: bool
    writes: tuple[WriteRecord, ...]
    queries: tuple[QueryResult, ...]
    error: str | None = None

    @property
    def passed(self) -> bool:
        """All queries pass and every ``expect_write`` holds."""
        return (
            self.error is None
            and all(q.passed for q in self.queries)
            and all(w.expectation_ok is not False for w in self.writes)
        )


@dataclass(frozen=True)
class EvalRun:
    """A whole evaluation run. Times are aware datetimes (UTC wall clock of the run itself)."""

    run_id: str
    started_at: datetime
    finished_at: datetime
    config: dict[str, Any]
    config_hash: str
    git_commit: str | None
    suites: tuple[tuple[str, str], ...]  # (name, path)
    cases: tuple[CaseResult, ...]
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def queries(self) -> list[QueryResult]:
        return [q for c in self.cases for q in c.queries]

    @property
    def duration_s(self) -> float:
        return (self.finished_at - self.started_at).total_seconds()


def git_commit(cwd: str | Path | None = None) -> str | None:
    """HEAD commit of the repository at ``cwd`` (None outside git).

    ``cwd`` None = the folder of the ``memory_engine`` package that is running, not the process's working
    directory: a run started from another checkout (or from a suite folder elsewhere) records the commit of the
    code that produced it. An installed (non-editable) package is outside git and records None.
    """
    where = Path(cwd) if cwd is not None else Path(__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


EngineFactory = Callable[[EngineConfig], Any]


def default_engine_factory(cfg: EngineConfig) -> Any:
    """``MemoryEngine.in_memory`` sharing the process-wide cached embedder of ``cfg.embedding``."""
    from ..embedding import make_embedder
    from ..engine import MemoryEngine

    return MemoryEngine.in_memory(config=cfg, embedder=make_embedder(cfg.embedding))


def _fmt_routes(ranks: dict[str, int], scores: dict[str, float]) -> str:
    if not ranks:
        return "no route"
    return ", ".join(
        f"{r} #{ranks[r]}" + (f" ({scores[r]:.3f})" if r in scores else "") for r in sorted(ranks, key=lambda r: ranks[r])
    )


class _Replay:
    """State of one case's replay: label <-> id maps and write outcomes."""

    def __init__(self, case: Case) -> None:
        self.case = case
        self.label_id: dict[str, str | None] = {}
        self.writes: dict[str, Any] = {}
        self.events: dict[str, Event] = {e.label: e for e in case.events}

    def labels_of(self, memory_id: str) -> tuple[str, ...]:
        return tuple(lab for lab, mid in self.label_id.items() if mid == memory_id)


def _judge_supersession(case: Case, ev: Event, superseded: tuple[str, ...]) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    if ev.expect_supersedes is not None:
        exp = set(ev.expect_supersedes)
        verdicts = tuple((lab, "right" if lab in exp else "wrong") for lab in superseded)
        return verdicts, tuple(sorted(exp - set(superseded)))
    relevant = {lab for q in case.queries for lab in q.relevant}
    irrelevant = {lab for q in case.queries for lab in q.irrelevant}
    out = []
    for lab in superseded:
        if lab in relevant:
            out.append((lab, "wrong"))
        elif lab in irrelevant:
            out.append((lab, "right"))
        else:
            out.append((lab, "unjudged"))
    return tuple(out), ()


def _norm_text(s: str) -> str:
    return " ".join(s.split()).casefold()


def _replay_events(engine: Any, rp: _Replay) -> list[WriteRecord]:
    records: list[WriteRecord] = []
    stored_texts: set[str] = set()
    for ev in rp.case.events:
        fact = {"key": ev.fact[0], "value": ev.fact[1]} if ev.fact else None
        wr = engine.add(
            ev.text,
            user_id=ev.user,
            tenant_id=ev.tenant,
            session_id=ev.session,
            role=ev.role,
            memory_type=ev.memory_type,
            metadata=ev.metadata,
            fact=fact,
            now=ev.at,
        )
        rp.writes[ev.label] = wr
        rp.label_id[ev.label] = wr.memory_id if wr.outcome != "rejected" else None
        for old_id, new_id in getattr(wr, "redacted_versions", ()) or ():
            # a forget that named part of a message: its label follows the version that keeps the rest
            for lab in rp.labels_of(old_id):
                rp.label_id[lab] = new_id
        sup_labels: list[str] = []
        for sid in wr.superseded_ids:
            labs = rp.labels_of(sid)
            sup_labels.extend(lab for lab in labs if lab != ev.label)
        sup = tuple(dict.fromkeys(sup_labels))
        verdicts, missed = _judge_supersession(rp.case, ev, sup)
        norm = _norm_text(ev.text)
        duplicate = wr.outcome == "stored" and (norm in stored_texts or ev.expect_write == "merged")
        if wr.outcome == "stored":
            stored_texts.add(norm)
        records.append(
            WriteRecord(
                label=ev.label,
                outcome=str(wr.outcome),
                memory_id=wr.memory_id,
                reason=wr.reason or "",
                expected=ev.expect_write,
                superseded=sup,
                supersession=verdicts,
                missed_supersessions=missed,
                duplicate=duplicate,
            )
        )
    return records


def _explain_miss(engine: Any, rp: _Replay, q: Query, label: str, expl: dict[str, Any] | None, cfg: EngineConfig) -> Miss:
    wr = rp.writes.get(label)
    ev = rp.events[label]
    mid = rp.label_id.get(label)
    if wr is None or mid is None:
        outcome = getattr(wr, "outcome", None)
        reason = getattr(wr, "reason", "") or ""
        return Miss(label, MissKind.NEVER_STORED, f"never stored: write {outcome}" + (f" ({reason})" if reason else ""), outcome)
    outcome = str(wr.outcome)
    if expl is not None and mid in expl:
        c = expl[mid]
        ranks, scores = dict(c.route_ranks), dict(c.route_scores)
        if c.dropped_at == "floor":
            return Miss(
                label, MissKind.BELOW_FLOOR,
                f"below the {c.why() or f'floor: relevance {c.relevance:.3f}'} (routes: {_fmt_routes(ranks, scores)})",
                outcome, c.fused_score, c.relevance, ranks,
            )
        return Miss(
            label, MissKind.OUTRANKED,
            f"outranked: fused score {c.fused_score:.3f}, relevance {c.relevance:.3f}, dropped at "
            f"{c.why() or 'unknown'}; routes: {_fmt_routes(ranks, scores)}",
            outcome, c.fused_score, c.relevance, ranks,
        )
    if ev.user != q.user or ev.tenant != q.tenant:
        return Miss(label, MissKind.FILTERED, f"filtered: stored for user {ev.user}/tenant {ev.tenant}, queried as {q.user}/{q.tenant}", outcome)
    rec = engine.memory(mid, user_id=ev.user, tenant_id=ev.tenant)
    if rec is None:
        return Miss(label, MissKind.NEVER_STORED, f"never stored: no record {mid} (write {outcome})", outcome)
    status = getattr(rec.status, "value", rec.status)
    if rec.superseded_by or status == "deprecated":
        by = rp.labels_of(rec.superseded_by) if rec.superseded_by else ()
        who = ", ".join(by) if by else (rec.superseded_by or "?")
        return Miss(label, MissKind.FILTERED, f"filtered: superseded by {who}", outcome)
    if rec.archived_at is not None:
        return Miss(label, MissKind.FILTERED, "filtered: archived", outcome)
    if status == "candidate":
        return Miss(label, MissKind.FILTERED, "filtered: candidate (not promoted)", outcome)
    if status == "pending_confirmation":
        return Miss(label, MissKind.FILTERED, "filtered: pending confirmation", outcome)
    if rec.expires_at is not None and rec.expires_at <= to_epoch(q.at):
        return Miss(label, MissKind.FILTERED, "filtered: expired", outcome)
    if expl is None:
        return Miss(label, MissKind.UNEXPLAINED, "not returned (engine gave no explanation)", outcome)
    return Miss(
        label, MissKind.NOT_CANDIDATE,
        f"not a candidate: no route returned it within route_limit {cfg.retrieval.route_limit}", outcome,
    )


def _in_stale_scope(case: Case, q: Query) -> bool:
    return (case.category in STALE_CATEGORIES or bool(STALE_TAGS & {*case.tags, *q.tags})
            or any(e.expect_supersedes for e in case.events))


def _stale_labels(rp: _Replay, q: Query) -> set[str]:
    """Labels stale at query time: named by an earlier ``expect_supersedes``, superseded by an earlier
    write, or (in scope by category/tag) the query's ``irrelevant`` labels (the outdated or withdrawn
    statements), minus any label that maps to the same memory as a relevant one (a merge)."""
    out: set[str] = set()
    for ev in rp.case.events:
        if ev.at > q.at:
            continue
        out.update(ev.expect_supersedes or ())
        wr = rp.writes.get(ev.label)
        for sid in getattr(wr, "superseded_ids", ()) or ():
            out.update(lab for lab in rp.labels_of(sid) if lab != ev.label)
    if rp.case.category in STALE_CATEGORIES or STALE_TAGS & {*rp.case.tags, *q.tags}:
        out.update(lab for lab in q.irrelevant if rp.events[lab].at <= q.at)
    live = {rp.label_id.get(lab) for lab, g in q.relevant.items() if g > 0}
    return {lab for lab in out if rp.label_id.get(lab) not in live}


@lru_cache(maxsize=65536)
def _tokens(text: str) -> int:
    from ..text import count_tokens

    return count_tokens(text)


COUNTED_ID = "a1b2c3d4e5f60718"
"""The memory id every ``[mem-<id>]`` tag of a context block is counted with (:func:`_block_tokens`).

Memory ids are random hex (``secrets.token_hex``) and WordPiece splits each differently: one tag costs
13 to 21 tokens, so two identical runs reported different context tokens per query. This id's tag costs
17 tokens, the mean over random ids (16.6 over 2,000 draws, bundled MiniLM tokenizer), rounded."""


def _block_tokens(block: str) -> int:
    """Tokens of a context block (``[mem-<id>] content`` lines) with every id counted as :data:`COUNTED_ID`:
    the same hits give the same count whatever ids this run drew; 0 for an empty block."""
    from ..citations import CITATION

    return _tokens(CITATION.sub(f"[mem-{COUNTED_ID}]", block)) if block else 0


@lru_cache(maxsize=65536)
def _token_set(text: str) -> frozenset[str]:
    from ..text import tokenize

    return frozenset(tokenize(text))


def _context_stats(engine: Any, rp: _Replay, q: Query, res: Any, hits: Sequence[Any], positive: Sequence[str],
                   stale_ids: set[str]) -> ContextStats:
    block = engine.context_block(res) if hasattr(engine, "context_block") else "\n".join(h.content for h in hits)
    full = sum(_tokens(e.text) for e in rp.case.events if e.user == q.user and e.tenant == q.tenant and e.at <= q.at)
    ids = {h.memory_id for h in hits}
    inside = (sum(1 for lab in positive if rp.label_id.get(lab) in ids) / len(positive)) if positive else None
    seen_norm: set[str] = set()
    seen_sets: list[frozenset[str]] = []
    dups = stale = wasted = 0
    for h in hits:
        norm = _norm_text(h.content)
        ts = _token_set(h.content)
        dup = norm in seen_norm or any(
            ts and o and len(ts & o) / len(ts | o) >= DUPLICATE_JACCARD for o in seen_sets)
        is_stale = h.memory_id in stale_ids
        dups += dup
        stale += is_stale
        if dup or is_stale:
            wasted += _tokens(h.content)
        seen_norm.add(norm)
        seen_sets.append(ts)
    return ContextStats(_block_tokens(block), full, inside, dups, stale, wasted)


def _official(benchmark: str | None, rp: _Replay, q: Query, retrieved: Sequence[Retrieved], positive: Sequence[str],
              k: int, unanswerable: bool) -> dict[str, float]:
    from .official import locomo_recall, longmemeval_metrics

    if not positive or unanswerable and benchmark == "longmemeval":
        return {}  # LongMemEval excludes _abs questions from its recall figures
    if benchmark == "longmemeval":
        ranked = [r.labels or (r.memory_id,) for r in retrieved]
        corpus = [e.label for e in rp.case.events if e.at <= q.at]
        return longmemeval_metrics(ranked, positive, corpus, k)
    if benchmark == "locomo":
        return {"locomo:recall": locomo_recall([lab for r in retrieved for lab in r.labels], list(positive))}
    return {}


def _run_query(engine: Any, rp: _Replay, q: Query, cfg: EngineConfig, cutoffs: Sequence[int], explain: bool,
               benchmark: str | None = None) -> QueryResult:
    case = rp.case
    k = q.top_k or cfg.retrieval.top_k
    t0 = time.perf_counter()
    res = engine.retrieve(
        q.text, user_id=q.user, tenant_id=q.tenant, session_id=q.session, top_k=k, now=q.at, explain=explain
    )
    wall_ms = (time.perf_counter() - t0) * 1000.0
    hits = list(res.hits)[:k]
    ranked = [h.memory_id for h in hits]
    retrieved = tuple(
        Retrieved(i, h.memory_id, rp.labels_of(h.memory_id), h.content, float(h.score), tuple(h.sources))
        for i, h in enumerate(hits, start=1)
    )
    # relevance over ids: a label never stored gets its own id, so it counts in the denominator
    rel_ids: dict[str, float] = {}
    label_item: dict[str, str] = {}
    for lab, g in q.relevant.items():
        item = rp.label_id.get(lab) or f"<unstored:{lab}>"
        label_item[lab] = item
        rel_ids[item] = max(rel_ids.get(item, 0.0), g)
    item_ranks = ranks_of(ranked, set(label_item.values()))
    relevant_ranks = {lab: item_ranks[label_item[lab]] for lab in q.relevant}
    m = rank_metrics(ranked, rel_ids, k)
    recall_at = {c: rank_metrics(ranked, rel_ids, c).recall for c in cutoffs if c <= k}

    assertions: list[Assertion] = []
    positive = [lab for lab, g in q.relevant.items() if g > 0]
    if q.relevant:
        missing = [lab for lab in positive if relevant_ranks[lab] is None]
        assertions.append(Assertion("relevant", not missing, f"missing {missing}" if missing else ""))
    returned_labels = {lab for r in retrieved for lab in r.labels}
    violations = tuple(lab for lab in q.irrelevant if lab in returned_labels)
    if q.irrelevant:
        assertions.append(Assertion("irrelevant", not violations, f"returned {list(violations)}" if violations else ""))
    if q.empty is not None:
        ok = (len(hits) == 0) if q.empty else (len(hits) > 0)
        assertions.append(Assertion("empty", ok, f"{len(hits)} hits returned" if not ok else ""))
    for key, want in q.fact.items():
        got = engine.get_fact(key, user_id=q.user, tenant_id=q.tenant)
        assertions.append(Assertion(f"fact:{key}", got == want, "" if got == want else f"got {got!r}, want {want!r}"))
    leaks = tuple(s for s in q.not_contains if any(s in h.content for h in hits))
    if q.not_contains:
        assertions.append(Assertion("not_contains", not leaks, f"leaked {list(leaks)}" if leaks else ""))
    if getattr(res, "degraded", False):
        assertions.append(Assertion("not_degraded", False, getattr(res, "error", None) or "retrieval degraded"))

    expl = None
    if res.explanations is not None:
        expl = {c.memory_id: c for c in res.explanations}
    misses = tuple(
        _explain_miss(engine, rp, q, lab, expl, cfg) for lab in positive if relevant_ranks[lab] is None
    )
    latency = float(getattr(res, "latency_ms", 0.0) or 0.0) or wall_ms
    tags = (*case.tags, *q.tags)
    unanswerable = q.empty is True or any(t == p or t.startswith(p + ":") for t in tags for p in UNANSWERABLE_TAGS)
    stale_ranks = None
    stale_ids: set[str] = set()
    if _in_stale_scope(case, q):
        stale = _stale_labels(rp, q)
        label_rank: dict[str, int] = {}
        for r in retrieved:
            for lab in r.labels:
                label_rank.setdefault(lab, r.rank)
        stale_ranks = {lab: label_rank.get(lab) for lab in sorted(stale)}
        stale_ids = {mid for lab in stale if (mid := rp.label_id.get(lab))}
    top_rel = None
    if res.explanations:
        rels = [float(c.relevance) for c in res.explanations if c.dropped_at in _LIVE_DROPS]
        top_rel = max(rels) if rels else None
    return QueryResult(
        suite="", case_id=case.id, query_id=q.id, category=case.category, lang=case.lang,
        tags=tuple(dict.fromkeys((*case.tags, *q.tags))), must_pass=case.must_pass, text=q.text, k=k,
        passed=all(a.passed for a in assertions), assertions=tuple(assertions), relevant=dict(q.relevant),
        relevant_ranks=relevant_ranks, retrieved=retrieved, hit=m.hit, recall=m.recall, rr=m.rr, ndcg=m.ndcg,
        recall_at=recall_at, latency_ms=latency, irrelevant_violations=violations, leaks=leaks, misses=misses,
        degraded=bool(getattr(res, "degraded", False)), error=getattr(res, "error", None), answer=q.answer,
        relevant_ids={lab: rp.label_id.get(lab) for lab in q.relevant},
        relevant_texts={lab: rp.events[lab].text for lab in q.relevant},
        stale_ranks=stale_ranks, unanswerable=unanswerable, top_relevance=top_rel,
        context=_context_stats(engine, rp, q, res, hits, positive, stale_ids),
        official=_official(benchmark, rp, q, retrieved, positive, k, unanswerable),
    )


def run_case(
    suite: ResolvedSuite,
    case: Case,
    cfg: EngineConfig,
    *,
    engine_factory: EngineFactory = default_engine_factory,
    cutoffs: Sequence[int] = DEFAULT_CUTOFFS,
    explain: bool = True,
) -> CaseResult:
    """Replay one case on a fresh engine from ``engine_factory(cfg)`` and check its queries.

    Engine errors are not swallowed: a case that raises is a bug to see.
    """
    from dataclasses import replace

    engine = engine_factory(cfg)
    try:
        rp = _Replay(case)
        writes = _replay_events(engine, rp)
        bench = (suite.source or {}).get("benchmark")
        queries = [replace(_run_query(engine, rp, q, cfg, cutoffs, explain, bench), suite=suite.name)
                   for q in case.queries]
    finally:
        engine.close()
    return CaseResult(
        suite=suite.name, case_id=case.id, category=case.category, lang=case.lang, tags=case.tags,
        must_pass=case.must_pass, writes=tuple(writes), queries=tuple(queries),
    )


def run_suites(
    suites: Iterable[ResolvedSuite],
    cfg: EngineConfig | None = None,
    *,
    engine_factory: EngineFactory = default_engine_factory,
    cutoffs: Sequence[int] = DEFAULT_CUTOFFS,
    explain: bool = True,
    progress: Callable[[int], None] | None = None,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> EvalRun:
    """Replay every case of every suite; ``progress(n_queries_done)`` is called after each case.

    ``clock`` stamps the run's own start/finish (wall time of the run, never
    used by scoring). Returns an :class:`EvalRun`.
    """
    cfg = cfg or EngineConfig()
    suites = list(suites)
    started = clock()
    results: list[CaseResult] = []
    for s in suites:
        for c in s.cases:
            results.append(run_case(s, c, cfg, engine_factory=engine_factory, cutoffs=cutoffs, explain=explain))
            if progress is not None:
                progress(len(c.queries))
    finished = clock()
    return EvalRun(
        run_id=uuid.uuid4().hex[:12],
        started_at=started,
        finished_at=finished,
        config=cfg.to_dict(),
        config_hash=cfg.config_hash(),
        git_commit=git_commit(),
        suites=tuple((s.name, s.path) for s in suites),
        cases=tuple(results),
    )


def suites_digest(suites: Iterable[ResolvedSuite]) -> str:
    """Short hash of suite names and paths (to tell runs over different inputs apart)."""
    h = hashlib.sha256()
    for s in suites:
        h.update(f"{s.name}\0{s.path}\0".encode())
    return h.hexdigest()[:12]
