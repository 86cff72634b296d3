"""One exception hierarchy for the whole package.

Every error raised on purpose by ``memory_engine`` derives from
:class:`MemoryEngineError` and is defined here; backend errors are wrapped with
``raise ... from e`` so callers can catch one type and still see the cause.
Where callers rely on a builtin type the error also derives from it as a mixin
(:class:`ValidationError`, :class:`ConfigError` and :class:`SpanRejected` are
``ValueError``; :class:`NotFoundError` is a ``KeyError``; :class:`StartupError`
a ``RuntimeError``), so ``except ValueError`` keeps working.
"""

from __future__ import annotations

from collections.abc import Sequence


class MemoryEngineError(Exception):
    """Root of every error this package raises on purpose."""


def os_reason(e: BaseException) -> str:
    """What went wrong, without the file name: ``e.strerror`` of an ``OSError`` that has one
    (``str(OSError)`` is ``"[Errno 2] No such file or directory: 'x.json'"``, which repeats the path a
    message already names), else ``str(e)``. Use it wherever a message puts the path in front itself."""
    if isinstance(e, OSError) and e.strerror:
        return e.strerror
    return str(e)


class ConfigError(MemoryEngineError, ValueError):
    """A configuration value is unknown, malformed or out of range.

    ``key`` is the dotted config name (e.g. ``retrieval.floor``) when known.
    """

    def __init__(self, message: str, *, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


class ValidationError(MemoryEngineError, ValueError):
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
    """The DuckDB trace warehouse failed (schema, migration, query). ``hint``: what the user can do (the CLI
    prints it), or None for the generic advice."""

    hint: str | None = None


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


class SuiteErrors(SuiteError):
    """Several suite errors at once; ``errors`` lists each :class:`SuiteError`."""

    def __init__(self, errors: Sequence[SuiteError]) -> None:
        self.errors = list(errors)
        super().__init__("\n".join(str(e) for e in self.errors))
        first = self.errors[0] if self.errors else None
        if first is not None:
            self.file, self.case_id, self.field = first.file, first.case_id, first.field


class BaselineError(MemoryEngineError):
    """The baseline file is missing, unreadable or not a memwb baseline (``path`` names it)."""

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path


class SweepError(MemoryEngineError):
    """A sweep cannot start or continue (study mismatch, no feasible trial, bad storage)."""


class SpanRejected(MemoryEngineError, ValueError):
    """A span cannot be stored; ``reason`` says why (e.g. a trace id of 12 bytes)."""

    def __init__(self, reason: str, span_name: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.span_name = span_name


class ReembedError(MemoryEngineError):
    """The re-embed job cannot run or cannot switch safely (e.g. the store holds
    tenants the job was not asked to copy)."""


class LLMError(MemoryEngineError):
    """The LLM endpoint failed or answered with something unusable."""


class WriterBackpressure(MemoryEngineError):
    """A user's write queue stayed full for ``put_timeout_s`` seconds; the request was not queued."""


class NotFoundError(MemoryEngineError, KeyError):
    """A named item (a context block, a health component) does not exist; ``name`` says which."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


class StartupError(MemoryEngineError, RuntimeError):
    """A server (HTTP service, OTLP collector) did not start listening."""
