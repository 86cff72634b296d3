"""Re-run the outside attacks of issue 15 and print the closing figures.

Usage::

    PYTHONPATH=. python benchmarks/attacks.py [--only otlp,pii,concurrency,erase] [--workdir DIR]

* ``otlp``: a corpus of OTLP files (valid spans in JSON lines and protobuf, interleaved with hostile
  documents: ``"scopeSpans": 5``, ``"spans": 5``, times of 1e20 / 2^63 / 2^64-1, ``memory.top_k >= 2^31``,
  binary noise, a truncated gzip, a gzip bomb) through ``memwb ingest`` (all files in one call) and the
  same valid spans POSTed to the collector in batches of 1,000 with one hostile span each. Prints valid
  spans lost, HTTP 5xx answers, crashes (tracebacks, exceptions).
* ``pii``: PII values of every kind (zh and en) written through the public API (text, metadata, fact,
  query, answer, dead letter); prints the raw values found in any persisted byte or warehouse table.
* ``concurrency``: 4 users on 4 threads writing and retrieving through one workspace engine; prints the
  warehouse rows (writes, retrievals) holding another user's text.
* ``erase``: one user's memories, queries, answers, an OpenInference span, a dead letter, a cached
  embedding and a working-memory session, then ``erase`` + compaction; prints every place still holding
  the user's id or text (residues).

Figures are printed, not asserted (the tests assert the same properties on smaller inputs).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
import threading
import traceback
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

T0 = 1_750_000_000 * 10**9


# --- OTLP -----------------------------------------------------------------------------------------
def _span(i: int, **over: Any) -> dict[str, Any]:
    sp = {
        "traceId": f"{i + 1:032x}", "spanId": f"{i + 1:016x}", "name": "memory.retrieve",
        "startTimeUnixNano": str(T0 + i), "endTimeUnixNano": str(T0 + i + 1000),
        "attributes": [{"key": "memory.user_id", "value": {"stringValue": f"u{i % 50}"}},
                       {"key": "memory.top_k", "value": {"intValue": "5"}}],
    }  # fmt: skip
    sp.update(over)
    return sp


def _doc(spans: list[dict[str, Any]], extra_scopes: list[Any] | None = None) -> dict[str, Any]:
    return {"resourceSpans": [{"resource": {"attributes": []},
                               "scopeSpans": [{"scope": {"name": "t"}, "spans": spans}] + (extra_scopes or [])}]}  # fmt: skip


_HOSTILE: list[Any] = [
    {"resourceSpans": [{"scopeSpans": 5}]},
    _doc([], extra_scopes=[{"spans": 5}]),
    _doc([_span(10**9, startTimeUnixNano="100000000000000000000")]),
    _doc([_span(10**9 + 1, startTimeUnixNano=str(2**63))]),
    _doc([_span(10**9 + 2, attributes=[{"key": "memory.top_k", "value": {"intValue": str(2**31)}}])]),
    _doc([_span(10**9 + 3, events=5)]),
    {"resourceSpans": 7},
    [1, 2, 3],
]


def otlp(work: Path, n_valid: int = 20_000) -> dict[str, Any]:
    from typer.testing import CliRunner

    from memory_engine.cli import load_commands
    from memory_engine.observability.collector import CollectorServer
    from memory_engine.observability.warehouse import Warehouse

    files: list[Path] = []
    valid: set[str] = set()
    per_file = 500
    for f in range(n_valid // per_file):
        lines = []
        for j in range(0, per_file, 50):
            spans = [_span(f * per_file + j + k) for k in range(50)]
            valid |= {s["spanId"] for s in spans}
            lines.append(orjson.dumps(_doc(spans)))
            if j % 150 == 0:
                h = _HOSTILE[(f + j) % len(_HOSTILE)]
                lines.append(orjson.dumps(h))
        p = work / f"good_{f:03d}.jsonl"
        data = b"\n".join(lines) + b"\n"
        if f % 3 == 0:
            p = p.with_suffix(".jsonl.gz")
            data = gzip.compress(data)
        p.write_bytes(data)
        files.append(p)
        if f % 7 == 0:  # hostile files between the good ones
            bad = work / f"bad_{f:03d}.json"
            bad.write_bytes(orjson.dumps(_HOSTILE[f % len(_HOSTILE)]))
            files.append(bad)
    (work / "noise.pb").write_bytes(bytes(range(256)) * 10)
    (work / "truncated.gz").write_bytes(gzip.compress(b'{"resourceSpans": []}\n' * 100)[:40])
    (work / "bomb.jsonl.gz").write_bytes(gzip.compress(b" " * (64 * 1024 * 1024), compresslevel=1))
    files += [work / "noise.pb", work / "truncated.gz", work / "bomb.jsonl.gz"]
    ws = work / "ws_ingest"
    r = CliRunner().invoke(load_commands(), ["ingest", "-w", str(ws), "--no-progress", *map(str, files)])
    crashes = int(r.exception is not None and not isinstance(r.exception, SystemExit)) + r.output.count("Traceback")
    with Warehouse(ws / "warehouse.duckdb") as wh:
        stored = {x[0] for x in wh.fetchall("SELECT span_id FROM spans")}
    out: dict[str, Any] = {"files": len(files), "valid_spans": len(valid), "ingest_lost": len(valid - stored),
                           "ingest_exit_code": r.exit_code, "ingest_crashes": crashes}  # fmt: skip

    # the collector: batches of 1,000 valid spans with one hostile span each
    import requests

    ws2 = work / "ws_collect"
    wh = Warehouse(ws2 / "warehouse.duckdb")
    srv = CollectorServer(wh, port=0).start()
    statuses: dict[int, int] = {}
    ids = sorted(valid)
    hostile_spans = [_span(0, startTimeUnixNano="100000000000000000000"), _span(0, startTimeUnixNano=str(2**63)),
                     _span(0, attributes=[{"key": "memory.top_k", "value": {"intValue": str(2**31)}}]),
                     _span(0, events=5)]  # fmt: skip
    try:
        for b in range(0, len(ids), 1000):
            spans = [_span(int(s, 16) - 1) for s in ids[b : b + 1000]]
            bad = dict(hostile_spans[(b // 1000) % len(hostile_spans)])
            bad["spanId"] = f"{0xABC0000 + b:016x}"
            body = _doc(spans + [bad], extra_scopes=[{"spans": 5}] if b % 3000 == 0 else None)
            resp = requests.post(srv.url + "/v1/traces", data=orjson.dumps(body),
                                 headers={"Content-Type": "application/json"}, timeout=60)  # fmt: skip
            statuses[resp.status_code] = statuses.get(resp.status_code, 0) + 1
        stored2 = {x[0] for x in wh.fetchall("SELECT span_id FROM spans")}
    finally:
        srv.stop()
        wh.close()
    out |= {"collector_lost": len(valid - stored2), "collector_statuses": statuses,
            "collector_5xx": sum(v for k, v in statuses.items() if k >= 500)}  # fmt: skip
    return out


# --- PII -------------------------------------------------------------------------------------------
PII_VALUES = [
    "13812345678", "139 8765 4321", "+86 136 0011 2233", "0086 138 1234 5678", "１３６００１１２２３３",
    "+44 20 7946 0958", "+1 212 736 0100", "+33 1 42 68 53 00", "+81 3 3224 5000", "+49 30 90182000",
    "110101199003071233", "110101 19900307 1233", "11010519491231002X", "440305198805156712",
    "4111 1111 1111 1111", "5500-0000-0000-0004", "6222 0212 3456 7890 128",
    "zhang.wei@example.com", "li.na+memo@corp.cn", "AB 12 34 56 C", "JG103759A", "536-90-4399", "078-05-1121",
    "DE89 3704 0044 0532 0130 00", "GB82 WEST 1234 5698 7654 32",
]


def _has_pii_form(data: bytes, raw: str) -> bool:
    forms = {raw, raw.replace(" ", "").replace("-", "")}
    forms |= {json.dumps(f)[1:-1] for f in list(forms)}
    return any(len(f) >= 6 and f.encode() in data for f in forms)


def pii(work: Path) -> dict[str, Any]:
    from memory_engine import EngineConfig
    from memory_engine.write.pii import redact

    vals = list(PII_VALUES)  # every id valid (checksums hold): an invalid one is not PII by design
    secrets_ = ["Hunter2pw!", "Tr0ub4dor&3"]
    root = work / "ws_pii"
    ws, eng, wh, close = _open(root, EngineConfig(workspace=str(root)))
    n_paths = 0
    for i, v in enumerate(vals):
        zh = i % 2 == 0
        text = f"我的联系方式是{v}，请记住" if zh else f"Please remember my contact {v} for the account"
        eng.add(text, user_id=f"u{i % 3}", metadata={"contact": v}, fact={"key": f"c{i}", "value": v})
        res = eng.retrieve(f"{v} 是谁的" if zh else f"whose is {v}?", user_id=f"u{i % 3}")
        eng.record_answer(res, f"联系方式 {v}" if zh else f"Your contact is {v}.")
        n_paths += 5
    eng.add(f"my wifi password is {secrets_[0]}", user_id="u0")
    eng.add(f"the wifi password for the office is {secrets_[1]}", user_id="u1")

    def broken(_e: Any, _r: Any) -> Any:
        raise OSError("disk full")

    w = eng.writer(apply=broken, max_attempts=1, backoff_s=0.0)
    for v in vals[:5]:
        w.submit(f"记住我的号码 {v}", user_id="u9", metadata={"p": v}, fact={"key": "p", "value": v})
    w.close(timeout=60)
    eng.flush()
    leaks: set[str] = set()
    if wh is not None:
        for (t,) in wh.fetchall("SELECT table_name FROM information_schema.tables WHERE table_schema='main'"):
            blob = "\n".join(repr(r) for r in wh.fetchall(f'SELECT * FROM "{t}"')).encode()
            leaks |= {v for v in vals + secrets_ if _has_pii_form(blob, v)}
    close()
    for p in root.rglob("*"):
        if p.is_file():
            data = p.read_bytes()
            leaks |= {v for v in vals + secrets_ if _has_pii_form(data, v)}
    redact_misses = [v for v in vals if redact(f"联系 {v}").text.find(v) >= 0]
    return {"values": len(vals) + len(secrets_), "raw_found": len(leaks), "found": sorted(leaks),
            "redact_misses": redact_misses}  # fmt: skip


# --- concurrency ----------------------------------------------------------------------------------------
def concurrency(work: Path, rounds: int = 150) -> dict[str, Any]:
    from memory_engine import EngineConfig

    ws, eng, wh, close = _open(work / "ws_conc", EngineConfig(workspace=str(work / "ws_conc")))
    users = ("alice", "bob", "carol", "dave")
    errors: list[str] = []
    start = threading.Barrier(len(users))

    def run(u: str) -> None:
        try:
            start.wait()
            for i in range(rounds):
                eng.add(f"{u} keeps notebook {u[:2].upper()}{i:04d}X for project {u}-{i}", user_id=u)
                if i % 5 == 0:
                    eng.retrieve(f"{u} notebook {i}", user_id=u)
        except Exception:  # noqa: BLE001 - counted and printed
            errors.append(traceback.format_exc())

    threads = [threading.Thread(target=run, args=(u,)) for u in users]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    eng.flush()
    rows = wh.fetchall("SELECT user_id, content FROM writes") if wh is not None else []
    cross = sum(1 for u, c in rows if c and not c.startswith(f"{u} "))
    rrows = wh.fetchall("SELECT user_id, retrieved_contents FROM retrievals") if wh is not None else []
    rcross = sum(1 for u, cs in rrows for c in (cs or []) if c and not c.startswith(f"{u} "))
    close()
    return {"adds": len(users) * rounds, "write_rows": len(rows), "cross_user_write_rows": cross,
            "retrieval_rows": len(rrows), "cross_user_retrieved_contents": rcross, "errors": len(errors)}  # fmt: skip


# --- erase -----------------------------------------------------------------------------------------------
def erase(work: Path) -> dict[str, Any]:
    from memory_engine import EngineConfig

    root = work / "ws_erase"
    cfg = EngineConfig(workspace=str(root)).with_overrides({"lifecycle.erase_warehouse": "keep"})
    ws, eng, wh, close = _open(root, cfg)
    victim, texts = "victim-7f3a", [f"ZQX{i} my secret garden note number {i} about orchids" for i in range(6)]
    others = ["I prefer aisle seats on long flights", "My dentist appointment is on Friday at 3pm",
              "I drive a blue Toyota Corolla", "My sister lives in Chengdu", "I am allergic to peanuts",
              "I use a Kindle for reading at night"]
    for t, o in zip(texts, others, strict=True):
        eng.add(t, user_id=victim)
        eng.add(o, user_id="bystander")
    res = eng.retrieve("ZQX2 orchids garden", user_id=victim)
    eng.record_answer(res, "ZQX answer about your orchids")
    if wh is not None:  # an OpenInference retriever span of another agent, keyed by user.id
        from memory_engine.observability.records import SpanRecord

        wh.insert_spans([SpanRecord("e" * 32, "e" * 16, None, "retrieve", T0, T0 + 5, attributes={
            "openinference.span.kind": "RETRIEVER", "user.id": victim, "input.value": "ZQX orchid question"})])
    w = eng.writer(apply=lambda _e, _r: (_ for _ in ()).throw(OSError("disk")), max_attempts=1, backoff_s=0.0)
    w.submit("ZQXDL dead letter note", user_id=victim)
    w.close(timeout=30)
    from memory_engine.working import sessions_for

    sessions_for(eng).add_turn("ZQXWM working memory turn", user_id=victim, session_id="s1")
    eng.flush()
    rep = _erase(ws, eng, victim)
    eng.flush()
    residue: list[str] = []
    if wh is not None:
        for (t,) in wh.fetchall("SELECT table_name FROM information_schema.tables WHERE table_schema='main'"):
            blob = "\n".join(repr(r) for r in wh.fetchall(f'SELECT * FROM "{t}"'))
            if victim in blob or "ZQX" in blob:
                residue.append(f"table {t}")
    cached = [t for t in texts if ("d", t) in getattr(eng.embedder, "_cache", {})]
    residue += [f"embedding cache: {len(cached)} entries"] if cached else []
    if sessions_for(eng).drop_user(victim):
        residue.append("working-memory session")
    close()
    for p in Path(root).rglob("*"):
        if p.is_file() and (victim.encode() in p.read_bytes() or b"ZQX" in p.read_bytes()):
            residue.append(f"file {p.relative_to(root)}")
    return {"report": rep, "residues": residue}


# --- workspace plumbing -----------------------------------------------------------------------------------
def _open(root: Path, cfg: Any) -> tuple[Any, Any, Any, Any]:
    """(workspace, engine, warehouse, close) through the composition root."""
    from memory_engine.workspace import open_workspace

    ws = open_workspace(cfg)
    return ws, ws.engine, ws.warehouse, ws.close


def _erase(ws: Any, eng: Any, user: str) -> Any:
    rep = ws.erase_user(user, mode="delete")
    return {"erase": repr(rep), "compact": ws.compact()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="otlp,pii,concurrency,erase")
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--spans", type=int, default=20_000, help="valid spans of the OTLP corpus")
    args = ap.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="memwb-attacks-"))
    work.mkdir(parents=True, exist_ok=True)
    fns = {"otlp": lambda: otlp(work / "otlp", args.spans), "pii": lambda: pii(work),
           "concurrency": lambda: concurrency(work), "erase": lambda: erase(work)}  # fmt: skip
    for name in args.only.split(","):
        (work / "otlp").mkdir(exist_ok=True)
        try:
            res = fns[name]()
        except Exception:  # noqa: BLE001 - a crash is a figure too
            res = {"crash": traceback.format_exc()}
        print(f"== {name}")
        print(json.dumps(res, indent=1, ensure_ascii=False, default=str))


if __name__ == "__main__":
    main()
