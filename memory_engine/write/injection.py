"""Planted instructions in tool and web content (issue 16, OWASP LLM01 "indirect
prompt injection"): text fetched by a tool that addresses the model instead of
informing it. Such a memory is kept (the words exist, an engineer can inspect
them) but flagged, and retrieval leaves flagged memories out of the context by
default (``retrieval.exclude_flagged``).

:func:`injection_signals` returns the names of the signals found, zh and en:

* ``override``: "ignore (all) previous/prior/above instructions", "disregard
  the system prompt", "忽略之前的指令", "无视以上所有规则";
* ``role_play``: "you are now ...", "act as", "从现在开始你是", "你现在是";
* ``system_prompt``: system-prompt-like text: "system:", "<|im_start|>system",
  "[INST]", "### instruction", "<system>";
* ``exfiltrate``: "reveal/print your system prompt", "send ... to http",
  "泄露/输出你的系统提示";
* ``imperative_to_model``: an imperative aimed at the assistant itself
  ("as an AI you must", "assistant, always", "AI助手必须", "请你务必...回复").

Pure functions; a text with any signal is flagged.
"""

from __future__ import annotations

import re

_SIGNALS: dict[str, re.Pattern[str]] = {
    "override": re.compile(
        r"\b(ignore|disregard|forget|override|bypass)\b.{0,30}\b(previous|prior|above|earlier|all|any|your|the)\b.{0,20}"
        r"\b(instructions?|prompts?|rules?|guidelines?|directions?|messages?|context)\b|"
        r"(忽略|无视|忘记|忘掉|不要理会|跳过|覆盖).{0,12}(之前|以前|上面|以上|前面|所有|全部|先前|原来|系统)?.{0,6}"
        r"(指令|指示|提示词?|规则|设定|要求|命令)",
        re.IGNORECASE,
    ),
    "role_play": re.compile(
        r"\byou are now\b|\bfrom now on,? you\b|\bact as (?:an?|the)\b|\bpretend (?:to be|you are)\b|"
        r"\bnew (?:role|persona|instructions?)\b|从现在(?:开始|起)[,，]?你|你现在是|扮演|你的新(?:身份|角色|任务)",
        re.IGNORECASE,
    ),
    "system_prompt": re.compile(
        r"(?:^|\n)\s*(?:system|assistant)\s*:|<\|?(?:im_start|system|endoftext)\|?>|\[/?INST\]|<</?SYS>>|"
        r"###\s*(?:instruction|system)|(?:^|\n)\s*系统(?:提示|指令)\s*[:：]",
        re.IGNORECASE,
    ),
    "exfiltrate": re.compile(
        r"\b(reveal|print|output|show|repeat|leak|send|forward|upload|post)\b.{0,30}"
        r"\b(system prompt|instructions|api key|password|credentials|secrets?|conversation|memories|user data)\b|"
        r"(泄露|输出|打印|发送|透露|告诉我).{0,10}(系统提示|提示词|指令|密钥|密码|聊天记录|用户数据|记忆)",
        re.IGNORECASE,
    ),
    "imperative_to_model": re.compile(
        r"\b(as an ai|dear (?:ai|assistant|model|llm)|(?:ai|assistant|model|llm|chatbot),? (?:you )?(?:must|should|will|"
        r"always|never|do not|don'?t))\b|\b(?:you must|you should) (?:now )?(?:always|never|only|tell|say|respond|reply|"
        r"recommend|answer)\b|(?:AI|ai|助手|模型|机器人)(?:你)?(?:必须|务必|一定要|应该|不得|不准)|请你(?:务必|必须|一定)",
        re.IGNORECASE,
    ),
}


def injection_signals(text: str) -> tuple[str, ...]:
    """Names of the planted-instruction signals in ``text`` (empty tuple = none)."""
    return tuple(name for name, rx in _SIGNALS.items() if rx.search(text or ""))
