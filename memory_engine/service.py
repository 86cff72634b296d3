"""The engine as an HTTP service (``memwb serve``) for agents not written in Python.

Endpoints (JSON in, JSON out; schema at ``GET /openapi.json``):

* ``POST /v1/memories`` - write (``MemoryEngine.add``);
* ``POST /v1/retrieve`` - hybrid retrieval (``MemoryEngine.retrieve``), with the
  ``[mem-<id>]`` context block;
* ``POST /v1/context`` - a whole prompt context within budgets (``build_context``);
* ``GET /v1/facts?user_id=`` - the user's current facts;
* ``DELETE /v1/memories/{memory_id}?user_id=`` - forget one memory;
* ``DELETE /v1/users/{user_id}`` - erase everything of one user (GDPR erase);
* ``GET /health`` - liveness (no key needed).

**Tenants and keys.** Every ``/v1`` call needs an API key (``Authorization:
Bearer <key>`` or ``X-API-Key: <key>``); a key maps to exactly one tenant and
the server passes that tenant to the engine: a request cannot name another
tenant (a ``tenant_id`` in the body or query that differs gives 403), so one
tenant's key never reads, forgets or erases another tenant's memories. Keys are
kept only as SHA-256 digests, compared in constant time, and never written to a
log or a response (uvicorn's access log is off).

Errors: 401 missing/unknown key, 403 tenant mismatch, 400 invalid input (the
engine's :class:`~memory_engine.errors.ValidationError`, naming the field), 404
unknown route, 405 wrong method; the body is ``{"error": ..., "field": ...}``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from collections.abc import Mapping
from dataclasses import asdict, is_dataclass
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from .errors import ConfigError, ValidationError
from .http_thread import ThreadedServer
from .validation import parse_time

API_KEYS_ENV = "MEMWB_API_KEYS"
"""Environment variable with keys: ``tenant:key`` pairs separated by commas or newlines."""


# --- keys -----------------------------------------------------------------------------------------------
def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8")).digest()


class ApiKeys:
    """API key -> tenant, holding only SHA-256 digests of the keys."""

    def __init__(self, pairs: Mapping[str, str]) -> None:
        """``pairs`` maps key -> tenant. Raises ConfigError for an empty key or tenant."""
        self._by_digest: dict[bytes, str] = {}
        for key, tenant in pairs.items():
            if not key or not isinstance(key, str) or not tenant or not isinstance(tenant, str):
                raise ConfigError("API keys and tenants must be non-empty strings", key="api_keys")
            self._by_digest[_digest(key)] = tenant

    def __len__(self) -> int:
        return len(self._by_digest)

    def tenant_of(self, key: str | None) -> str | None:
        """The tenant of ``key``, or None. Compares digests in constant time."""
        if not key:
            return None
        d = _digest(key)
        found = None
        for known, tenant in self._by_digest.items():
            if hmac.compare_digest(known, d):
                found = tenant
        return found

    @property
    def tenants(self) -> list[str]:
        return sorted(set(self._by_digest.values()))


def parse_key_pairs(text: str) -> dict[str, str]:
    """``tenant:key`` pairs separated by commas or newlines (``#`` comments, blanks skipped) -> key -> tenant.

    Raises ConfigError naming the 1-based entry that has no ``:`` (never echoing the entry, which holds a key).
    """
    out: dict[str, str] = {}
    entries = [e.strip() for line in text.splitlines() for e in line.split(",")]
    for i, e in enumerate((e for e in entries if e and not e.startswith("#")), start=1):
        tenant, sep, key = e.partition(":")
        if not sep or not tenant.strip() or not key.strip():
            raise ConfigError(f"API key entry {i}: expected tenant:key", key="api_keys")
        out[key.strip()] = tenant.strip()
    return out


def load_keys(path: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None) -> ApiKeys:
    """Keys from a file (JSON ``{"tenant": ["key", ...]}`` / ``{"tenant": "key"}``, or ``tenant:key`` lines)
    and from ``$MEMWB_API_KEYS``. Raises ConfigError when there is none or the file is unreadable."""
    pairs: dict[str, str] = {}
    if path is not None:
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except OSError as e:
            raise ConfigError(f"cannot read API key file {p}: {e.strerror}", key="api_keys") from e
        if text.lstrip().startswith("{"):
            try:
                doc = json.loads(text)
            except json.JSONDecodeError as e:
                raise ConfigError(f"API key file {p}: invalid JSON at line {e.lineno}", key="api_keys") from e
            for tenant, keys in doc.items():
                for k in [keys] if isinstance(keys, str) else list(keys):
                    pairs[str(k)] = str(tenant)
        else:
            pairs.update(parse_key_pairs(text))
    env_text = (env if env is not None else os.environ).get(API_KEYS_ENV)
    if env_text:
        pairs.update(parse_key_pairs(env_text))
    if not pairs:
        raise ConfigError(
            f"no API keys: give --keys-file or set {API_KEYS_ENV}=tenant:key[,tenant:key...]", key="api_keys"
        )
    return ApiKeys(pairs)


# --- JSON shaping -----------------------------------------------------------------------------------------
def _jsonable(obj: Any) -> Any:
    if is_dataclass(obj) and not isinstance(obj, type):
        return _jsonable(asdict(obj))
    if isinstance(obj, Mapping):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple | set | frozenset):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, datetime):
        return obj.isoformat()
    if isinstance(obj, Enum):
        return obj.value
    return obj


def _error(status: int, message: str, field: str | None = None) -> JSONResponse:
    return JSONResponse({"error": message, "field": field}, status_code=status)


def _str(body: Mapping[str, Any], name: str, *, required: bool = True) -> str | None:
    v = body.get(name)
    if v is None:
        if required:
            raise ValidationError(f"{name} is required", field=name)
        return None
    if not isinstance(v, str) or (required and not v.strip()):
        raise ValidationError(f"{name} must be a non-empty string", field=name)
    return v


def _when(body: Mapping[str, Any]) -> datetime | None:
    return parse_time(body.get("now"), "now")


def _int(body: Mapping[str, Any], name: str) -> int | None:
    v = body.get(name)
    if v is None:
        return None
    if type(v) is not int or v < 1:
        raise ValidationError(f"{name} must be a positive integer", field=name)
    return v


# --- the app ---------------------------------------------------------------------------------------------
def create_service_app(engine: Any, keys: ApiKeys, *, workspace: Any = None) -> Starlette:
    """The Starlette app serving ``engine`` to the holders of ``keys``. With ``workspace`` (the
    :class:`~memory_engine.workspace.Workspace` the engine belongs to) an erase also reaches the
    owner's warehouse rows (mode ``lifecycle.erase_warehouse``); without, the store only."""

    def tenant_or_error(request: Request, body: Mapping[str, Any] | None = None) -> str | JSONResponse:
        auth = request.headers.get("authorization", "")
        key = auth[7:].strip() if auth[:7].lower() == "bearer " else request.headers.get("x-api-key")
        tenant = keys.tenant_of(key)
        if tenant is None:
            return _error(401, "missing or unknown API key (Authorization: Bearer <key> or X-API-Key)")
        asked = (body or {}).get("tenant_id") or request.query_params.get("tenant_id")
        if asked is not None and asked != tenant:
            return _error(403, "this API key belongs to another tenant", "tenant_id")
        return tenant

    async def read_body(request: Request) -> dict[str, Any]:
        raw = await request.body()
        if not raw:
            return {}
        try:
            doc = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ValidationError("body must be a JSON object", field="body") from e
        if not isinstance(doc, dict):
            raise ValidationError("body must be a JSON object", field="body")
        return doc

    def endpoint(fn: Any, *, with_body: bool) -> Any:
        async def handler(request: Request) -> JSONResponse:
            try:
                body = await read_body(request) if with_body else {}
                tenant = tenant_or_error(request, body)
                if isinstance(tenant, JSONResponse):
                    return tenant
                from starlette.concurrency import run_in_threadpool

                out = await run_in_threadpool(fn, request, body, tenant)
                return JSONResponse(_jsonable(out))
            except ValidationError as e:
                return _error(400, str(e), getattr(e, "field", None))

        return handler

    def add(request: Request, body: dict[str, Any], tenant: str) -> Any:
        fact = body.get("fact")
        if fact is not None and not isinstance(fact, dict):
            raise ValidationError("fact must be an object with key and value", field="fact")
        meta = body.get("metadata")
        if meta is not None and not isinstance(meta, dict):
            raise ValidationError("metadata must be an object", field="metadata")
        if body.get("text") is None:
            raise ValidationError("text is required", field="text")
        res = engine.add(
            body["text"],
            user_id=_str(body, "user_id"), tenant_id=tenant, session_id=_str(body, "session_id", required=False),
            role=body.get("role", "user"), memory_type=body.get("memory_type"), metadata=meta, fact=fact,
            now=_when(body), permanent=bool(body.get("permanent", False)),
        )  # fmt: skip
        return res

    def retrieve(request: Request, body: dict[str, Any], tenant: str) -> Any:
        types = body.get("memory_types")
        if types is not None and not (isinstance(types, list) and all(isinstance(t, str) for t in types)):
            raise ValidationError("memory_types must be a list of strings", field="memory_types")
        res = engine.retrieve(
            _str(body, "query"), user_id=_str(body, "user_id"), tenant_id=tenant,
            session_id=_str(body, "session_id", required=False), top_k=_int(body, "top_k"), now=_when(body),
            memory_types=types,
        )  # fmt: skip
        return {
            "hits": res.hits, "degraded": res.degraded, "error": res.error, "latency_ms": res.latency_ms,
            "rewritten_query": res.rewritten_query, "trace_id": res.trace_id, "span_id": res.span_id,
            "context": engine.context_block(res),
        }  # fmt: skip

    def context(request: Request, body: dict[str, Any], tenant: str) -> Any:
        return engine.build_context(
            _str(body, "query"), user_id=_str(body, "user_id"), tenant_id=tenant,
            session_id=_str(body, "session_id", required=False), system=body.get("system") or "",
            now=_when(body), top_k=_int(body, "top_k"),
        )  # fmt: skip

    def facts(request: Request, body: dict[str, Any], tenant: str) -> Any:
        user = _str(dict(request.query_params), "user_id")
        return {"user_id": user, "facts": engine.facts(user_id=user, tenant_id=tenant)}

    def forget(request: Request, body: dict[str, Any], tenant: str) -> Any:
        user = _str(dict(request.query_params), "user_id")
        mid = request.path_params["memory_id"]
        return {"memory_id": mid, "forgotten": engine.forget(mid, user_id=user, tenant_id=tenant)}

    def erase(request: Request, body: dict[str, Any], tenant: str) -> Any:
        user = request.path_params["user_id"]
        if workspace is None:
            return {"user_id": user, "erased": engine.erase_user(user, tenant_id=tenant)}
        rep = workspace.erase_user(user, tenant_id=tenant)
        return {"user_id": user, "erased": rep.store, "warehouse_mode": rep.warehouse_mode,
                "warehouse_rows": sum(rep.warehouse.values())}

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok", "tenants": len(keys.tenants)})

    async def openapi(request: Request) -> JSONResponse:
        return JSONResponse(OPENAPI)

    routes = [
        Route("/v1/memories", endpoint(add, with_body=True), methods=["POST"]),
        Route("/v1/retrieve", endpoint(retrieve, with_body=True), methods=["POST"]),
        Route("/v1/context", endpoint(context, with_body=True), methods=["POST"]),
        Route("/v1/facts", endpoint(facts, with_body=False), methods=["GET"]),
        Route("/v1/memories/{memory_id}", endpoint(forget, with_body=False), methods=["DELETE"]),
        Route("/v1/users/{user_id}", endpoint(erase, with_body=False), methods=["DELETE"]),
        Route("/health", health, methods=["GET"]),
        Route("/openapi.json", openapi, methods=["GET"]),
    ]
    return Starlette(routes=routes)


class Service(ThreadedServer):
    """Runs the service with uvicorn in a background thread (``port=0``: a free port, read :attr:`port`)."""

    thread_name, what = "memwb-service", "service"

    def __init__(self, engine: Any, keys: ApiKeys, *, host: str = "127.0.0.1", port: int = 8765,
                 workspace: Any = None) -> None:
        self.app = create_service_app(engine, keys, workspace=workspace)
        self._init_server(self.app, host, port)

    def serve(self) -> None:
        """Run in the foreground until interrupted."""
        self._server.run()


# --- OpenAPI 3.1 -------------------------------------------------------------------------------------------
def _obj(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required}


_S = {"type": "string"}
_NOW = {"type": "string", "format": "date-time", "description": "ISO 8601 with UTC offset; default: server time"}
_USER = {"name": "user_id", "in": "query", "required": True, "schema": _S}
_ERR = {"description": "error", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}


def _op(summary: str, body: dict[str, Any] | None, result: dict[str, Any], params: list[Any] | None = None) -> Any:
    op: dict[str, Any] = {
        "summary": summary,
        "security": [{"bearer": []}, {"apiKey": []}],
        "responses": {
            "200": {"description": "ok", "content": {"application/json": {"schema": result}}},
            "400": _ERR, "401": _ERR, "403": _ERR,
        },
    }  # fmt: skip
    if body is not None:
        op["requestBody"] = {"required": True, "content": {"application/json": {"schema": body}}}
    if params:
        op["parameters"] = params
    return op


_HIT = _obj({"memory_id": _S, "content": _S, "score": {"type": "number"}, "sources": {"type": "array", "items": _S},
             "memory_type": _S, "created_at": {"type": "string", "format": "date-time"},
             "importance": {"type": "number"}, "relevance": {"type": "number"}, "metadata": {"type": "object"}},
            ["memory_id", "content", "score"])  # fmt: skip

OPENAPI: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "memwb memory service", "version": "1",
             "description": "The memwb engine over HTTP. A key maps to one tenant; the tenant is never taken "
                            "from the request."},  # fmt: skip
    "components": {
        "securitySchemes": {
            "bearer": {"type": "http", "scheme": "bearer"},
            "apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
        },
        "schemas": {"Error": _obj({"error": _S, "field": {"type": ["string", "null"]}}, ["error"]), "Hit": _HIT},
    },
    "paths": {
        "/v1/memories": {"post": _op(
            "Write a memory (write pipeline: redaction, importance, dedup, supersession)",
            _obj({"user_id": _S, "text": _S, "session_id": _S, "role": {"enum": ["user", "assistant", "tool", "system"]},
                  "memory_type": _S, "metadata": {"type": "object"},
                  "fact": _obj({"key": _S, "value": {}}, ["key", "value"]), "now": _NOW,
                  "permanent": {"type": "boolean"}}, ["user_id", "text"]),
            _obj({"outcome": {"enum": ["stored", "merged", "rejected", "candidate", "forgotten"]}, "memory_id": {"type": ["string", "null"]},
                  "reason": _S, "superseded_ids": {"type": "array", "items": _S}}, ["outcome"]),
        )},  # fmt: skip
        "/v1/retrieve": {"post": _op(
            "Hybrid retrieval for one user; 'context' holds one [mem-<id>] line per hit",
            _obj({"user_id": _S, "query": _S, "session_id": _S, "top_k": {"type": "integer", "minimum": 1},
                  "memory_types": {"type": "array", "items": _S}, "now": _NOW}, ["user_id", "query"]),
            _obj({"hits": {"type": "array", "items": {"$ref": "#/components/schemas/Hit"}}, "degraded": {"type": "boolean"},
                  "context": _S, "trace_id": _S, "span_id": _S, "latency_ms": {"type": "number"}}, ["hits", "degraded"]),
        )},  # fmt: skip
        "/v1/context": {"post": _op(
            "A prompt context (system, summary, recent turns, memories) within token budgets",
            _obj({"user_id": _S, "query": _S, "session_id": _S, "system": _S, "top_k": {"type": "integer"}, "now": _NOW},
                 ["user_id", "query"]),
            _obj({"blocks": {"type": "array"}, "total_tokens": {"type": "integer"}, "memory_ids": {"type": "array"}},
                 ["blocks"]),
        )},  # fmt: skip
        "/v1/facts": {"get": _op("The user's current facts", None,
                                 _obj({"user_id": _S, "facts": {"type": "object"}}, ["facts"]), [_USER])},
        "/v1/memories/{memory_id}": {"delete": _op(
            "Forget one of the user's memories (false when it is not the user's)", None,
            _obj({"memory_id": _S, "forgotten": {"type": "boolean"}}, ["forgotten"]),
            [{"name": "memory_id", "in": "path", "required": True, "schema": _S}, _USER],
        )},  # fmt: skip
        "/v1/users/{user_id}": {"delete": _op(
            "Erase every memory of the user in this key's tenant", None,
            _obj({"user_id": _S, "erased": {"type": "integer"}}, ["erased"]),
            [{"name": "user_id", "in": "path", "required": True, "schema": _S}],
        )},  # fmt: skip
        "/health": {"get": {"summary": "Liveness", "responses": {"200": {"description": "ok"}}}},
    },
}
"""The OpenAPI 3.1 document served at ``/openapi.json``."""
