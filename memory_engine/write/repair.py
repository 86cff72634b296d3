"""Repairs of a value said a few turns earlier (issue 16, failure classes 6 and 9).

"dentist is on Tuesday at 3pm" ... "wait I said Tuesday but I meant Thursday"; "下周二下午要去医院复查"
... "刚才说错了，是周四不是周二"; "lands at 6pm" ... "sorry, 8pm not 6". The repair names no subject
(it leans on the turn it repairs), so the correction rules (write/correction.py: shared content
terms) find nothing to retire and retrieval cannot tie "Thursday" to the dentist. Recognised by
structure, not by its words:

* the same speaker, the same session (or both without one), an older turn at most ``write.repair_window_s`` seconds
  before (one of the ``write.repair_turns`` newest user turns of the session);
* a *slot value* (:func:`slot_values`: a weekday, a clock time, a day of the month, a number with
  its unit) of a kind the older turn states too, with a value the older turn lacks and the older
  turn's value of that kind missing from the repair's new ones, exactly one of each (so the
  substitution is unambiguous);
* and one of: the repair restates the older value (the contrast "said Y meant X", "X, not Y",
  "是X不是Y": the replaced value named) with at most ``write.repair_max_terms`` other content
  terms; or it names at most ``write.repair_bare_terms`` content terms the older turn does not
  ("oops, Thursday", "ugh sorry, the 19th", "啊不好意思，应该是21号": nothing but the new value); or it
  carries an explicit correction marker (:data:`~memory_engine.write.intents.EXPLICIT_CORRECTION`)
  and the words before the marker name no other subject;
* *editing terms* (:data:`EDITING`) are not counted as other terms: the closed class of words a
  speaker puts between a slip and its repair (Levelt 1983, "Monitoring and self-repair in speech",
  Cognition 14: "uh", "sorry", "I mean", "rather", "no"; Shriberg 1994, "Preliminaries to a theory
  of speech disfluencies", ch. 5: filled pauses, explicit editing phrases, discourse markers; the
  Chinese equivalents 呃, 不好意思, 说错了, 口误, 我是说, 应该是). They name no subject, so "oops, I mean the
  14th" says no more than "the 14th", while "oh and payday is the 25th" / "对了，工资是25号" name a subject
  (payday, 工资) the older turn does not and repair nothing;
* never with an additive focus particle (:data:`memory_engine.write.rules.ADDITIVE`: "and Wednesday too", "also the 14th", "周三也去",
  "还有周三": the value is added beside the older one, not put in its place; König 1991, *The meaning of
  focus particles*, ch. 4: additive particles presuppose the alternative still holds), never a question
  ("wait, is it 5pm?", "周三呢？": it asks, it corrects nothing),
* never in a condition (:data:`~memory_engine.write.correction.CONDITION`) nor naming a relative the
  older turn does not name (:func:`memory_engine.text.relatives`). The speaker's own "I said" / "我是说"
  is no reported speech here: it is how a repair points back.

The repair is stored as the older turn with the value replaced ("dentist appointment is on
Thursday at 3pm, remind me the day before"; the repair's own words in ``metadata._repair_text``
and, when it says more than the value, after it), and the older turn is superseded with the
evidence (``rule`` ``recent_repair``, the kind, both values): the one memory it names, undoable
like any correction. "dinner at 8pm with Tom" after "lands at 6pm" restates nothing, has two other
terms and no marker: no repair. "I meant to call her" states no slot value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..config import WriteSection
from ..scope import Scope
from ..store.base import StoreFilter, VectorStore
from ..text import WEEKDAYS_EN, WEEKDAYS_ZH, content_terms, ends_as_question, relatives, zh_int
from .correction import CONDITION, same_speaker
from .intents import EXPLICIT_CORRECTION
from .rules import ADDITIVE

__all__ = ["ADDITIVE", "EDITING_EN", "EDITING_ZH", "Repair", "RecentRepair", "SlotValue", "repair_of", "slot_values"]

_WD_EN = tuple(WEEKDAYS_EN)
_WD_ZH = "".join(WEEKDAYS_ZH)
#: typed slot values, each with a named group holding the value; the first alternative that matches wins
_SLOTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("weekday", re.compile(r"\b(?P<v>" + "|".join(_WD_EN) + r")\b|(?:周|星期|礼拜)(?P<z>[" + _WD_ZH + "])",
                           re.IGNORECASE)),
    ("clock", re.compile(r"(?<![\d:])(?P<v>\d{1,2}(?::\d{2})?)\s*(?:am|pm|a\.m\.|p\.m\.)(?![A-Za-z])|"
                         r"(?P<z>\d{1,2}|[一二两三四五六七八九十]{1,3})点(?:半|\d{1,2}分?)?", re.IGNORECASE)),
    ("day_of_month", re.compile(r"(?<![\d.])(?P<v>\d{1,2})(?:st|nd|rd|th)\b|(?<![\d.])(?P<z>\d{1,2})[号日]",
                                re.IGNORECASE)),
    ("quantity", re.compile(r"(?<![A-Za-z0-9.])(?P<v>\d{1,4}(?:\.\d+)?)\s*(?P<unit>kg|lbs?|cm|km|k|%|岁|公斤|斤|块|元|万|"
                            r"分钟|小时|天|周|个月|年|层|楼|号线|人)", re.IGNORECASE)),
)
#: a bare number (no unit): the replaced value restated in a contrast ('8pm, not 6')
_BARE = re.compile(r"(?<![A-Za-z0-9.:])(\d{1,4}|[一二两三四五六七八九十]{1,3})(?![A-Za-z0-9:])")
#: editing terms of a self-repair (module docstring: Levelt 1983, Shriberg 1994), zh and en: filled pauses and
#: interjections, apologies, explicit editing phrases ('I mean', 'scratch that', 'make that', 'correction') and
#: the words that call the slip a slip ('说错了', '口误', '记错了', '看错了'). A closed class, like stop words;
#: only subtracted from the terms a repair says beyond its value, never a trigger on its own.
EDITING_EN = (
    "uh", "uhm", "um", "umm", "er", "erm", "hmm", "hm", "ah", "oh", "ooh", "eh", "oops", "whoops", "ugh", "argh", "gah",
    "sorry", "pardon", "excuse me", "my bad", "my mistake", "my fault", "apologies",
    "i mean", "i meant", "i mean to say", "i meant to say", "what i meant", "i said", "rather", "or rather",
    "that is", "i mean it's", "no", "nope", "nah", "wait", "hold on", "hang on", "actually", "instead",
    "correction", "scratch that", "strike that", "make that", "let me correct", "i misspoke", "typo",
)
EDITING_ZH = (
    # single characters only where they are not part of common words (哈 in 哈尔滨, 额 in 金额 are left out)
    "呃", "嗯", "啊", "哦", "噢", "喔", "唉", "哎", "哎呀", "哎哟", "诶", "欸", "呀",
    "抱歉", "不好意思", "对不起",
    "说错了", "说错", "讲错了", "打错了", "打错", "写错了", "写错", "记错了", "记错", "看错了", "看错", "搞错了", "搞错",
    "弄错了", "口误", "笔误", "错了", "不对", "我是说", "我的意思是", "我想说的是", "应该是", "更正一下", "更正",
    "纠正一下", "纠正", "等等", "等一下", "改一下", "我说的是",
)
#: a sentence: up to and including its end mark (a question is one that text.ends_as_question)
_SENTENCE = re.compile(r"[^.!?。！？\n]*(?:[.!?。！？\n]+|$)")


def _asks(text: str, span: tuple[int, int]) -> bool:
    """Whether the sentence of ``text`` holding ``span`` is a question ('wait, is it 5pm?'; not the 'I meant
    Thursday' after 'did I say Tuesday?')."""
    for m in _SENTENCE.finditer(text):
        if m.start() <= span[0] < max(m.end(), m.start() + 1):
            return ends_as_question(m.group(0))
    return False

_EDITING = re.compile(
    r"(?<![A-Za-z'])(?:" + "|".join(sorted((re.escape(w).replace(r"\ ", r"\s+") for w in EDITING_EN), key=len,
                                              reverse=True)) + r")(?![A-Za-z'])|"
    + "|".join(sorted(EDITING_ZH, key=len, reverse=True)),
    re.IGNORECASE,
)


@dataclass(frozen=True)
class SlotValue:
    """One typed value of a text: ``kind`` (weekday / clock / day_of_month / quantity:<unit>),
    ``value`` (normalised: 'tuesday' -> '1', '周二' -> '1', '6pm' -> '6', '7岁' -> '7') and its
    ``span`` (character offsets) in the text."""

    kind: str
    value: str
    span: tuple[int, int]


def _zh_int(s: str) -> str:
    """'七' -> '7', '十二' -> '12', '8' -> '8' (:func:`memory_engine.text.zh_int` as text; an unreadable
    numeral stays as it is)."""
    return str(zh_int(s) or s) if not s.isdigit() else str(int(s))


def slot_values(text: str) -> list[SlotValue]:
    """The typed values ``text`` states, in order (overlapping matches: the first kind wins)."""
    out: list[SlotValue] = []
    taken: list[tuple[int, int]] = []
    for kind, rx in _SLOTS:
        for m in rx.finditer(text):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            if kind == "weekday":
                v = str(WEEKDAYS_EN[m.group("v").lower()] if m.group("v") else WEEKDAYS_ZH[m.group("z")])
            elif kind == "quantity":
                v, kind_ = m.group("v"), f"quantity:{m.group('unit').lower()}"
                out.append(SlotValue(kind_, v, m.span()))
                taken.append(m.span())
                continue
            else:
                v = _zh_int(m.group("v") or m.group("z"))
            out.append(SlotValue(kind, v, m.span()))
            taken.append(m.span())
    return sorted(out, key=lambda s: s.span)


def _other_terms(text: str, values: list[SlotValue]) -> set[str]:
    """Content terms of ``text`` outside its slot values, bare numbers and editing terms (:data:`EDITING_EN`,
    :data:`EDITING_ZH`): what it says beyond the value."""
    rest = text.replace("\u2019", "'")
    for s in sorted(values, key=lambda s: -s.span[0]):
        rest = rest[: s.span[0]] + " " + rest[s.span[1]:]
    rest = _EDITING.sub(" ", _BARE.sub(" ", rest))
    return {t for t in content_terms(rest) if not t.isdigit()}


@dataclass(frozen=True)
class Repair:
    """The repaired older turn: its id, the ``repaired`` text (older text with the value replaced), the
    slot ``kind``, the ``old`` and ``new`` surface values and the route (``restated`` / ``bare`` /
    ``marker``)."""

    memory_id: str
    repaired: str
    kind: str
    old: str
    new: str
    route: str
    #: the repair says more than the value ('不对，我是说8岁，他是去年上的学'): its words are kept after the repaired text
    says_more: bool = False

    def evidence(self) -> dict[str, Any]:
        return {"id": self.memory_id, "rule": "recent_repair", "kind": self.kind, "replaced": self.old,
                "by": self.new, "route": self.route}


def repair_of(text: str, old_text: str, cfg: WriteSection) -> tuple[str, str, str, str, str, bool] | None:
    """``(repaired old text, kind, old surface, new surface, route, says more)`` when ``text`` repairs a slot value of
    ``old_text`` (see the module docstring), else None. Pure: no store, no clock."""
    if CONDITION.search(text) or relatives(text) - relatives(old_text):
        return None  # a hypothetical, or about a relative the older turn does not name ('my wife said Thursday')
    if ADDITIVE.search(text):
        return None  # 'and Wednesday too' adds a value beside the older one
    new_vals, old_vals = slot_values(text), slot_values(old_text)
    if not new_vals or not old_vals:
        return None
    other = _other_terms(text, new_vals)
    old_terms = set(content_terms(old_text))
    bare = {_zh_int(m.group(1)) for m in _BARE.finditer(text)}
    for kind in dict.fromkeys(s.kind for s in new_vals):
        olds = [s for s in old_vals if s.kind == kind]
        new_here = {s.value for s in new_vals if s.kind == kind}
        fresh = [s for s in new_vals if s.kind == kind and s.value not in {o.value for o in olds}]
        replaced = [o for o in olds if o.value not in {s.value for s in fresh}]
        if len({s.value for s in fresh}) != 1 or not replaced:
            continue
        restated = [o for o in replaced if o.value in new_here or o.value in bare]
        if restated and len(other) <= cfg.repair_max_terms:
            route, target = "restated", restated
        elif len(other - old_terms) <= cfg.repair_bare_terms:  # words the older turn says point back to it
            route, target = "bare", replaced
        elif EXPLICIT_CORRECTION.search(text) and not _names_own_subject(text, old_text):
            route, target = "marker", replaced
        else:
            continue
        if len({o.value for o in target}) != 1:
            continue  # two older values of the kind and no way to tell which one is meant
        o, n = target[0], fresh[0]
        if _asks(text, n.span):
            continue  # a question about the value corrects nothing
        old_surface, new_surface = old_text[o.span[0]:o.span[1]], text[n.span[0]:n.span[1]]
        # a bare 'Thursday' replaces 'Tuesday'; '8pm' replaces '6pm'; keep the older turn's casing of the rest
        repaired = old_text[: o.span[0]] + new_surface + old_text[o.span[1]:]
        for extra in target[1:]:  # the same value said twice ('Tuesday ... see you Tuesday')
            s = old_text[extra.span[0]:extra.span[1]]
            repaired = repaired.replace(s, new_surface)
        return repaired, kind, old_surface, new_surface, route, len(other) > cfg.repair_max_terms
    return None


def _names_own_subject(text: str, old_text: str) -> bool:
    """Whether the repair's words before its correction marker name a subject the older turn does not
    ('我同事不对，...'): such a repair is about someone or something else."""
    m = EXPLICIT_CORRECTION.search(text)
    before = set(content_terms(text[: m.start()])) if m else set()
    return bool(before) and not before & set(content_terms(old_text))


class RecentRepair:
    """``find(scope, session_id, ts, text, role, metadata)`` -> the :class:`Repair` of one of the session's
    ``write.repair_turns`` newest turns (any role; only the speaker's own can be repaired), or None. Disabled with ``write.repair_window_s`` = 0."""

    def __init__(self, store: VectorStore, cfg: WriteSection) -> None:
        self.store, self.cfg = store, cfg

    def find(self, scope: Scope, session_id: str | None, ts: float, text: str, role: str,
             metadata: dict[str, Any]) -> Repair | None:
        if role != "user" or self.cfg.repair_window_s <= 0 or not slot_values(text):
            return None
        flt = StoreFilter(tenant_id=scope.tenant_id, user_id=scope.user_id, session_id=session_id,
                          created_before=ts, created_after=ts - self.cfg.repair_window_s)
        rows = self.store.scroll(flt, limit=self.cfg.repair_turns, order_by="created_at", descending=True)
        if session_id is None:
            # a plain add (no session, as in the README) talks in one session-less conversation: the user's
            # newest session-less turns inside the window are "a few turns before"; another session's are not
            rows = [p for p in rows if not p.payload.get("session_id")]
        for p in rows:  # newest first: a repair repairs the nearest turn stating the value
            if [p.payload.get("tenant_id"), p.payload.get("user_id")] != [scope.tenant_id, scope.user_id]:
                continue
            if p.payload.get("fact_key") or not same_speaker(role, metadata, p.payload, text):  # same role too
                continue
            found = repair_of(text, str(p.payload.get("content") or ""), self.cfg)
            if found is not None:
                return Repair(p.id, *found)
        return None
