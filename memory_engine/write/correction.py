"""Which older memory a correction retires, with the evidence (issue 16).

A correction retires only what it names. :func:`judge` decides for one older
memory and returns the :class:`Evidence` (or None); the caller archives only
memories with evidence and lists them in the write result and its span.

Rules (every number is ``write.*`` configuration):

* only the same speaker corrects their own statement: the same role, and the
  same ``metadata.speaker`` when both carry one (else the speaker label a transcript
  line opens with, "Melanie: ...", so a dialogue written without metadata is judged alike) (in a dialog between Caroline
  and Melanie, Melanie's "actually" never retires Caroline's memory); an
  assistant / tool text never retires anything (the engine never calls this for them);
* the corrected part of the new text (:func:`memory_engine.write.rules.correction_scope`,
  marker words removed) must share at least ``supersede_min_shared`` content
  terms with the old memory, and they must make up at least
  ``supersede_keyword_overlap`` of the scope's terms (measured on the new text,
  so a one-word scope such as "rain" cannot pull in every memory that says
  "rain" through a min-denominator);
* rescaled dense similarity at least ``supersede_similarity``;
* an *explicit* correction (:func:`memory_engine.write.intents.correction_strength`)
  needs nothing more; a *weak* marker ("cancel", "actually", "don't", "不要")
  needs a contradiction of a stated preference or decision: the corrected part
  is negated, the older memory states a preference / decision / fact without
  negation (``old_stance``). Similarity alone never retires anything: in a
  chat, two cheerful lines of the same speaker are near-identical to an
  embedder and still say different things;
* the speakers' own names are no evidence (``Gina: ...`` prefixes every line of Gina);
* two negations (two constraints) normally coexist: only with similarity at
  least ``supersede_strong_similarity``;
* differing identifiers (card 尾号0988 vs 尾号8890) never.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Evidence:
    """Why an older memory is retired: its id, rescaled similarity, the shared
    content terms, the correction strength and the rule that fired."""

    memory_id: str
    similarity: float
    shared_terms: tuple[str, ...]
    strength: str
    rule: str

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.memory_id, "similarity": round(self.similarity, 4), "shared_terms": list(self.shared_terms),
                "strength": self.strength, "rule": self.rule}


@dataclass(frozen=True)
class SupersedeParams:
    """The ``write.supersede_*`` numbers (see :class:`memory_engine.config.WriteSection`)."""

    similarity: float
    keyword_overlap: float
    strong_similarity: float
    min_shared: int


#: a transcript line's speaker label: one or two capitalised words ("Melanie: ...", "Mary Ann: ...")
#: or two to four Chinese characters ("小王：...") before a colon (not a URL's "://")
_SPEAKER_LABEL = re.compile(r"^\s*([A-Z][a-z]+(?: [A-Z][a-z]+)?|[\u4e00-\u9fff]{2,4})\s*[:：](?!//)\s*\S")
#: labels that head a note rather than name a speaker ("Update: ...", "更正：...")
_HEADER_WORDS = frozenset(
    """update note notes reminder correction todo fyi summary re subject title question answer edit addendum
    important warning info status news tip idea plan goal agenda result results recap remember update
    更正 更新 备注 提醒 补充 注意 总结 问题 回答 重要 计划 目标 结论 待办 说明 通知 修改 纠正""".split()
)


def speaker_of(meta: dict[str, Any] | None, content: str = "") -> str:
    """Who said it: ``metadata.speaker`` (lower-cased), else the speaker label the text opens with
    (a conversation imported without metadata: "Melanie: ..."), else ''. A note header
    ("Update: ...", "更正：...") is no speaker."""
    s = str((meta or {}).get("speaker") or "").strip().lower()
    if s:
        return s
    m = _SPEAKER_LABEL.match(content or "")
    label = m.group(1).lower() if m else ""
    return "" if label in _HEADER_WORDS else label


def same_speaker(new_role: str, new_meta: dict[str, Any], old_payload: dict[str, Any], new_content: str = "") -> bool:
    """Same role, and the same speaker (:func:`speaker_of`: ``metadata.speaker``, else the text's
    speaker label) when both name one (case-insensitive)."""
    if (old_payload.get("role") or "user") != new_role:
        return False
    a = speaker_of(new_meta, new_content)
    b = speaker_of(old_payload.get("metadata"), str(old_payload.get("content") or ""))
    return not (a and b and a != b)


def judge(
    memory_id: str,
    *,
    strength: str,
    scope_terms: set[str],
    old_terms: set[str],
    similarity: float,
    new_negated: bool,
    old_negated: bool,
    params: SupersedeParams,
    old_stance: bool = True,
) -> Evidence | None:
    """Evidence that the correction (``scope_terms``: content terms of its corrected
    part, marker words removed) names the older memory (``old_terms``), or None.
    ``similarity`` is the embedder-rescaled dense similarity in [0, 1]; ``old_stance``
    whether the older memory states a preference, decision or fact."""
    if not scope_terms or similarity < params.similarity:
        return None
    shared = scope_terms & old_terms
    if len(shared) < params.min_shared or len(shared) / len(scope_terms) < params.keyword_overlap:
        return None
    if new_negated and old_negated and similarity < params.strong_similarity:
        return None
    if strength == "explicit":
        rule = "explicit_correction"
    elif new_negated and not old_negated and old_stance:
        rule = "polarity_flip"
    else:
        return None
    return Evidence(memory_id, float(similarity), tuple(sorted(shared)), strength, rule)
