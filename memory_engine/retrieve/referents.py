"""Who a memory is about, for the entity hop (:mod:`memory_engine.retrieve.hop`): a link between two
memories is only worth following when both speak of the same person. Two checks, both from the
memory's own words (no model, no store):

* **Gender agreement of a pronoun** (``retrieval.hop_gender_agreement``): 'she recommended the vet'
  stands for a woman; the nearest earlier memory naming a person ('我哥周浩下周来北京出差',
  'Mark lent me his pressure washer') is no antecedent when every gender cue it carries is the other
  one. Cues are closed-class words: kinship and address terms (哥 / 姐 / 老公 / wife / Mr / Ms) and
  third-person pronouns. No cue, or cues of both genders, agrees with anything: the check only refuses
  on evidence. This is the agreement filter of pronoun resolution that precedes the recency
  preference (Hobbs 1978; Lappin & Leass 1994, the morphological filter; Mitkov, *Anaphora
  Resolution*, 2002, ch. 2).
* **One referent per surname** (``retrieval.hop_name_conflict``): 'Dr. Chen moved my echo' shares
  'Chen' with 'Kevin Chen from accounting', but when the hits already name 'Helen Chen', the surname
  stands for her, and a memory that names a Chen with another given name is about someone else. A
  name known with one given name does not link to the same surname with a different one (the 'one
  sense per discourse' heuristic of Gale, Church & Yarowsky 1992, applied to person names as in
  cross-document coreference, Bagga & Baldwin 1998).

Shapes: :func:`pronoun_gender` -> 'm' | 'f' | None; :func:`gender_cues` -> subset of {'m', 'f'};
:func:`full_names` -> frozenset of (given, surname) pairs, lower-cased (English) or as written (Chinese)."""

from __future__ import annotations

import calendar
import re
from functools import lru_cache

from ..text import _CJK, _jieba, _jieba_lock, content_terms, pos_tags

__all__ = ["agrees", "full_names", "gender_cues", "name_conflict", "named_terms", "person_names", "pronoun_gender"]

#: the bare third-person pronoun a memory opens with (after an optional connective), by gender
_LEAD_PRONOUN = re.compile(r"^\s*(?:(?:and|but|so|then|also)\s+)?(he|she)\b|^\s*([他她])", re.IGNORECASE)

#: English words that say a person is a man or a woman: kinship, address, third-person pronouns
_EN_CUES = {
    "m": "he him his himself brother brothers dad father husband son sons uncle nephew boyfriend grandpa "
         "grandfather mr sir guy man boy",
    "f": "she her hers herself sister sisters mom mum mother wife daughter daughters aunt niece girlfriend grandma "
         "grandmother mrs ms miss lady woman girl",
}
#: Chinese words (as a whole jieba word, or the end of one: '我哥', '表姐', '大舅') that say the same
_ZH_CUES = {
    "m": "他 哥 哥哥 弟 弟弟 爸 爸爸 父亲 老爸 叔 叔叔 舅 舅舅 伯 伯伯 爷爷 外公 姥爷 公公 老公 丈夫 儿子 侄子 外甥 "
         "男朋友 先生 姐夫 妹夫 男",
    "f": "她 姐 姐姐 妹 妹妹 妈 妈妈 母亲 老妈 姨 姨妈 小姨 阿姨 姑 姑姑 姑妈 婶 婶婶 舅妈 奶奶 外婆 姥姥 婆婆 老婆 妻子 "
         "太太 媳妇 女儿 闺女 侄女 外甥女 女朋友 女士 小姐 嫂子 弟媳 女 闺蜜",
}
_EN_GENDER = {w: g for g, words in _EN_CUES.items() for w in words.split()}
_ZH_GENDER = {w: g for g, words in _ZH_CUES.items() for w in words.split()}
#: what may precede a Chinese kinship word inside one jieba word ('我哥', '表姐', '大舅', '亲妹')
_ZH_KIN_PREFIX = frozenset("我你他她表堂亲大二三小老")

#: titles and capitalised words that open a name but are no given name ('Dr. Helen Chen' -> Helen Chen)
_TITLES = frozenset("dr mr mrs ms miss prof professor sir st saint uncle aunt".split())
#: an English full name: two capitalised words (an optional title before them is skipped)
_EN_FULL = re.compile(r"\b([A-Z][a-z]+)\s+([A-Z][a-z]+)\b")
_NOT_GIVEN = frozenset("I My The A An This That It We You He She They Our Your His Her Their And But So Then When "
                       "What Which Who Where Why How Monday Tuesday Wednesday Thursday Friday Saturday Sunday "
                       "January February March April May June July August September October November December".split())
#: Chinese two-character surnames (the common ones; every other surname is one character)
_ZH_COMPOUND_SURNAMES = frozenset("欧阳 司马 上官 诸葛 东方 皇甫 尉迟 公孙 慕容 长孙 宇文 令狐 夏侯 端木 司徒".split())
#: Chinese titles a surname takes instead of a given name ('王老师', '刘总'): such a word names no given name
_ZH_TITLES = ("老师", "总", "经理", "医生", "大夫", "主任", "老板", "律师", "教授", "师傅", "阿姨", "叔叔", "哥", "姐",
              "工", "局", "处", "科长", "部长", "校长", "院长", "书记", "先生", "女士", "小姐")


def pronoun_gender(content: str) -> str | None:
    """'m' / 'f' for a memory whose subject is a bare he / she / 他 / 她 (:func:`hop.pronoun_led`), else None."""
    m = _LEAD_PRONOUN.search(content)
    if m is None:
        return None
    p = (m.group(1) or m.group(2)).lower()
    return "m" if p in ("he", "他") else "f"


@lru_cache(maxsize=65_536)
def gender_cues(content: str) -> frozenset[str]:
    """The genders ``content``'s kinship, address and pronoun words name: {'m'}, {'f'}, both, or none. English
    words whole (case-insensitive); Chinese by jieba word, a word counting when it is a cue or a kinship prefix
    (我 / 表 / 堂 / 大 ...) plus a cue ('我哥' -> m), so '哥伦比亚' is no brother."""
    out = {g for w in re.findall(r"[a-z]+", content.lower()) if (g := _EN_GENDER.get(w))}
    if _CJK.search(content):
        import jieba

        _jieba()
        with _jieba_lock:
            words = jieba.lcut(content)
        for w in words:
            g = _ZH_GENDER.get(w)
            if g is None and len(w) > 1 and w[0] in _ZH_KIN_PREFIX:
                g = _ZH_GENDER.get(w[1:])
            if g is not None:
                out.add(g)
    return frozenset(out)


def agrees(pronoun: str | None, cues: frozenset[str]) -> bool:
    """Whether a memory with gender ``cues`` can be the antecedent of a ``pronoun`` ('m' / 'f' / None): it can
    unless its cues name only the other gender (no cue says nothing; both genders: several people)."""
    return pronoun is None or not cues or pronoun in cues


@lru_cache(maxsize=65_536)
def full_names(content: str) -> frozenset[tuple[str, str]]:
    """(given, surname) of the people ``content`` names in full: two capitalised English words that are no
    title, weekday, month or function word ('Dr. Helen Chen' -> ('helen', 'chen')); Chinese person words (jieba
    nr) of three or four characters, or of two whose first character is not a title's surname (a one- or
    two-character surname + the given name: '李娜' -> ('娜', '李'), '欧阳娜娜' -> ('娜娜', '欧阳')). A surname
    + title ('王老师', '刘总', 'Dr. Chen') names no given name and is left out: it conflicts with no one."""
    out: set[tuple[str, str]] = set()
    for m in _EN_FULL.finditer(content):
        given, surname = m.group(1), m.group(2)
        if given in _NOT_GIVEN or surname in _NOT_GIVEN or given.lower() in _TITLES:
            continue
        out.add((given.lower(), surname.lower()))
    if _CJK.search(content):
        people = [w for w, flag in pos_tags(content) if flag in ("nr", "nrt") and _CJK.fullmatch(w)]
        for p in people:
            if not 2 <= len(p) <= 4 or p.endswith(_ZH_TITLES) or p[0] in _ZH_KIN_PREFIX - {"大"}:
                continue
            sur = p[:2] if p[:2] in _ZH_COMPOUND_SURNAMES else p[0]
            if len(p) > len(sur):
                out.add((p[len(sur):], sur))
    return frozenset(out)


def name_conflict(known: frozenset[tuple[str, str]] | set[tuple[str, str]],
                  names: frozenset[tuple[str, str]]) -> bool:
    """Whether ``names`` hold a person of a surname in ``known`` under another given name (Kevin Chen when Helen
    Chen is known): a memory about someone else than the one the link's surname stands for."""
    given_of: dict[str, set[str]] = {}
    for g, s in known:
        given_of.setdefault(s, set()).add(g)
    return any(s in given_of and g not in given_of[s] for g, s in names)


#: a name introduced by a naming word ('叫朵朵', '名叫 Lucky', 'named Max', 'called Mochi'): jieba tags
#: reduplicated or rare names as anything but names (朵朵: quantifier), and English names may be lower case
_NAMING = re.compile(r"(?:名叫|叫做|叫|named|called)\s*([A-Za-z][\w'-]*|[\u4e00-\u9fff]{1,3})", re.IGNORECASE)

#: capitalised words that name a day or a month, not a person ('coming Thursday'), from the calendar module
_CALENDAR_WORDS = frozenset(w.lower() for w in (*calendar.day_name, *calendar.month_name) if w)

def named_terms(content: str) -> frozenset[str]:
    """Content terms of the names ``content`` introduces through a naming word (叫/名叫/named/called),
    kept only where they are terms of the memory itself (a three-character grab '朵朵今' keeps 朵朵)."""
    own = content_terms(content)
    out: set[str] = set()
    for m in _NAMING.finditer(content):
        name = m.group(1)
        terms: frozenset[str] = content_terms(name) & own
        if not terms and _CJK.fullmatch(name):
            # a CJK grab runs into the next word ('朵朵今'): keep the terms of the memory it starts
            terms = frozenset(t for t in own if name.startswith(t) and len(t) > 1)
        out |= terms
    return frozenset(out)


def person_names(content: str) -> frozenset[str]:
    """The people ``content`` names: jieba person words (nr) in Chinese, capitalised English names that are no
    day or month ('Rosa', not 'Thursday'), and names introduced by a naming word; lower-cased content terms."""
    out = set(named_terms(content))
    if _CJK.search(content):
        import jieba.posseg as pseg

        _jieba()
        with _jieba_lock:
            out |= {w.word for w in pseg.cut(content) if w.flag in ("nr", "nrt") and len(w.word) > 1}
    for m in re.finditer(r"\b[A-Z][a-z]+\b", content):
        w = m.group(0)
        if m.start() > 0 and w.lower() not in _CALENDAR_WORDS and w not in ("I", "He", "She", "My"):
            out |= content_terms(w)
    return frozenset(out)
