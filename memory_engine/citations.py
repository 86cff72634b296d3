"""Citations of memwb's own answers (seed 000): every memory goes into the prompt as
``[mem-<id>] content`` so an answer can cite it, and the cited ids are parsed back."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from .models import Hit
from .write.roles import REPLY_TO_KEY

__all__ = ["CITATION", "CitedIds", "UnknownCitationWarning", "context_block", "parse_citations"]

CITATION = re.compile(r"\[mem-([0-9a-f]{16})\]")


def parse_citations(text: str) -> list[str]:
    """Memory ids cited as ``[mem-<16 hex>]`` in ``text``, first occurrence order, no repeats."""
    seen: dict[str, None] = {}
    for m in CITATION.finditer(text or ""):
        seen.setdefault(m.group(1), None)
    return list(seen)


class UnknownCitationWarning(UserWarning):
    """An answer cites a memory id its retrieval did not return (a made-up or stale citation)."""


class CitedIds(list[str]):
    """The ids an answer cites (a list, first citation order) plus ``unknown``: those its retrieval
    did not return."""

    def __init__(self, ids: Sequence[str] = (), *, unknown: Sequence[str] = ()) -> None:
        super().__init__(ids)
        self.unknown: tuple[str, ...] = tuple(unknown)


def _line(h: Hit) -> str:
    reply_to = (h.metadata or {}).get(REPLY_TO_KEY)
    if isinstance(reply_to, dict) and reply_to.get("text"):
        # 'yes' means nothing without the question it answers (write/roles.py replies)
        return f'[mem-{h.memory_id}] (asked: "{reply_to["text"]}") {h.content}'
    return f"[mem-{h.memory_id}] {h.content}"


def context_block(hits: Iterable[Hit]) -> str:
    """Prompt block, one ``[mem-<id>] content`` line per hit, in rank order; a reply to the assistant's
    question carries that question before it (``(asked: "Do you have a car?") yes``)."""
    return "\n".join(_line(h) for h in hits)
