"""Retrieval-side study of issue 16: every turn/message stored (independent of the
write gate), the engine's ``retrieve`` under config variants, and the cosine
distributions the relevance floor and the per-script baseline are calibrated on.

Datasets: ``locomo-dev`` (conv-26, -30, -41), ``locomo-test`` (conv-42, -43:
report only, never tune), ``memdaily`` (the dev files in ``../shared/data/memdaily``).
Every turn is written straight to a qdrant-edge store as an episodic memory
(speaker-prefixed LoCoMo turns with their session; MemDaily messages without a
session, one user per trajectory), then each question is asked with ``top_k=10``.

    PYTHONPATH=. python benchmarks/retrieval_study.py locomo-dev --variant "" --variant retrieval.floor=0
    PYTHONPATH=. python benchmarks/retrieval_study.py memdaily --distribution

``--variant`` is a comma-separated list of dotted overrides ("" = defaults);
prints recall@10, MRR@10 and latency per variant. ``--distribution`` prints the
percentiles of the query cosine of the best evidence item vs the best item of
another user's store (a never-stored question) and the median over the store.
``--cache DIR`` keeps the vectors between runs (e5 embeds ~15-60 texts/s here).

``--write-path`` (issue 16, write side) stores every turn through ``MemoryEngine.add`` at the
defaults (+ each ``--variant``) instead, and prints recall@10 beside every turn stored, the
write outcomes, the evidence turns kept, every supersession, and why each evidence turn the
every-turn store found is missing (rejected, candidate pool, archived, merged or stored but
outranked); ``--bare`` gives ``add`` only the text and time (no session, no speaker).

    PYTHONPATH=. python benchmarks/retrieval_study.py locomo-dev --write-path --cache /tmp/memwb-vectors
    PYTHONPATH=. python benchmarks/retrieval_study.py memdaily --write-path --cache /tmp/memwb-vectors
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from memory_engine import EngineConfig, MemoryEngine
from memory_engine.config import KeywordSection
from memory_engine.embedding import CachedEmbedder, make_embedder
from memory_engine.evaluation.importers import import_locomo, import_memdaily
from memory_engine.evaluation.suite import Case, load_suites
from memory_engine.models import MemoryRecord, MemoryType, Source, to_epoch
from memory_engine.scope import Scope
from memory_engine.store.base import StoredPoint
from memory_engine.store.edge import EdgeStore
from memory_engine.text import content_terms, count_tokens, sparse_document

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
SPLITS = {"locomo-dev": ("conv-26", "conv-30", "conv-41"), "locomo-test": ("conv-42", "conv-43")}


def load_cases(dataset: str, data: Path) -> list[Case]:
    """The dataset's cases through the project's importers (evidence normalised)."""
    tmp = tempfile.mkdtemp(prefix="memwb-study-")
    if dataset.startswith("locomo"):
        import_locomo(data / "locomo" / "locomo10_dev.json", tmp)
        keep = SPLITS[dataset]
        return [c for s in load_suites([tmp]) for c in s.cases if c.id in keep]
    import_memdaily(sorted((data / "memdaily").glob("*.json")), tmp)
    return [c for s in sorted(load_suites([tmp]), key=lambda s: s.name) for c in s.cases]


def warm_cache(emb: CachedEmbedder, cases: list[Case], cache: Path | None) -> None:
    """Embed every turn and question once (loading/saving ``cache`` when given)."""
    docs = list(dict.fromkeys(e.text.strip() for c in cases for e in c.events))
    qs = list(dict.fromkeys(q.text for c in cases for q in c.queries))
    for kind, texts in (("d", docs), ("q", qs)):
        f = cache / f"{emb.version.replace(':', '_')}_{kind}.npz" if cache else None
        if f is not None and f.exists():
            z = np.load(f, allow_pickle=False)
            for t, v in zip(json.loads(str(z["keys"])), z["vecs"], strict=True):
                emb._put((kind, t), v.astype(np.float32))
        todo = [t for t in texts if emb._get((kind, t)) is None]
        if kind == "d":
            for i in range(0, len(todo), 64):
                emb.embed_documents(todo[i:i + 64])
        else:
            for t in todo:
                emb.embed_query(t)
        if f is not None and todo:
            f.parent.mkdir(parents=True, exist_ok=True)
            keys = [t for t in texts if emb._get((kind, t)) is not None]
            np.savez(f, keys=json.dumps(keys, ensure_ascii=False),
                     vecs=np.stack([emb._get((kind, t)) for t in keys]))


def build_store(emb: CachedEmbedder, cases: list[Case], keyword: KeywordSection | None = None
                ) -> tuple[EdgeStore, dict[str, str]]:
    """Every turn of ``cases`` as an episodic memory; BM25 document weights of ``keyword``
    (None = the config defaults). Returns the store and {memory id: turn label}."""
    kw = keyword or KeywordSection()
    store = EdgeStore(ephemeral=True)
    store.ensure_collection(emb.dim)
    labels: dict[str, str] = {}
    pts = []
    for ci, c in enumerate(cases):
        for ti, ev in enumerate(c.events):
            text = ev.text.strip()
            ts = to_epoch(ev.at) + ti  # turns of one session share its time: keep their order
            terms = tuple(sorted(content_terms(text)))
            rec = MemoryRecord(id=f"{ci:04x}{ti:012x}", tenant_id="study", user_id=ev.user or c.id, content=text,
                               memory_type=MemoryType.EPISODIC, session_id=ev.session,
                               metadata=dict(ev.metadata or {}), importance=0.5,
                               source=Source.USER_STATED, created_at=ts, updated_at=ts, last_access_at=ts,
                               embedding_version=emb.version, terms=terms, tokens=count_tokens(text))
            pts.append(StoredPoint(rec.id, emb.embed_documents([text])[0].tolist(), sparse_document(terms, kw.k1, kw.b, kw.avg_len),
                                   rec.to_payload()))
            labels[rec.id] = ev.label
    for i in range(0, len(pts), 500):
        store.upsert(pts[i:i + 500])
    return store, labels


def run_variant(base: EngineConfig, overrides: dict[str, Any], emb: CachedEmbedder, store: EdgeStore,
                labels: dict[str, str], cases: list[Case]) -> dict[str, Any]:
    eng = MemoryEngine(base.with_overrides(overrides), embedder=emb, store=store)
    rec, rr, lat = [], [], []
    for c in cases:
        for q in c.queries:
            user = q.user or c.events[0].user or c.id
            t = time.perf_counter()
            res = eng.retrieve(q.text, user_id=user, tenant_id="study", top_k=10, now=q.at)
            lat.append((time.perf_counter() - t) * 1000)
            got = [labels[h.memory_id] for h in res.hits]
            rel = set(q.relevant)
            rec.append(len(set(got) & rel) / len(rel))
            rr.append(next((1 / i for i, lab in enumerate(got, 1) if lab in rel), 0.0))
    return {"overrides": overrides, "recall@10": float(np.mean(rec)), "mrr@10": float(np.mean(rr)), "n": len(rec),
            "p50_ms": float(np.percentile(lat, 50)), "p95_ms": float(np.percentile(lat, 95))}


def write_path(base: EngineConfig, overrides: dict[str, Any], emb: CachedEmbedder, cases: list[Case],
               raw: dict[tuple[str, str], list[str]] | None = None, bare: bool = False) -> dict[str, Any]:
    """Every event through ``MemoryEngine.add`` at the defaults (+ ``overrides``), then every
    question: recall@10 of the evidence labels (a merged memory counts for every turn merged
    into it), evidence turns kept retrievable, supersessions (old/new text), and, when ``raw``
    (question -> labels of the every-turn top 10) is given, why each evidence label the
    every-turn store found is missing through the write path. ``bare``: ``add`` gets the text
    and time only (no session, no metadata such as the speaker), as a caller that knows nothing else."""
    eng = MemoryEngine.in_memory(base.with_overrides(overrides), embedder=emb)
    labels: dict[str, set[str]] = {}
    writes: dict[tuple[str, str], Any] = {}
    outcomes: dict[str, int] = {}
    sups: list[dict[str, Any]] = []
    links: list[dict[str, Any]] = []
    texts: dict[tuple[str, str], str] = {}
    for c in cases:
        for ev in c.events:
            user = ev.user or c.id
            wr = eng.add(ev.text, user_id=user, tenant_id="study", session_id=None if bare else ev.session,
                         role=ev.role, metadata=None if bare else ev.metadata, now=ev.at)
            writes[(user, ev.label)] = wr
            texts[(user, ev.label)] = ev.text
            key = wr.outcome if wr.outcome != "rejected" else f"rejected:{(wr.reason or '').split(':')[0]}"
            outcomes[key] = outcomes.get(key, 0) + 1
            if wr.memory_id and wr.outcome != "rejected":
                labels.setdefault(wr.memory_id, set()).add(ev.label)
            for sid in wr.superseded_ids:
                old = eng.memory(sid, user_id=user, tenant_id="study")
                sups.append({"case": c.id, "old": sorted(labels.get(sid, ())), "old_text": old.content if old else sid,
                             "new": ev.label, "new_text": ev.text, "outcome": wr.outcome,
                             "evidence": [e for e in wr.evidence if e.get("id") == sid]})
            for e in wr.evidence:  # a correction's link (metadata._corrects): ranked below it, nothing archived
                if e.get("rule") == "corrects":
                    old = eng.memory(e["id"], user_id=user, tenant_id="study")
                    links.append({"case": c.id, "old": sorted(labels.get(e["id"], ())),
                                  "old_text": old.content if old else e["id"], "new": ev.label, "new_text": ev.text})
    rec, rr, losses, per_q = [], [], [], []
    kept_turns: dict[str, set[str]] = {}
    ev_turns: set[tuple[str, str]] = set()
    for c in cases:
        for q in c.queries:
            user = q.user or c.events[0].user or c.id
            if user not in kept_turns:
                live = [p.id for p in eng.store.scroll(Scope("study", user, emb.version).filter())]
                kept_turns[user] = set().union(*(labels.get(i, set()) for i in live)) if live else set()
            res = eng.retrieve(q.text, user_id=user, tenant_id="study", top_k=10, now=q.at)
            got = [labels.get(h.memory_id, set()) for h in res.hits]
            rel = set(q.relevant)
            ev_turns.update((user, lab) for lab in rel)
            found = set().union(*got) if got else set()
            rec.append(len(found & rel) / len(rel))
            rr.append(next((1 / i for i, g in enumerate(got, 1) if g & rel), 0.0))
            per_q.append({"case": c.id, "q": q.id, "recall": rec[-1], "hits": [sorted(g) for g in got]})
            if raw is None:
                continue
            for lab in sorted((set(raw.get((c.id, q.id), ())) & rel) - found):
                wr = writes[(user, lab)]
                mid = wr.memory_id
                rec_ = eng.memory(mid, user_id=user, tenant_id="study") if mid else None
                if wr.outcome == "rejected":
                    kind = f"rejected:{(wr.reason or '').split(':')[0]}"
                elif wr.outcome == "candidate":
                    kind = "candidate_pool"
                elif rec_ is None:
                    kind = "missing"
                elif rec_.status.value != "current" or rec_.archived_at is not None:
                    kind = f"archived:{rec_.status.value}"
                elif wr.outcome == "merged":
                    kind = "merged_outranked"
                else:
                    kind = "stored_outranked"
                losses.append({"case": c.id, "q": q.id, "query": q.text, "label": lab, "kind": kind,
                               "text": texts[(user, lab)], "kept_as": rec_.content if rec_ else None,
                               "kept_type": rec_.memory_type.value if rec_ else None,
                               "importance": rec_.importance if rec_ else None,
                               "top": [h.content[:100] for h in res.hits]})
    kept = sum(1 for u, lab in ev_turns if lab in kept_turns.get(u, set()))
    eng.close()
    return {"overrides": overrides, "recall@10": float(np.mean(rec)), "mrr@10": float(np.mean(rr)), "n": len(rec),
            "outcomes": outcomes, "evidence_turns": len(ev_turns), "evidence_kept": kept,
            "supersessions": sups, "links": links, "losses": losses, "per_query": per_q}


def raw_top(base: EngineConfig, emb: CachedEmbedder, store: EdgeStore, labels: dict[str, str],
            cases: list[Case]) -> dict[tuple[str, str], list[str]]:
    """(case, question) -> labels of the every-turn top 10 at the defaults."""
    eng = MemoryEngine(base, embedder=emb, store=store)
    out = {}
    for c in cases:
        for q in c.queries:
            user = q.user or c.events[0].user or c.id
            res = eng.retrieve(q.text, user_id=user, tenant_id="study", top_k=10, now=q.at)
            out[(c.id, q.id)] = [labels[h.memory_id] for h in res.hits]
    return out


def distribution(emb: CachedEmbedder, cases: list[Case]) -> dict[str, list[float]]:
    """Query cosine percentiles (10/25/50/75/90): best evidence item, best item of the next
    case's store (a never-stored question), median over the own store."""
    vec = {c.id: emb.embed_documents([e.text.strip() for e in c.events]) for c in cases}
    best, never, median = [], [], []
    shift = max(1, len(cases) // 2)
    for i, c in enumerate(cases):
        other = cases[(i + shift) % len(cases)]
        for q in c.queries:
            qv = emb.embed_query(q.text)
            cos = vec[c.id] @ qv
            best.append(max(float(cos[j]) for j, e in enumerate(c.events) if e.label in q.relevant))
            never.append(float((vec[other.id] @ qv).max()))
            median.append(float(np.median(cos)))
    pct = (10, 25, 50, 75, 90)
    return {"best_evidence": np.percentile(best, pct).round(3).tolist(),
            "never_stored_best": np.percentile(never, pct).round(3).tolist(),
            "store_median": np.percentile(median, pct).round(3).tolist()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset", choices=["locomo-dev", "locomo-test", "memdaily"])
    ap.add_argument("--variant", action="append", default=None, help='Comma-separated KEY=VALUE overrides ("" = defaults).')
    ap.add_argument("--distribution", action="store_true", help="Print the cosine distributions instead.")
    ap.add_argument("--data", type=Path, default=DATA, help="The shared data folder (default ../shared/data).")
    ap.add_argument("--cache", type=Path, default=None, help="Folder keeping the vectors between runs.")
    ap.add_argument("--write-path", action="store_true",
                    help="Store through MemoryEngine.add (defaults + each --variant) and report the loss "
                         "against every turn stored, per mechanism.")
    ap.add_argument("--bare", action="store_true",
                    help="With --write-path: add() gets text and time only (no session id, no speaker metadata).")
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)
    base = EngineConfig(workspace=tempfile.mkdtemp(prefix="memwb-study-ws-")).with_overrides(
        {"retrieval.touch_on_hit": False, "tracing.enabled": False})
    emb = make_embedder(base.embedding)
    cases = load_cases(a.dataset, a.data)
    warm_cache(emb, cases, a.cache)
    out: dict[str, Any] = {"dataset": a.dataset, "embedding": emb.version,
                           "questions": sum(len(c.queries) for c in cases)}
    if a.write_path:
        store, labels = build_store(emb, cases)
        raw = raw_top(base, emb, store, labels, cases)
        rel = {(c.id, q.id): set(q.relevant) for c in cases for q in c.queries}
        every = float(np.mean([len(set(v) & rel[k]) / len(rel[k]) for k, v in raw.items()]))
        store.close()
        print(f"{a.dataset} every turn stored, defaults: recall@10 {every:.3f}", flush=True)
        out["every_turn_recall@10"] = every
        out["variants"] = []
        for v in a.variant or [""]:
            ov = dict(kv.split("=", 1) for kv in v.split(",") if kv.strip())
            r = write_path(base, ov, emb, cases, raw, bare=a.bare)
            out["variants"].append(r)
            kinds: dict[str, int] = {}
            for x in r["losses"]:
                kinds[x["kind"]] = kinds.get(x["kind"], 0) + 1
            print(f"{a.dataset} write path {ov or 'defaults'}: recall@10 {r['recall@10']:.3f}  MRR@10 "
                  f"{r['mrr@10']:.3f}  n={r['n']}  evidence kept {r['evidence_kept']}/{r['evidence_turns']}  "
                  f"supersessions {len(r['supersessions'])}  links {len(r['links'])}\n  writes {r['outcomes']}\n  "
                  f"lost vs every turn (evidence labels): {kinds}", flush=True)
            for sup in r["supersessions"]:
                print(f"  superseded {sup['old']} {sup['old_text'][:70]!r} <- {sup['new']} {sup['new_text'][:70]!r}")
            for ln in r["links"]:
                print(f"  linked {ln['old']} {ln['old_text'][:70]!r} <- {ln['new']} {ln['new_text'][:70]!r}")
    elif a.distribution:
        out["distribution"] = distribution(emb, cases)
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        store, labels = build_store(emb, cases, base.keyword)
        out["variants"] = []
        for v in a.variant or [""]:
            ov = dict(kv.split("=", 1) for kv in v.split(",") if kv.strip())
            # keyword.* are document-side BM25 weights: a variant that sets them gets its own store
            own = build_store(emb, cases, base.with_overrides(ov).keyword)[0] if any(
                k.startswith("keyword.") for k in ov) else None
            r = run_variant(base, ov, emb, own or store, labels, cases)
            if own is not None:
                own.close()
            out["variants"].append(r)
            print(f"{a.dataset} {ov or 'defaults'}: recall@10 {r['recall@10']:.3f}  MRR@10 {r['mrr@10']:.3f}  "
                  f"n={r['n']}  p50 {r['p50_ms']:.1f} ms  p95 {r['p95_ms']:.1f} ms", flush=True)
        store.close()
    if a.json:
        a.json.write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
