"""One way to run a Starlette app with uvicorn on a daemon thread: the workspace owner's
loopback servers (vector store, warehouse reads) and ``memwb serve`` share it.
Access logs are off (a request line never reaches a log: keys and tokens travel in
headers, but query strings are not trusted either)."""

from __future__ import annotations

import pickle
import threading
import time
from typing import Any, Self

from .errors import MemoryEngineError, StartupError


def post_pickled(client: Any, url: str, payload: Any, error: type[MemoryEngineError], what: str) -> tuple[bool, Any]:
    """POST ``payload`` pickled to one of the workspace owner's loopback servers and return the
    unpickled ``(ok, value)`` answer. Pickle runs code: only for our own owner process, on loopback,
    behind its token (the client carries it in a header). Raises ``error`` naming ``what`` when the
    owner is unreachable or refuses (non-200)."""
    import httpx

    try:
        r = client.post(url, content=pickle.dumps(payload))
    except httpx.HTTPError as e:
        raise error(f"the workspace owner's {what} at {url} is unreachable: {e}") from e
    if r.status_code != 200:
        raise error(f"the workspace owner's {what} refused the request: HTTP {r.status_code} {r.text[:200]}")
    ok, value = pickle.loads(r.content)  # noqa: S301 - our own owner, loopback, token-checked
    return bool(ok), value


class ThreadedServer:
    """Base for servers run in-process. Subclasses call :meth:`_init_server` with their
    app; ``port=0`` binds a free port, read :attr:`port` after :meth:`start`.
    ``start`` raises :class:`StartupError` when the server is not up within ``timeout_s``."""

    #: thread name and what a start failure calls the server
    thread_name = "memwb-http"
    what = "server"

    def _init_server(self, app: Any, host: str, port: int) -> None:
        import uvicorn

        self.host = host
        self.port = port
        self._server = uvicorn.Server(
            uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="off", access_log=False)
        )
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self, timeout_s: float = 10.0) -> Self:
        self._thread = threading.Thread(target=self._server.run, name=self.thread_name, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise StartupError(f"{self.what} did not start on {self.host}:{self.port}")
            time.sleep(0.02)
        for srv in getattr(self._server, "servers", []):
            for sock in srv.sockets:
                self.port = sock.getsockname()[1]
                break
        return self

    def stop(self, timeout_s: float = 5.0) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout_s)
