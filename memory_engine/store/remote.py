"""The workspace owner's vector store, reached from another process on the same machine.

The embedded Qdrant edge shard opens in one process only (its WAL is locked). While
``memwb app`` owns a workspace it serves its engine's store on a loopback port
(:class:`StoreServer`), and an engine in another process on the same workspace (the
README's ``MemoryEngine(EngineConfig())``) gets a :class:`RemoteStore` instead of a
lock error: the same :class:`~.base.VectorStore` calls, executed by the owner's store.

Transport: ``POST /store/<method>`` with the pickled ``(args, kwargs)``; the answer is
the pickled result or exception. Pickle runs code, so the server binds loopback only and
requires the token from the owner file (``owner.json``, mode 0600 in the workspace):
whoever can read it can already read and write the workspace's files.
"""

from __future__ import annotations

import hmac
import pickle
import secrets
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import StoreError
from ..http_thread import ThreadedServer, post_pickled

STORE_METHODS = frozenset({
    "ensure_collection", "upsert", "search_dense", "search_sparse", "search_rrf", "scroll", "retrieve",
    "set_payload", "delete", "count", "flush",
})  # fmt: skip
"""VectorStore methods forwarded (``close`` stays local: a client never closes the owner's store)."""
TOKEN_HEADER = "x-memwb-store-token"


class RemoteStore:
    """A :class:`~.base.VectorStore` whose calls run in the workspace owner's process."""

    name = "remote"

    def __init__(self, url: str, token: str, *, timeout_s: float = 120.0) -> None:
        import httpx

        self.url = url.rstrip("/")
        self._client = httpx.Client(timeout=timeout_s, headers={TOKEN_HEADER: token})
        self._closed = False

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        if self._closed:
            raise StoreError("remote store is closed")
        ok, value = post_pickled(self._client, f"{self.url}/store/{method}", (args, kwargs), StoreError,
                                 f"store ({method})")
        if not ok:
            exc, cause_blob = value
            raise exc from pickle.loads(cause_blob)  # noqa: S301
        return value

    def __getattr__(self, method: str) -> Callable[..., Any]:
        if method in STORE_METHODS:
            return lambda *a, **k: self._call(method, *a, **k)
        raise AttributeError(method)

    def ensure_collection(self, dim: int) -> None:
        self._call("ensure_collection", dim)

    def upsert(self, points: Sequence[Any]) -> None:
        self._call("upsert", list(points))

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._client.close()


class StoreServer(ThreadedServer):
    """Serves ``store`` (the owner's) on ``host``:``port`` (0 = a free port) to token holders."""

    thread_name, what = "memwb-store", "store server"

    def __init__(self, store: Any, *, host: str = "127.0.0.1", port: int = 0, token: str | None = None) -> None:
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import Response
        from starlette.routing import Route

        self.store = store
        self.token = token or secrets.token_urlsafe(32)

        def run(method: str, body: bytes) -> bytes:
            try:
                args, kwargs = pickle.loads(body)  # noqa: S301 - token checked first
                return pickle.dumps((True, getattr(self.store, method)(*args, **kwargs)))
            except Exception as e:  # noqa: BLE001 - the caller re-raises it
                cause = e.__cause__
                try:  # pickling drops __cause__: send it beside (as text when it does not pickle)
                    cause_blob = pickle.dumps(cause)
                except Exception:  # noqa: BLE001
                    cause_blob = pickle.dumps(RuntimeError(f"{type(cause).__name__}: {cause}"))
                try:
                    return pickle.dumps((False, (e, cause_blob)))
                except Exception:  # noqa: BLE001 - an exception that does not pickle
                    return pickle.dumps((False, (StoreError(f"{type(e).__name__}: {e}"), cause_blob)))

        async def call(request: Request) -> Response:
            if not hmac.compare_digest(request.headers.get(TOKEN_HEADER, ""), self.token):
                return Response("forbidden", status_code=403)
            method = request.path_params["method"]
            if method not in STORE_METHODS:
                return Response(f"unknown method {method}", status_code=404)
            from starlette.concurrency import run_in_threadpool

            body = await request.body()
            return Response(await run_in_threadpool(run, method, body), media_type="application/octet-stream")

        app = Starlette(routes=[Route("/store/{method}", call, methods=["POST"])])
        self._init_server(app, host, port)

