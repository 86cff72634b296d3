"""OTLP documents and files into span records and the warehouse.

Formats read by :func:`ingest_file` (detected from the content, ``.gz`` too):

* OTLP/JSON lines, as written by the OpenTelemetry Collector file exporter
  (one ``ExportTraceServiceRequest`` / ``TracesData`` object per line);
* one OTLP/JSON document (possibly pretty-printed over many lines);
* OTLP protobuf: one ``ExportTraceServiceRequest`` message, or the file
  exporter's ``format: proto`` stream (each message prefixed by its size as a
  4-byte big-endian integer).

Decoding (:func:`decode_otlp_json`, :func:`decode_otlp_proto`) is pure and
shared with the OTLP/HTTP receiver. A malformed line is reported as
``file:line`` with the reason and the valid lines are kept; a span with a bad
id is rejected with its reason and the rest of its document still ingests;
re-ingesting a file adds nothing (spans are keyed by trace id + span id).
"""

from __future__ import annotations

import gzip
import logging
import os
import struct
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from .records import (
    SpanRecord,
    SpanRejected,
    decode_json_resource,
    decode_json_span,
    decode_proto_span,
    proto_attributes,
)
from .warehouse import Warehouse

log = logging.getLogger(__name__)

BATCH_SPANS = 20_000
"""Spans per Arrow insert batch: big enough to amortise a transaction, small enough to bound memory."""

MAX_PROBLEMS = 200
"""Problems kept with their text in a summary; the counts are always complete."""


@dataclass(frozen=True)
class IngestProblem:
    """One problem found while ingesting: ``kind`` is ``malformed`` (a line or
    document that could not be decoded) or ``rejected`` (one span refused);
    ``line`` is 1-based for JSON input, ``None`` for protobuf (``offset`` is
    the byte offset of the message then)."""

    source: str
    line: int | None
    kind: str
    reason: str
    span_name: str | None = None
    offset: int | None = None

    def __str__(self) -> str:
        loc = self.source
        if self.line is not None:
            loc += f":{self.line}"
        elif self.offset is not None:
            loc += f"@{self.offset}"
        what = f" span {self.span_name!r}" if self.span_name else ""
        return f"{loc}:{what} {self.kind}: {self.reason}"


@dataclass(frozen=True)
class IngestSummary:
    """Counts of one ingestion (one or more files, or one HTTP request).

    ``received`` spans seen; ``ingested`` newly stored; ``duplicate`` already
    present (or repeated); ``rejected`` refused spans; ``malformed`` lines or
    documents that could not be decoded; ``warnings`` attribute problems kept
    raw; ``problems`` the first :data:`MAX_PROBLEMS` problems with reasons.
    """

    received: int = 0
    ingested: int = 0
    duplicate: int = 0
    rejected: int = 0
    malformed: int = 0
    warnings: int = 0
    problems: tuple[IngestProblem, ...] = ()
    files: tuple[str, ...] = ()

    def __add__(self, other: IngestSummary) -> IngestSummary:
        return IngestSummary(
            received=self.received + other.received,
            ingested=self.ingested + other.ingested,
            duplicate=self.duplicate + other.duplicate,
            rejected=self.rejected + other.rejected,
            malformed=self.malformed + other.malformed,
            warnings=self.warnings + other.warnings,
            problems=(self.problems + other.problems)[:MAX_PROBLEMS],
            files=self.files + other.files,
        )

    @property
    def ok(self) -> bool:
        """True when nothing was rejected or malformed."""
        return self.rejected == 0 and self.malformed == 0


@dataclass
class _Decoded:
    records: list[SpanRecord] = field(default_factory=list)
    problems: list[IngestProblem] = field(default_factory=list)
    rejected: int = 0
    malformed: int = 0


# --- pure decoders ---------------------------------------------------------------------
def decode_otlp_json(
    doc: Any, *, source: str = "json", line: int | None = None, out: _Decoded | None = None
) -> _Decoded:
    """Decode one OTLP/JSON traces document (a parsed object) into records.

    Returns the records plus the problems (rejected spans with reasons; a
    document without ``resourceSpans`` is malformed).
    """
    out = out if out is not None else _Decoded()
    if type(doc) is not dict or "resourceSpans" not in doc:
        out.malformed += 1
        what = "metrics/logs document (only traces are stored)" if isinstance(doc, dict) and (
            "resourceMetrics" in doc or "resourceLogs" in doc
        ) else "not an OTLP traces document (no 'resourceSpans')"
        out.problems.append(IngestProblem(source, line, "malformed", what))
        return out
    rss = doc["resourceSpans"]
    if type(rss) is not list:
        out.malformed += 1
        out.problems.append(IngestProblem(source, line, "malformed", "'resourceSpans' is not a list"))
        return out
    append = out.records.append
    for rs in rss:
        if type(rs) is not dict:
            out.malformed += 1
            out.problems.append(IngestProblem(source, line, "malformed", "a resourceSpans entry is not an object"))
            continue
        rwarn: list[str] = []
        resource = decode_json_resource(rs.get("resource"), rwarn)
        for ss in rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans") or ():
            if type(ss) is not dict:
                out.malformed += 1
                out.problems.append(IngestProblem(source, line, "malformed", "a scopeSpans entry is not an object"))
                continue
            scope_obj = ss.get("scope") or ss.get("instrumentationLibrary") or {}
            scope = scope_obj.get("name") if type(scope_obj) is dict else None
            for sp in ss.get("spans") or ():
                try:
                    append(decode_json_span(sp, resource, scope if isinstance(scope, str) and scope else None, rwarn))
                except SpanRejected as e:
                    out.rejected += 1
                    if len(out.problems) < MAX_PROBLEMS:
                        name = sp.get("name") if isinstance(sp, dict) else None
                        out.problems.append(IngestProblem(source, line, "rejected", e.reason, span_name=name))
    return out


def decode_otlp_proto(request: Any, *, source: str = "proto", offset: int | None = None, out: _Decoded | None = None) -> _Decoded:
    """Decode an ``ExportTraceServiceRequest`` (or ``TracesData``) message into records."""
    out = out if out is not None else _Decoded()
    append = out.records.append
    for rs in request.resource_spans:
        rwarn: list[str] = []
        resource = proto_attributes(rs.resource.attributes, rwarn)
        for ss in rs.scope_spans:
            scope = ss.scope.name or None
            for sp in ss.spans:
                try:
                    append(decode_proto_span(sp, resource, scope))
                except SpanRejected as e:
                    out.rejected += 1
                    if len(out.problems) < MAX_PROBLEMS:
                        out.problems.append(
                            IngestProblem(source, None, "rejected", e.reason, span_name=sp.name, offset=offset)
                        )
    return out


def parse_proto_stream(data: bytes) -> list[tuple[int, bytes]] | None:
    """Split a file-exporter proto stream (4-byte big-endian size + message, repeated).

    Returns ``[(offset, message_bytes), ...]`` when the whole buffer is such a
    stream, else ``None`` (then it is read as one message).
    """
    out: list[tuple[int, bytes]] = []
    pos = 0
    n = len(data)
    while pos < n:
        if pos + 4 > n:
            return None
        (size,) = struct.unpack_from(">I", data, pos)
        if size == 0 or pos + 4 + size > n:
            return None
        out.append((pos, data[pos + 4 : pos + 4 + size]))
        pos += 4 + size
    return out or None


# --- files -----------------------------------------------------------------------------------
ProgressFn = Callable[[int], None]


def _open_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data


FAST_CHUNK_BYTES = 32 * 1024 * 1024
"""Bytes of JSON lines handed to the DuckDB fast path at once (bounds memory)."""


def _decode_line(chunk: bytes, lineno: int, source: str, dec: _Decoded) -> None:
    try:
        doc = orjson.loads(chunk)
    except orjson.JSONDecodeError as e:
        dec.malformed += 1
        if len(dec.problems) < MAX_PROBLEMS:
            dec.problems.append(IngestProblem(source, lineno, "malformed", f"invalid JSON: {e}"))
    else:
        decode_otlp_json(doc, source=source, line=lineno, out=dec)


def _iter_line_chunks(data: bytes, chunk_bytes: int) -> Iterator[tuple[list[int], list[bytes], int]]:
    """Non-blank lines grouped into chunks: (1-based line numbers, line bytes, bytes consumed)."""
    pos = 0
    lineno = 0
    n = len(data)
    nums: list[int] = []
    texts: list[bytes] = []
    size = 0
    start = 0
    while pos < n:
        end = data.find(b"\n", pos)
        if end < 0:
            end = n
        lineno += 1
        line = data[pos:end]
        pos = end + 1
        if line.strip():
            nums.append(lineno)
            texts.append(line)
            size += len(line)
        if size >= chunk_bytes:
            yield nums, texts, min(pos, n) - start
            start = min(pos, n)
            nums, texts, size = [], [], 0
    if nums or start < n:
        yield nums, texts, n - start


def _looks_like_json_lines(data: bytes) -> bool:
    first_nl = data.find(b"\n")
    if first_nl < 0:
        return False
    head = data[:first_nl].strip()
    if not head:
        return False
    try:
        orjson.loads(head)
    except orjson.JSONDecodeError:
        return False
    return True


def ingest_file(
    wh: Warehouse,
    path: str | os.PathLike[str],
    *,
    progress: bool | ProgressFn = False,
    batch_spans: int = BATCH_SPANS,
    fast: bool = True,
) -> IngestSummary:
    """Ingest one OTLP JSON / JSON-lines / protobuf file (gzip allowed) into ``wh``.

    ``progress`` True shows a tqdm bar over bytes on stderr; a callable gets
    the number of bytes processed since its last call. ``fast`` lets DuckDB
    decode clean JSON lines (:mod:`.fastpath`); other lines always go through
    the Python reference decoder, which reports problems. Records one
    ``ingest_batches`` row with source ``file:<name>``. A missing or
    unreadable file raises :class:`~memory_engine.errors.TraceIngestError`.
    """
    from ..errors import TraceIngestError

    p = Path(path)
    source = p.name
    try:
        data = _open_bytes(p)
    except (OSError, EOFError, gzip.BadGzipFile) as e:
        raise TraceIngestError(f"cannot read: {e}", source=str(p)) from e

    bar = None
    if progress is True:
        from tqdm import tqdm

        bar = tqdm(total=len(data), unit="B", unit_scale=True, desc=source, leave=False)
        tick: ProgressFn | None = bar.update
    elif callable(progress):
        tick = progress
    else:
        tick = None

    dec = _Decoded()
    stored = duplicate = warnings = 0
    decoded = 0

    def flush() -> None:
        nonlocal stored, duplicate, warnings, decoded
        if dec.records:
            decoded += len(dec.records)
            res = wh.insert_spans(dec.records, source=f"file:{source}")
            stored += res.stored
            duplicate += res.duplicate
            warnings += res.warnings
            dec.records = []

    try:
        stripped = data.lstrip()
        if not stripped:
            dec.malformed += 1
            dec.problems.append(IngestProblem(source, None, "malformed", "empty file"))
        elif stripped[:1] in (b"{", b"["):
            if _looks_like_json_lines(stripped):
                for nums, texts, consumed in _iter_line_chunks(data, FAST_CHUNK_BYTES):
                    leftover: Sequence[int] = range(len(nums))
                    if fast and nums:
                        got = _fast_chunk(wh, nums, texts, f"file:{source}")
                        if got is not None:
                            stored += got.stored
                            duplicate += got.duplicate
                            decoded += got.stored + got.duplicate
                            leftover = got.leftover
                    for i in leftover:
                        _decode_line(texts[i], nums[i], source, dec)
                        if len(dec.records) >= batch_spans:
                            flush()
                    if tick:
                        tick(consumed)
            else:
                try:
                    doc = orjson.loads(data)
                except orjson.JSONDecodeError as e:
                    dec.malformed += 1
                    dec.problems.append(IngestProblem(source, e.lineno, "malformed", f"invalid JSON: {e.msg}"))
                else:
                    docs = doc if isinstance(doc, list) else [doc]
                    for d in docs:
                        decode_otlp_json(d, source=source, line=1 if not isinstance(doc, list) else None, out=dec)
                if tick:
                    tick(len(data))
        else:
            _decode_proto_file(data, source, dec)
            if tick:
                tick(len(data))
        flush()
    finally:
        if bar is not None:
            bar.close()
    received = decoded + dec.rejected
    wh.record_ingest(
        source=f"file:{source}", received=received, stored=stored, duplicate=duplicate,
        rejected=dec.rejected, warnings=warnings,
    )  # fmt: skip
    return IngestSummary(
        received=received,
        ingested=stored,
        duplicate=duplicate,
        rejected=dec.rejected,
        malformed=dec.malformed,
        warnings=warnings,
        problems=tuple(dec.problems[:MAX_PROBLEMS]),
        files=(str(p),),
    )


def _fast_chunk(wh: Warehouse, nums: list[int], texts: list[bytes], source: str) -> Any:
    """Run the DuckDB fast path on one chunk; ``None`` when it could not (then Python decodes all)."""
    import duckdb
    import pyarrow as pa

    from .fastpath import ingest_json_lines

    try:
        text_arr = pa.array(texts, pa.binary()).cast(pa.string())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None  # invalid UTF-8 somewhere: the Python decoder reports the line
    table = pa.table({"line": pa.array(nums, pa.int64()), "text": text_arr})
    wh._require_writable()
    with wh._write_lock, wh.connection() as con:
        try:
            return ingest_json_lines(con, table, source=source)
        except duckdb.Error as e:
            log.info("fast path declined a chunk (%s); decoding it in Python", e)
            return None


def _decode_proto_file(data: bytes, source: str, dec: _Decoded) -> None:
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    def parse(buf: bytes) -> Any:
        msg = ExportTraceServiceRequest()
        msg.ParseFromString(buf)
        return msg

    stream = parse_proto_stream(data)
    if stream is not None:
        try:
            msgs = [(off, parse(b)) for off, b in stream]
        except DecodeError:
            msgs = None
        if msgs is not None and any(m.resource_spans for _, m in msgs):
            for off, m in msgs:
                decode_otlp_proto(m, source=source, offset=off, out=dec)
            return
    try:
        m = parse(data)
    except DecodeError as e:
        dec.malformed += 1
        dec.problems.append(IngestProblem(source, None, "malformed", f"not OTLP JSON or protobuf: {e}", offset=0))
        return
    if not m.resource_spans:
        dec.malformed += 1
        dec.problems.append(IngestProblem(source, None, "malformed", "protobuf message holds no resource spans", offset=0))
        return
    decode_otlp_proto(m, source=source, offset=0, out=dec)


def ingest_files(
    wh: Warehouse, paths: list[str | os.PathLike[str]], *, progress: bool | ProgressFn = False
) -> IngestSummary:
    """Ingest several files; the summaries are added up."""
    total = IngestSummary()
    for p in paths:
        total = total + ingest_file(wh, p, progress=progress)
    return total
