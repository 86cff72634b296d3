"""Golden suite schema and loader (contract: ``GOLDEN_CASES.md``).

A suite is one YAML file. :func:`load_suite` validates it with pydantic
(unknown keys are errors, so a typo cannot silently disable an assertion),
checks what pydantic cannot (duplicate ids, labels referenced but never
defined, times), and resolves defaults and relative times into a
:class:`ResolvedSuite` of frozen dataclasses the runner replays.

Every problem becomes a :class:`~memory_engine.errors.SuiteError` naming the
file, the case id and the field path (``cases[0].queries[1].expect.relevant``);
:func:`load_suites` collects all of them over all files and raises one
:class:`SuiteErrors` so nothing runs on bad input.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from enum import StrEnum
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic import ValidationError as PydanticValidationError

from ..errors import SuiteError, SuiteErrors, ValidationError

#: Start of the simulated clock of a case whose ``at`` values are all relative.
DEFAULT_EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
#: Step between consecutive items of a case that carry no ``at``: keeps replay order monotone.
DEFAULT_STEP = timedelta(seconds=1)

_REL_RE = re.compile(r"^([+-])(\d+(?:\.\d+)?)([smhdw])$")
_REL_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_TIME_HELP = "expected ISO-8601 with offset (2026-03-02T09:00:00+08:00) or relative (-9d, +2h, +30m)"


class Lang(StrEnum):
    ZH = "zh"
    EN = "en"
    MIXED = "mixed"


class Role(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    SYSTEM = "system"


class EventType(StrEnum):
    WORKING = "working"
    EPISODIC = "episodic"
    SEMANTIC = "semantic"
    FACT = "fact"
    PROCEDURAL = "procedural"


class ExpectWrite(StrEnum):
    STORED = "stored"
    MERGED = "merged"
    REJECTED = "rejected"
    CANDIDATE = "candidate"


#: Tag that makes ``memwb ci`` fail when any query or write expectation of the case fails.
MUST_PASS_TAG = "must-pass"
#: a documented limitation: its irrelevant labels are reported but do not fail ``memwb ci`` (ci.py)
KNOWN_GAP_TAG = "known-gap"


def parse_time(value: Any) -> datetime | timedelta:
    """Parse an ``at`` value: an aware datetime, or a relative offset as a timedelta.

    Accepts ISO-8601 strings with an offset (``Z`` allowed), YAML timestamps
    (PyYAML turns unquoted ISO times into datetimes) and ``[+-]<n><unit>`` with
    unit ``s``/``m``/``h``/``d``/``w``. Raises ValueError (the loader turns it
    into a SuiteError) for anything else, including naive datetimes.
    """
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, date) or not isinstance(value, str):
        raise ValidationError(f"bad time {value!r}: {_TIME_HELP}")
    else:
        s = value.strip()
        m = _REL_RE.match(s)
        if m:
            sign = -1 if m.group(1) == "-" else 1
            return sign * timedelta(**{_REL_UNITS[m.group(3)]: float(m.group(2))})
        try:
            dt = datetime.fromisoformat(s.replace("Z", "+00:00") if s.endswith("Z") else s)
        except ValueError:
            raise ValidationError(f"bad time {value!r}: {_TIME_HELP}") from None
    if dt.tzinfo is None or dt.utcoffset() is None:
        raise ValidationError(f"bad time {str(value)!r}: no UTC offset; {_TIME_HELP}")
    return dt


# --- raw schema (what the YAML may contain) ---------------------------------


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_enum_values=False)


def _check_at(v: Any) -> Any:
    if v is None:
        return v
    parse_time(v)
    return v


class FactWrite(_Model):
    key: str = Field(min_length=1, description="Dotted fact key, e.g. content.games.")
    value: Any = Field(description="Fact value (any YAML scalar or structure).")


class EventSpec(_Model):
    id: str | None = Field(
        None, min_length=1, description="Case-local label that expectations refer to; omitted -> 'event<index>'."
    )
    at: str | datetime | None = Field(None, description="Absolute ISO-8601 time with offset or relative -9d/+2h/+30m.")
    user: str | None = None
    tenant: str | None = None
    session: str | None = None
    role: Role = Role.USER
    text: str = Field(min_length=1)
    type: EventType | None = None
    fact: FactWrite | None = None
    metadata: dict[str, Any] | None = None
    expect_write: ExpectWrite | None = None
    expect_supersedes: list[str] | None = Field(
        None, description="Extension: labels this write must supersede (judges supersessions exactly)."
    )

    _at = field_validator("at", mode="before")(classmethod(lambda cls, v: _check_at(v)))


def _grades(v: Any) -> Any:
    if isinstance(v, list):
        for x in v:
            if not isinstance(x, str):
                raise ValidationError(f"labels must be strings, got {x!r}")
        return {x: 1.0 for x in v}
    return v


class Expect(_Model):
    relevant: dict[str, float] | None = Field(
        None, description="Labels that must be in the top_k: a list, or {label: grade} for graded nDCG."
    )
    irrelevant: list[str] | None = None
    empty: bool | None = None
    fact: dict[str, Any] | None = None
    not_contains: list[str] | None = None

    _rel = field_validator("relevant", mode="before")(classmethod(lambda cls, v: _grades(v)))

    @field_validator("relevant")
    @classmethod
    def _nonneg(cls, v: dict[str, float] | None) -> dict[str, float] | None:
        if v is not None:
            for label, g in v.items():
                if g < 0:
                    raise ValidationError(f"grade of {label!r} must be >= 0, got {g}")
        return v


class QuerySpec(_Model):
    id: str = Field(min_length=1)
    at: str | datetime | None = None
    user: str | None = None
    tenant: str | None = None
    session: str | None = None
    text: str = Field(min_length=1)
    top_k: int | None = Field(None, ge=1)
    answer: str | None = Field(None, description="Extension: reference answer text (LLM metrics only).")
    tags: list[str] = Field(default_factory=list, description="Extension: per-query tags (e.g. benchmark category).")
    expect: Expect = Field(default_factory=Expect)

    _at = field_validator("at", mode="before")(classmethod(lambda cls, v: _check_at(v)))


class CaseSpec(_Model):
    id: str = Field(min_length=1)
    category: str | None = None
    lang: Lang | None = None
    tags: list[str] = Field(default_factory=list)
    description: str | None = None
    events: list[EventSpec] = Field(default_factory=list)
    queries: list[QuerySpec] = Field(min_length=1)


class Defaults(_Model):
    user: str | None = None
    tenant: str | None = None
    session: str | None = None
    top_k: int | None = Field(None, ge=1)
    category: str | None = None
    lang: Lang | None = None


class SuiteSpec(_Model):
    suite: str = Field(min_length=1)
    description: str | None = None
    defaults: Defaults = Field(default_factory=Defaults)
    source: dict[str, Any] | None = Field(None, description="Extension: provenance of imported suites.")
    cases: list[CaseSpec] = Field(min_length=1)


# --- resolved form (what the runner replays) --------------------------------


@dataclass(frozen=True)
class Event:
    label: str
    at: datetime
    user: str
    tenant: str
    session: str | None
    role: str
    text: str
    memory_type: str | None
    fact: tuple[str, Any] | None
    metadata: dict[str, Any] | None
    expect_write: str | None
    expect_supersedes: tuple[str, ...] | None


@dataclass(frozen=True)
class Query:
    id: str
    at: datetime
    user: str
    tenant: str
    session: str | None
    text: str
    top_k: int | None
    relevant: dict[str, float]
    irrelevant: tuple[str, ...]
    empty: bool | None
    fact: dict[str, Any]
    not_contains: tuple[str, ...]
    answer: str | None = None
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Case:
    id: str
    category: str
    lang: str
    tags: tuple[str, ...]
    events: tuple[Event, ...]
    queries: tuple[Query, ...]

    @property
    def must_pass(self) -> bool:
        return MUST_PASS_TAG in self.tags


@dataclass(frozen=True)
class ResolvedSuite:
    name: str
    path: str
    description: str | None
    cases: tuple[Case, ...]
    source: dict[str, Any] = field(default_factory=dict)

    @property
    def n_queries(self) -> int:
        return sum(len(c.queries) for c in self.cases)


# --- YAML with duplicate-key detection --------------------------------------


_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml parser when built in: ~10x faster


class _StrictLoader(_BaseLoader):  # type: ignore[misc,valid-type]
    """SafeLoader that rejects duplicate mapping keys (a silent overwrite hides a typo)."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r} (first at line {seen[key]})", key_node.start_mark
            )
        seen[key] = key_node.start_mark.line + 1
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def event_label(ev: EventSpec, index: int) -> str:
    """The event's label: its ``id``, or ``event<index>`` (0-based) when it has none."""
    return ev.id if ev.id is not None else f"event{index}"


def _path(loc: Iterable[Any]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _case_id_at(data: Any, loc: Sequence[Any]) -> str | None:
    if len(loc) >= 2 and loc[0] == "cases" and isinstance(loc[1], int) and isinstance(data, dict):
        cases = data.get("cases")
        if isinstance(cases, list) and loc[1] < len(cases) and isinstance(cases[loc[1]], dict):
            cid = cases[loc[1]].get("id")
            return str(cid) if cid is not None else None
    return None


def _pydantic_errors(file: str, data: Any, exc: PydanticValidationError) -> list[SuiteError]:
    out = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        if err["type"] == "extra_forbidden":
            msg = "unknown key"
        else:
            msg = err["msg"]
            if msg.startswith("Value error, "):
                msg = msg[len("Value error, ") :]
        out.append(SuiteError(msg, file=file, case_id=_case_id_at(data, loc), field=_path(loc)))
    return out


def _duplicates(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    dup: list[str] = []
    for x in items:
        if x in seen and x not in dup:
            dup.append(x)
        seen.add(x)
    return dup


def _semantic_errors(file: str, spec: SuiteSpec) -> list[SuiteError]:
    errs: list[SuiteError] = []
    for cid in _duplicates(c.id for c in spec.cases):
        idx = [i for i, c in enumerate(spec.cases) if c.id == cid][1]
        errs.append(SuiteError(f"duplicate case id {cid!r}", file=file, case_id=cid, field=f"cases[{idx}].id"))
    d = spec.defaults
    for ci, case in enumerate(spec.cases):
        base = f"cases[{ci}]"

        def err(msg: str, path: str, _cid: str = case.id) -> None:
            errs.append(SuiteError(msg, file=file, case_id=_cid, field=path))

        labels = [event_label(e, i) for i, e in enumerate(case.events)]
        for lab in _duplicates(labels):
            idx = [i for i, x in enumerate(labels) if x == lab][1]
            err(f"duplicate event id {lab!r}", f"{base}.events[{idx}].id")
        for qid in _duplicates(q.id for q in case.queries):
            idx = [i for i, q in enumerate(case.queries) if q.id == qid][1]
            err(f"duplicate query id {qid!r}", f"{base}.queries[{idx}].id")
        defined = set(labels)
        for ei, ev in enumerate(case.events):
            if (ev.user or d.user) is None:
                err("user missing (set it on the event or in defaults)", f"{base}.events[{ei}].user")
            for lab in ev.expect_supersedes or ():
                if lab not in defined:
                    err(f"label {lab!r} is not defined by any event of the case", f"{base}.events[{ei}].expect_supersedes")
        for qi, q in enumerate(case.queries):
            qb = f"{base}.queries[{qi}]"
            if (q.user or d.user) is None:
                err("user missing (set it on the query or in defaults)", f"{qb}.user")
            for key in ("relevant", "irrelevant"):
                for lab in getattr(q.expect, key) or ():
                    if lab not in defined:
                        err(f"label {lab!r} is not defined by any event of the case", f"{qb}.expect.{key}")
            rel = set(q.expect.relevant or ())
            both = sorted(rel & set(q.expect.irrelevant or ()))
            if both:
                err(f"labels {both} are both relevant and irrelevant", f"{qb}.expect")
            if q.expect.empty and rel:
                err("empty: true contradicts a non-empty relevant list", f"{qb}.expect.empty")
        if (case.category or d.category) is None:
            err("category missing (set it on the case or in defaults)", f"{base}.category")
    return errs


def _resolve(spec: SuiteSpec, path: str, epoch: datetime, step: timedelta) -> ResolvedSuite:
    d = spec.defaults
    cases: list[Case] = []
    for c in spec.cases:
        # two comprehensions: a tuple of events and queries would be typed as their common base, which has no .at
        ats = [x.at for x in c.events] + [x.at for x in c.queries]
        parsed = [None if at is None else parse_time(at) for at in ats]
        anchor = next((p for p in parsed if isinstance(p, datetime)), epoch)
        times: list[datetime] = []
        prev: datetime | None = None
        for p in parsed:
            if p is None:
                t = anchor if prev is None else prev + step
            elif isinstance(p, timedelta):
                t = anchor + p
            else:
                t = p
            times.append(t)
            prev = t
        n_ev = len(c.events)
        events = tuple(
            Event(
                label=event_label(e, i),
                at=times[i],
                user=e.user or d.user or "",
                tenant=e.tenant or d.tenant or "default",
                session=e.session or d.session,
                role=e.role.value,
                text=e.text,
                memory_type=e.type.value if e.type else None,
                fact=(e.fact.key, e.fact.value) if e.fact else None,
                metadata=dict(e.metadata) if e.metadata else None,
                expect_write=e.expect_write.value if e.expect_write else None,
                expect_supersedes=tuple(e.expect_supersedes) if e.expect_supersedes is not None else None,
            )
            for i, e in enumerate(c.events)
        )
        queries = tuple(
            Query(
                id=q.id,
                at=times[n_ev + i],
                user=q.user or d.user or "",
                tenant=q.tenant or d.tenant or "default",
                session=q.session or d.session,
                text=q.text,
                top_k=q.top_k or d.top_k,
                relevant=dict(q.expect.relevant or {}),
                irrelevant=tuple(q.expect.irrelevant or ()),
                empty=q.expect.empty,
                fact=dict(q.expect.fact or {}),
                not_contains=tuple(q.expect.not_contains or ()),
                answer=q.answer,
                tags=tuple(q.tags),
            )
            for i, q in enumerate(c.queries)
        )
        lang = c.lang or d.lang
        cases.append(
            Case(
                id=c.id,
                category=c.category or d.category or "",
                lang=lang.value if lang else "unspecified",
                tags=tuple(c.tags),
                events=events,
                queries=queries,
            )
        )
    return ResolvedSuite(spec.suite, path, spec.description, tuple(cases), dict(spec.source or {}))


def parse_suite(
    data: Any, file: str, *, epoch: datetime = DEFAULT_EPOCH, step: timedelta = DEFAULT_STEP
) -> ResolvedSuite:
    """Validate and resolve an already-parsed suite document.

    ``file`` is only used in error messages. ``epoch`` anchors cases without
    any absolute ``at``; ``step`` spaces items that carry no ``at`` (so the
    replay order stays strictly increasing in time). Raises :class:`SuiteErrors`.
    """
    if not isinstance(data, dict):
        raise SuiteErrors([SuiteError(f"top level must be a mapping, got {type(data).__name__}", file=file)])
    try:
        spec = SuiteSpec.model_validate(data)
    except PydanticValidationError as e:
        raise SuiteErrors(_pydantic_errors(file, data, e)) from None
    errs = _semantic_errors(file, spec)
    if errs:
        raise SuiteErrors(errs)
    return _resolve(spec, file, epoch, step)


def load_suite(path: str | Path, **kw: Any) -> ResolvedSuite:
    """Read, validate and resolve one YAML suite file. Raises :class:`SuiteErrors`."""
    p = Path(path)
    file = str(p)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise SuiteErrors([SuiteError(f"cannot read: {e.strerror or e}", file=file)]) from e
    try:
        data = yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - SafeLoader subclass
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(e, "problem", None) or str(e)
        raise SuiteErrors([SuiteError(f"invalid YAML: {where}{problem}", file=file)]) from e
    return parse_suite(data, file, **kw)


def expand_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Files named, plus every ``*.yaml``/``*.yml`` under named folders (sorted)."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            out.extend(sorted(x for x in p.rglob("*") if x.suffix in (".yaml", ".yml") and x.is_file()))
        else:
            out.append(p)
    return out


def load_suites(paths: Iterable[str | Path], **kw: Any) -> list[ResolvedSuite]:
    """Load every suite under ``paths`` (files or folders); all-or-nothing.

    Collects the errors of every file (and duplicate suite names across files)
    and raises one :class:`SuiteErrors` listing them, so nothing runs on bad input.
    """
    files = expand_paths(paths)
    errors: list[SuiteError] = []
    suites: list[ResolvedSuite] = []
    if not files:
        raise SuiteErrors([SuiteError("no suite files found", file=", ".join(str(p) for p in paths) or None)])
    for f in files:
        try:
            suites.append(load_suite(f, **kw))
        except SuiteErrors as e:
            errors.extend(e.errors)
    seen: dict[str, str] = {}
    for s in suites:
        if s.name in seen:
            errors.append(SuiteError(f"duplicate suite name {s.name!r} (also in {seen[s.name]})", file=s.path, field="suite"))
        else:
            seen[s.name] = s.path
    if errors:
        raise SuiteErrors(errors)
    return suites
