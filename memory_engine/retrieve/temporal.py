"""Dates in memories and queries resolved to calendar ranges (issue 16).

Relative dates ("yesterday", "三天前", "last Friday", "上周五", "上个月") are
resolved against a reference time: a memory's own write time (what day did
"yesterday" mean when the user said it?) or the query's time (which day does
"three days ago" mean now?). Absolute dates ("June 3", "3rd of June 2023",
"2023-05-08", "6月3号", "2023年5月8日", "六月三号") are found by a
pattern and, for the English forms, parsed by ``dateparser``; a date without a
year is the occurrence nearest to the reference (a plan "on June 3" said in
May is this June, a question about "June 3" asked in February is last June).

Days are calendar days in the reference's timezone: the engine passes the
reference in the *user's* timezone (:func:`user_time`: a per-call
``timezone``, else ``memory.timezone``, else the tzinfo of ``now``), so a
UTC+8 user's memory written at 00:30 local time belongs to that local day.
The event time a memory talks about is kept apart from its write time.
Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..errors import ValidationError

_ZH_NUM = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
_EN_NUM = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_WEEKDAYS_EN = {d: i for i, d in enumerate(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))}
_WEEKDAYS_ZH = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}

_WD_EN = r"(monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_WD_ZH = r"(?:周|星期|礼拜)([一二三四五六日天])"
_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"大后天"), "d+3"),
    (re.compile(r"(?<!之)后天|\bday after tomorrow\b"), "d+2"),
    (re.compile(r"大前天|three days ago"), "d-3"),
    (re.compile(r"前天|day before yesterday"), "d-2"),
    (re.compile(r"昨天|昨晚|昨日|\byesterday\b|\blast night\b"), "d-1"),
    (re.compile(r"今天|今早|今晚|今日|\btoday\b|\bthis morning\b|\btonight\b|\bthis evening\b"), "d0"),
    (re.compile(r"明天|\btomorrow\b"), "d+1"),
    (re.compile(r"(\d+|[一两二三四五六七八九十])\s*天(?:以)?前"), "ndays"),
    (re.compile(r"\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten)\s+days?\s+ago\b", re.I), "ndays"),
    (re.compile(r"(\d+|[一两二三四五六七八九十])\s*天(?:以)?后"), "ndays_ahead"),
    (re.compile(r"\bin\s+(\d+|one|two|three|four|five|six|seven|eight|nine|ten)\s+days?\b", re.I), "ndays_ahead"),
    (re.compile(r"上(?:个)?" + _WD_ZH), "zh_last_weekday"),
    (re.compile(r"(?<!上)下(?:个)?" + _WD_ZH), "zh_next_weekday"),
    (re.compile(r"(?:这|本)(?:个)?" + _WD_ZH), "zh_this_weekday"),
    (re.compile(r"\blast\s+" + _WD_EN + r"\b", re.I), "en_last_weekday"),
    (re.compile(r"\bnext\s+" + _WD_EN + r"\b", re.I), "en_next_weekday"),
    (re.compile(r"\b(?:this\s+)?coming\s+" + _WD_EN + r"\b", re.I), "en_coming_weekday"),
    (re.compile(r"\b(?:for|by|until|till)\s+(?:this\s+)?" + _WD_EN + r"\b", re.I), "en_coming_weekday"),
    (re.compile(r"\bthis\s+" + _WD_EN + r"\b", re.I), "en_this_weekday"),
    (re.compile(r"\bon\s+" + _WD_EN + r"\b", re.I), "en_on_weekday"),
    (re.compile(r"(?<![上下这本个每0-9一二两三四五六七八九十])" + _WD_ZH), "zh_weekday"),
    (re.compile(r"\b" + _WD_EN + r"\b(?!s)", re.I), "en_weekday"),
    (re.compile(r"上(?:周|星期|礼拜)末|\blast weekend\b", re.I), "last_weekend"),
    (re.compile(r"下(?:个)?(?:周|星期|礼拜)末|\bnext weekend\b", re.I), "next_weekend"),
    (re.compile(r"(?:这|本)(?:个)?(?:周|星期|礼拜)末|\b(?:this|for the) weekend\b", re.I), "this_weekend"),
    (re.compile(r"(?<![上下每])周末|\b(?:the|on|at|over)\s+(?:the\s+)?weekend\b", re.I), "weekend"),
    (re.compile(r"(\d+|[一两二三四五六七八九十])\s*(?:个)?(?:周|星期|礼拜)(?:以)?前"), "nweeks"),
    (re.compile(r"\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten)\s+weeks?\s+ago\b", re.I), "nweeks"),
    (re.compile(r"上上(?:周|星期|礼拜)|\bthe week before last\b", re.I), "week_before_last"),
    (re.compile(r"上(?:周|星期|礼拜)|\blast week\b", re.I), "last_week"),
    (re.compile(r"下(?:个)?(?:周|星期|礼拜)|\bnext week\b", re.I), "next_week"),
    (re.compile(r"(?:这|本)(?:周|星期|礼拜)|\bthis week\b", re.I), "this_week"),
    (re.compile(r"下(?:个)?月\s*(" + r"[0-9０-９一二两三四五六七八九十]{1,3}" + r")\s*(?:日|号)"), "next_month_day"),
    (re.compile(r"上(?:个)?月|\blast month\b", re.I), "last_month"),
    (re.compile(r"下(?:个)?月|\bnext month\b", re.I), "next_month"),
    (re.compile(r"(?:这|本)(?:个)?月|\bthis month\b", re.I), "this_month"),
    (re.compile(r"去年|\blast year\b", re.I), "last_year"),
]

_MONTHS = ("january february march april may june july august september october november december").split()
_MON = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_ZH_DIGITS = r"[0-9０-９一二两三四五六七八九十]{1,3}"
#: absolute date phrases; English ones are parsed by dateparser, the rest here
_ABSOLUTE: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b"), "iso"),
    (re.compile(r"(?:(\d{4})\s*年\s*)?(" + _ZH_DIGITS + r")\s*月\s*(" + _ZH_DIGITS + r")\s*(?:日|号)"), "zh_md"),
    (re.compile(r"(\d{4})\s*年\s*(" + _ZH_DIGITS + r")\s*月(?!\s*" + _ZH_DIGITS + r"\s*(?:日|号))"), "zh_ym"),
    (re.compile(r"\b" + _MON + r"\.?\s+\d{1,2}(?:st|nd|rd|th)?(?:,?\s+\d{4})?\b", re.I), "en"),
    (re.compile(r"\b(?:the\s+)?\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MON + r"\.?(?:,?\s+\d{4})?\b", re.I), "en"),
    (re.compile(r"\b" + _MON + r"\s+\d{4}\b", re.I), "en_month"),
]


#: tense/aspect cues of the clause that names a bare weekday ("on Saturday", "周六"): a
#: statement about the future means the coming one, a past-tense statement the past one
_FUTURE_CUES = re.compile(
    r"\b(?:will|shall|gonna|going to|plan(?:ning)? to|about to|upcoming|coming|next|tomorrow|tonight|soon)\b"
    r"|'ll\b|\b(?:am|is|are|'m|'s|'re)\s+(?:\w+\s+)?\w+ing\b"
    r"|要|会|打算|准备|计划|将|想|下(?:个)?(?:周|星期|礼拜|月)|这(?:个)?(?:周|星期|礼拜)|本周|明天|后天|安排", re.I)
_PAST_CUES = re.compile(
    r"\b(?:was|were|did|went|had|got|made|came|saw|met|took|gave|told|said|bought|spent|ago|last|yesterday)\b"
    r"|\b\w+ed\b|了|过|上(?:个)?(?:周|星期|礼拜|月)|昨|前天", re.I)
#: present tense ("What do I have on Friday?", "I have yoga on Friday"): the coming one
#: (a clause opening on an -ing verb is a plan with "I'm" left out: 'Taking the cat to the vet on Wednesday')
_PRESENT_CUES = re.compile(r"\b(?:do|does|have|has|am|is|are)\b|^\s*[a-z]+ing\b|有", re.I)
#: a habit names no one day: 'I always go to the gym on Friday evenings', '周末经常一个人看'
_HABIT_CUES = re.compile(r"\b(?:always|usually|often|every|normally|typically|tend to)\b|经常|通常|一般|总是|每", re.I)
_CLAUSE_END = re.compile(r"[.;!?。；！？，,]|\b(?:and|but|then|so|because)\b", re.I)


def _clause(text: str, pos: int) -> str:
    starts = [m.end() for m in _CLAUSE_END.finditer(text, 0, pos)]
    end = _CLAUSE_END.search(text, pos)
    return text[starts[-1] if starts else 0: end.start() if end else len(text)]


def tense(text: str, pos: int = 0) -> str | None:
    """'habit' (the clause at ``pos`` says always/every/经常/每...), 'future' or 'past' by
    :func:`prefers_future`'s cues, or None when the clause has no cue at all."""
    clause = _clause(text, pos)
    if _HABIT_CUES.search(clause):
        return "habit"
    if _FUTURE_CUES.search(clause):
        return "future"
    if _PAST_CUES.search(clause):
        return "past"
    return "future" if _PRESENT_CUES.search(clause) else None


def prefers_future(text: str, pos: int = 0) -> bool:
    """Whether a weekday named without 'last'/'next' at ``pos`` of ``text`` means the coming
    one, judged on its clause (split at punctuation and 'and'/'but'/'so'...): an explicit
    future or progressive cue ('will', "'ll", 'going to', 'is visiting', '要', '打算',
    '下周') -> True; else a past-tense cue ('went', 'visited', 'did', '了', '上周') -> False;
    else a present-tense verb ('do I have', 'is', '有') or a clause opening on an -ing verb
    ('Taking the cat to the vet on Wednesday') -> True; no cue -> False (the past one)."""
    clause = _clause(text, pos)
    if _FUTURE_CUES.search(clause):
        return True
    if _PAST_CUES.search(clause):
        return False
    return bool(_PRESENT_CUES.search(clause))


@dataclass(frozen=True)
class DateRange:
    """Half-open range [start, end) in epoch seconds, and the phrase that produced it."""

    start: float
    end: float
    phrase: str

    def overlaps(self, start: float, end: float) -> bool:
        return self.start < end and start < self.end


def _day(ref: datetime, offset: int) -> tuple[datetime, datetime]:
    d0 = ref.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=offset)
    return d0, d0 + timedelta(days=1)


def _num(s: str) -> int:
    s = s.lower()
    return int(s) if s.isdigit() else _ZH_NUM.get(s) or _EN_NUM.get(s, 0)


def _zh_int(s: str) -> int:
    """'3', '３', '十二', '二十一', '三十' -> int (0 when unreadable)."""
    s = s.translate(str.maketrans("０１２３４５６７８９", "0123456789"))
    if s.isdigit():
        return int(s)
    if "十" in s:
        a, _, b = s.partition("十")
        return (_ZH_NUM.get(a, 1) if a else 1) * 10 + (_ZH_NUM.get(b, 0) if b else 0)
    return _ZH_NUM.get(s, 0)


def timezone_of(name: str | None) -> tzinfo | None:
    """A tzinfo for an IANA name ('Asia/Shanghai'), 'UTC', or a fixed offset ('+08:00');
    None for None/''. Raises ValidationError (a ValueError) for an unknown name."""
    if not name:
        return None
    return _tz_cached(name.strip())


@lru_cache(maxsize=64)
def _tz_cached(name: str) -> tzinfo:
    m = re.fullmatch(r"(?:UTC|GMT)?([+-])(\d{1,2})(?::?(\d{2}))?", name)
    if m:
        from datetime import timezone

        delta = timedelta(hours=int(m.group(2)), minutes=int(m.group(3) or 0))
        return timezone(-delta if m.group(1) == "-" else delta)
    if name.upper() == "UTC":
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as e:
        raise ValidationError(f"unknown timezone {name!r}: use an IANA name such as 'Asia/Shanghai' or an offset "
                              "'+08:00'", field="timezone") from e


def user_time(ts: float, now: datetime | None, timezone: str | None, default: str | None) -> datetime:
    """The reference time in the user's timezone: a per-call ``timezone`` wins, then
    the configured ``default`` (``memory.timezone``), then the tzinfo of ``now``, else UTC.
    ``ts`` is the epoch instant. Raises ValidationError for an unknown timezone name."""
    tz = timezone_of(timezone) or timezone_of(default) or (now.tzinfo if now is not None else None) or UTC
    return datetime.fromtimestamp(ts, tz)


def _nearest(ref: datetime, month: int, day: int) -> datetime | None:
    """The date month/day nearest to ``ref`` (this, last or next year), midnight in ref's tz."""
    best = None
    for y in (ref.year - 1, ref.year, ref.year + 1):
        try:
            d = ref.replace(year=y, month=month, day=day, hour=0, minute=0, second=0, microsecond=0)
        except ValueError:
            continue
        if best is None or abs((d - ref).total_seconds()) < abs((best - ref).total_seconds()):
            best = d
    return best


@lru_cache(maxsize=1)
def _dateparser():  # imported on first use (about 0.5 s): most texts name no absolute date
    import dateparser

    return dateparser


def warm_up() -> None:
    """Load dateparser's English data now, not inside the first span that needs it."""
    _dateparser().parse("June 3 2020", languages=["en"])


def _weekday(ref: datetime, weekday: int, future: bool) -> tuple[datetime, datetime]:
    """The day of ``weekday`` (0 = Monday) nearest after (``future``) or before ``ref``'s day,
    never ``ref``'s day itself: dateparser with ``RELATIVE_BASE`` = ``ref`` (wall clock in the
    user's timezone) and ``PREFER_DATES_FROM`` = 'future' / 'past'."""
    base = ref.replace(tzinfo=None)
    parsed = _dateparser().parse(tuple(_WEEKDAYS_EN)[weekday], languages=["en"], settings={
        "RELATIVE_BASE": base, "PREFER_DATES_FROM": "future" if future else "past"})
    if parsed is None:  # dateparser always reads an English weekday name; a guard, not a path
        raise ValidationError(f"cannot resolve weekday {weekday}")
    return _day(ref, (parsed.date() - base.date()).days)


def _absolute(text: str, ref: datetime) -> DateRange | None:
    for rx, kind in _ABSOLUTE:
        m = rx.search(text)
        if not m:
            continue
        try:
            if kind == "iso":
                a = ref.replace(year=int(m.group(1)), month=int(m.group(2)), day=int(m.group(3)), hour=0, minute=0,
                                second=0, microsecond=0)
                return DateRange(a.timestamp(), (a + timedelta(days=1)).timestamp(), m.group(0))
            if kind == "zh_md":
                mo, dd = _zh_int(m.group(2)), _zh_int(m.group(3))
                if m.group(1):
                    a = ref.replace(year=int(m.group(1)), month=mo, day=dd, hour=0, minute=0, second=0, microsecond=0)
                else:
                    a = _nearest(ref, mo, dd)  # type: ignore[assignment]
                if a is None:
                    continue
                return DateRange(a.timestamp(), (a + timedelta(days=1)).timestamp(), m.group(0))
            if kind == "zh_ym":
                a = ref.replace(year=int(m.group(1)), month=_zh_int(m.group(2)), day=1, hour=0, minute=0, second=0,
                                microsecond=0)
                b = (a + timedelta(days=32)).replace(day=1)
                return DateRange(a.timestamp(), b.timestamp(), m.group(0))
        except ValueError:
            continue
        phrase = m.group(0)
        parsed = _dateparser().parse(phrase, languages=["en"], settings={"PREFER_DAY_OF_MONTH": "first"})
        if parsed is None:
            continue
        if kind == "en_month":
            a = ref.replace(year=parsed.year, month=parsed.month, day=1, hour=0, minute=0, second=0, microsecond=0)
            return DateRange(a.timestamp(), (a + timedelta(days=32)).replace(day=1).timestamp(), phrase)
        if re.search(r"\d{4}", phrase):
            a = ref.replace(year=parsed.year, month=parsed.month, day=parsed.day, hour=0, minute=0, second=0,
                            microsecond=0)
        else:
            a = _nearest(ref, parsed.month, parsed.day)  # type: ignore[assignment]
            if a is None:
                continue
        return DateRange(a.timestamp(), (a + timedelta(days=1)).timestamp(), phrase)
    return None


def resolve(text: str, ref: datetime) -> DateRange | None:
    """The date ``text`` names as a calendar range around ``ref`` (timezone-aware),
    or None: an absolute date first (:func:`_absolute`), else the first relative
    expression. 'last Friday' = the most recent Friday before ``ref``'s day;
    '上周五' = Friday of the previous Monday-based week; 'last week' / '上周' =
    that whole week; 'N days ago' / 'N天前' = that day; '上个月' = that month."""
    if ref.tzinfo is None:
        raise ValidationError("ref must be timezone-aware")
    found = _absolute(text, ref)
    if found is not None:
        return found
    low = text.lower()  # "Yesterday I ..." starts a sentence
    for rx, kind in _PATTERNS:
        m = rx.search(low)
        if not m:
            continue
        monday = ref.replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=ref.weekday())
        if kind.startswith("d") and kind != "d":
            a, b = _day(ref, int(kind[1:]))
        elif kind == "ndays":
            n = _num(m.group(1))
            if n <= 0:
                continue
            a, b = _day(ref, -n)
        elif kind == "zh_last_weekday":
            a = monday - timedelta(days=7 - _WEEKDAYS_ZH[m.group(1)])
            b = a + timedelta(days=1)
        elif kind == "zh_this_weekday":
            a = monday + timedelta(days=_WEEKDAYS_ZH[m.group(1)])
            b = a + timedelta(days=1)
        elif kind == "zh_next_weekday":
            a = monday + timedelta(days=7 + _WEEKDAYS_ZH[m.group(1)])
            b = a + timedelta(days=1)
        elif kind in ("en_last_weekday", "en_next_weekday", "en_coming_weekday", "en_this_weekday", "en_weekday",
                      "en_on_weekday", "zh_weekday"):
            said = tense(low, m.start())
            # a habit names no day; a bare weekday without any tense cue is too weak to date ('on Friday' is
            # the past one, as before)
            if kind in ("en_weekday", "en_on_weekday", "zh_weekday") and (
                    said == "habit" or (said is None and kind != "en_on_weekday")):
                continue
            wd = _WEEKDAYS_ZH[m.group(1)] if kind == "zh_weekday" else _WEEKDAYS_EN[m.group(1).lower()]
            if kind == "en_this_weekday":  # 'this Saturday': that day of the current Monday-based week
                a = monday + timedelta(days=wd)
                b = a + timedelta(days=1)
            else:
                future = kind in ("en_next_weekday", "en_coming_weekday") or (
                    kind in ("en_weekday", "en_on_weekday", "zh_weekday") and said == "future")
                a, b = _weekday(ref, wd, future)
        elif kind == "ndays_ahead":
            n = _num(m.group(1))
            if n <= 0:
                continue
            a, b = _day(ref, n)
        elif kind == "nweeks":
            n = _num(m.group(1))
            if n <= 0:
                continue
            a, b = monday - timedelta(days=7 * n), monday - timedelta(days=7 * (n - 1))
        elif kind == "last_weekend":
            a, b = monday - timedelta(days=2), monday
        elif kind == "weekend":  # '周末去了公园' is the last one, '周末要去公园' the coming one
            said = tense(low, m.start())
            if said in (None, "habit"):  # '周末经常看电影', '周末推荐一部电影': no one weekend
                continue
            if said == "future" or ref.weekday() >= 5:
                a, b = monday + timedelta(days=5), monday + timedelta(days=7)
            else:
                a, b = monday - timedelta(days=2), monday
        elif kind == "this_weekend":
            a, b = monday + timedelta(days=5), monday + timedelta(days=7)
        elif kind == "next_weekend":
            a, b = monday + timedelta(days=12), monday + timedelta(days=14)
        elif kind == "next_week":
            a, b = monday + timedelta(days=7), monday + timedelta(days=14)
        elif kind == "next_month_day":
            first = ref.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
            try:
                a = (first + timedelta(days=32)).replace(day=_zh_int(m.group(1)))
            except ValueError:
                continue
            b = a + timedelta(days=1)
        elif kind == "week_before_last":
            a, b = monday - timedelta(days=14), monday - timedelta(days=7)
        elif kind in ("last_month", "this_month", "next_month"):
            first = ref.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
            if kind == "last_month":
                a, b = (first - timedelta(days=1)).replace(day=1), first
            elif kind == "next_month":
                a = (first + timedelta(days=32)).replace(day=1)
                b = (a + timedelta(days=32)).replace(day=1)
            else:
                a, b = first, (first + timedelta(days=32)).replace(day=1)
        elif kind == "last_year":
            a = ref.replace(year=ref.year - 1, month=1, day=1, hour=0, minute=0, second=0, microsecond=0)
            b = a.replace(year=ref.year)
        elif kind == "last_week":
            a, b = monday - timedelta(days=7), monday
        else:  # this_week
            a, b = monday, monday + timedelta(days=7)
        return DateRange(a.timestamp(), b.timestamp(), m.group(0))
    return None


def date_terms(phrase: str) -> frozenset[str]:
    """Content terms of a date phrase ('June 10' -> {'june', '10'}, '上周五' -> {'上周', '周五', ...}):
    in a query they are matched by a memory's time, not by its words."""
    from ..text import content_terms

    return content_terms(phrase)


def coverage_with_date(query_terms: frozenset[str], phrase_terms: frozenset[str], memory_terms: Iterable[str]) -> float:
    """Keyword coverage of a memory whose time matches the date the query names: the
    query's date terms count as covered, the rest as usual (share of query terms present).
    'What did I do on June 10?' -> coverage 1 for a memory of June 10."""
    if not query_terms:
        return 0.0
    doc = set(memory_terms)
    return sum(1 for t in query_terms if t in phrase_terms or t in doc) / len(query_terms)
