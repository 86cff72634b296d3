"""What the write path may drop: true noise only (issue 16).

Every substantive statement is kept (at least as an episodic memory); a text is
noise when it says nothing a later question could ask about:

* ``empty``: nothing but whitespace and punctuation;
* ``chit_chat``: the whole text segments into acknowledgement / greeting forms
  of a short closed lexicon (``ok thanks``, ``好的好的``, ``嗯嗯，收到``,
  ``lol``, ``哈哈哈``), with repeated characters and sentence particles
  allowed: a general segmentation, not a list of whole sentences;
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
    brilliant wonderful sweet excellent fantastic hilarious funny youre thats""".split()
)
#: words that only glue acknowledgement words together ("thank you so much", "ok and thanks") and the
#: addressees and closings of a sign-off ("hey there", "thanks man", "that's all for now", "hello bot")
_EN_GLUE = frozenset("""and then well oh so very too much a lot of that is it its thing things one the for now all
    again there man dude buddy bro mate guys folks bot""".split())

#: English backchannels of several words that say no more than "ok" ("makes sense", "fair enough", "i see"):
#: read as one acknowledgement word, so the whole text must still be acknowledgements for it to be noise
ACK_EN_PHRASES = ("makes sense", "make sense", "fair enough", "i see", "got you", "my bad", "all good", "no worries")

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
    latin = re.findall(r"[a-z']+", low)
    if re.search(r"\d", low):
        return False
    if cjk and not _zh_is_ack(_squeeze(cjk)):
        return False
    latin_words = [w.replace("'", "") for w in latin]
    if latin_words and not _en_is_ack(latin_words):
        return False
    return bool(cjk or latin_words)


def noise_reason(text: str) -> str | None:
    """``empty`` / ``chit_chat`` / ``no_content`` for true noise, else None (keep)."""
    if not _PUNCT.sub("", text):
        return "empty"
    if is_acknowledgement(text):
        return "chit_chat"
    if not _DIGIT.search(text) and not content_terms(text):
        return "no_content"
    return None
