"""Relative dates ("yesterday", "三天前", "last Friday", "上周") resolved to
calendar ranges against a reference time: a memory's own write time (what
day did "yesterday" mean when the user said it?) or the query's time (which
day does "three days ago" mean now?). Pure functions: the reference is passed
in, days are calendar days in the reference's timezone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from ..errors import ValidationError

_ZH_NUM = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
_EN_NUM = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_WEEKDAYS_EN = {d: i for i, d in enumerate(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))}
_WEEKDAYS_ZH = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}

_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"大前天|three days ago"), "d-3"),
    (re.compile(r"前天|day before yesterday"), "d-2"),
    (re.compile(r"昨天|昨晚|昨日|\byesterday\b|\blast night\b"), "d-1"),
    (re.compile(r"今天|今早|今晚|今日|\btoday\b|\bthis morning\b|\btonight\b|\bthis evening\b"), "d0"),
    (re.compile(r"明天|\btomorrow\b"), "d+1"),
    (re.compile(r"(\d+|[一两二三四五六七八九十])\s*天(?:以)?前"), "ndays"),
    (re.compile(r"\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten)\s+days?\s+ago\b", re.I), "ndays"),
    (re.compile(r"上(?:周|星期|礼拜)([一二三四五六日天])"), "zh_last_weekday"),
    (re.compile(r"(?:这|本)(?:周|星期|礼拜)([一二三四五六日天])"), "zh_this_weekday"),
    (re.compile(r"\blast\s+(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b", re.I), "en_last_weekday"),
    (re.compile(r"\bon\s+(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b", re.I), "en_last_weekday"),
    (re.compile(r"上(?:周|星期|礼拜)|\blast week\b", re.I), "last_week"),
    (re.compile(r"(?:这|本)(?:周|星期|礼拜)|\bthis week\b", re.I), "this_week"),
]


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


def resolve(text: str, ref: datetime) -> DateRange | None:
    """The first relative date expression in ``text`` as a calendar range around
    ``ref`` (timezone-aware), or None. 'last Friday' = the most recent Friday
    before ``ref``'s day; '上周五' = Friday of the previous Monday-based week;
    'last week' / '上周' = that whole week; 'N days ago' / 'N天前' = that day."""
    if ref.tzinfo is None:
        raise ValidationError("ref must be timezone-aware")
    for rx, kind in _PATTERNS:
        m = rx.search(text)
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
        elif kind == "en_last_weekday":
            back = (ref.weekday() - _WEEKDAYS_EN[m.group(1).lower()]) % 7 or 7
            a, b = _day(ref, -back)
        elif kind == "last_week":
            a, b = monday - timedelta(days=7), monday
        else:  # this_week
            a, b = monday, monday + timedelta(days=7)
        return DateRange(a.timestamp(), b.timestamp(), m.group(0))
    return None
