"""Importers: public memory benchmarks (their own JSON) -> golden suites.

- LoCoMo (snap-research/LoCoMo ``locomo10.json``): one suite per conversation,
  the conversation is a case, each dialog turn an event (label = its
  ``dia_id``, ``at`` = its session's ``date_time``, speaker in metadata), each
  QA with evidence a query whose ``relevant`` labels are the evidence ids.
  Malformed evidence ids (``"D8:6; D9:17"``, ``"D:11:26"``, ``"D30:05"``) are
  normalised and reported; ids that name no turn are dropped and reported.
  The category becomes a query tag with its meaning (official evaluation
  script: 4 single-hop, 1 multi-hop, 2 temporal, 3 open-domain, 5 adversarial).
- MemDaily (MemSim, Chinese): one suite per file, each trajectory a case,
  each message an event at its own time (China Standard Time, +08:00), each
  question a query whose ``relevant`` labels are its ``target_step_id``.
- LongMemEval: one suite per file, each question a case, haystack sessions
  replayed in date order, turns with ``has_answer`` the relevant labels;
  ``_abs`` questions become abstention queries (``empty: true``).

Every suite is validated with the suite loader before it is written, so an
importer can never produce a file ``memwb eval`` rejects.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from enum import StrEnum
from pathlib import Path
from typing import Any

import yaml

from ..errors import SuiteError, ValidationError, os_reason
from .suite import parse_suite

#: LoCoMo QA categories (from the official evaluation script).
LOCOMO_CATEGORIES: dict[int, str] = {4: "single-hop", 1: "multi-hop", 2: "temporal", 3: "open-domain", 5: "adversarial"}
#: MemDaily times carry no zone; MemSim users live in China.
MEMDAILY_TZ = timezone(timedelta(hours=8))
#: LoCoMo and LongMemEval times carry no zone; taken as UTC.
NAIVE_TZ = UTC
DEFAULT_TOP_K = 10
#: Queries of LoCoMo (which has no question times) run this long after the last session.
LOCOMO_QUERY_DELAY = timedelta(days=1)


class Benchmark(StrEnum):
    LOCOMO = "locomo"
    MEMDAILY = "memdaily"
    LONGMEMEVAL = "longmemeval"


@dataclass
class ImportReport:
    """What an import produced: files, counts, and every repaired or dropped item."""

    benchmark: str
    files: list[str] = field(default_factory=list)
    n_cases: int = 0
    n_events: int = 0
    n_queries: int = 0
    normalised: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [
            f"{self.benchmark}: {len(self.files)} suite file(s), {self.n_cases} cases, "
            f"{self.n_events} events, {self.n_queries} queries"
        ]
        out += [f"  normalised {x}" for x in self.normalised]
        out += [f"  dropped {x}" for x in self.dropped]
        return out


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise SuiteError(f"cannot read benchmark JSON: {os_reason(e)}", file=str(path)) from e


def _bad(path: Path, msg: str, case: str | None = None, fld: str | None = None) -> SuiteError:
    return SuiteError(msg, file=str(path), case_id=case, field=fld)


def _slug(s: str, max_chars: int = 80) -> str:
    """A file-name-safe slug of a suite name that keeps letters of every script (CJK included): anything
    but word characters, ``.`` and ``-`` becomes ``-``. When that changes the name (or leaves nothing), a
    short hash of the original is appended, so two names never share a file (every non-ASCII name used to
    become ``x.yaml``, each import overwriting the last)."""
    import hashlib
    import unicodedata

    name = unicodedata.normalize("NFKC", s)
    slug = re.sub(r"[^\w.-]+", "-", name).strip("-.")[:max_chars]
    if slug == s and slug:
        return slug
    tag = hashlib.sha256(s.encode("utf-8")).hexdigest()[:8]
    return f"{slug}-{tag}" if slug else f"suite-{tag}"


def _write_suite(doc: dict[str, Any], out_dir: Path, report: ImportReport) -> None:
    name = doc["suite"]
    target = out_dir / f"{_slug(name)}.yaml"
    parse_suite(doc, str(target))  # never write what the loader would reject
    out_dir.mkdir(parents=True, exist_ok=True)
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    text = yaml.dump(doc, Dumper=dumper, allow_unicode=True, sort_keys=False, width=120)
    target.write_text(text, encoding="utf-8")
    report.files.append(str(target))
    for c in doc["cases"]:
        report.n_cases += 1
        report.n_events += len(c["events"])
        report.n_queries += len(c["queries"])


# --- LoCoMo -------------------------------------------------------------------

_DIA_RE = re.compile(r"^D:?(\d+):0*(\d+)$")


def normalise_dia_ids(raw: str) -> tuple[list[str], list[str]]:
    """Split and repair one LoCoMo evidence string.

    ``"D8:6; D9:17"`` -> ``["D8:6", "D9:17"]``, ``"D:11:26"`` -> ``["D11:26"]``,
    ``"D30:05"`` -> ``["D30:5"]``. Returns (ids, unparseable tokens).
    """
    ids, bad = [], []
    for tok in re.split(r"[;,\s]+", raw.strip()):
        if not tok:
            continue
        m = _DIA_RE.match(tok)
        if m:
            ids.append(f"D{int(m.group(1))}:{int(m.group(2))}")
        else:
            bad.append(tok)
    return ids, bad


def parse_locomo_time(s: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` -> aware datetime (UTC). Raises ValueError."""
    return datetime.strptime(" ".join(s.split()), "%I:%M %p on %d %B, %Y").replace(tzinfo=NAIVE_TZ)


def _iso(dt: datetime) -> str:
    return dt.isoformat()


def import_locomo(
    path: str | Path,
    out_dir: str | Path,
    *,
    limit: int | None = None,
    top_k: int = DEFAULT_TOP_K,
    speaker_prefix: bool = True,
) -> ImportReport:
    """LoCoMo JSON -> one suite file per conversation (``locomo-<sample_id>.yaml``).

    ``limit`` keeps the first N conversations. ``speaker_prefix`` writes turns as
    ``"<speaker>: <text>"`` (LoCoMo's own retrieval database formats turns with
    the speaker); image turns get ``[shared image: <blip caption>]`` appended.
    Raises SuiteError for an unreadable file or a missing field.
    """
    p, out = Path(path), Path(out_dir)
    data = _read_json(p)
    if not isinstance(data, list):
        raise _bad(p, "expected a list of LoCoMo samples")
    report = ImportReport(Benchmark.LOCOMO.value)
    for si, sample in enumerate(data[: limit if limit is not None else None]):
        try:
            sid = str(sample["sample_id"])
            conv = sample["conversation"]
            qa = sample["qa"]
        except (KeyError, TypeError) as e:
            raise _bad(p, f"sample {si} lacks {e}") from e
        sessions = sorted(
            (int(m.group(1)), k) for k in conv if (m := re.fullmatch(r"session_(\d+)", k)) and isinstance(conv[k], list)
        )
        events: list[dict[str, Any]] = []
        last_time: datetime | None = None
        for n, key in sessions:
            raw_time = conv.get(f"{key}_date_time")
            try:
                at = parse_locomo_time(raw_time)
            except (TypeError, ValueError) as e:
                raise _bad(p, f"bad date_time {raw_time!r}", sid, f"conversation.{key}_date_time") from e
            last_time = at if last_time is None or at > last_time else last_time
            for turn in conv[key]:
                text = str(turn.get("text", "")).strip()
                if turn.get("blip_caption"):
                    text = f"{text} [shared image: {turn['blip_caption']}]".strip()
                if not text:
                    report.dropped.append(f"{sid} {turn.get('dia_id')}: empty turn")
                    continue
                speaker = turn.get("speaker", "")
                events.append({
                    "id": turn["dia_id"],
                    "at": _iso(at),
                    "session": key,
                    "text": f"{speaker}: {text}" if speaker_prefix and speaker else text,
                    "metadata": {"speaker": speaker, "session": n},
                })
        labels = {e["id"] for e in events}
        queries: list[dict[str, Any]] = []
        q_at = _iso((last_time or datetime(2023, 1, 1, tzinfo=NAIVE_TZ)) + LOCOMO_QUERY_DELAY)
        for qi, item in enumerate(qa):
            ev_ids: list[str] = []
            for raw in item.get("evidence") or []:
                ids, bad = normalise_dia_ids(str(raw))
                if bad:
                    report.dropped.append(f"{sid} qa[{qi}] evidence {raw!r}: unparseable {bad}")
                if ids and (len(ids) != 1 or ids[0] != raw):
                    report.normalised.append(f"{sid} qa[{qi}] evidence {raw!r} -> {ids}")
                for i in ids:
                    if i not in labels:
                        report.dropped.append(f"{sid} qa[{qi}] evidence {i!r}: no such turn")
                    elif i not in ev_ids:
                        ev_ids.append(i)
            if not ev_ids:
                report.dropped.append(f"{sid} qa[{qi}]: no usable evidence, query skipped")
                continue
            cat = item.get("category")
            meaning = LOCOMO_CATEGORIES.get(cat, "unknown") if isinstance(cat, int) else "unknown"
            answer = item.get("answer", item.get("adversarial_answer"))
            q: dict[str, Any] = {
                "id": f"q{qi}",
                "at": q_at,
                "text": str(item["question"]),
                "tags": [f"locomo-cat-{cat}:{meaning}"],
                "expect": {"relevant": ev_ids},
            }
            if answer is not None:
                q["answer"] = str(answer)
            queries.append(q)
        if not queries:
            report.dropped.append(f"{sid}: no query with evidence, conversation skipped")
            continue
        doc = {
            "suite": f"locomo-{sid}",
            "description": f"LoCoMo conversation {sid} ({conv.get('speaker_a')} and {conv.get('speaker_b')}), "
            f"imported from {p.name}",
            "source": {"benchmark": "locomo", "file": p.name, "sample_id": sid, "licence": "CC BY-NC 4.0"},
            "defaults": {"user": f"locomo-{sid}", "tenant": "locomo", "top_k": top_k},
            "cases": [{"id": sid, "category": "locomo", "lang": "en", "tags": ["locomo"], "events": events,
                       "queries": queries}],
        }
        _write_suite(doc, out, report)
    return report


# --- MemDaily -----------------------------------------------------------------

_MEMDAILY_RE = re.compile(r"^(\d{4})年(\d{2})月(\d{2})日\s*\S*\s+(\d{1,2}):(\d{2})$")


def parse_memdaily_time(s: str) -> datetime:
    """``"2024年04月01日 周一 08:30"`` -> aware datetime (+08:00). Raises ValueError."""
    m = _MEMDAILY_RE.match(s.strip())
    if not m:
        raise ValidationError(f"bad MemDaily time {s!r}")
    y, mo, d, h, mi = (int(x) for x in m.groups())
    return datetime(y, mo, d, h, mi, tzinfo=MEMDAILY_TZ)


def import_memdaily(
    paths: str | Path | Sequence[str | Path],
    out_dir: str | Path,
    *,
    limit: int | None = None,
    top_k: int = DEFAULT_TOP_K,
) -> ImportReport:
    """MemDaily files -> one suite per file (``memdaily-<stem>.yaml``); ``limit`` = trajectories per file.

    Each trajectory is a case (its own user), messages ``m<mid>`` are events,
    questions ``q<qid>`` queries with ``relevant`` = ``m<target_step_id>``.
    """
    report = ImportReport(Benchmark.MEMDAILY.value)
    plist = [Path(paths)] if isinstance(paths, (str, Path)) else [Path(x) for x in paths]
    for p in plist:
        data = _read_json(p)
        if not isinstance(data, list):
            raise _bad(p, "expected a list of MemDaily trajectories")
        stem = re.sub(r"^\d+_", "", p.stem)
        cases: list[dict[str, Any]] = []
        for traj in data[: limit if limit is not None else None]:
            tid = f"t{traj['tid']}"
            events = []
            for m in traj["message_list"]:
                try:
                    at = parse_memdaily_time(m["time"])
                except ValueError as e:
                    raise _bad(p, str(e), tid, f"message_list[{m.get('mid')}].time") from e
                ev: dict[str, Any] = {"id": f"m{m['mid']}", "at": at.isoformat(), "text": str(m["message"])}
                if m.get("place"):
                    ev["metadata"] = {"place": m["place"]}
                events.append(ev)
            labels = {ev["id"] for ev in events}
            queries = []
            for q in traj["question_list"]:
                rel = []
                for s in q.get("target_step_id") or []:
                    lab = f"m{s}"
                    if lab not in labels:
                        report.dropped.append(f"{p.name} {tid} q{q['qid']}: target_step_id {s} names no message")
                    elif lab not in rel:
                        rel.append(lab)
                if not rel:
                    report.dropped.append(f"{p.name} {tid} q{q['qid']}: no target step, query skipped")
                    continue
                queries.append({
                    "id": f"q{q['qid']}",
                    "at": parse_memdaily_time(q["time"]).isoformat(),
                    "text": str(q["question"]),
                    "answer": str(q.get("answer", "")),
                    "tags": [f"memdaily:{stem}"],
                    "expect": {"relevant": rel},
                })
            if not queries:
                continue
            cases.append({"id": tid, "user": None, "events": events, "queries": queries})
        for c in cases:  # one user per trajectory: trajectories are separate people
            user = f"memdaily-{stem}-{c['id']}"
            c.pop("user")
            for ev in c["events"]:
                ev["user"] = user
            for q in c["queries"]:
                q["user"] = user
        doc = {
            "suite": f"memdaily-{stem}",
            "description": f"MemDaily (MemSim) {p.name}: Chinese first-person messages and questions",
            "source": {"benchmark": "memdaily", "file": p.name},
            "defaults": {"tenant": "memdaily", "top_k": top_k, "category": f"memdaily_{stem}", "lang": "zh"},
            "cases": cases,
        }
        _write_suite(doc, Path(out_dir), report)
    return report


# --- LongMemEval --------------------------------------------------------------


def parse_longmemeval_time(s: str) -> datetime:
    """``"2023/05/25 (Thu) 20:21"`` -> aware datetime (UTC). Raises ValueError."""
    return datetime.strptime(re.sub(r"\s*\(\w+\)\s*", " ", s.strip()), "%Y/%m/%d %H:%M").replace(tzinfo=NAIVE_TZ)


def import_longmemeval(
    path: str | Path,
    out_dir: str | Path,
    *,
    limit: int | None = None,
    top_k: int = DEFAULT_TOP_K,
) -> ImportReport:
    """LongMemEval JSON -> one suite (``longmemeval-<stem>.yaml``), each question a case.

    Turn labels are ``<session_id>:<turn index>``; sessions replay in date
    order; ``_abs`` questions expect an empty result (abstention).
    """
    p = Path(path)
    data = _read_json(p)
    if isinstance(data, dict):
        data = [data]
    report = ImportReport(Benchmark.LONGMEMEVAL.value)
    cases: list[dict[str, Any]] = []
    for rec in data[: limit if limit is not None else None]:
        qid = str(rec["question_id"])
        sessions = list(zip(rec["haystack_dates"], rec["haystack_session_ids"], rec["haystack_sessions"], strict=True))
        try:
            sessions.sort(key=lambda x: parse_longmemeval_time(x[0]))
        except ValueError as e:
            raise _bad(p, str(e), qid, "haystack_dates") from e
        events, relevant = [], []
        for date_s, sess_id, turns in sessions:
            at = parse_longmemeval_time(date_s).isoformat()
            for ti, turn in enumerate(turns):
                text = str(turn.get("content", "")).strip()
                label = f"{sess_id}:{ti}"
                if not text:
                    report.dropped.append(f"{qid} {label}: empty turn")
                    continue
                events.append({"id": label, "at": at, "session": str(sess_id),
                               "role": turn.get("role", "user"), "text": text})
                if turn.get("has_answer"):
                    relevant.append(label)
        abstention = qid.endswith("_abs")
        expect: dict[str, Any] = {"empty": True} if abstention else {"relevant": relevant}
        if not abstention and not relevant:
            report.dropped.append(f"{qid}: no turn with has_answer, question skipped")
            continue
        qtype = str(rec.get("question_type", "unknown"))
        cases.append({
            "id": qid,
            "category": "abstention" if abstention else f"longmemeval_{qtype.replace('-', '_')}",
            "tags": ["longmemeval", f"longmemeval:{qtype}"],
            "user": f"longmemeval-{qid}",
            "events": events,
            "queries": [{
                "id": "q",
                "at": parse_longmemeval_time(rec["question_date"]).isoformat(),
                "text": str(rec["question"]),
                "answer": str(rec.get("answer", "")),
                "expect": expect,
            }],
        })
    for c in cases:
        user = c.pop("user")
        for ev in c["events"]:
            ev["user"] = user
        c["queries"][0]["user"] = user
    doc = {
        "suite": f"longmemeval-{_slug(p.stem)}",
        "description": f"LongMemEval {p.name}: each question a case over its haystack sessions",
        "source": {"benchmark": "longmemeval", "file": p.name, "licence": "MIT"},
        "defaults": {"tenant": "longmemeval", "top_k": top_k, "lang": "en"},
        "cases": cases,
    }
    if cases:
        _write_suite(doc, Path(out_dir), report)
    return report


def import_benchmark(
    benchmark: Benchmark | str, paths: Sequence[str | Path], out_dir: str | Path, *, limit: int | None = None,
    top_k: int = DEFAULT_TOP_K,
) -> ImportReport:
    """Dispatch to the importer of ``benchmark``; several input files are merged into one report."""
    b = Benchmark(benchmark)
    if b is Benchmark.MEMDAILY:
        return import_memdaily(paths, out_dir, limit=limit, top_k=top_k)
    total = ImportReport(b.value)
    for p in paths:
        fn = import_locomo if b is Benchmark.LOCOMO else import_longmemeval
        r = fn(p, out_dir, limit=limit, top_k=top_k)
        total.files += r.files
        total.n_cases += r.n_cases
        total.n_events += r.n_events
        total.n_queries += r.n_queries
        total.normalised += r.normalised
        total.dropped += r.dropped
    return total
