"""Demo workspace builder and the built-in extractive reader.

``memwb app`` on an empty workspace (and ``memwb demo``) replays the golden
suites and a slice of the LoCoMo sample through the real engine (embedded
default: qdrant-edge shard + DuckDB warehouse + bundled model): every event is
an ``add()``, every query a ``retrieve()``, and each retrieval is answered by
:func:`extractive_answer`, whose ``[mem-<id>]`` citations are recorded with
``record_answer()``. The resulting spans fill the warehouse.

Simulated time
--------------
Each case's timeline is moved into the ``days`` before ``now`` (cases end at
evenly spread points, longer cases are compressed), and the engine gets the
simulated ``now=`` on every call. The spans the SDK records carry wall-clock
times, so the demo exports them through :class:`TimeShiftProcessor`, which
moves each span onto the simulated clock (keeping its real duration) before it
is inserted with source :data:`DEMO_SOURCE`. That is what lets the 7-day write
efficacy and the day-bucketed series show more than one day.

Golden labels as a reviewer
---------------------------
With ``label_verdicts`` the demo also stores verdicts by the reviewer
:data:`LABEL_REVIEWER` (never a person): a cited memory is ``correct`` when it
is one of the query's ``relevant`` labels, ``incorrect`` when it is one of its
``irrelevant`` labels, otherwise nothing is stored. Human reviewers judge the
same citations in the Citation review page, which gives reviewer agreement.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import SpanProcessor

from .config import EngineConfig
from .errors import ValidationError
from .models import Hit, RetrievalResult
from .text import content_terms

DEMO_SOURCE = "demo"
"""``spans.source`` of every span the demo replay writes."""

DEMO_SERVICE = "memwb-demo"
"""``service.name`` of the demo replay's spans (the app's own live engine uses the configured one)."""

LABEL_REVIEWER = "golden-labels"
"""Reviewer name of the verdicts derived from suite labels (not a person)."""

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SUITES_DIR = REPO_ROOT / "eval_sets"
DEFAULT_LOCOMO = Path(
    os.environ.get("MEMWB_LOCOMO", str(REPO_ROOT.parent / "shared" / "data" / "locomo" / "locomo10_dev.json"))
)
"""LoCoMo sample (CC BY-NC 4.0, read-only); env ``MEMWB_LOCOMO`` overrides. Optional."""

NO_MEMORY_ANSWER = "I have no stored memory about that."

_QUOTE_CHARS = 160


# --- the extractive reader ------------------------------------------------------------------------
def extractive_answer(
    query: str, hits: Sequence[Hit], *, max_citations: int = 2, min_shared_terms: int = 1, quote_chars: int = _QUOTE_CHARS
) -> str:
    """Answer ``query`` by quoting the hits that share content terms with it.

    Hits are taken in rank order; a hit is used when it shares at least
    ``min_shared_terms`` terms (:func:`memory_engine.text.content_terms`, so
    Chinese is segmented by jieba) with the query, up to ``max_citations``.
    Each quote (cut at ``quote_chars`` characters) is followed by its
    ``[mem-<id>]`` marker, which :func:`memory_engine.engine.parse_citations`
    reads back. No hit qualifies -> :data:`NO_MEMORY_ANSWER` (no citation).
    Raises ValueError for ``max_citations < 1`` or ``min_shared_terms < 1``.
    """
    if max_citations < 1 or min_shared_terms < 1:
        raise ValidationError("max_citations and min_shared_terms must be >= 1")
    q = content_terms(query)
    chosen = [h for h in hits if len(q & content_terms(h.content)) >= min_shared_terms][:max_citations]
    if not chosen:
        return NO_MEMORY_ANSWER
    quotes = []
    for h in chosen:
        text = " ".join(h.content.split())
        if len(text) > quote_chars:
            text = text[: quote_chars - 1].rstrip() + "…"
        quotes.append(f'"{text}" [mem-{h.memory_id}]')
    return "From memory: " + "; ".join(quotes) + "."


# --- simulated clock on spans -----------------------------------------------------------------------
class TimeShiftProcessor(SpanProcessor):
    """An OpenTelemetry ``SpanProcessor`` that moves spans onto a simulated clock
    and inserts them into a warehouse in batches.

    :meth:`set_clock` maps "now" (wall clock) to a simulated time; every span
    ending afterwards is shifted by that offset (its duration is kept), decoded
    with :func:`~memory_engine.observability.records.decode_readable_span` and
    buffered; :meth:`force_flush` (and every ``batch`` spans) inserts the
    buffer with ``source``. Synchronous on purpose: the offset must be the one
    in force when the span ended.
    """

    def __init__(self, warehouse: Any, *, source: str = DEMO_SOURCE, batch: int = 500) -> None:
        self.warehouse = warehouse
        self.source = source
        self.batch = batch
        self.offset_ns = 0
        self._buf: list[Any] = []
        self.received = self.stored = self.duplicate = self.rejected = self.warnings = 0

    def set_clock(self, simulated: datetime, wall_ns: int | None = None) -> None:
        """Spans ending from now on are shifted so that ``time.time_ns()`` maps to ``simulated``."""
        wall = time.time_ns() if wall_ns is None else wall_ns
        self.offset_ns = int(simulated.timestamp() * 1e9) - wall

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        return None

    def on_end(self, span: Any) -> None:
        from .observability.records import SpanRejected, decode_readable_span

        self.received += 1
        try:
            rec = decode_readable_span(span)
        except SpanRejected:
            self.rejected += 1
            return
        self._buf.append(replace(rec, start_ns=rec.start_ns + self.offset_ns, end_ns=rec.end_ns + self.offset_ns))
        if len(self._buf) >= self.batch:
            self._flush()

    def _flush(self) -> None:
        if not self._buf:
            return
        res = self.warehouse.insert_spans(self._buf, source=self.source)
        self.stored += res.stored
        self.duplicate += res.duplicate
        self.warnings += res.warnings
        self._buf = []

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        self._flush()
        return True

    def shutdown(self) -> None:
        self._flush()


# --- plan ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DemoOptions:
    """What the demo replays. ``suites_dir`` golden suites (every ``*.yaml``),
    ``max_cases_per_suite`` keeps the first N cases of each (None = all);
    ``locomo_path`` the LoCoMo JSON (missing file = suites only),
    ``locomo_conversations`` / ``locomo_turns`` / ``locomo_questions`` the slice;
    ``days`` the simulated period before ``now``; ``repeat_after_days`` asks
    each query again that many days later (when still before ``now``);
    ``label_verdicts`` stores verdicts derived from suite labels; ``eval_run``
    also stores one golden evaluation run (fresh engine per case, over the
    same ``max_cases_per_suite`` cases) so the Golden eval page has a result."""

    suites_dir: Path = DEFAULT_SUITES_DIR
    max_cases_per_suite: int | None = None
    locomo_path: Path | None = DEFAULT_LOCOMO
    locomo_conversations: int = 1
    locomo_turns: int = 160
    locomo_questions: int = 40
    days: float = 14.0
    repeat_after_days: tuple[float, ...] = (1.0, 4.0)
    label_verdicts: bool = True
    max_citations: int = 2
    eval_run: bool = True


@dataclass(frozen=True)
class DemoStep:
    """One replayed action at simulated time ``at``: a write (``text`` ...) or a query."""

    at: datetime
    kind: str  # "write" | "query"
    tenant_id: str
    user_id: str
    session_id: str | None
    text: str
    label: str = ""
    memory_type: str | None = None
    fact: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    role: str = "user"
    relevant: tuple[str, ...] = ()
    irrelevant: tuple[str, ...] = ()
    top_k: int | None = None


@dataclass(frozen=True)
class DemoCase:
    """One case of the replay, its steps in time order; ``origin`` 'golden' or 'locomo'."""

    suite: str
    case_id: str
    origin: str
    steps: tuple[DemoStep, ...]


@dataclass(frozen=True)
class DemoPlan:
    cases: tuple[DemoCase, ...]
    notes: tuple[str, ...] = ()

    @property
    def n_writes(self) -> int:
        return sum(1 for c in self.cases for s in c.steps if s.kind == "write")

    @property
    def n_queries(self) -> int:
        return sum(1 for c in self.cases for s in c.steps if s.kind == "query")


@dataclass(frozen=True)
class DemoProgress:
    """Progress callback payload: ``stage`` (embedding / replay / done), ``done`` of ``total`` units."""

    stage: str
    done: int
    total: int
    message: str = ""


@dataclass(frozen=True)
class DemoReport:
    """What a demo build did. Counts of the engine calls, the spans stored,
    the label verdicts, the wall time in seconds and notes (e.g. LoCoMo missing)."""

    workspace: str
    suites: tuple[str, ...]
    cases: int
    writes: int
    retrievals: int
    answers: int
    cited: int
    verdicts: int
    spans_stored: int
    duration_s: float
    locomo_used: bool
    notes: tuple[str, ...] = field(default_factory=tuple)


def spread_times(times: Sequence[datetime], end: datetime, max_span: timedelta) -> list[datetime]:
    """Move a sorted timeline so it ends at ``end``; compress it linearly when it is longer than ``max_span``.

    Pure. Order (and, without compression, the gaps) is kept.
    """
    if not times:
        return []
    first, last = min(times), max(times)
    span = last - first
    scale = 1.0 if span <= max_span or span.total_seconds() == 0 else max_span / span
    return [end - (last - t) * scale for t in times]


def _case_steps(case: Any, tenant_prefix: str | None, user_prefix: str) -> list[DemoStep]:
    steps: list[DemoStep] = []
    for ev in case.events:
        steps.append(DemoStep(
            at=ev.at, kind="write", tenant_id=tenant_prefix or ev.tenant, user_id=f"{user_prefix}{ev.user}",
            session_id=ev.session, text=ev.text, label=ev.label, memory_type=ev.memory_type,
            fact={"key": ev.fact[0], "value": ev.fact[1]} if ev.fact else None, metadata=ev.metadata, role=ev.role,
        ))  # fmt: skip
    for q in case.queries:
        steps.append(DemoStep(
            at=q.at, kind="query", tenant_id=tenant_prefix or q.tenant, user_id=f"{user_prefix}{q.user}",
            session_id=q.session, text=q.text, label=q.id, relevant=tuple(q.relevant), irrelevant=tuple(q.irrelevant),
            top_k=q.top_k,
        ))  # fmt: skip
    return sorted(steps, key=lambda s: s.at)


def plan_demo(options: DemoOptions, *, now: datetime, scratch: Path | None = None) -> DemoPlan:
    """Read the suites (and the LoCoMo slice) and place every case in the ``days`` before ``now``.

    Golden users are namespaced per case (``<case id>/<user>``) because every
    case assumes a fresh engine. Raises SuiteErrors for a broken suite file;
    a missing LoCoMo file only adds a note.
    """
    from .evaluation.suite import load_suites

    notes: list[str] = []
    raw: list[tuple[str, str, str, list[DemoStep]]] = []
    if options.suites_dir and Path(options.suites_dir).is_dir():
        for s in load_suites([options.suites_dir]):
            picked = s.cases if options.max_cases_per_suite is None else s.cases[: options.max_cases_per_suite]
            for c in picked:
                raw.append((s.name, c.id, "golden", _case_steps(c, None, f"{c.id}/")))
    else:
        notes.append(f"no golden suites at {options.suites_dir}")
    if options.locomo_path and Path(options.locomo_path).is_file() and options.locomo_conversations > 0:
        raw.extend(_locomo_cases(options, scratch))
    else:
        notes.append(f"LoCoMo sample not found at {options.locomo_path}: demo built from the golden suites only")
    if not raw:
        notes.append("nothing to replay")
    # spread case end points evenly over the period (oldest first), leaving the last hour free
    period = timedelta(days=options.days)
    n = len(raw)
    planned: list[DemoCase] = []
    for i, (suite, cid, origin, steps) in enumerate(raw):
        end = now - timedelta(hours=1) - (period - timedelta(hours=2)) * (1 - (i + 0.5) / max(n, 1))
        budget = max(end - (now - period), timedelta(hours=1))
        times = spread_times([s.at for s in steps], end, budget)
        moved = [replace(s, at=t) for s, t in zip(steps, times, strict=True)]
        extra = [
            replace(s, at=s.at + timedelta(days=d))
            for s in moved if s.kind == "query" for d in options.repeat_after_days
            if s.at + timedelta(days=d) < now
        ]  # fmt: skip
        planned.append(DemoCase(suite, cid, origin, tuple(sorted(moved + extra, key=lambda s: s.at))))
    return DemoPlan(tuple(planned), tuple(notes))


def _locomo_cases(options: DemoOptions, scratch: Path | None) -> list[tuple[str, str, str, list[DemoStep]]]:
    from .evaluation.importers import import_locomo
    from .evaluation.suite import load_suite

    out = []
    with tempfile.TemporaryDirectory(dir=scratch) as tmp:
        import_locomo(options.locomo_path, tmp, limit=options.locomo_conversations)  # type: ignore[arg-type]
        for f in sorted(Path(tmp).glob("*.yaml")):
            s = load_suite(f)
            for c in s.cases:
                kept_events = c.events[: options.locomo_turns]
                labels = {e.label for e in kept_events}
                qs = [q for q in c.queries if q.relevant and set(q.relevant) <= labels][: options.locomo_questions]
                c2 = replace(c, events=kept_events, queries=tuple(qs))
                out.append((s.name, c.id, "locomo", _case_steps(c2, None, "")))
    return out


# --- build -------------------------------------------------------------------------------------------
def workspace_is_empty(workspace: str | os.PathLike[str]) -> bool:
    """True when the workspace holds neither a warehouse file nor a vector store folder."""
    from .paths import workspace_paths

    return workspace_paths(workspace).is_empty()


def build_demo(
    workspace: str | os.PathLike[str],
    *,
    now: datetime,
    options: DemoOptions | None = None,
    config: EngineConfig | None = None,
    progress: Callable[[DemoProgress], None] | None = None,
) -> DemoReport:
    """Replay the demo plan into ``workspace`` (embedded default engine) and return a report.

    ``now`` is the end of the simulated period (aware datetime). Texts are
    embedded in batches first (the engine's shared embedding cache then
    serves ``add``). The workspace's warehouse is opened read-write for the
    duration (one writer process, see the warehouse's concurrency notes).
    Raises SuiteErrors for broken suites, ValidationError for a naive ``now``.
    """
    from .errors import ValidationError
    from .observability.verdicts import record_verdicts
    from .observability.warehouse import Warehouse
    from .workspace import open_workspace

    if now.tzinfo is None:
        raise ValidationError("now must be timezone-aware", field="now")
    opts = options or DemoOptions()
    t0 = time.perf_counter()
    ws = Path(workspace)
    ws.mkdir(parents=True, exist_ok=True)
    plan = plan_demo(opts, now=now, scratch=ws)
    notes = list(plan.notes)
    base = config or EngineConfig(workspace=str(ws))
    cfg = base.with_overrides({"workspace": str(ws), "tracing.warehouse": False, "tracing.service_name": DEMO_SERVICE})
    # the warehouse stays open after the build (shared in the process): the caller decides when to release it
    wh = Warehouse.open(ws)
    shift = TimeShiftProcessor(wh)
    workspace_ = open_workspace(cfg, span_processors=[shift], warehouse=wh)
    engine = workspace_.engine
    total = plan.n_writes + plan.n_queries
    report = _Counts()
    try:
        # memories and queries are embedded in batches first: the shared cache then serves add() and
        # retrieve() (also the golden evaluation run's engines); a batch costs far less CPU than one call
        # per text (queries: ~7x less measured), with the same vectors
        texts = sorted({s.text for c in plan.cases for s in c.steps if s.kind == "write"})
        queries = sorted({s.text for c in plan.cases for s in c.steps if s.kind == "query"})
        chunk = max(1, cfg.embedding.batch_size)
        n_embed = len(texts) + len(queries)
        for i in range(0, len(texts), chunk):
            engine.embedder.embed_documents(texts[i : i + chunk])
            if progress:
                progress(DemoProgress("embedding", min(i + chunk, len(texts)), n_embed, "embedding memories"))
        for i in range(0, len(queries), chunk):
            engine.embedder.embed_queries(queries[i : i + chunk])
            if progress:
                progress(DemoProgress("embedding", len(texts) + min(i + chunk, len(queries)), n_embed,
                                      "embedding queries"))  # fmt: skip
        done = 0
        for case in plan.cases:
            ids: dict[str, str] = {}
            for step in case.steps:
                shift.set_clock(step.at)
                if step.kind == "write":
                    wr = engine.add(
                        step.text, user_id=step.user_id, tenant_id=step.tenant_id, session_id=step.session_id,
                        role=step.role, memory_type=step.memory_type, metadata=step.metadata, fact=step.fact,
                        now=step.at,
                    )  # fmt: skip
                    report.writes += 1
                    if wr.memory_id and wr.outcome != "rejected":
                        ids[step.label] = wr.memory_id
                else:
                    res = engine.retrieve(
                        step.text, user_id=step.user_id, tenant_id=step.tenant_id, session_id=step.session_id,
                        top_k=step.top_k, now=step.at,
                    )  # fmt: skip
                    report.retrievals += 1
                    cited = answer_retrieval(engine, res, max_citations=opts.max_citations)
                    report.answers += 1
                    report.cited += len(cited)
                    if opts.label_verdicts and res.span_id:
                        report.pending.extend(_label_verdicts(res, cited, step, ids))
                done += 1
                if progress and (done % 10 == 0 or done == total):
                    progress(DemoProgress("replay", done, total, f"{case.suite} / {case.case_id}"))
        engine.flush()
        shift.force_flush()
        # one transaction for all label verdicts (one statement each cost ~14 ms, 17 s of a build)
        record_verdicts(wh, report.pending, reviewer=LABEL_REVIEWER, note="derived from suite labels")
        wh.record_ingest(source=DEMO_SOURCE, received=shift.received, stored=shift.stored,
                         duplicate=shift.duplicate, rejected=shift.rejected, warnings=shift.warnings)  # fmt: skip
        if opts.eval_run and opts.suites_dir.is_dir():
            from .evaluation.runner import run_suites
            from .evaluation.store import save_run
            from .evaluation.suite import load_suites

            # the run covers the cases the demo replayed (a quick demo's run is as small as its replay)
            n_cases = opts.max_cases_per_suite
            suites = [s if n_cases is None else replace(s, cases=s.cases[:n_cases]) for s in load_suites([opts.suites_dir])]
            n_q = sum(len(c.queries) for s in suites for c in s.cases)
            done_q = 0

            def eval_tick(n: int) -> None:
                nonlocal done_q
                done_q += n
                if progress:
                    progress(DemoProgress("eval", done_q, n_q, "golden evaluation run"))

            eval_tick(0)
            run = run_suites(suites, base.with_overrides({"tracing.enabled": False}), progress=eval_tick)
            save_run(run, warehouse=wh)
            notes.append(f"golden evaluation run {run.run_id} stored (Golden eval page)")
    finally:
        workspace_.close()
    if progress:
        progress(DemoProgress("done", total, total, "demo workspace ready"))
    return DemoReport(
        workspace=str(ws), suites=tuple(dict.fromkeys(c.suite for c in plan.cases)), cases=len(plan.cases),
        writes=report.writes, retrievals=report.retrievals, answers=report.answers, cited=report.cited,
        verdicts=len(report.pending), spans_stored=shift.stored, duration_s=time.perf_counter() - t0,
        locomo_used=any(c.origin == "locomo" for c in plan.cases), notes=tuple(notes),
    )  # fmt: skip


@dataclass
class _Counts:
    writes: int = 0
    retrievals: int = 0
    answers: int = 0
    cited: int = 0
    pending: list[tuple[str, str, str, datetime]] = field(default_factory=list)


def answer_retrieval(engine: Any, res: RetrievalResult, *, max_citations: int = 2) -> list[str]:
    """Answer a retrieval with :func:`extractive_answer` and record it (``memory.answer`` span).

    Returns the cited memory ids."""
    answer = extractive_answer(res.query, res.hits, max_citations=max_citations)
    return engine.record_answer(res, answer)


def _label_verdicts(
    res: RetrievalResult, cited: Sequence[str], step: DemoStep, ids: dict[str, str]
) -> list[tuple[str, str, str, datetime]]:
    rel = {ids[lab] for lab in step.relevant if lab in ids}
    irr = {ids[lab] for lab in step.irrelevant if lab in ids}
    out = []
    for mid in cited:
        if mid in rel:
            out.append((res.span_id or "", mid, "correct", step.at + timedelta(minutes=5)))
        elif mid in irr:
            out.append((res.span_id or "", mid, "incorrect", step.at + timedelta(minutes=5)))
    return out


__all__ = [
    "DEFAULT_LOCOMO", "DEFAULT_SUITES_DIR", "DEMO_SERVICE", "DEMO_SOURCE", "LABEL_REVIEWER", "NO_MEMORY_ANSWER",
    "DemoOptions", "DemoPlan", "DemoProgress", "DemoReport", "TimeShiftProcessor", "answer_retrieval", "build_demo",
    "extractive_answer", "plan_demo", "spread_times", "workspace_is_empty",
]
