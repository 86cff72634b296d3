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

JSON lines take the column-wise fast path (:mod:`.fastpath`): a worker thread
parses and decodes the next chunk with pyarrow while the current one is
inserted through Arrow (``INSERT OR IGNORE``, several chunks per
transaction); spans the fast path cannot take exactly as the reference
decoder would go through the reference decoder, so problems, warnings and
stored rows are the same either way (tests compare both on every sample).
"""

from __future__ import annotations

import contextlib
import gzip
import logging
import os
import struct
import zlib
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pyarrow as pa

from ..errors import WarehouseError, os_reason
from .fastpath import (
    DERIVED_TABLES,
    SPANS_SCHEMA,
    decode_table,
    needs_python,
    read_json_lines,
    to_schema,
)
from .records import (
    SpanRecord,
    SpanRejected,
    decode_json_resource,
    decode_json_span,
    decode_proto_span,
    proto_attributes,
)
from .warehouse import Warehouse, build_arrow_batches_checked, first_wins, insert_span_tables

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
    for rs in rss:
        if type(rs) is not dict:
            _malformed(out, source, line, "a resourceSpans entry is not an object")
            continue
        rwarn: list[str] = []
        resource = decode_json_resource(rs.get("resource"), rwarn)
        sss = rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans") or []
        if type(sss) is not list:
            _malformed(out, source, line, f"'scopeSpans' is not a list ({type(sss).__name__})")
            continue
        for ss in sss:
            if type(ss) is not dict:
                _malformed(out, source, line, "a scopeSpans entry is not an object")
                continue
            spans = ss.get("spans") or []
            if type(spans) is not list:
                _malformed(out, source, line, f"'spans' is not a list ({type(spans).__name__})")
                continue
            scope = _scope_name(ss)
            for sp in spans:
                _decode_one_json(sp, resource, scope, rwarn, out, source, line)
    return out


def _malformed(out: _Decoded, source: str, line: int | None, reason: str) -> None:
    out.malformed += 1
    if len(out.problems) < MAX_PROBLEMS:
        out.problems.append(IngestProblem(source, line, "malformed", reason))


def _reject(out: _Decoded, source: str, line: int | None, reason: str, name: Any, offset: int | None = None) -> None:
    out.rejected += 1
    if len(out.problems) < MAX_PROBLEMS:
        out.problems.append(
            IngestProblem(source, line, "rejected", reason, span_name=name if isinstance(name, str) else None,
                          offset=offset)
        )  # fmt: skip


_UNEXPECTED = (TypeError, ValueError, KeyError, AttributeError, IndexError, OverflowError, RecursionError)
"""Errors a decoder could still raise on a shape nobody foresaw: the span is rejected with the error as
its reason (and logged), the rest of the batch is kept - decoding never raises on any input."""


def _decode_one_json(
    sp: Any, resource: dict[str, Any], scope: str | None, rwarn: list[str], out: _Decoded, source: str,
    line: int | None,
) -> None:  # fmt: skip
    name = sp.get("name") if type(sp) is dict else None
    try:
        out.records.append(decode_json_span(sp, resource, scope, rwarn))
    except SpanRejected as e:
        _reject(out, source, line, e.reason, name)
    except _UNEXPECTED as e:
        log.warning("span %r: unexpected decode error %r", name, e)
        _reject(out, source, line, f"undecodable span ({type(e).__name__}: {e})", name)


def _scope_name(ss: dict[str, Any]) -> str | None:
    scope_obj = ss.get("scope") or ss.get("instrumentationLibrary") or {}
    scope = scope_obj.get("name") if type(scope_obj) is dict else None
    return scope if isinstance(scope, str) and scope else None


def decode_otlp_proto(request: Any, *, source: str = "proto", offset: int | None = None, out: _Decoded | None = None) -> _Decoded:
    """Decode an ``ExportTraceServiceRequest`` (or ``TracesData``) message into records."""
    out = out if out is not None else _Decoded()
    append = out.records.append
    for rs in request.resource_spans:
        rwarn: list[str] = []
        try:
            resource = proto_attributes(rs.resource.attributes, rwarn)
        except _UNEXPECTED as e:
            resource = {}
            rwarn.append(f"resource: undecodable ({type(e).__name__}); ignored")
        for ss in rs.scope_spans:
            scope = ss.scope.name or None
            for sp in ss.spans:
                try:
                    append(decode_proto_span(sp, resource, scope))
                except SpanRejected as e:
                    _reject(out, source, None, e.reason, sp.name, offset)
                except _UNEXPECTED as e:
                    log.warning("span %r: unexpected decode error %r", sp.name, e)
                    _reject(out, source, None, f"undecodable span ({type(e).__name__}: {e})", sp.name, offset)
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


MAX_DECOMPRESSED_BYTES = 256 * 1024 * 1024
"""Largest decompressed size of a gzip file (bytes) before it is refused: a gzip bomb of a few hundred KB
can expand to gigabytes. Plain files are not limited (their size is visible). ``0`` = no limit."""

MAX_GZIP_RATIO = 200
"""Largest decompressed/compressed size ratio accepted once past 16 MiB of output: OTLP JSON compresses
about 10-30x, a bomb thousands of times. ``0`` = no ratio limit."""

_RATIO_AFTER = 16 * 1024 * 1024


def _open_bytes(path: Path, max_bytes: int = MAX_DECOMPRESSED_BYTES, max_ratio: float = MAX_GZIP_RATIO) -> bytes:
    """The file's bytes, gunzipped in bounded steps when it is gzip; raises ``EOFError``/``OSError``/
    :class:`_TooLarge` (memory stays under ``max_bytes`` whatever the file holds)."""
    with path.open("rb") as f:
        head = f.read(2)
    if head != b"\x1f\x8b":
        return path.read_bytes()
    compressed = max(1, path.stat().st_size)
    parts: list[bytes] = []
    total = 0
    with gzip.open(path, "rb") as g:
        while chunk := g.read(1 << 20):
            total += len(chunk)
            if max_bytes and total > max_bytes:
                raise _TooLarge(f"gzip expands beyond {max_bytes} bytes (limit --max-decompressed-mb)")
            if max_ratio and total > _RATIO_AFTER and total / compressed > max_ratio:
                raise _TooLarge(
                    f"gzip expands more than {max_ratio:g}x ({compressed} bytes -> over {total}): refused as a "
                    "likely decompression bomb (limit --max-gzip-ratio)"
                )
            parts.append(chunk)
    return b"".join(parts)


class _TooLarge(OSError):
    """A gzip file expands past the configured bound."""


CHUNK_BYTES = 32 * 1024 * 1024
"""Bytes of JSON lines decoded at once (about 30,000 engine-shaped spans): small enough that decoding the
next chunk overlaps inserting this one and memory stays bounded (about 100 MB per chunk in flight)."""

COMMIT_SPANS = 2 * 122_880
"""Spans inserted per transaction (chunks are added to an open transaction until this many): two DuckDB
row groups. Committing every chunk made DuckDB re-compress the partly filled last row group at each
checkpoint (about a third more insert CPU on 200k spans)."""

DECODE_WORKERS = 2
"""Chunks decoded at once in worker threads, beside the inserting thread. One worker left a core idle
while DuckDB inserted (decoding a chunk takes about 1.5 times as long as inserting it); two keep both
cores of the reference machine busy."""

JSON_BLOCKS = 1
"""Blocks pyarrow cuts a chunk's text into to parse them in parallel. One: the decode workers and the
inserting thread keep both cores busy already, and a one-block table needs no copy to combine its chunks
(four blocks measured about 7% slower end to end on the 200k-span benchmark)."""

INSERT_THREADS = 1
"""DuckDB threads while the ingest transaction is open (the previous setting is put back after it). The
decode workers keep the second core busy; DuckDB's own second thread only competed with them (about 8%
more CPU end to end, measured on the 200k-span benchmark). ``None`` leaves the setting alone."""

RETRY_BUDGET = 3.0
"""When pyarrow refuses a chunk it is split in halves until the refused lines are isolated; at most this
many times the chunk's bytes are re-read that way before the rest of the chunk goes to Python."""


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


_SNIFF_LINES = 1000
"""Lines looked at to tell JSON lines from one document or protobuf when the first line does not say."""


def _layout(data: bytes, stripped: bytes) -> str:
    """``empty``, ``lines`` (JSON lines), ``document`` (one JSON document, maybe pretty-printed) or ``proto``.

    The first line decides when it can (a JSON object on the first line = JSON lines); otherwise one
    unreadable first line must not cost the file's other lines: when the whole buffer is not one JSON
    document (or one protobuf message with spans) but some of its first lines are JSON, it is read as
    JSON lines and the bad lines are reported one by one."""
    if not stripped:
        return "empty"
    if stripped[:1] in (b"{", b"[") and _looks_like_json_lines(stripped):
        return "lines"
    if stripped[:1] in (b"{", b"["):
        try:
            orjson.loads(data)
        except orjson.JSONDecodeError:
            return "lines" if _some_line_is_json(data) else "document"
        return "document"
    if _some_line_is_json(data) and not _is_proto_with_spans(data):
        return "lines"
    return "proto"


def _some_line_is_json(data: bytes) -> bool:
    for i, line in enumerate(data.split(b"\n", _SNIFF_LINES)):
        if i >= _SNIFF_LINES:
            break
        line = line.strip()
        if line[:1] == b"{":
            try:
                orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            return True
    return False


def _is_proto_with_spans(data: bytes) -> bool:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    if parse_proto_stream(data) is not None:  # the whole buffer is a length-prefixed message stream
        return True
    msg = ExportTraceServiceRequest()
    try:
        msg.ParseFromString(data)
    except Exception:  # noqa: BLE001 - any refusal means "not one protobuf message"
        return False
    return bool(msg.resource_spans)


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
    chunk_bytes: int = CHUNK_BYTES,
    commit_spans: int = COMMIT_SPANS,
    max_decompressed_bytes: int = MAX_DECOMPRESSED_BYTES,
    max_gzip_ratio: float = MAX_GZIP_RATIO,
) -> IngestSummary:
    """Ingest one OTLP JSON / JSON-lines / protobuf file (gzip allowed) into ``wh``.

    ``progress`` True shows a tqdm bar over bytes on stderr; a callable gets
    the number of bytes processed since its last call. ``fast`` decodes JSON
    lines column-wise with pyarrow (:mod:`.fastpath`), ``chunk_bytes`` at a
    time, committing every ``commit_spans`` spans or more (readers see whole
    transactions); spans it cannot take cleanly go through
    the Python reference decoder, which reports problems (``fast=False``
    sends everything there, ``batch_spans`` spans per insert). Records one
    ``ingest_batches`` row with source ``file:<name>``. A gzip file is
    decompressed in bounded steps: past ``max_decompressed_bytes`` or a
    ``max_gzip_ratio`` expansion it is refused. A missing, unreadable or
    refused file raises :class:`~memory_engine.errors.TraceIngestError`; no
    content of a readable file makes this raise anything else (bad spans
    and documents are counted and reported in the summary).
    """
    from ..errors import TraceIngestError

    p = Path(path)
    source = p.name
    try:
        data = _open_bytes(p, max_decompressed_bytes, max_gzip_ratio)
    except (OSError, EOFError, gzip.BadGzipFile, zlib.error) as e:
        raise TraceIngestError(f"cannot read: {os_reason(e)}", source=str(p)) from e

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
            decoded -= res.rejected
            dec.rejected += res.rejected
            for why in res.reasons[: max(0, MAX_PROBLEMS - len(dec.problems))]:
                dec.problems.append(IngestProblem(source, None, "rejected", why))
            dec.records = []

    try:
        stripped = data.lstrip()
        kind = _layout(data, stripped)
        if kind == "empty":
            dec.malformed += 1
            dec.problems.append(IngestProblem(source, None, "malformed", "empty file"))
        elif kind == "lines":
            chunks = _iter_line_chunks(data, chunk_bytes)
            if fast:
                with _Inserter(wh, commit_spans) as inserter:
                    for got, consumed in _decoded_chunks(chunks, source, dec):
                        if got.decoded:
                            n = inserter.insert(got.spans, got.derived)
                            decoded += got.decoded
                            stored += n
                            duplicate += got.decoded - n
                        warnings += got.warnings
                        if tick:
                            tick(consumed)
            else:
                for nums, texts, consumed in chunks:
                    for num, text in zip(nums, texts, strict=True):
                        _decode_line(text, num, source, dec)
                        if len(dec.records) >= batch_spans:
                            flush()
                    if tick:
                        tick(consumed)
        elif kind == "document":
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


@dataclass(frozen=True)
class _DecodedChunk:
    """Rows of one chunk ready to insert: ``decoded`` span rows (repeats included), the attribute
    ``warnings`` of the spans the reference decoder took."""

    spans: pa.Table
    derived: dict[str, pa.Table]
    decoded: int
    warnings: int


def _decoded_chunks(
    chunks: Iterator[tuple[list[int], list[bytes], int]], source: str, dec: _Decoded, workers: int = DECODE_WORKERS
) -> Iterator[tuple[_DecodedChunk, int]]:
    """Decode up to ``workers`` chunks ahead in worker threads: the next chunks are parsed (pyarrow and
    numpy release the GIL, and so does the DuckDB insert) while the caller inserts the current one.
    Yields ``(chunk, bytes consumed)`` in file order. Each chunk collects its problems and counts in its
    own :class:`_Decoded`, merged into ``dec`` here in file order, so problems keep the file's order."""
    workers = max(1, workers)
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="otlp-decode") as pool:
        ahead: deque[tuple[Future[_DecodedChunk], _Decoded, int]] = deque()

        def done() -> tuple[_DecodedChunk, int]:
            fut, own, consumed = ahead.popleft()
            got = fut.result()
            dec.problems.extend(own.problems[: max(0, MAX_PROBLEMS - len(dec.problems))])
            dec.rejected += own.rejected
            dec.malformed += own.malformed
            return got, consumed

        for nums, texts, consumed in chunks:
            own = _Decoded()
            ahead.append((pool.submit(_decode_chunk, nums, texts, source, own), own, consumed))
            if len(ahead) > workers:
                yield done()
        while ahead:
            yield done()


def _decode_chunk(nums: list[int], texts: list[bytes], source: str, dec: _Decoded) -> _DecodedChunk:
    """Decode one chunk of JSON lines: the fast path, then the reference decoder for what it left.

    Rows carry ``_ord`` (line index << 32 | span number in the line) while they are gathered, so that a
    span repeated within the chunk is kept from its first occurrence, as the reference decoder would."""
    label = f"file:{source}"
    now = datetime.now(UTC).replace(tzinfo=None)
    span_parts: list[pa.Table] = []
    derived_parts: dict[str, list[pa.Table]] = {}
    whole: list[int] = []
    single: dict[int, list[tuple[int, int, int, int]]] = {}
    buf = b"\n".join(texts)
    may_escape = b"\\" in buf  # without a backslash no JSON string holds a character to escape
    joined: bytes | None = buf
    todo: list[int] = list(range(len(texts)))
    if b"null" in buf or (may_escape and b"\\u" in buf):  # one scan of the chunk; lines only when it may matter
        todo = []
        for i, t in enumerate(texts):
            (whole if needs_python(t) else todo).append(i)
        joined = None
    budget = RETRY_BUDGET * sum(len(texts[i]) for i in todo)
    pending = [todo] if todo else []
    while pending:
        idx = pending.pop()
        part = [texts[i] for i in idx]
        tbl = read_json_lines(part, joined=joined, blocks=JSON_BLOCKS) if budget > 0 else None
        joined = None
        budget -= sum(len(t) for t in part)
        if tbl is None:
            if len(idx) == 1 or budget <= 0:
                whole.extend(idx)
            else:  # isolate the lines pyarrow refuses; their reasons come from the reference decoder
                mid = len(idx) // 2
                pending += [idx[mid:], idx[:mid]]
            continue
        fc = decode_table(tbl, source=label, may_escape=may_escape, ingested_at=now)
        remap = np.asarray(idx, dtype=np.int64)
        span_parts.append(_remap_ords(fc.spans, remap))
        for table, dt in fc.derived.items():
            derived_parts.setdefault(table, []).append(_remap_ords(dt, remap))
        whole.extend(int(remap[r]) for r in fc.python_lines)
        for r, spans in fc.python_spans.items():
            single[int(remap[r])] = spans
    # the reference decoder, in line order so that problems are reported in file order
    ords: list[int] = []
    records = dec.records
    for i in sorted({*whole, *single}):
        if i in single:
            _decode_spans_at(texts[i], nums[i], source, single[i], dec, ords, i)
        else:
            before = len(records)
            _decode_line(texts[i], nums[i], source, dec)
            ords.extend((i << 32) | k for k in range(len(records) - before))
    n_warn = 0
    if records:
        py_spans, py_derived, n_warn, bad = build_arrow_batches_checked(records, source=label)
        if bad:
            drop = {i for i, _ in bad}
            for i, why in bad:
                _reject(dec, source, None, why, records[i].name)
            records = [r for i, r in enumerate(records) if i not in drop]
            ords = [o for i, o in enumerate(ords) if i not in drop]
        span_parts.append(_with_ords(py_spans, SPANS_SCHEMA, ords))
        first_ord: dict[tuple[str, str], int] = {}
        for rec, o in zip(records, ords, strict=True):
            first_ord.setdefault((rec.trace_id, rec.span_id), o)
        for table, dt in py_derived.items():
            keys = zip(dt.column("trace_id").to_pylist(), dt.column("span_id").to_pylist(), strict=True)
            derived_parts.setdefault(table, []).append(
                _with_ords(dt, _TABLE_SCHEMAS[table], [first_ord[k] for k in keys])
            )
        dec.records = []
    decoded = sum(t.num_rows for t in span_parts)
    if not decoded:
        return _DecodedChunk(SPANS_SCHEMA.empty_table(), {}, 0, n_warn)
    spans = first_wins(pa.concat_tables(span_parts)).drop_columns(["_ord"])
    derived = {t: first_wins(pa.concat_tables(parts)).drop_columns(["_ord"]) for t, parts in derived_parts.items()}
    return _DecodedChunk(spans, derived, decoded, n_warn)


_TABLE_SCHEMAS = dict(DERIVED_TABLES.values())


def _remap_ords(tbl: pa.Table, remap: np.ndarray) -> pa.Table:
    """Chunk-wide ``_ord`` values for a table decoded from a subset of the chunk's lines."""
    o = tbl.column("_ord").to_numpy()
    new = (remap[o >> 32] << 32) | (o & 0xFFFFFFFF)
    return tbl.set_column(tbl.schema.get_field_index("_ord"), "_ord", pa.array(new.astype(np.int64)))


def _with_ords(tbl: pa.Table, schema: pa.Schema, ords: list[int]) -> pa.Table:
    return to_schema(tbl, schema).append_column("_ord", pa.array(ords, pa.int64()))


def _decode_spans_at(
    text: bytes, lineno: int, source: str, positions: list[tuple[int, int, int, int]], dec: _Decoded,
    ords: list[int], line_index: int,
) -> None:  # fmt: skip
    """Reference-decode single spans of a line the fast path read (positions from ``FastChunk.python_spans``)."""
    doc = orjson.loads(text)
    resources: dict[int, tuple[dict[str, Any], list[str]]] = {}
    for rs_i, ss_i, sp_i, seq in positions:
        rs = doc["resourceSpans"][rs_i]
        if rs_i not in resources:
            rwarn: list[str] = []
            resources[rs_i] = (decode_json_resource(rs.get("resource"), rwarn), rwarn)
        resource, rwarn = resources[rs_i]
        ss = rs["scopeSpans"][ss_i]
        sp = ss["spans"][sp_i]
        before = len(dec.records)
        _decode_one_json(sp, resource, _scope_name(ss), rwarn, dec, source, lineno)
        if len(dec.records) > before:
            ords.append((line_index << 32) | seq)


class _Inserter:
    """Inserts Arrow tables of span and derived rows, ``commit_spans`` or more per transaction.

    Duplicates are decided by :func:`~.warehouse.insert_span_tables`: ``INSERT OR IGNORE`` probes the
    spans primary-key index DuckDB maintains anyway, once per row inside the insert, so re-ingesting a
    file stores nothing and costs no extra scan of the table (an anti-join would read every stored key
    per batch); derived rows follow their spans. The writer lock is
    held while a transaction is open; a failure rolls the open transaction back and raises
    :class:`~memory_engine.errors.WarehouseError` (earlier commits stay).
    """

    def __init__(self, wh: Warehouse, commit_spans: int, threads: int | None = INSERT_THREADS) -> None:
        self.wh = wh
        self.commit_spans = max(1, commit_spans)
        self.threads = threads
        self._threads_before: int | None = None
        self._stack = contextlib.ExitStack()
        self._con: Any = None
        self._pending = 0

    def __enter__(self) -> _Inserter:
        self.wh._require_writable()
        return self

    def insert(self, spans: pa.Table, derived: dict[str, pa.Table]) -> int:
        """Insert one chunk's rows; returns the spans newly stored."""
        import duckdb

        try:
            if self._con is None:
                self._stack.enter_context(self.wh._write_lock)
                self._con = self._stack.enter_context(self.wh.connection())
                if self.threads:  # DuckDB's setting is per database: put it back when the transaction ends
                    row = self._con.execute("SELECT current_setting('threads')").fetchone()
                    self._threads_before = int(row[0]) if row else None
                    self._con.execute(f"SET threads = {int(self.threads)}")
                self._con.execute("BEGIN TRANSACTION")
            stored = insert_span_tables(self._con, spans, derived)
            self._pending += spans.num_rows
            if self._pending >= self.commit_spans:
                self._finish(commit=True)
        except duckdb.Error as e:
            self._finish(commit=False)
            raise WarehouseError(f"inserting {spans.num_rows} spans failed: {e}") from e
        return stored

    def _finish(self, *, commit: bool) -> None:
        import duckdb

        if self._con is None:
            return
        try:
            if commit:
                self._con.execute("COMMIT")
            else:
                with contextlib.suppress(duckdb.Error):
                    self._con.execute("ROLLBACK")
        finally:
            if self._threads_before is not None:
                with contextlib.suppress(duckdb.Error):
                    self._con.execute(f"SET threads = {self._threads_before}")
                self._threads_before = None
            self._con = None
            self._pending = 0
            self._stack.close()

    def __exit__(self, exc_type: object, *exc: object) -> None:
        import duckdb

        try:
            self._finish(commit=exc_type is None)
        except duckdb.Error as e:
            raise WarehouseError(f"committing ingested spans failed: {e}") from e


def _decode_proto_file(data: bytes, source: str, dec: _Decoded) -> None:
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    def parse(buf: bytes) -> Any:
        msg = ExportTraceServiceRequest()
        try:
            msg.ParseFromString(buf)
        except _UNEXPECTED as e:  # the C parser raises DecodeError; be safe against any other refusal
            raise DecodeError(f"{type(e).__name__}: {e}") from e
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
