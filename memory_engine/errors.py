"""One exception hierarchy for the whole package.

Every error raised on purpose by ``memory_engine`` derives from
:class:`MemoryEngineError`; backend errors are wrapped with ``raise ... from e``
so callers can catch one type and still see the cause.
"""

from __future__ import annotations


class MemoryEngineError(Exception):
    """Root of every error this package raises on purpose."""


class ConfigError(MemoryEngineError):
    """A configuration value is unknown, malformed or out of range.

    ``key`` is the dotted config name (e.g. ``retrieval.floor``) when known.
    """

    def __init__(self, message: str, *, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


class ValidationError(MemoryEngineError):
    """An argument to a public call is invalid (e.g. a missing ``user_id``).

    ``field`` names the offending argument.
    """

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class StoreError(MemoryEngineError):
    """The vector store failed (I/O, corrupt shard, server unreachable)."""


class EmbeddingError(MemoryEngineError):
    """The embedder failed to load or to encode."""


class TraceIngestError(MemoryEngineError):
    """A trace document could not be decoded.

    ``source`` is the file name (or ``"http"``), ``line`` the 1-based line
    number for JSON-lines input, ``offset`` a byte offset where known.
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        offset: int | None = None,
    ) -> None:
        loc = source or ""
        if line is not None:
            loc += f":{line}"
        if offset is not None:
            loc += f"@{offset}"
        super().__init__(f"{loc}: {message}" if loc else message)
        self.source = source
        self.line = line
        self.offset = offset
        self.reason = message


class WarehouseError(MemoryEngineError):
    """The DuckDB trace warehouse failed (schema, migration, query)."""


class SuiteError(MemoryEngineError):
    """A golden suite is malformed.

    Carries ``file``, ``case_id`` and ``field`` (a dotted/indexed path such as
    ``cases[2].queries[0].expect.relevant``) so the message points at the spot.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        case_id: str | None = None,
        field: str | None = None,
    ) -> None:
        parts = [p for p in (file, f"case {case_id}" if case_id else None, field) if p]
        super().__init__(f"{': '.join(parts)}: {message}" if parts else message)
        self.file = file
        self.case_id = case_id
        self.field = field
        self.reason = message
