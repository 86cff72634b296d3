"""What the write path may drop: true noise only (issue 16).

Every substantive statement is kept (at least as an episodic memory); a text is
noise when it says nothing a later question could ask about:

* ``empty``: nothing but whitespace and punctuation;
* ``chit_chat``: the whole text segments into acknowledgement / greeting forms
  of a short closed lexicon (``ok thanks``, ``好的好的``, ``嗯嗯，收到``,
  ``lol``, ``哈哈哈``), with repeated characters and sentence particles
  allowed: a general segmentation, not a list of whole sentences;
* ``chit_chat`` too: every clause (split at punctuation and symbols such as emoji) is such an
  acknowledgement, a *closing* of the conversation itself ("talk tomorrow", "that's all for today",
  "今天先到这儿", "明天再聊哈", "回头聊": its content terms are all of the closed class :data:`CLOSING`,
  one of them a verb of conversing or stopping) or, beside an acknowledgement, a *compliment to the
  addressee* ("thanks, you're a lifesaver", "谢谢，你太贴心了": second person + one evaluative word,
  :func:`is_compliment`; alone it may be the user's instruction or complaint): "好嘞收到～辛苦啦，
  今天先到这儿，明天再聊哈" says nothing a later question could ask about, while one clause with
  anything else ("thanks! btw my daughter's recital is on the 14th") keeps the whole text;
* ``no_content``: no content term survives stop-word removal
  (:func:`memory_engine.text.content_terms`) and no digit is present
  (``what about you?``, ``那就这样吧``).

One-off commands (``set a timer``, ``帮我查一下天气``) are decided by
:mod:`memory_engine.write.rules`. Pure functions.
"""

from __future__ import annotations

import re

from ..text import content_terms

#: English acknowledgement / greeting words; a text made only of these (and
#: fillers) is chit-chat. Multi-word forms are matched word by word.
ACK_EN = frozenset(
    """ok okay k kk okey yes yeah yep yup ya no nope nah sure thanks thank thx ty tysm you cool nice great good fine
    alright right lol lmao haha hahaha hehe hmm hm mm uh um ah oh wow hi hello hey bye goodbye cya got it noted
    sounds np welcome morning night see ya awesome perfect true agreed indeed exactly gotcha understood roger
    much so very too totally definitely absolutely course of a lot agree thing u okie dokie doke
    best later talk ttyl brb cheers care take soon have day one helpful appreciate appreciated amazing lovely yea yeh
    brilliant wonderful sweet excellent fantastic hilarious funny youre thats omg omfg""".split()
)
#: words that only glue acknowledgement words together ("thank you so much", "ok and thanks") and the
#: addressees and closings of a sign-off ("hey there", "thanks man", "that's all for now", "hello bot")
_EN_GLUE = frozenset("""and then well oh so very too much a lot of that is it its thing things one the for now all
    again there man dude buddy bro mate guys folks bot""".split())

#: English backchannels of several words that say no more than "ok" ("makes sense", "fair enough", "i see"):
#: read as one acknowledgement word, so the whole text must still be acknowledgements for it to be noise
ACK_EN_PHRASES = ("makes sense", "make sense", "fair enough", "i see", "got you", "my bad", "all good", "no worries",
                  "good to know", "nice to know", "that helps", "thanks for the info")
#: '666' (Chinese chat slang for 'nice', from 溜 liù): a run of sixes alone is an acknowledgement, any other number is content
_SIXES = re.compile(r"(?<![\d.])6{3,}(?![\d.])")

#: Chinese acknowledgement / greeting forms (a text is segmented into them by word-break, _zh_is_ack); the bare
#: "no" of a reply (没有了 / 不用了, as English "no" / "nope" above) says nothing alone: after the assistant's question
#: about the user it is that question's answer and kept (write/roles.py replies)
ACK_ZH = tuple(sorted(
    """好 好的 好吧 好滴 好嘞 好哒 好呀 嗯 嗯嗯 哦 噢 喔 谢谢 谢谢你 谢谢您 多谢 感谢 辛苦了 辛苦 哈 呵 嘻 嘿 可以 行 行吧
    收到 明白 明白了 知道了 了解 懂了 没问题 没事 你好 您好 早上好 早安 午安 晚上好 晚安 再见 拜拜 回头见 对 对的 是的 是
    不错 厉害 牛 赞 棒 太棒了 真棒 好厉害 确实 也是 有道理 原来如此 这样啊 这样 那好 那行 ok okay 嗯呢 对呀 对啊 是啊
    好耶 耶 哇 哇塞 哎 唉 啦 吧 呀 啊 呢 哒 滴 嘛 了 的 哟 谢啦 谢了 谢 多谢啦 辛苦啦 麻烦了 麻烦你了 得嘞 妥 妥了 妥妥
    安排 没毛病 晓得 晓得了 懂 懂啦 嗯哼 好哦 哦哦 好的呢 可以的 知道啦 明白啦 收到啦 收到了 了解了 行行 好好 麻烦啦 太感谢
    非常感谢 感谢感谢 我知道了 我明白了 我懂了 没错 原来是这样 是这样 说得对 说的对 说得也是 说的也是 就这么办 这么办 就这么定了 笑死 笑死了 笑死我了 笑哭 笑哭了 笑cry 好好笑 太好笑了
    绝了 绝绝子 哈哈 嘿嘿 呵呵 嘻嘻 么么哒 么么 爱你 比心 抱抱 辛苦你了 辛苦你啦 辛苦您了
    没有 没有了 没了 不用 不用了 不了 没有啦 不用啦 不需要 不需要了""".split(),
    key=len, reverse=True,
))
#: closed-class words that only glue acknowledgements together ("行吧那就先这样", "那好吧就这样"); a text
#: of glue alone is not an acknowledgement (it has no content either and is dropped as ``no_content``)
_ZH_GLUE = tuple(sorted("那 就 先 这样 那样 也 都 还 再 呗 咯 喽 嘞 那就 就这样 先这样 太 非常 小助手 助手 兄弟 老板 亲 亲爱的 "
                        "老师 宝 宝子 你 您".split(), key=len, reverse=True))

#: closed-class words of a clause about the conversation itself, its closing or deferral (read through
#: :func:`memory_engine.text.content_terms` as stored terms are): conversing and stopping verbs, time
#: deixis, particles
CLOSING: frozenset[str] = frozenset().union(*(content_terms(w) for w in """
    talk talking chat speak catch continue pick see later tomorrow tonight today soon next time now bye all for
    聊 聊天 再聊 回聊 接着聊 说 再说 谈 见 明天见 回头见 明天 今天 今晚 晚点 稍后 下次 回头 改天 先 先到 到 这儿 这里 到此为止
    为止 此为 哈 吧 啦 呀 先这样""".split()))
#: the verbs of conversing or stopping a closing clause must contain (a bare "tomorrow" is a reply, not a closing)
_CONVERSE: frozenset[str] = frozenset().union(*(content_terms(w) for w in """talk talking chat speak catch continue
    pick see bye 聊 聊天 再聊 回聊 接着聊 说 再说 谈 见 到此为止 为止 先到 这儿 这里""".split())) - frozenset().union(
    *(content_terms(w) for w in "today tomorrow tonight later soon now 今天 明天 今晚 晚点 稍后 下次 回头 改天".split()))
#: clause boundaries for the clause-wise reading: punctuation and symbols (emoji), not apostrophes
_CLAUSE = re.compile(r"[^\w\s']+|\s{2,}")
#: a compliment to the addressee: second person, optional degree word, one evaluative word, particles
_COMPLIMENT_EN = re.compile(r"^(?:you'?re|you are|u r|ur)\s+(?:so\s+|such\s+|really\s+|truly\s+|the\s+|a\s+|an\s+|"
                            r"absolute\s+|total\s+)*[a-z]+$")
_COMPLIMENT_ZH = re.compile(r"^(?:你|您)(?:真的?|太|好|很|最|超|特别|非常|简直)(?:是)?[\u4e00-\u9fff]{1,3}?(?:了|啊|呀|哦|吧|哈|啦)*$")

_PUNCT = re.compile(r"[\s\W_]+", re.UNICODE)
_REPEAT = re.compile(r"(.)\1{2,}")
_DIGIT = re.compile(r"\d")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


def _squeeze(s: str) -> str:
    """'okkkk' -> 'okk', 'hahahaha' stays (segmented), '嗯嗯嗯嗯' -> '嗯嗯'."""
    return _REPEAT.sub(r"\1\1", s)


def _zh_is_ack(run: str) -> bool:
    """Whether ``run`` segments completely into acknowledgement forms and glue words with at least
    one acknowledgement form among them. Dynamic programming over the prefixes (word-break), not
    greedy longest-match: greedy takes '了解了' out of '了解了解' and is left with '解'."""
    n = len(run)
    # best[i]: None = run[:i] does not segment; else whether that segmentation holds an acknowledgement
    best: list[bool | None] = [None] * (n + 1)
    best[0] = False
    for i in range(n):
        if best[i] is None:
            continue
        for forms, is_ack in ((ACK_ZH, True), (_ZH_GLUE, False)):
            for form in forms:
                if run.startswith(form, i):
                    j = i + len(form)
                    best[j] = bool(best[j]) or bool(best[i]) or is_ack
    return bool(best[n])


def _en_is_ack(words: list[str]) -> bool:
    if not words:
        return True
    for w in words:
        if _REPEAT.sub(r"\1", w) in ACK_EN:
            continue  # a stretched word ('yesss', 'okkkk', 'thxxx') read at one letter per run
        w = _squeeze(w)
        if w in ACK_EN or w in _EN_GLUE or re.fullmatch(r"(ha|he|ja)+h?|l+o+l+|(o+k+)+|m+|h+m+|y+a+y*|a+h+|o+h+|u+m+", w):
            continue
        return False
    return any(w not in _EN_GLUE for w in words)


def is_acknowledgement(text: str) -> bool:
    """True when the whole text is acknowledgement / greeting forms (zh or en),
    with particles, repeats and punctuation; e.g. ``ok thanks!``, ``好的好的～``,
    ``嗯嗯 收到``, ``lol``. A text with any other word is not."""
    low = text.lower().strip()
    if not _PUNCT.sub("", low):
        return False
    cjk = "".join(ch for ch in low if _CJK.match(ch))
    for phrase in ACK_EN_PHRASES:
        low = re.sub(rf"\b{phrase}\b", " ok ", low)
    low = _SIXES.sub(" ok ", low)
    latin = re.findall(r"[a-z']+", low)
    if re.search(r"\d", low):
        return False
    if cjk and not _zh_is_ack(_squeeze(cjk)):
        return False
    latin_words = [w.replace("'", "") for w in latin]
    if latin_words and not _en_is_ack(latin_words):
        return False
    return bool(cjk or latin_words)


def is_compliment(clause: str) -> bool:
    """A clause that only praises the addressee ("you're a lifesaver", "you're the best", "你太贴心了",
    "您真好"): second person, an optional degree word and one evaluative word; no question."""
    c = clause.strip().lower()
    return bool(_COMPLIMENT_EN.match(c) or _COMPLIMENT_ZH.match(c))


#: the English words a closing may be made of, as written (a closing addresses the hearer: "talk to you tomorrow",
#: "let's pick this up later"; "we talked today" or "I'll talk to him tomorrow" report or plan something)
_CLOSING_EN_WORDS = frozenset("""talk chat speak catch continue pick see bye later tomorrow tonight today soon next time
    now all for you u ya to i'll ill let's lets we'll again then up this it that's thats here there with more""".split())
#: completed aspect or a third person in a Chinese clause: a report or a plan about someone, not a closing
_ZH_NOT_CLOSING = re.compile(r"[了过他她它]")


def is_closing(clause: str) -> bool:
    """A clause about the conversation itself ("talk to you tomorrow", "今天先到这儿", "明天再聊哈"): its
    content terms are all :data:`CLOSING`, one is a verb of conversing or stopping (:data:`_CONVERSE`), its
    English words are all :data:`_CLOSING_EN_WORDS` and its Chinese has no completed aspect or third person."""
    terms = content_terms(clause)
    if not terms or not terms <= CLOSING or not terms & _CONVERSE or _DIGIT.search(clause):
        return False
    words = re.findall(r"[a-z']+", clause.lower())
    return all(w in _CLOSING_EN_WORDS for w in words) and not _ZH_NOT_CLOSING.search(clause)


def is_pleasantry(text: str) -> bool:
    """Every clause of ``text`` is an acknowledgement, a closing or (beside an acknowledgement) a compliment
    to the addressee (module docstring); no clause is a question and no digit is present."""
    if "?" in text or "？" in text or _DIGIT.search(text):
        return False
    clauses = [c.strip() for c in _CLAUSE.split(text) if c.strip()]
    if not clauses:
        return False
    acks = [is_acknowledgement(c) for c in clauses]
    # praise counts only beside thanks ("thanks, you're a lifesaver"): alone "you're a doctor" / "你太慢了"
    # may be the user's instruction or complaint
    return all(a or is_closing(c) or (any(acks) and is_compliment(c)) for c, a in zip(clauses, acks, strict=True))


def noise_reason(text: str) -> str | None:
    """``empty`` / ``chit_chat`` / ``no_content`` for true noise, else None (keep)."""
    if not _PUNCT.sub("", text):
        return "empty"
    if is_acknowledgement(text) or is_pleasantry(text):
        return "chit_chat"
    if not _DIGIT.search(text) and not content_terms(text):
        return "no_content"
    return None
