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
UTC+8 user's memory written at 00:30 local time belongs to that local day; the
record keeps its writer's UTC offset, so that day stays the one the user lived
when a later question comes from another offset (daylight saving ended, a trip):
:meth:`DateSettings.user_day` and :func:`rebase`. Doubled days (上上周二, 下下周三,
'the Tuesday before last', 'the week after next'), ISO-8601 times a tool restates
in UTC ('2026-06-13T02:30:00Z') and named holidays (``memory.holiday_periods``:
国庆期间, 'over the holidays'; the lunar festivals and other movable holidays from the ``holidays``
package's calendars: 春节期间, 中秋, 'over Thanksgiving') are read too. The event time a memory talks about is
kept apart from its write time. Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..errors import ValidationError
from ..text import WEEKDAYS_EN as _WEEKDAYS_EN
from ..text import WEEKDAYS_ZH as _WEEKDAYS_ZH
from ..text import ZH_NUM as _ZH_NUM
from ..text import asks
from ..text import zh_int as _zh_int

_EN_NUM = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}

_WD_EN = r"(monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_WD_ZH = r"(?:周|星期|礼拜)([一二三四五六日天])"
_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    # the same day a year back, before '去年' / 'last year' (a whole year) can match
    (re.compile(r"去年(?:的)?(?:这个时候|这时候|此时|这会儿|今天|这一天|这天|同期)|一年前(?:的)?(?:今天|这个时候)"
                r"|\bthis time last year\b|\b(?:exactly\s+)?(?:a|one) year ago\b", re.I), "year_back"),
    (re.compile(r"大后天"), "d+3"),
    (re.compile(r"(?<!之)后天|\bday after tomorrow\b"), "d+2"),
    (re.compile(r"大前天|three days ago"), "d-3"),
    (re.compile(r"前天|day before yesterday"), "d-2"),
    (re.compile(r"昨天|昨晚|昨日|\byesterday\b|\blast night\b"), "d-1"),
    # a part of today, before plain 'today' (它 contains 今天): a past-tense one not begun yet when said is the day
    # before's (memory.day_part_hours)
    (re.compile(r"今早|今天早上|今天早晨|今天上午|\bthis morning\b"), "part_morning"),
    (re.compile(r"今天下午|\bthis afternoon\b"), "part_afternoon"),
    (re.compile(r"今晚|今天晚上|\btonight\b|\bthis evening\b"), "part_evening"),
    (re.compile(r"今天|今日|\btoday\b"), "d0"),
    (re.compile(r"明天|\btomorrow\b"), "d+1"),
    (re.compile(r"(\d+|[一两二三四五六七八九十])\s*天(?:以)?前"), "ndays"),
    (re.compile(r"\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten)\s+days?\s+ago\b", re.I), "ndays"),
    # 'two Tuesdays ago': N occurrences of that weekday back (the first is 'last Tuesday')
    (re.compile(r"\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten)\s+" + _WD_EN[:-1] + r")s\s+ago\b", re.I),
     "n_weekdays_ago"),
    # a few days back, no day named: 前几天 / 'a few days ago' / 'the other day' = the memory.few_days_back days
    # before ref's day (not the day itself)
    (re.compile(r"前几天|前两天|\ba few days ago\b|\bthe other day\b|\ba couple (?:of )?days ago\b", re.I), "few_days"),
    (re.compile(r"(\d+|[一两二三四五六七八九十])\s*天(?:以)?后"), "ndays_ahead"),
    (re.compile(r"\bin\s+(\d+|one|two|three|four|five|six|seven|eight|nine|ten)\s+days?\b", re.I), "ndays_ahead"),
    # doubled 上上 / 下下 ('the one before the last' / 'after the next', 现代汉语词典 上上, 下下) and English
    # 'before last' / 'after next' (closed forms, before the single ones that match inside them)
    (re.compile(r"上上(?:个)?" + _WD_ZH), "zh_last2_weekday"),
    (re.compile(r"下下(?:个)?" + _WD_ZH), "zh_next2_weekday"),
    (re.compile(r"\b(?:the\s+)?" + _WD_EN + r"\s+before\s+last\b", re.I), "en_weekday_before_last"),
    (re.compile(r"\b(?:the\s+)?" + _WD_EN + r"\s+after\s+next\b", re.I), "en_weekday_after_next"),
    (re.compile(r"下下(?:个)?(?:周|星期|礼拜)(?!末)|\bthe week after next\b", re.I), "week_after_next"),
    (re.compile(r"下下(?:个)?(?:周|星期|礼拜)末|\bthe weekend after next\b", re.I), "weekend_after_next"),
    (re.compile(r"上上(?:个)?月|\bthe month before last\b", re.I), "month_before_last"),
    (re.compile(r"下下(?:个)?月|\bthe month after next\b", re.I), "month_after_next"),
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
    (re.compile(r"上上(?:个)?(?:周|星期|礼拜)末|\bthe weekend before last\b", re.I), "weekend_before_last"),
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
    # an ISO-8601 date-time as tools and APIs write it ('2026-06-13T02:30:00Z', '2026-06-11T23:50+08:00'): the
    # user's local day of that instant (no zone = the user's own clock)
    (re.compile(r"\b(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?(Z|[+-]\d{2}(?::?\d{2})?)?(?![\d:])"),
     "iso_dt"),
    (re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b"), "iso"),
    # '3/6', '3/6/2026' (DateSettings.slash_dates says which number is the month); not '24/7', '1/2/3'
    (re.compile(r"(?<![\d/.:-])(\d{1,2})/(\d{1,2})(?:/(\d{4}|\d{2}))?(?![\d/])"), "slash"),
    (re.compile(r"(?:(\d{4})\s*年\s*)?(" + _ZH_DIGITS + r")\s*月\s*(" + _ZH_DIGITS + r")\s*(?:日|号)"), "zh_md"),
    (re.compile(r"(\d{4})\s*年\s*(" + _ZH_DIGITS + r")\s*月(?!\s*" + _ZH_DIGITS + r"\s*(?:日|号))"), "zh_ym"),
    (re.compile(r"\b" + _MON + r"\.?\s+\d{1,2}(?:st|nd|rd|th)?(?:,?\s+\d{4})?\b", re.I), "en"),
    (re.compile(r"\b(?:the\s+)?\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MON + r"\.?(?:,?\s+\d{4})?\b", re.I), "en"),
    (re.compile(r"\b" + _MON + r"\s+\d{4}\b", re.I), "en_month"),
]


#: a clock time restated in a named zone ('22:00 UTC', '9pm GMT+1'): the user's local day of that instant counts
_ZONED_TIME = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s*(am|pm)?\s*(?:UTC|GMT|Z\b)\s*([+-]\d{1,2}(?::?\d{2})?)?", re.I)
_MONTH_FULL = r"(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)"
#: part of a month: 'early March', 'the end of last month', 'mid-June'
_EN_PART = re.compile(r"\b(early|mid|late|(?:the\s+)?(?:beginning|start|middle|end)\s+of)[\s-]+(?:(this|last|next)\s+month|"
                      + _MONTH_FULL + r")\b", re.I)
#: 月初 / 月中 / 月底 / 上旬 ..., anchored to 这个月 / 上个月 / 下个月 / 3月 (else this month)
_ZH_PART = re.compile(r"(?:(这|本|上|下)(?:个)?月|(" + r"[0-9０-９一二三四五六七八九十]{1,3}" + r")\s*月)?\s*(?:的)?\s*"
                      r"(月初|月底|月末|月中|初|底|末|上旬|中旬|下旬)")
#: a month named alone: 'in March', 'back in May' (capitalised 'May'/'March': the words are also a name and a verb),
#: '五月份', '3月' not followed by a day
_EN_MONTH = re.compile(r"\b(?:in|during|since|throughout|over)\s+(?:the\s+month\s+of\s+)?(" + _MONTH_FULL[1:-1] + r")\b(?!\s*\d)", re.I)
_ZH_MONTH = re.compile(r"(?<![0-9０-９一二三四五六七八九十个上下这本每年])([0-9０-９]{1,2}|十[一二]?|[一二三四五六七八九])\s*月份?"
                       r"(?![0-9０-９一二三四五六七八九十]|\s*[0-9０-９]|初|底|末|中|上旬|中旬|下旬)")
#: a day of the month without its month: 'on the 3rd', 'the 12th', '3号', '12日' (not '3号线', '5号楼', '周日')
_EN_DOM = re.compile(r"\bthe\s+(\d{1,2})(?:st|nd|rd|th)\b(?!\s+(?:of\s+)?" + _MON + r"\b|\s+(?:time|floor|century|place|grade|"
                     r"row|day|week|month|year|person|one|anniversary|birthday)\b)", re.I)
_ZH_DOM = re.compile(r"(?<![0-9０-９一二两三四五六七八九十月周期拜礼生节今昨明每几])([0-9０-９]{1,2}|[一二三]?十[一二三四五六七八九]?|[一二三四五六七八九])\s*"
                     r"(?:号|日)(?![线楼房门车位口院码机床桌桶子本元])")
#: a duration after the start: 'for three weeks', '两周', '连续10天', 'for a month' (not '两周前', 'three weeks ago')
_DURATION = re.compile(r"\bfor\s+(?:the\s+next\s+)?(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten)\s+(day|week|month)s?\b"
                       r"(?!\s+(?:ago|later|before|earlier))|(?<![前后])(\d+|[一两二三四五六七八九十])\s*(天|周|个星期|星期|个礼拜|礼拜|个月)"
                       r"(?!前|后|以前|以后|之前|之后|[0-9一二三四五六七八九十日天号])", re.I)
_DURATION_DAYS = {"day": 1, "week": 7, "month": 30, "天": 1, "周": 7, "星期": 7, "礼拜": 7, "个星期": 7, "个礼拜": 7,
                  "个月": 30}  # '五月' is May, '五个月' five months

#: tense/aspect cues of the clause that names a bare weekday ("on Saturday", "周六"): a
#: statement about the future means the coming one, a past-tense statement the past one
_FUTURE_CUES = re.compile(
    r"\b(?:will|shall|gonna|going to|plan(?:ning)? to|about to|upcoming|coming|next|tomorrow|tonight|soon)\b"
    r"|'ll\b|\b(?:am|is|are|'m|'s|'re)\s+(?:\w+\s+)?\w+ing\b"
    # 会 the modal, not the noun of 开会 / 聚会 / 会议 ('周三开会讲了什么' is a past meeting)
    r"|要|(?<![开聚约晚宴舞酒社机学协工大年例])会(?![议计员场所谈])|打算|准备|计划|将|想|下(?:个)?(?:周|星期|礼拜|月)"
    r"|这(?:个)?(?:周|星期|礼拜)|本周|明天|后天|安排", re.I)
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


#: a subject of a clause (a personal pronoun, or a possessed noun opening it: 'my flight was on Monday'): with one, a
#: clause without a tense cue is no note ('I ate sushi on Friday', irregular past forms being no cue)
_SUBJECT = re.compile(r"\b(?:i|we|he|she|they|you|it|this|that|there|my|our|his|her|their|your)\b|'[sm]\b", re.I)


def is_note(text: str, pos: int = 0) -> bool:
    """Whether the clause at ``pos`` of ``text`` is a note with no subject: no personal pronoun, possessive or
    demonstrative (:data:`_SUBJECT`) and no tense cue of :func:`tense` ('Dentist on Monday', 'Call the bank on
    Friday', 'Lunch with Sam on Friday'): an agenda line, about a day to come."""
    clause = _clause(text, pos)
    return not _SUBJECT.search(clause) and tense(text, pos) is None


@dataclass(frozen=True)
class DateRange:
    """Half-open range [start, end) in epoch seconds, and the phrase that produced it."""

    start: float
    end: float
    phrase: str

    def overlaps(self, start: float, end: float) -> bool:
        return self.start < end and start < self.end


@dataclass(frozen=True)
class DateSettings:
    """How dates in users' words are read (the ``memory`` config section, :meth:`from_config`).

    ``slash_dates``: '3/6' is month/day ('mdy', US and Chinese usage), day/month ('dmy', most of
    Europe) or not a date ('off'). ``day_start_hour`` (0-12, local hours): before it, a note still
    belongs to the day that just ended ('this morning' / '今天' typed at 00:30 mean the day before
    midnight; 0, the default = days end at midnight). ``month_part_days`` (1-15): the days of 'early March' / 月初
    (the first N), 'late March' / 月底 (the last N), 'mid March' / 中旬 (N around the 16th).
    ``year_back_days`` (>= 0): '去年这个时候' / 'this time last year' = the same day a year back
    +- this many days. ``next_weekday``: 'next Friday' = the Friday of next (Monday-based) week,
    like 下周五 ('next_week'), or the nearest coming Friday ('nearest'). ``writer_day``: a memory's written
    day and event range are read in the UTC offset it was written in (:meth:`user_day`, :func:`rebase`).
    ``note_weekday``: 'future' or 'past', the day of 'on Monday' in a note with no subject and no tense cue
    (:func:`is_note`: 'Dentist on Monday'). ``day_parts``: (part, local hour it begins) pairs of ``memory.day_part_hours`` (morning / afternoon / evening,
    0-23): a past-tense 'this morning' / '今天下午' / 'tonight' said before its part began is that part of the day before.
    ``holidays``: (name, period) pairs of ``memory.holiday_periods`` (:func:`holiday_table`); ``breaks``: the
    movable ones that run on through the adjacent days off (``memory.holiday_breaks``), at most
    ``break_max_days`` (``memory.holiday_break_max_days``) days. ``few_days_back`` (1-31): '前几天' / 'the other day' = the N days before."""

    slash_dates: str = "mdy"
    day_start_hour: int = 0
    month_part_days: int = 10
    year_back_days: float = 14.0
    next_weekday: str = "next_week"
    writer_day: bool = True
    note_weekday: str = "future"
    holidays: tuple[tuple[str, str], ...] = ()
    few_days_back: int = 7
    breaks: frozenset[str] = frozenset()
    break_max_days: int = 10
    day_parts: tuple[tuple[str, int], ...] = (("morning", 5), ("afternoon", 12), ("evening", 18))

    @classmethod
    def from_config(cls, memory: object) -> DateSettings:
        """The settings of a ``MemorySection`` (any object with these attribute names;
        ``holiday_periods`` becomes ``holidays``, its pairs longest name first)."""
        kw = {f: getattr(memory, f) for f in ("slash_dates", "day_start_hour", "month_part_days", "year_back_days",
                                              "next_weekday", "writer_day", "few_days_back",
                                              "note_weekday")}
        periods = dict(getattr(memory, "holiday_periods", None) or {})
        breaks = frozenset(str(n).strip().lower() for n in (getattr(memory, "holiday_breaks", None) or ()))
        parts = getattr(memory, "day_part_hours", None)
        return cls(**kw, holidays=holiday_table(periods), breaks=breaks,
                   break_max_days=int(getattr(memory, "holiday_break_max_days", 10)),
                   day_parts=cls.day_parts if parts is None else tuple(sorted((str(k), int(v)) for k, v in parts.items())))

    def user_day(self, ts: float, tz: tzinfo | None, utc_offset: float | None = None) -> tuple[float, float]:
        """The user's local day [start, end) in epoch seconds that instant ``ts`` belongs to: the
        calendar day of ``ts - day_start_hour`` hours in ``tz`` (a note written at 00:30 is about the
        evening before), or, with ``writer_day`` and a ``utc_offset`` (seconds, the zone the memory was
        written in), in that offset: the day the user lived, not the one a later zone puts the instant on."""
        if self.writer_day and utc_offset is not None:
            # the writer's calendar day, laid on the question's clock so that both ranges share one frame
            # (the same day read in PST and PDT would otherwise overlap the neighbouring day by an hour)
            d = datetime.fromtimestamp(ts, _fixed_offset(utc_offset)) - timedelta(hours=self.day_start_hour)
            d0 = d.replace(hour=0, minute=0, second=0, microsecond=0, tzinfo=None)
            return d0.replace(tzinfo=tz).timestamp(), (d0 + timedelta(days=1)).replace(tzinfo=tz).timestamp()
        d = datetime.fromtimestamp(ts, tz) - timedelta(hours=self.day_start_hour)
        d0 = d.replace(hour=0, minute=0, second=0, microsecond=0)
        return d0.timestamp(), (d0 + timedelta(days=1)).timestamp()


_PERIOD = re.compile(r"(\d{2})-(\d{2})\.\.(\d{2})-(\d{2})")
#: a holiday that moves every year: 'CN:Chinese New Year's Eve|Chinese New Year', 'GB-ENG:Good Friday'
_MOVABLE = re.compile(r"([A-Za-z]{2,3})(?:-([A-Za-z0-9]{1,4}))?:(.+)")


def holiday_table(periods: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """``memory.holiday_periods`` checked and ordered for matching: (lowercase name, period) pairs, longest
    name first ('christmas eve' before 'christmas', 'chinese new year's eve' before "new year's eve"). A
    period is 'MM-DD..MM-DD' or a movable 'CC[-SUBDIV]:Name|Name' (:func:`movable_days`). Raises
    ValidationError for a period of neither form, naming no calendar day, an unknown country or
    subdivision, or names its calendar never gives (checked on 2024-2026)."""
    out = []
    for name, period in periods.items():
        period = str(period).strip()
        bad = ValidationError(f"memory.holiday_periods[{name!r}] = {period!r}: expected 'MM-DD..MM-DD' or "
                              "'CC[-SUBDIV]:Holiday name|Holiday name' (a country of the holidays package)",
                              field="memory.holiday_periods")
        m = _PERIOD.fullmatch(period)
        if m is None:
            mv = _MOVABLE.fullmatch(period)
            if mv is None:
                raise bad
            try:
                found = any(movable_days(period, y, False, 1) for y in (2024, 2025, 2026))
            except NotImplementedError as e:  # the holidays package: no such country or subdivision
                raise bad from e
            if not found:
                raise ValidationError(f"memory.holiday_periods[{name!r}] = {period!r}: the holidays package's "
                                      f"calendar of {mv.group(1).upper()} gives no day of that name in 2024-2026",
                                      field="memory.holiday_periods")
            out.append((str(name).strip().lower(), period))
            continue
        try:
            datetime(2024, int(m.group(1)), int(m.group(2)))  # a leap year: 02-29 is a day
            datetime(2024, int(m.group(3)), int(m.group(4)))
        except ValueError as e:
            raise bad from e
        out.append((str(name).strip().lower(), period))
    return tuple(sorted(out, key=lambda p: -len(p[0])))


@lru_cache(maxsize=512)
def movable_days(spec: str, year: int, bridge: bool, max_days: int) -> tuple[date, date] | None:
    """The days [first, last] (inclusive) of a movable holiday ``spec`` ('CC[-SUBDIV]:Name|Name') in
    ``year``: the days the ``holidays`` package's calendar of that country names so, in English (a day
    named 'Name' or 'Name (...)', e.g. '(observed)', '(Spring Festival)'); None when that year has none.
    ``bridge``: the period runs on through the adjacent weekend days and the calendar's other listed
    days (substituted days off), up to ``max_days`` in all (the break users mean by '春节期间'). Raises
    ValidationError for a ``spec`` of another form, NotImplementedError (from the ``holidays``
    package) for an unknown country or subdivision (:func:`holiday_table` checks both)."""
    import holidays as _holidays  # read when a movable holiday is first needed: the import costs ~0.2 s

    mv = _MOVABLE.fullmatch(spec)
    if mv is None:
        raise ValidationError(f"not a movable holiday: {spec!r} (expected 'CC[-SUBDIV]:Holiday name|Holiday name')",
                              field="memory.holiday_periods")
    country, subdiv, names = mv.group(1).upper(), mv.group(2), [n.strip() for n in mv.group(3).split("|")]
    cal = _holidays.country_holidays(country, subdiv=subdiv.upper() if subdiv else None,
                                     years=(year - 1, year, year + 1), language="en_US")

    def named(d: date) -> bool:
        return any(part == n or part.startswith(n + " (") for part in str(cal.get(d, "")).split("; ")
                   for n in names)

    days = sorted(d for d in cal if d.year == year and named(d))
    if not days:
        return None
    first, last = days[0], days[-1]
    if bridge:
        def off(d: date) -> bool:
            return d.weekday() >= 5 or d in cal
        while (last - first).days + 1 < max_days and off(last + timedelta(days=1)):
            last += timedelta(days=1)
        while (last - first).days + 1 < max_days and off(first - timedelta(days=1)):
            first -= timedelta(days=1)
    return first, last


@lru_cache(maxsize=256)
def _holiday_rx(name: str) -> re.Pattern[str]:
    # an English name is a whole phrase ('christmas', not 'christmassy'; "new year's" also without the
    # apostrophe); a Chinese one is found inside the text (国庆期间, 国庆节)
    if name.isascii():
        return re.compile(r"\b" + re.escape(name).replace("'", "[’']?") + r"\b", re.I)
    return re.compile(re.escape(name))


#: a year named with the holiday ('前年国庆', '去年的圣诞', "last year's Christmas", 'Christmas last year'):
#: the closed set of Chinese year deictics (前年 / 去年 / 今年 / 明年 / 后年) and the English last / this / next year
_YEAR_BEFORE = re.compile(r"(前年|去年|今年|明年|后年|last year'?s|this year'?s|next year'?s)\s*(?:的)?\s*$", re.I)
_YEAR_AFTER = re.compile(r"^\s*(last year|this year|next year)\b", re.I)
_YEAR_SHIFT = {"前年": -2, "去年": -1, "今年": 0, "明年": 1, "后年": 2, "last": -1, "this": 0, "next": 1}


def _holiday(text: str, low: str, ref: datetime, settings: DateSettings, qualified: bool = False
             ) -> DateRange | None:
    """The period of the first configured holiday ``text`` names (``settings.holidays``, longest name
    first). A year named with it ('前年国庆', 'Christmas last year') picks that year's; else the clause's
    tense does: the most recent occurrence that has begun by ``ref``'s day for the past, the coming one
    (not yet over) for the future, else the one whose start is nearest. ``qualified``: only a holiday
    named with its year (read before '去年' alone can take the whole year)."""
    today = ref.replace(hour=0, minute=0, second=0, microsecond=0)
    for name, period in settings.holidays:
        m = _holiday_rx(name).search(text)
        if m is None:
            continue
        q = _YEAR_BEFORE.search(text[: m.start()]) or _YEAR_AFTER.match(text[m.end():])
        if qualified and q is None:
            continue
        years: tuple[int, ...] = (ref.year - 1, ref.year, ref.year + 1)
        if q is not None:
            word = q.group(1).lower()
            years = (ref.year + _YEAR_SHIFT.get(word, _YEAR_SHIFT.get(word.split()[0], 0)),)
        p = _PERIOD.fullmatch(period)
        options = []
        for y in years:
            if p is None:  # a movable holiday (checked by holiday_table): that year's days in its calendar
                days = movable_days(period, y, name in settings.breaks, settings.break_max_days)
                if days is not None:
                    a = today.replace(year=days[0].year, month=days[0].month, day=days[0].day)
                    options.append((a, a + timedelta(days=(days[1] - days[0]).days + 1)))
                continue
            m1, d1, m2, d2 = (int(g) for g in p.groups())
            try:
                a = today.replace(year=y, month=m1, day=d1)
                b = today.replace(year=y + (1 if (m2, d2) < (m1, d1) else 0), month=m2, day=d2) + timedelta(days=1)
            except ValueError:  # 02-29 in a common year
                continue
            options.append((a, b))
        said = tense(low, m.start()) if q is None else None
        if said == "past":
            pick = [o for o in options if o[0] <= today][-1:]
        elif said == "future":
            pick = [o for o in options if o[1] > today][:1]
        else:
            pick = sorted(options, key=lambda o: abs((o[0] - today).total_seconds()))[:1]
        if pick:
            return DateRange(pick[0][0].timestamp(), pick[0][1].timestamp(), m.group(0))
    return None


def _default_dates() -> DateSettings:
    from ..config import MemorySection  # config imports nothing of the engine: no cycle

    return DateSettings.from_config(MemorySection())


#: the settings of the default ``memory`` config section (callers that pass no config read dates as the engine does)
DEFAULT_DATES = _default_dates()


@lru_cache(maxsize=64)
def _fixed_offset(seconds: float) -> tzinfo:
    from datetime import timezone as _tz

    return _tz(timedelta(seconds=float(seconds)))


def rebase(start: float, end: float, utc_offset: float | None, tz: tzinfo | None,
           settings: DateSettings = DEFAULT_DATES) -> tuple[float, float]:
    """An event range [start, end) resolved at write in the writer's UTC offset (``utc_offset``, seconds),
    moved to the same wall-clock times in ``tz`` (the question's zone): '31 October' stays 31 October when
    asked after daylight saving ended. Unchanged without ``settings.writer_day``, an offset or a zone."""
    if not settings.writer_day or utc_offset is None or tz is None:
        return start, end
    src = _fixed_offset(utc_offset)

    def move(ts: float) -> float:
        return datetime.fromtimestamp(ts, src).replace(tzinfo=None).replace(tzinfo=tz).timestamp()

    return move(start), move(end)


def _day(ref: datetime, offset: int) -> tuple[datetime, datetime]:
    d0 = ref.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=offset)
    return d0, d0 + timedelta(days=1)


def _num(s: str) -> int:
    s = s.lower()
    return int(s) if s.isdigit() else _ZH_NUM.get(s) or _EN_NUM.get(s, 0)


def timezone_of(name: str | None) -> tzinfo | None:
    """A tzinfo for an IANA name ('Asia/Shanghai'), 'UTC', or a fixed offset ('+08:00');
    None for None/''. Raises ValidationError (a ValueError) for an unknown name."""
    if not name:
        return None
    return _tz_cached(name.strip())


_MAX_EAST_OFFSET, _MAX_WEST_OFFSET = timedelta(hours=14), timedelta(hours=12)


@lru_cache(maxsize=64)
def _tz_cached(name: str) -> tzinfo:
    m = re.fullmatch(r"(?:UTC|GMT)?([+-])(\d{1,2})(?::?(\d{2}))?", name)
    if m:
        from datetime import timezone

        hours, minutes = int(m.group(2)), int(m.group(3) or 0)
        delta = timedelta(hours=hours, minutes=minutes)
        # civil offsets in use run from -12:00 to +14:00; anything else is a typo, said as one
        if minutes >= 60 or delta > (_MAX_WEST_OFFSET if m.group(1) == "-" else _MAX_EAST_OFFSET):
            raise ValidationError(f"timezone offset {name!r} is out of range: civil offsets run from -12:00 to "
                                  "+14:00, minutes 0-59", field="timezone")
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


def _zoned(text: str, day: datetime, ref: datetime) -> datetime:
    """``day`` (midnight in ref's tz), moved to the user's local day of a clock time the text restates
    in a named zone ('2026-06-11 22:00 UTC' is 12 June for a UTC+8 user); ``day`` without one."""
    m = _ZONED_TIME.search(text)
    if m is None or (m.group(2) is None and m.group(3) is None):  # '5 UTC' alone is no clock time
        return day
    hour = int(m.group(1)) % 12 + (12 if (m.group(3) or "").lower() == "pm" else 0) if m.group(3) else int(m.group(1))
    if hour > 23 or int(m.group(2) or 0) > 59:
        return day
    zone = _tz_cached(m.group(4)) if m.group(4) else UTC
    instant = datetime(day.year, day.month, day.day, hour, int(m.group(2) or 0), tzinfo=zone)
    local = instant.astimezone(ref.tzinfo)
    return local.replace(hour=0, minute=0, second=0, microsecond=0)


def _one_day(a: datetime, phrase: str, text: str, ref: datetime) -> DateRange:
    a = _zoned(text, a, ref)
    return DateRange(a.timestamp(), (a + timedelta(days=1)).timestamp(), phrase)


#: words that make 'n/m' a score: a rating verb a few words before it, or a unit after it
_SCORE_BEFORE = re.compile(r"(?:\b(?:rat(?:e|es|ed|ing)|scor(?:e|es|ed|ing)|grad(?:e|es|ed|ing))\b[^.!?;。！？；\d]{0,20}"
                           r"|\b(?:gave|give|gives|giving)\s+(?:it|them|him|her|this|that)\s+"
                           r"|评分|打分|打了|给了|评了|得了)\s*$", re.IGNORECASE)
_DATE_BEFORE = re.compile(r"\b(?:on|by|since|until|till|from|before|after)\s+$", re.IGNORECASE)
_SCORE_AFTER = re.compile(r"\s*(?:stars?\b|points?\b|pts\b|分|星)", re.IGNORECASE)


def _absolute(text: str, ref: datetime, settings: DateSettings = DEFAULT_DATES) -> DateRange | None:
    for rx, kind in _ABSOLUTE:
        m = rx.search(text)
        if not m:
            continue
        try:
            if kind == "slash":
                if settings.slash_dates == "off":
                    continue
                if not m.group(3) and not _DATE_BEFORE.search(text[: m.start()]) and (
                        _SCORE_BEFORE.search(text[: m.start()]) or _SCORE_AFTER.match(text[m.end():])):
                    continue  # 'rated it 4/5', 'scored 9/10', '给了4/5分': a score, not a date
                first, second = int(m.group(1)), int(m.group(2))
                mo, dd = (first, second) if settings.slash_dates == "mdy" else (second, first)
                if not (1 <= mo <= 12 and 1 <= dd <= 31):
                    continue
                if m.group(3):
                    year = int(m.group(3)) + (2000 if len(m.group(3)) == 2 else 0)
                    a = ref.replace(year=year, month=mo, day=dd, hour=0, minute=0, second=0, microsecond=0)
                else:
                    a = _nearest(ref, mo, dd)  # type: ignore[assignment]
                if a is None:
                    continue
                return _one_day(a, m.group(0), text, ref)
            if kind == "iso_dt":
                zone = m.group(7)
                tz = ref.tzinfo if zone is None else UTC if zone == "Z" else _tz_cached(zone)
                instant = datetime(int(m.group(1)), int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5)),
                                   int(m.group(6) or 0), tzinfo=tz)
                a = instant.astimezone(ref.tzinfo).replace(hour=0, minute=0, second=0, microsecond=0)
                return DateRange(a.timestamp(), (a + timedelta(days=1)).timestamp(), m.group(0))
            if kind == "iso":
                a = ref.replace(year=int(m.group(1)), month=int(m.group(2)), day=int(m.group(3)), hour=0, minute=0,
                                second=0, microsecond=0)
                return _one_day(a, m.group(0), text, ref)
            if kind == "zh_md":
                mo, dd = _zh_int(m.group(2)), _zh_int(m.group(3))
                if m.group(1):
                    a = ref.replace(year=int(m.group(1)), month=mo, day=dd, hour=0, minute=0, second=0, microsecond=0)
                else:
                    a = _nearest(ref, mo, dd)  # type: ignore[assignment]
                if a is None:
                    continue
                return _one_day(a, m.group(0), text, ref)
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
        return _one_day(a, phrase, text, ref)
    return None


def _month_start(ref: datetime, month: int, said: str | None) -> datetime:
    """The first day of ``month`` nearest to ``ref`` on the side the clause's tense says: the most
    recent one for the past ('in March I started...' said in June), the coming one for the future,
    the nearest without a cue. Midnight in ref's tz."""
    this = ref.replace(month=month, day=1, hour=0, minute=0, second=0, microsecond=0)
    first = ref.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    options = [this.replace(year=ref.year - 1), this, this.replace(year=ref.year + 1)]
    if said == "future":
        return next(o for o in options if o >= first)
    if said == "past":
        return [o for o in options if o <= first][-1]
    return min(options, key=lambda o: abs((o - first).total_seconds()))


def _next_month(a: datetime) -> datetime:
    return (a + timedelta(days=32)).replace(day=1)


def _anchor_month(ref: datetime, rel: str | None) -> datetime:
    """First day of this ('这'/'本'/'this'/None), last ('上'/'last') or next ('下'/'next') month."""
    first = ref.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    if rel in ("上", "last"):
        return (first - timedelta(days=1)).replace(day=1)
    if rel in ("下", "next"):
        return _next_month(first)
    return first


def _part(a: datetime, part: str, days: int) -> tuple[datetime, datetime]:
    """The early / mid / late part of the month starting at ``a``: its first ``days`` days, its last
    ``days`` days, or ``days`` days around the 16th."""
    end = _next_month(a)
    if part in ("early", "beginning", "start", "初", "月初", "上旬"):
        return a, a + timedelta(days=days)
    if part in ("late", "end", "底", "末", "月底", "月末", "下旬"):
        return end - timedelta(days=days), end
    mid = a + timedelta(days=15)
    return mid - timedelta(days=days // 2), mid + timedelta(days=days - days // 2)


def _month_range(text: str, low: str, ref: datetime, settings: DateSettings, alone: bool = True
                 ) -> DateRange | None:
    """A part of a month ('early March', '上个月底', '这个月月初') or (with ``alone``) a month named
    alone ('in March', '五月份'), or None."""
    m = _EN_PART.search(text)
    if m:
        part = m.group(1).lower().split()[-2] if " of" in m.group(1).lower() else m.group(1).lower()
        if m.group(3):
            a = _month_start(ref, _month_number(m.group(3)), tense(low, m.start()))
        else:
            a = _anchor_month(ref, (m.group(2) or "").lower())
        b0, b1 = _part(a, part, settings.month_part_days)
        return DateRange(b0.timestamp(), b1.timestamp(), m.group(0))
    for m in _ZH_PART.finditer(text):
        rel, num, part = m.group(1), m.group(2), m.group(3)
        if rel is None and num is None and len(part) == 1:  # '周末', '年底', '初中': no month named
            continue
        a = (_month_start(ref, _zh_int(num), tense(low, m.start())) if num and 1 <= _zh_int(num) <= 12
             else _anchor_month(ref, rel))
        b0, b1 = _part(a, part, settings.month_part_days)
        return DateRange(b0.timestamp(), b1.timestamp(), m.group(0))
    if not alone:
        return None
    m = _EN_MONTH.search(text)
    if m and not (m.group(1).lower() in ("may", "march", "mar") and m.group(1)[0].islower()):
        a = _month_start(ref, _month_number(m.group(1)), tense(low, m.start()))
        return DateRange(a.timestamp(), _next_month(a).timestamp(), m.group(0))
    m = _ZH_MONTH.search(text)
    if m and 1 <= _zh_int(m.group(1)) <= 12:
        a = _month_start(ref, _zh_int(m.group(1)), tense(low, m.start()))
        return DateRange(a.timestamp(), _next_month(a).timestamp(), m.group(0))
    return None


def _month_number(name: str) -> int:
    low = name.lower()
    return next(i for i, full in enumerate(_MONTHS, 1) if full.startswith(low[:3]))


def _day_of_month(text: str, low: str, ref: datetime) -> DateRange | None:
    """A day of the month named without its month ('on the 3rd', '12号'): the most recent one for a past
    statement, the coming one for a future or present one, the nearest without a cue (ref's month,
    the month before or after)."""
    m = _EN_DOM.search(text) or _ZH_DOM.search(text)
    if m is None:
        return None
    dd = _zh_int(m.group(1))
    if not 1 <= dd <= 31:
        return None
    today = ref.replace(hour=0, minute=0, second=0, microsecond=0)
    first = today.replace(day=1)
    options = []
    for start in ((first - timedelta(days=1)).replace(day=1), first, _next_month(first)):
        try:
            options.append(start.replace(day=dd))
        except ValueError:  # no 31st in this month
            continue
    said = tense(low, m.start())
    if said == "past":
        options = [o for o in options if o <= today] or options
        a = options[-1]
    elif said == "future":
        options = [o for o in options if o >= today] or options
        a = options[0]
    else:
        a = min(options, key=lambda o: abs((o - today).total_seconds()))
    return DateRange(a.timestamp(), (a + timedelta(days=1)).timestamp(), m.group(0))


def _with_duration(found: DateRange, text: str) -> DateRange:
    """``found`` lengthened by a duration the statement gives after its start ('for three weeks starting
    today', '从下周一开始...两周'): [start, start + duration) when that is longer."""
    m = _DURATION.search(text)
    if m is None:
        return found
    n = _num(m.group(1) or m.group(3) or "") if (m.group(1) or "").lower() not in ("a", "an") else 1
    unit = (m.group(2) or m.group(4) or "").lower()
    if n <= 0 or unit not in _DURATION_DAYS:
        return found
    end = found.start + n * _DURATION_DAYS[unit] * 86400.0
    return DateRange(found.start, end, found.phrase) if end > found.end else found


def resolve(text: str, ref: datetime, settings: DateSettings = DEFAULT_DATES) -> DateRange | None:
    """The date ``text`` names (:func:`resolve_date`) lengthened by a duration it gives
    (:func:`_with_duration`), read with ``settings`` (slash dates, the hour a day starts,
    month parts, 'next Friday'). ``ref`` before ``settings.day_start_hour`` local time counts
    as the evening before ('tomorrow' typed at 00:30 is the coming day)."""
    if ref.tzinfo is None:
        raise ValidationError("ref must be timezone-aware")
    ref = ref - timedelta(hours=settings.day_start_hour)
    found = resolve_date(text, ref, settings)
    return _with_duration(found, text) if found is not None else None


_UNIT_EN = r"(day|week|weekend|month)"
#: an offset counted from a date the text names: 'the week before August 3', 'two weeks before 11 August',
#: 'last weekend before April 10', 'the day after June 3' (the date follows the match)
_ANCHOR_EN = re.compile(r"\b(?:(?:the|last)\s+" + _UNIT_EN + r"|(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|"
                        r"ten)\s+" + _UNIT_EN + r"s?)\s+(before|after|prior\s+to)\s+$", re.I)
#: the same after a Chinese date: '8月3号的前一周', '8月11号前两周', '6月3号后三天' (the date precedes the match)
_ANCHOR_ZH = re.compile(r"^\s*(?:的)?(前|后)\s*(\d+|[一两二三四五六七八九十])\s*(天|周|个星期|星期|个礼拜|礼拜|个周末|周末)")
#: the relative phrase an anchored offset stands for, read with the anchor date as its reference
_ANCHOR_PHRASE = {("day", False): "yesterday", ("day", True): "tomorrow", ("week", False): "last week",
                  ("week", True): "next week", ("weekend", False): "last weekend", ("weekend", True): "next weekend",
                  ("month", False): "last month", ("month", True): "next month"}
_ZH_UNIT = {"天": "day", "周": "week", "个星期": "week", "星期": "week", "个礼拜": "week", "礼拜": "week",
            "个周末": "weekend", "周末": "weekend"}


def _anchored(text: str, found: DateRange, ref: datetime, settings: DateSettings) -> DateRange | None:
    """An offset counted from the absolute date ``found`` that ``text`` names ('the week before August 3' = the week
    before that one, 'two weeks before 11 August' = two weeks back from it, '8月3号的前一天' = 2 August): the
    offset read as the relative phrase it stands for ('last week', 'two weeks ago', 'yesterday') on the anchor
    date's own day; None when the date carries no offset."""
    low = text.lower()
    at = low.find(found.phrase.lower())
    if at < 0:
        return None
    count: int | None = None
    m = _ANCHOR_EN.search(low[:at])
    if m:
        unit, after = (m.group(1) or m.group(3)).lower(), m.group(4).lower() == "after"
        if m.group(2):
            count = 1 if m.group(2).lower() in ("a", "an") else _num(m.group(2))
    else:
        z = _ANCHOR_ZH.match(text[at + len(found.phrase):])
        if not z:
            return None
        unit, after, count = _ZH_UNIT[z.group(3)], z.group(1) == "后", _num(z.group(2))
    anchor = datetime.fromtimestamp(found.start, ref.tzinfo) + timedelta(hours=12)
    if count is None or count == 1:
        phrase = _ANCHOR_PHRASE[(unit, after)]
    elif unit in ("day", "week") and not after:
        phrase = f"{count} {unit}s ago"
    elif unit == "day":
        phrase = f"in {count} days"
    else:
        return None
    got = resolve_date(phrase, anchor, settings)
    return DateRange(got.start, got.end, found.phrase) if got is not None else None


def resolve_date(text: str, ref: datetime, settings: DateSettings = DEFAULT_DATES) -> DateRange | None:
    """The date ``text`` names as a calendar range around ``ref`` (timezone-aware),
    or None: an absolute date first (:func:`_absolute`), else the first relative
    expression. 'last Friday' = the most recent Friday before ``ref``'s day;
    '上周五' = Friday of the previous Monday-based week; 'last week' / '上周' =
    that whole week; 'N days ago' / 'N天前' = that day; '上个月' = that month."""
    if ref.tzinfo is None:
        raise ValidationError("ref must be timezone-aware")
    low = text.lower()  # "Yesterday I ..." starts a sentence
    found = _month_range(text, low, ref, settings, alone=False)
    if found is None:
        found = _absolute(text, ref, settings)
        # an offset from that date: 'the week before August 3', '8月3号的前一天'
        found = (_anchored(text, found, ref, settings) or found) if found is not None else None
    found = found or _holiday(text, low, ref, settings, qualified=True)
    if found is not None:
        return found
    for rx, kind in _PATTERNS:
        m = rx.search(low)
        if not m:
            continue
        monday = ref.replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=ref.weekday())
        if kind.startswith("d") and kind != "d":
            a, b = _day(ref, int(kind[1:]))
        elif kind.startswith("part_"):
            # 'had the interview this morning' typed at 00:30: the morning that just passed, not the coming one
            # only in the small hours (before the first part of the day begins): the speaker's day has not
            # turned yet; 'watched a film tonight' said at 09:00 is no report of the evening before
            # (the phrase itself left out of its clause: 'tonight' is also a future cue)
            begins = dict(settings.day_parts).get(kind[5:])
            dawn = min((h for _, h in settings.day_parts), default=0)
            before = begins is not None and ref.hour < min(begins, dawn) and tense(
                low[:m.start()] + " " * (m.end() - m.start()) + low[m.end():], m.start()) == "past"
            a, b = _day(ref, -1 if before else 0)
        elif kind == "ndays":
            n = _num(m.group(1))
            if n <= 0:
                continue
            a, b = _day(ref, -n)
        elif kind == "zh_last_weekday":
            a = monday - timedelta(days=7 - _WEEKDAYS_ZH[m.group(1)])
            b = a + timedelta(days=1)
        elif kind in ("zh_last2_weekday", "zh_next2_weekday"):
            # 上上周二: Tuesday of the Monday-based week two back; 下下周三: of the week two ahead
            a = monday + timedelta(days=(-14 if kind == "zh_last2_weekday" else 14) + _WEEKDAYS_ZH[m.group(1)])
            b = a + timedelta(days=1)
        elif kind == "en_weekday_before_last":
            # the Tuesday before last = a week before 'last Tuesday' (the most recent one before ref's day)
            a, b = _weekday(ref, _WEEKDAYS_EN[m.group(1).lower()], False)
            a, b = a - timedelta(days=7), b - timedelta(days=7)
        elif kind == "en_weekday_after_next":
            # the Friday after next = a week after 'next Friday' (as memory.next_weekday reads it)
            wd = _WEEKDAYS_EN[m.group(1).lower()]
            if settings.next_weekday == "next_week":
                a = monday + timedelta(days=14 + wd)
                b = a + timedelta(days=1)
            else:
                a, b = _weekday(ref, wd, True)
                a, b = a + timedelta(days=7), b + timedelta(days=7)
        elif kind == "n_weekdays_ago":
            n = _num(m.group(1))
            if n <= 0:
                continue
            a, b = _weekday(ref, _WEEKDAYS_EN[m.group(2).lower()], False)
            a, b = a - timedelta(days=7 * (n - 1)), b - timedelta(days=7 * (n - 1))
        elif kind == "few_days":
            today = ref.replace(hour=0, minute=0, second=0, microsecond=0)
            a, b = today - timedelta(days=settings.few_days_back), today
        elif kind == "weekend_after_next":
            a, b = monday + timedelta(days=19), monday + timedelta(days=21)
        elif kind == "week_after_next":
            a, b = monday + timedelta(days=14), monday + timedelta(days=21)
        elif kind in ("month_before_last", "month_after_next"):
            first = ref.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
            if kind == "month_before_last":
                a = ((first - timedelta(days=1)).replace(day=1) - timedelta(days=1)).replace(day=1)
            else:
                a = _next_month(_next_month(first))
            b = _next_month(a)
        elif kind == "zh_this_weekday":
            a = monday + timedelta(days=_WEEKDAYS_ZH[m.group(1)])
            b = a + timedelta(days=1)
        elif kind == "zh_next_weekday":
            a = monday + timedelta(days=7 + _WEEKDAYS_ZH[m.group(1)])
            b = a + timedelta(days=1)
        elif kind in ("en_last_weekday", "en_next_weekday", "en_coming_weekday", "en_this_weekday", "en_weekday",
                      "en_on_weekday", "zh_weekday"):
            said = tense(low, m.start())
            # a Chinese question's bare 周X with no tense cue is this week's ('我周一那天加班到几点？' asked on a Friday:
            # 周X without 上 / 下 names the current week's day, as 这周X)
            this_week = kind == "zh_weekday" and said is None and asks(text)
            # a habit names no day; a bare weekday without any tense cue is too weak to date ('on Friday' is
            # the past one, as before)
            if kind in ("en_weekday", "en_on_weekday", "zh_weekday") and (
                    said == "habit" or (said is None and kind != "en_on_weekday" and not this_week)):
                continue
            wd = _WEEKDAYS_ZH[m.group(1)] if kind == "zh_weekday" else _WEEKDAYS_EN[m.group(1).lower()]
            if kind == "en_this_weekday" or this_week:  # 'this Saturday': that day of the current Monday-based week
                a = monday + timedelta(days=wd)
                b = a + timedelta(days=1)
            elif kind == "en_next_weekday" and settings.next_weekday == "next_week":
                # 'next Friday' said on a Wednesday is next week's Friday, as 下周五 (not the Friday two days on)
                a = monday + timedelta(days=7 + wd)
                b = a + timedelta(days=1)
            else:
                future = kind in ("en_next_weekday", "en_coming_weekday") or (
                    kind in ("en_weekday", "en_on_weekday", "zh_weekday") and said == "future")
                if said is None and kind == "en_on_weekday" and settings.note_weekday == "future" and is_note(low, m.start()):
                    future = True  # an agenda line: 'Dentist on Monday' written on a Friday is the coming Monday
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
        elif kind == "year_back":
            day = ref.replace(hour=0, minute=0, second=0, microsecond=0)
            try:
                day = day.replace(year=ref.year - 1)
            except ValueError:  # 29 February
                day = day.replace(year=ref.year - 1, day=28)
            a = day - timedelta(days=settings.year_back_days)
            b = day + timedelta(days=1 + settings.year_back_days)
        elif kind == "weekend_before_last":
            a, b = monday - timedelta(days=9), monday - timedelta(days=7)
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
    # the least specific forms last: a named holiday, a month named alone, a day of the month without its month
    return (_holiday(text, low, ref, settings) or _month_range(text, low, ref, settings)
            or _day_of_month(text, low, ref))


def date_terms(phrase: str) -> frozenset[str]:
    """Content terms of a date phrase ('June 10' -> {'june', '10'}, '上周五' -> {'上周', '周五', ...}):
    in a query they are matched by a memory's time, not by its words."""
    from ..text import content_terms

    return content_terms(phrase)


def coverage_with_date(query_terms: frozenset[str], phrase_terms: frozenset[str], memory_terms: Iterable[str],
                       phrase: str = "") -> float:
    """Keyword coverage of a memory whose time matches the date the query names: the
    query's date terms count as covered, the rest as usual (share of query terms present).
    'What did I do on June 10?' -> coverage 1 for a memory of June 10. A date ``phrase`` none of whose words is a
    content term of the query ('今天', a stop word in Chinese, where 'today' is one in English) counts as one more
    covered term: '今天要交什么？' names a day as much as "What's due today?" does (1 of 2, not 0 of 1)."""
    doc = set(memory_terms)
    extra = 1 if phrase.strip() and not (phrase_terms & query_terms) else 0
    if not query_terms and not extra:
        return 0.0
    return (sum(1 for t in query_terms if t in phrase_terms or t in doc) + extra) / (len(query_terms) + extra)
