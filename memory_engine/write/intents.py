"""Intents a user statement carries for the store itself (issue 16):

* **forget**: "forget that I ...", "please delete what I said about X",
  "别记...了", "忘掉...", "把我的地址删了" -> :func:`forget_target` returns the
  words naming what to forget (possibly empty: "forget what I just said");
  the engine archives what those words name and does not store the instruction.
* **correction strength**: an *explicit* correction ("更正", "改成", "其实是",
  "I meant", "changed to", "no longer", "not anymore", "switched to") may
  retire the memory it names; a *weak* marker ("cancel", "actually",
  "don't", "不要", "取消", "改天") is ordinary language far more often than a
  correction ("the picnic got cancelled because of the rain"), so it only
  retires a memory it contradicts outright (see :mod:`memory_engine.write.correction`).

Pure functions over the (already redacted) text.
"""

from __future__ import annotations

import re

_FORGET_EN = re.compile(
    r"^\s*(?:(?:hey|ok|okay|and|also|so)[\s,]+)?(?:(?:please|pls|could you|can you|would you)[\s,]+)?"
    r"(?P<verb>forget|erase|delete|remove|drop|wipe|unlearn|stop remembering|don'?t remember|do not remember|"
    r"don'?t keep|do not keep|no need to remember)\b"
    r"(?P<rest>.*)$",
    re.IGNORECASE | re.DOTALL,
)
#: a delete/remove/erase verb is a forget intent only when it points at what was said or stored
#: ("remove the batteries before storing the camera" is a procedure, not an intent)
_EN_MEMORY_OBJECT = re.compile(
    r"\b(?:i (?:just |earlier )?(?:said|told you|mentioned|shared)|memor(?:y|ies)|notes?|records?|"
    r"info(?:rmation)?|(?:everything|anything|all) (?:about|regarding)|from your memory)\b",
    re.IGNORECASE,
)
_EN_FREE_VERBS = ("forget", "unlearn", "stop remembering", "don't remember", "dont remember", "do not remember",
                  "don't keep", "dont keep", "do not keep", "no need to remember")
#: what follows the verb and only points at the memory ("what I said about", "the fact that")
_EN_POINTER = re.compile(
    r"^\s*(?:(?:everything|anything|all|what|whatever|that|the (?:fact|thing|part|memory|note|info(?:rmation)?)s?)\s+)?"
    r"(?:(?:that\s+)?i\s+(?:just\s+|earlier\s+|before\s+)?(?:said|told you|mentioned|shared|wrote)"
    r"(?:\s+(?:just now|earlier|before|to you))?\s*)?(?:(?:about|regarding|on|of|that)\s+)?",
    re.IGNORECASE,
)
_EN_TAIL = re.compile(r"[\s,.;!]*(?:please|thanks|thank you|from (?:your |the )?memory|for me|,? ok\??)?[\s,.;!?]*$", re.I)

# zh: imperative forms only ("我忘了带钥匙" = I forgot my keys is not an intent)
_FORGET_ZH = [
    re.compile(p)
    for p in (
        r"^(?:请|麻烦|帮我|你)?(?:把|将)(?P<rest>.+?)(?:忘掉|忘了|忘记|删掉|删了|删除|清除|抹掉)(?:吧|啊|哈|好吗|行吗)?[。！!.\s]*$",
        r"^(?:请|麻烦|帮我|你)?(?:帮我)?(?:忘掉|忘记掉|忘了吧|删掉|删除|清除|抹掉)(?P<rest>.+)$",
        r"^(?:请|麻烦)?(?:忘记)(?P<rest>.+?)(?:吧)[。！!.\s]*$",
        r"^(?:请|麻烦|你)?(?:别|不要|不用|无需)(?:再)?(?:记|记住|记着|保存|存)(?P<rest>.+?)(?:了|啦|吧)?[。！!.\s]*$",
    )
]
_ZH_DELETE = re.compile(r"删掉|删了|删除|清除|抹掉")
_ZH_MEMORY_OBJECT = re.compile(r"关于|有关|说的|说过|讲的|提到|告诉你|记忆|记录|信息|资料")
_ZH_POINTER = re.compile(r"^(?:一下|掉|关于|有关|我(?:之前|刚才|刚刚|上次)?(?:说|讲|提|告诉你)(?:过|的)?(?:的)?(?:关于)?|那条|那个|这条)+")
_ZH_TAIL = re.compile(r"(?:的(?:事|事情|那条|记忆|记录|信息|内容)|这件事|那件事|这个|那个|这条|那条|记忆|记录|吧|了|啦|哦|呀)+[。！!.\s]*$")

EXPLICIT_CORRECTION = re.compile(
    r"更正|纠正|改为|改成|改到|换成|改用|其实是|应该是|搞错|说错|记错|不对[，,。]|不是.{1,12}而是|不再|已经不|"
    r"\b(correction|i meant|i mean[t]?,|changed? (?:it |that )?to|switch(?:ed)? to|no longer|not anymore|"
    r"any ?more\b|instead of|rather than|moved to|update[d]?:|scratch that|that'?s wrong|i was wrong)",
    re.IGNORECASE,
)


def forget_target(text: str) -> str | None:
    """The words naming what to forget when ``text`` is an explicit forget
    instruction, '' when it names nothing ('forget that', '忘掉吧'), None when
    it is no forget instruction. Example: 'Please forget that I live in Berlin'
    -> 'I live in Berlin'; '别记我的手机号了' -> '我的手机号'."""
    t = text.strip()
    m = _FORGET_EN.match(t)
    if m and (m.group("verb").lower().replace("’", "'") in _EN_FREE_VERBS or _EN_MEMORY_OBJECT.search(m.group("rest"))):
        rest = _EN_POINTER.sub("", m.group("rest"), count=1)
        rest = _EN_TAIL.sub("", rest).strip(" ,.;:!?\"'")
        if re.match(r"^(?:it|this|that|about it)$", rest, re.I):
            rest = ""
        return rest
    for rx in _FORGET_ZH:
        m = rx.match(t)
        if m and (not _ZH_DELETE.search(t) or _ZH_MEMORY_OBJECT.search(m.group("rest"))):
            rest = _ZH_POINTER.sub("", m.group("rest").strip())
            rest = _ZH_TAIL.sub("", rest).strip(" ，,。.！!？?")
            if rest in ("", "它", "这", "那", "刚才", "刚刚", "我刚才说", "刚才说"):
                rest = ""
            return rest
    return None


#: a replacement ("X instead of Y", "X rather than Y", "用X而不是Y") names what it replaces: Y
_REPLACEMENT = re.compile(r"\b(?:instead of|rather than)\b(?P<obj>[^.,;!?。，；！？\n]*)|而不是(?P<zh>[^。，；！？,.;!?\n]*)",
                          re.IGNORECASE)
_PHRASE_END = re.compile(r"\s+(?:in|on|at|for|with|from|because|when|since|to|and|but|so|now|these days|anymore)\b",
                         re.IGNORECASE)
_REPLACEMENT_ONLY = re.compile(r"^(?:instead of|rather than)$", re.IGNORECASE)


def replaced_phrase(text: str) -> str | None:
    """What a correction replaces when its only explicit marker is a replacement:
    'I use coconut oil instead of butter' -> 'butter'; None when another explicit
    marker ('changed to', '更正', 'no longer') says outright that something changed,
    or when there is no replacement. "instead of" is ordinary language (a recipe,
    a plan) far more often than a correction, so such a text may retire only an older
    memory that names the replaced thing."""
    markers = [m.group(0).strip() for m in EXPLICIT_CORRECTION.finditer(text)]
    if not markers or not all(_REPLACEMENT_ONLY.match(m) for m in markers):
        return None
    m = _REPLACEMENT.search(text)
    if not m:
        return None
    # the replaced thing is the phrase right after the marker, up to a preposition or conjunction
    # ('butter in my cakes now' -> 'butter'): what follows describes the new habit, not the old one
    return _PHRASE_END.split((m.group("obj") or m.group("zh") or "").strip(), maxsplit=1)[0].strip()


def correction_strength(text: str, marker_found: bool) -> str | None:
    """'explicit' when the text says outright that something changed or was
    wrong, 'weak' when it only carries a marker word used in ordinary language
    too (``marker_found`` = the write rules' CORRECTION marker matched), else None."""
    if EXPLICIT_CORRECTION.search(text):
        return "explicit"
    return "weak" if marker_found else None


_CLAUSE_END = re.compile(r"[.!?。！？;；\n]+")
_FIRST_PERSON = re.compile(r"\b(i|i'm|i've|i'll|i'd|me|my|mine|myself)\b|我|俺|本人", re.IGNORECASE)


def marker_clause(text: str, *markers: re.Pattern[str]) -> str:
    """The corrected part of ``text``: from the first match of any of ``markers`` to the
    end of the sentence holding the first match of each ('Thanks Jon! Keep going and don't
    stop dreaming. See you' -> "don't stop dreaming"; "Please don't recommend games any
    more, courses included" -> "don't recommend games any more, courses included");
    the whole text when no marker matches."""
    found = [m for m in (rx.search(text) for rx in markers) if m]
    if not found:
        return text
    start = min(m.start() for m in found)
    stop = max(m.end() for m in found)
    end = _CLAUSE_END.search(text, stop)
    return text[start: end.start() if end else len(text)]


def about_speaker(clause: str) -> bool:
    """True when the clause speaks in the first person ('I don't like sushi any more',
    '以后不要再给我推荐恐怖片'), so a negation in it can contradict the speaker's own
    earlier statement; "don't forget your passion" is about someone else."""
    return bool(_FIRST_PERSON.search(clause.replace("’", "'")))
