"""ragas context precision / recall over an evaluation run.

Non-LLM metrics always (ragas 0.4.3, imported from ``ragas.metrics``, passed
explicitly to ``ragas.evaluate`` with ``raise_exceptions=True``):

- ``IDBasedContextPrecision`` / ``IDBasedContextRecall``: retrieved memory ids
  against the ids of the relevant labels (a label never stored keeps a
  placeholder id, so it counts as not retrieved);
- ``NonLLMContextPrecisionWithReference`` / ``NonLLMContextRecall``: retrieved
  contents against the relevant events' texts by string similarity.

``RAGAS_DO_NOT_TRACK=true`` is set before ragas is imported (its telemetry
otherwise posts over the network and stalls offline CI); ``ragas.testset`` is
never imported. Rank-aware metrics (MRR, nDCG) are ours (``metrics.py``).

LLM metrics (``LLMContextPrecisionWithReference``, ``LLMContextRecall``) run
only when an OpenAI-compatible endpoint is configured through the environment:

- ``MEMWB_EVAL_LLM_BASE_URL``: endpoint URL, e.g. ``http://127.0.0.1:8000/v1``
- ``MEMWB_EVAL_LLM_MODEL``: model name served there
- ``MEMWB_EVAL_LLM_API_KEY`` (or ``OPENAI_API_KEY``): key, ``"none"`` if unused

and only over queries with a reference ``answer``; otherwise the result says
they were skipped and why.

Samples ragas cannot score are excluded and counted: queries without
relevant labels (abstention; judged by ``empty`` instead) and queries that
returned nothing (``NonLLMContextRecall`` fails on an empty context list; our
recall@k already counts them as 0).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .runner import QueryResult

ENV_BASE_URL = "MEMWB_EVAL_LLM_BASE_URL"
ENV_MODEL = "MEMWB_EVAL_LLM_MODEL"
ENV_API_KEY = "MEMWB_EVAL_LLM_API_KEY"

NON_LLM_METRICS: tuple[str, ...] = (
    "id_based_context_precision",
    "id_based_context_recall",
    "non_llm_context_precision_with_reference",
    "non_llm_context_recall",
)


@dataclass(frozen=True)
class LLMEndpoint:
    base_url: str
    model: str
    api_key: str


def llm_endpoint_from_env(env: dict[str, str] | None = None) -> LLMEndpoint | None:
    """The configured OpenAI-compatible endpoint, or ``None`` when base URL or model is unset."""
    e = os.environ if env is None else env
    url, model = e.get(ENV_BASE_URL), e.get(ENV_MODEL)
    if not url or not model:
        return None
    return LLMEndpoint(url, model, e.get(ENV_API_KEY) or e.get("OPENAI_API_KEY") or "none")


@dataclass(frozen=True)
class RagasResult:
    """Means over the scored samples, per-query scores keyed by ``suite/case/query``."""

    scores: dict[str, float | None]
    n_samples: int
    excluded: dict[str, int]
    per_query: dict[str, dict[str, float | None]] = field(default_factory=dict)
    llm_skipped: str | None = None
    skipped: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "scores": self.scores, "n_samples": self.n_samples, "excluded": self.excluded,
            "llm_skipped": self.llm_skipped, "skipped": self.skipped, "per_query": self.per_query,
        }


def _import_ragas() -> Any:
    os.environ["RAGAS_DO_NOT_TRACK"] = "true"  # before the first ragas import: no telemetry posts
    with warnings.catch_warnings():
        # ragas 0.4.3 deprecates ragas.metrics in favour of ragas.metrics.collections, whose
        # classes ragas.evaluate() does not accept; the non-LLM ones live only here.
        warnings.simplefilter("ignore", DeprecationWarning)
        import ragas
        import ragas.metrics as rm

    return ragas, rm


def _nan_to_none(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if f != f else f


def evaluate_queries(
    queries: Sequence[QueryResult],
    *,
    endpoint: LLMEndpoint | None = None,
    use_env: bool = True,
    batch_size: int | None = None,
) -> RagasResult:
    """Run the ragas metrics over ``queries`` (see the module docstring).

    ``endpoint`` (or, with ``use_env``, the environment) enables the LLM
    metrics. Raises whatever ragas raises (``raise_exceptions=True``).
    """
    ragas, rm = _import_ragas()
    from ragas import EvaluationDataset, SingleTurnSample

    no_rel = [q for q in queries if not any(g > 0 for g in q.relevant.values())]
    empty = [q for q in queries if q not in no_rel and not q.retrieved]
    scored = [q for q in queries if q not in no_rel and q.retrieved]
    excluded = {"no_relevant_labels": len(no_rel), "empty_retrieval": len(empty)}
    if endpoint is None and use_env:
        endpoint = llm_endpoint_from_env()
    llm_skipped = None if endpoint else f"no LLM endpoint configured ({ENV_BASE_URL}, {ENV_MODEL})"
    if not scored:
        return RagasResult({m: None for m in NON_LLM_METRICS}, 0, excluded, llm_skipped=llm_skipped,
                           skipped="no query with relevant labels and retrieved contexts")

    def sample(q: QueryResult, with_reference: bool = False) -> Any:
        rel = [lab for lab, g in q.relevant.items() if g > 0]
        kw: dict[str, Any] = {}
        if with_reference:
            kw["reference"] = q.answer
        return SingleTurnSample(
            user_input=q.text,
            retrieved_contexts=[r.content for r in q.retrieved],
            reference_contexts=[q.relevant_texts.get(lab, "") for lab in rel],
            retrieved_context_ids=[r.memory_id for r in q.retrieved],
            reference_context_ids=[q.relevant_ids.get(lab) or f"<unstored:{lab}>" for lab in rel],
            **kw,
        )

    metrics = [
        rm.IDBasedContextPrecision(),
        rm.IDBasedContextRecall(),
        rm.NonLLMContextPrecisionWithReference(),
        rm.NonLLMContextRecall(),
    ]
    ds = EvaluationDataset(samples=[sample(q) for q in scored])
    res = ragas.evaluate(ds, metrics=metrics, raise_exceptions=True, show_progress=False, batch_size=batch_size)
    df = res.to_pandas()
    per_query: dict[str, dict[str, float | None]] = {
        q.key: {m: _nan_to_none(df.iloc[i][m]) for m in NON_LLM_METRICS} for i, q in enumerate(scored)
    }
    scores: dict[str, float | None] = {}
    for m in NON_LLM_METRICS:
        vals = [x for x in (v[m] for v in per_query.values()) if x is not None]
        scores[m] = sum(vals) / len(vals) if vals else None

    if endpoint is not None:
        with_answer = [q for q in scored if q.answer]
        if not with_answer:
            llm_skipped = "no scored query has a reference answer"
        else:
            from langchain_openai import ChatOpenAI
            from ragas.llms import LangchainLLMWrapper

            llm = LangchainLLMWrapper(ChatOpenAI(base_url=endpoint.base_url, model=endpoint.model, api_key=endpoint.api_key))
            llm_metrics = [rm.LLMContextPrecisionWithReference(), rm.LLMContextRecall()]
            ds2 = EvaluationDataset(samples=[sample(q, with_reference=True) for q in with_answer])
            res2 = ragas.evaluate(ds2, metrics=llm_metrics, llm=llm, raise_exceptions=True, show_progress=False)
            df2 = res2.to_pandas()
            for m in [x.name for x in llm_metrics]:
                llm_vals = [_nan_to_none(v) for v in df2[m]]
                for i, q in enumerate(with_answer):
                    per_query[q.key][m] = llm_vals[i]
                defined = [v for v in llm_vals if v is not None]
                scores[m] = sum(defined) / len(defined) if defined else None
    return RagasResult(scores, len(scored), excluded, per_query, llm_skipped=llm_skipped)
