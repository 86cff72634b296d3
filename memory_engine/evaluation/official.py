"""Benchmark metrics as their authors define and name them.

Our own rank metrics (``metrics.py``) follow the textbook definitions; a
benchmark's paper numbers come from its own script, which sometimes differs.
These functions reproduce the official scripts, so a figure named
``recall_all@5`` here means what it means in the LongMemEval paper.

**LongMemEval** (Wu et al., ICLR 2025; ``src/retrieval/eval_utils.py`` and
``src/evaluation/print_retrieval_metrics.py`` of xiaowu0162/LongMemEval):

- ``recall_any@k`` = 1 if any evidence item is in the top k, else 0;
- ``recall_all@k`` = 1 if every evidence item is in the top k, else 0;
- ``ndcg_any@k`` = DCG@k / IDCG@k with binary relevance and the script's DCG,
  ``rel_1 + sum_{i>=2} rel_i / log2(i)`` (rank 2 is not discounted, unlike
  ``metrics.dcg``), the ideal ranking being every relevant item of the corpus;
- *turn level*: items are turns (evidence = turns with ``has_answer``);
  *session level*: each turn is mapped to its session, the evidence to the
  answer sessions, and k grows until the top k holds k distinct sessions;
- questions whose id ends in ``_abs`` (abstention) are excluded from these
  figures (``print_retrieval_metrics.py``) and reported apart.

The paper's retrieval tables report session-level ``recall_all@5``/``ndcg_any@5``
and ``@10`` and turn-level ``@5/@10/@50``; vendors usually report
``recall_any@k``, which is always >= ``recall_all@k``.

**LoCoMo** (Maharana et al., ACL 2024; ``task_eval/evaluation.py`` of
snap-research/locomo): recall = share of a question's evidence dialog ids
(``D<session>:<turn>``) found among the retrieved ones; when session
summaries are retrieved (ids ``S<session>``), an evidence id counts when its
session is retrieved. Reported per category with the official mapping
(:data:`~memory_engine.evaluation.importers.LOCOMO_CATEGORIES`: 4 single-hop,
1 multi-hop, 2 temporal, 3 open-domain, 5 adversarial).

Differences we cannot remove: our engine returns at most ``top_k`` hits
(no ranking of the whole corpus), so a cutoff above the query's ``top_k`` is
not computed, and session-level k can only grow within the returned hits.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

#: Cutoffs of LongMemEval's printed metrics (session level uses 5 and 10).
LME_CUTOFFS: tuple[int, ...] = (5, 10, 50)
LME_SESSION_CUTOFFS: tuple[int, ...] = (5, 10)


def lme_dcg(relevances: Sequence[float], k: int) -> float:
    """DCG of LongMemEval's script: ``rel_1 + sum_{i=2..k} rel_i / log2(i)`` (1-based i)."""
    r = list(relevances)[:k]
    if not r:
        return 0.0
    return float(r[0]) + sum(float(x) / math.log2(i) for i, x in enumerate(r[1:], start=2))


def lme_evaluate(ranked: Sequence[Iterable[str]], correct: Iterable[str], corpus: Sequence[str],
                 k: int) -> tuple[float, float, float]:
    """``(recall_any@k, recall_all@k, ndcg_any@k)`` of one question, as ``evaluate_retrieval``.

    ``ranked``: per returned item (best first) the corpus ids it stands for
    (one for a turn; several when the engine merged turns into one memory);
    ``correct``: evidence ids; ``corpus``: every corpus id, duplicates kept
    (at session level a session appears once per turn, as in the script).
    An item is relevant when any of its ids is correct. ``ndcg_any`` is 0
    when the corpus holds no relevant item.
    """
    correct_set = set(correct)
    recalled = {i for item in list(ranked)[:k] for i in item}
    recall_any = float(any(d in recalled for d in correct_set))
    recall_all = float(all(d in recalled for d in correct_set))
    rels = [1.0 if any(i in correct_set for i in item) else 0.0 for item in list(ranked)[:k]]
    ideal = sorted((1.0 if c in correct_set else 0.0 for c in corpus), reverse=True)
    idcg = lme_dcg(ideal, k)
    return recall_any, recall_all, (lme_dcg(rels, k) / idcg if idcg > 0 else 0.0)


def session_of(turn_label: str) -> str:
    """Session id of a turn label ``<session>:<turn>`` (our importer's form of ``<session>_<turn>``)."""
    return turn_label.rsplit(":", 1)[0]


def lme_turn2session(ranked: Sequence[Iterable[str]], correct: Iterable[str], corpus: Sequence[str],
                     k: int) -> tuple[float, float, float]:
    """Session-level metrics from a turn ranking, as ``evaluate_retrieval_turn2session``: turns map to
    sessions and k grows until the top k holds k distinct sessions (or the ranking ends)."""
    sess_ranked = [tuple(dict.fromkeys(session_of(i) for i in item)) for item in ranked]
    sess_correct = {session_of(c) for c in correct}
    sess_corpus = [session_of(c) for c in corpus]
    eff = k
    while eff < len(sess_ranked) and len({s for item in sess_ranked[:eff] for s in item}) < k:
        eff += 1
    return lme_evaluate(sess_ranked, sess_correct, sess_corpus, eff)


def longmemeval_metrics(ranked: Sequence[Iterable[str]], correct: Iterable[str], corpus: Sequence[str],
                        top_k: int) -> dict[str, float]:
    """Every official LongMemEval figure of one question at the cutoffs within ``top_k``:
    ``turn:recall_any@k``, ``turn:recall_all@k``, ``turn:ndcg_any@k`` and the same with ``session:``."""
    ranked = [tuple(x) for x in ranked]
    correct = list(correct)
    out: dict[str, float] = {}
    for k in LME_CUTOFFS:
        if k > top_k:
            continue
        ra, rl, nd = lme_evaluate(ranked, correct, corpus, k)
        out |= {f"turn:recall_any@{k}": ra, f"turn:recall_all@{k}": rl, f"turn:ndcg_any@{k}": nd}
        if k in LME_SESSION_CUTOFFS:
            ra, rl, nd = lme_turn2session(ranked, correct, corpus, k)
            out |= {f"session:recall_any@{k}": ra, f"session:recall_all@{k}": rl, f"session:ndcg_any@{k}": nd}
    return out


def locomo_recall(context_ids: Sequence[str], evidence: Sequence[str]) -> float:
    """LoCoMo's recall of one question (``eval_question_answering``): share of evidence ids
    (``D<s>:<t>``) in the retrieved ids; with session summaries retrieved (ids ``S<s>``) an
    evidence id counts when its session ``<s>`` is among them. 1.0 without evidence, as the script."""
    if not evidence:
        return 1.0
    ctx = list(context_ids)
    if ctx and ctx[0].startswith("S"):
        sessions = {c[1:] for c in ctx}
        return sum(ev.split(":")[0][1:] in sessions for ev in evidence) / len(evidence)
    have = set(ctx)
    return sum(ev in have for ev in evidence) / len(evidence)


__all__ = ["LME_CUTOFFS", "LME_SESSION_CUTOFFS", "lme_dcg", "lme_evaluate", "lme_turn2session", "locomo_recall",
           "longmemeval_metrics", "session_of"]
