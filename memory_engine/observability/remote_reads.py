"""Read-only warehouse queries served by the workspace owner to other processes on the same machine.

While ``memwb app`` or ``memwb collect`` owns a workspace it holds ``warehouse.duckdb`` for writing, and
DuckDB then refuses every other process, even read-only (see :mod:`.warehouse`). Writers go through the
owner's spool (:mod:`.spool`); readers (``memwb metrics``, ``timeline``, ``compare``) ask the owner:
:class:`WarehouseReadServer` runs their SELECTs on its own database instance and :class:`RemoteWarehouse`
is a read-only :class:`~.warehouse.Warehouse` whose queries go there (:func:`.spool.open_reader` picks it), so the read code (metrics, explore,
compare) runs unchanged and computes the same figures.

Transport: ``POST /warehouse/query`` with the pickled ``(sql, params)``; the answer is the pickled
``(True, (column names, rows))`` or ``(False, message)``. As in :mod:`memory_engine.store.remote`, the
server binds loopback only and checks the token from ``owner.json`` (mode 0600) before reading the body.
Only reads run: the text must parse (``duckdb.extract_statements``) as exactly one SELECT statement, and
it runs on a fresh cursor inside a ``READ ONLY`` transaction that is rolled back afterwards.
"""

from __future__ import annotations

import contextlib
import hmac
import os
import pickle
import secrets
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import duckdb

from ..errors import WarehouseError
from ..http_thread import ThreadedServer, post_pickled
from .warehouse import Warehouse

TOKEN_HEADER = "x-memwb-read-token"
READ_LOCK_HINT = (
    "another process holds the workspace warehouse and does not serve reads (it is not a running `memwb app` "
    "or `memwb collect` on this workspace): close the process holding it, or run this command through the "
    "app's pages."
)


def select_only(sql: str) -> None:
    """Raise WarehouseError unless ``sql`` is exactly one SELECT statement (WITH ... SELECT included)."""
    try:
        stmts = duckdb.extract_statements(sql)
    except duckdb.Error as e:
        raise WarehouseError(f"query failed: {e}") from e
    if len(stmts) != 1 or stmts[0].type != duckdb.StatementType.SELECT:
        kinds = ", ".join(s.type.name for s in stmts) or "nothing"
        raise WarehouseError(f"only one SELECT statement is served to other processes, got {kinds}")


def run_read(wh: Warehouse, sql: str, params: Sequence[Any] | Mapping[str, Any] | None) -> tuple[list[str], list[Any]]:
    """Column names and rows of the SELECT ``sql`` on ``wh``, run on a fresh cursor in a read-only
    transaction. Raises WarehouseError (not a SELECT, or the query failed)."""
    select_only(sql)
    with wh.connection() as con:
        cur = con.cursor()
        try:
            cur.execute("BEGIN TRANSACTION READ ONLY")
            res = cur.execute(sql, params or [])
            names = [d[0] for d in res.description or ()]
            return names, res.fetchall()
        except duckdb.Error as e:
            raise WarehouseError(f"query failed: {e}") from e
        finally:
            with contextlib.suppress(duckdb.Error):
                cur.execute("ROLLBACK")
            cur.close()


class RemoteWarehouse(Warehouse):
    """A read-only :class:`~.warehouse.Warehouse` whose queries run in the owner's process.

    ``fetchall``/``fetchone``/``fetch_dicts`` (and every read method built on them) go over HTTP; writes
    raise WarehouseError (read-only), and so does :meth:`connection` (there is no local database)."""

    def __init__(self, path: str | os.PathLike[str], url: str, token: str, *, timeout_s: float = 120.0) -> None:
        import httpx

        # no super().__init__: it would open the DuckDB file the owner holds
        self.path = str(path)
        self.read_only = True
        self.hold = False
        self.lock_timeout_s = 0.0
        self._write_lock = threading.RLock()
        self._local = threading.local()
        self._root = None
        self.url = url.rstrip("/")
        self._client: Any = httpx.Client(timeout=timeout_s, headers={TOKEN_HEADER: token})

    def _query(self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None) -> tuple[list[str], list[Any]]:
        if self._client is None:
            raise WarehouseError(f"remote warehouse {self.path} is closed")
        ok, value = post_pickled(self._client, f"{self.url}/warehouse/query", (sql, params), WarehouseError,
                                 "warehouse")
        if not ok:
            raise WarehouseError(str(value))
        names, rows = value
        return list(names), [tuple(row) for row in rows]

    @contextlib.contextmanager
    def connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        raise WarehouseError(f"warehouse {self.path} is held by its owner: only queries are served")
        yield  # pragma: no cover

    def fetchall(self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None) -> list[tuple[Any, ...]]:
        return self._query(sql, params)[1]

    def fetch_dicts(self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        names, rows = self._query(sql, params)
        return [dict(zip(names, r, strict=True)) for r in rows]

    def fetch_df(self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None) -> Any:
        import pandas as pd

        names, rows = self._query(sql, params)
        return pd.DataFrame.from_records(rows, columns=names)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


class WarehouseReadServer(ThreadedServer):
    """Serves SELECT queries on ``wh`` (the owner's held warehouse) on ``host``:``port`` (0 = a free port)."""

    thread_name, what = "memwb-reads", "warehouse read server"

    def __init__(self, wh: Warehouse, *, host: str = "127.0.0.1", port: int = 0, token: str | None = None) -> None:
        from starlette.applications import Starlette
        from starlette.concurrency import run_in_threadpool
        from starlette.requests import Request
        from starlette.responses import Response
        from starlette.routing import Route

        self.wh = wh
        self.token = token or secrets.token_urlsafe(32)

        def run(body: bytes) -> bytes:
            try:
                sql, params = pickle.loads(body)  # noqa: S301 - token checked first
                if not isinstance(sql, str):
                    raise WarehouseError("the query must be a string")
                return pickle.dumps((True, run_read(self.wh, sql, params)))
            except Exception as e:  # noqa: BLE001 - the caller raises it as WarehouseError
                return pickle.dumps((False, f"{e}" if isinstance(e, WarehouseError) else f"{type(e).__name__}: {e}"))

        async def query(request: Request) -> Response:
            if not hmac.compare_digest(request.headers.get(TOKEN_HEADER, ""), self.token):
                return Response("forbidden", status_code=403)
            body = await request.body()
            return Response(await run_in_threadpool(run, body), media_type="application/octet-stream")

        app = Starlette(routes=[Route("/warehouse/query", query, methods=["POST"])])
        self._init_server(app, host, port)

