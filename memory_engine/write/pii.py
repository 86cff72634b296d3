"""PII detection and redaction (seed 000/004: redact before anything is stored).

Detectors validate what they can, so ordinary numbers survive:
Chinese resident ID numbers by their ISO 7064 MOD 11-2 check digit (GB 11643),
bank cards by the Luhn checksum, phone numbers by shape (mainland mobile and
international), e-mail addresses, and whatever follows a password keyword.
Each match is replaced by a typed placeholder such as ``[ID_NUMBER]``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"

_RE_ID = re.compile(r"(?<![0-9A-Za-z])(\d{17}[\dXx])(?![0-9A-Za-z])")
_RE_CARD = re.compile(r"(?<![0-9A-Za-z])((?:\d[ -]?){12,18}\d)(?![0-9A-Za-z])")
_RE_MOBILE = re.compile(r"(?<![0-9A-Za-z])(?:\+?86[ -]?)?(1[3-9]\d[ -]?\d{4}[ -]?\d{4})(?![0-9A-Za-z])")
_RE_INTL_PHONE = re.compile(r"(?<![\w+])\+\d{1,3}[ -]?\(?\d{1,4}\)?(?:[ -]?\d{2,4}){2,4}(?![\w])")
_RE_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
_RE_PASSWORD = re.compile(
    r"((?:密码|口令|password|passwd|pwd|pin码|PIN)\s*(?:是|为|:|：|=|is)?\s*)([^\s，。,;；]+)", re.IGNORECASE
)


def cn_id_valid(s: str) -> bool:
    """True for an 18-character Chinese resident ID whose check digit matches (GB 11643-1999)."""
    if len(s) != 18 or not s[:17].isdigit():
        return False
    total = sum(int(c) * w for c, w in zip(s[:17], _ID_WEIGHTS, strict=True))
    return _ID_CHECK[total % 11] == s[17].upper()


def luhn_valid(digits: str) -> bool:
    """Luhn (mod 10) checksum of a digit string (ISO/IEC 7812)."""
    if not digits.isdigit() or len(digits) < 2:
        return False
    total = 0
    for i, c in enumerate(reversed(digits)):
        d = int(c)
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


@dataclass(frozen=True)
class Redaction:
    """Result of :func:`redact`: the cleaned text and the placeholder kinds used, in order found."""

    text: str
    kinds: tuple[str, ...]


def redact(text: str) -> Redaction:
    """Replace PII with ``[ID_NUMBER]``, ``[BANK_CARD]``, ``[PHONE]``, ``[EMAIL]``, ``[PASSWORD]``."""
    kinds: list[str] = []

    def sub_id(m: re.Match[str]) -> str:
        if cn_id_valid(m.group(1)):
            kinds.append("ID_NUMBER")
            return "[ID_NUMBER]"
        return m.group(0)

    def sub_card(m: re.Match[str]) -> str:
        digits = re.sub(r"[ -]", "", m.group(1))
        if 13 <= len(digits) <= 19 and luhn_valid(digits):
            kinds.append("BANK_CARD")
            return "[BANK_CARD]"
        return m.group(0)

    def sub_phone(m: re.Match[str]) -> str:
        kinds.append("PHONE")
        return "[PHONE]"

    def sub_email(m: re.Match[str]) -> str:
        kinds.append("EMAIL")
        return "[EMAIL]"

    def sub_pw(m: re.Match[str]) -> str:
        kinds.append("PASSWORD")
        return m.group(1) + "[PASSWORD]"

    out = _RE_PASSWORD.sub(sub_pw, text)
    out = _RE_EMAIL.sub(sub_email, out)
    out = _RE_ID.sub(sub_id, out)
    out = _RE_CARD.sub(sub_card, out)
    out = _RE_MOBILE.sub(sub_phone, out)
    out = _RE_INTL_PHONE.sub(sub_phone, out)
    return Redaction(out, tuple(kinds))
