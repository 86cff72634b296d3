"""PII detection and redaction (seed 000/004: redact before anything is stored).

Each detector validates what it can, so ordinary numbers survive:

* ``ID_NUMBER`` - Chinese resident ID: ISO 7064 MOD 11-2 check digit and a real birth date (GB 11643-1999);
* ``NINO`` - UK National Insurance number: HMRC's prefix rules (no D F I Q U V, second letter not O, none of
  BG GB KN NK NT TN ZZ), six digits, suffix A-D;
* ``SSN`` - US Social Security number: ``python-stdnum`` rules (no area 000/666/9xx, group 00, serial 0000,
  nor the numbers known to be invalid); nine bare digits need an SSN word nearby;
* ``IBAN`` - ISO 13616 mod-97 check digits and the country's length (``python-stdnum``);
* ``BANK_CARD`` - Luhn (ISO/IEC 7812) **and** either a card word nearby or a plausible issuer prefix (BIN) and
  length without an order/reference word before it: about 10% of random 13-19 digit order numbers pass Luhn;
* ``PHONE`` - any region through Google's ``phonenumbers`` (``is_valid_number``): international numbers
  (``+44 ...``, ``0086 ...``) of every region; national numbers of ``phone_regions``, except a bare digit run
  right after an order/reference word with no phone word (an 11-digit order id starting 13-19 is not a phone);
* ``EMAIL``; ``PASSWORD`` - the token after a password word and a linker ("password is: X", "the wifi password
  for the office is X", 密码是X, a new value: "changed my password to X", "password is now X", 密码改成X), or right after the word when the token looks like a secret (has a digit or a
  symbol).

Digits may be separated by spaces or hyphens and written full-width (１３８…): the text is matched on a
normalised copy of the same length (full-width digits, letters, ``＋`` and the ideographic space mapped to
ASCII one for one), so every match maps back onto the original characters. Each match becomes a typed
placeholder such as ``[PHONE]``. Detectors are switched on and off and phone regions chosen by
:class:`PiiSettings` (``config.pii``).
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import phonenumbers
from stdnum import iban as _iban
from stdnum.us import ssn as _ssn

DETECTORS = ("PASSWORD", "EMAIL", "IBAN", "ID_NUMBER", "NINO", "SSN", "BANK_CARD", "PHONE")
"""Every detector, in the order they claim text (an earlier one wins an overlap)."""


@dataclass(frozen=True)
class PiiSettings:
    """What :func:`redact` looks for: ``detectors`` (subset of :data:`DETECTORS`), ``phone_regions`` (ISO
    3166 codes whose national numbers are recognised; international ``+``/``00`` numbers of every region
    always are), ``context_chars`` (how far before a number a context word counts)."""

    detectors: tuple[str, ...] = DETECTORS
    phone_regions: tuple[str, ...] = ("CN", "US", "GB")
    context_chars: int = 16

    @classmethod
    def from_config(cls, section: object | None) -> PiiSettings:
        """From a config section with ``detectors``/``phone_regions``/``context_chars`` (``None`` = defaults)."""
        if section is None:
            return DEFAULT_SETTINGS
        return cls(
            detectors=tuple(d.upper() for d in getattr(section, "detectors", DETECTORS)),
            phone_regions=tuple(r.upper() for r in getattr(section, "phone_regions", ("CN", "US", "GB"))),
            context_chars=int(getattr(section, "context_chars", 16)),
        )


DEFAULT_SETTINGS = PiiSettings()

# --- normalisation (same length, so offsets map back) ------------------------------------------------
_FULLWIDTH = {0xFF10 + i: ord("0") + i for i in range(10)}
_FULLWIDTH |= {0xFF21 + i: ord("A") + i for i in range(26)}
_FULLWIDTH |= {0xFF41 + i: ord("a") + i for i in range(26)}
_FULLWIDTH |= {0x3000: ord(" "), 0xFF0B: ord("+"), 0xFF0D: ord("-"), 0xFF08: ord("("), 0xFF09: ord(")"),
               0xFF20: ord("@"), 0xFF0E: ord("."), 0x00A0: ord(" "), 0x2010: ord("-"), 0x2011: ord("-"),
               0x2012: ord("-"), 0x2013: ord("-"), 0x2212: ord("-")}  # fmt: skip


def normalise(text: str) -> str:
    """``text`` with full-width digits/letters/``＋－（）＠．``, the ideographic and no-break space and dash
    variants mapped to ASCII, one character for one (same length)."""
    return text.translate(_FULLWIDTH)


# --- validators ------------------------------------------------------------------------------------
_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"


def cn_id_valid(s: str) -> bool:
    """True for an 18-character Chinese resident ID whose check digit matches (GB 11643-1999)."""
    if len(s) != 18 or not s[:17].isdigit() or not s[:17].isascii():
        return False
    total = sum(int(c) * w for c, w in zip(s[:17], _ID_WEIGHTS, strict=True))
    return _ID_CHECK[total % 11] == s[17].upper()


def _cn_birth_ok(s: str) -> bool:
    try:
        born = date(int(s[6:10]), int(s[10:12]), int(s[12:14]))
    except ValueError:
        return False
    return 1900 <= born.year <= 2100


def luhn_valid(digits: str) -> bool:
    """Luhn (mod 10) checksum of a digit string (ISO/IEC 7812)."""
    if not digits.isdigit() or not digits.isascii() or len(digits) < 2:
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


def card_bin_plausible(digits: str) -> bool:
    """True when the issuer prefix and the length fit a major card scheme (ISO/IEC 7812 IIN ranges:
    Visa 4 / 13,16,19; Mastercard 51-55, 2221-2720 / 16; Amex 34, 37 / 15; UnionPay 62 / 16-19;
    Discover 6011, 644-649, 65 / 16-19; JCB 3528-3589 / 16-19; Diners 300-305, 36, 38 / 14-19)."""
    n = len(digits)
    p2, p4 = int(digits[:2]), int(digits[:4])
    if digits[0] == "4":
        return n in (13, 16, 19)
    if 51 <= p2 <= 55 or 2221 <= p4 <= 2720:
        return n == 16
    if p2 in (34, 37):
        return n == 15
    if p2 == 62 or p4 == 6011 or p2 == 65 or 644 <= int(digits[:3]) <= 649:
        return 16 <= n <= 19
    if 3528 <= p4 <= 3589:
        return 16 <= n <= 19
    if 300 <= int(digits[:3]) <= 305 or p2 in (36, 38):
        return 14 <= n <= 19
    return False


_NINO_BAD_PREFIX = {"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"}


def nino_valid(s: str) -> bool:
    """UK National Insurance number (HMRC NIM39110): 2 letters, 6 digits, suffix A-D; spaces ignored."""
    s = s.replace(" ", "").upper()
    if not re.fullmatch(r"[A-Z]{2}\d{6}[A-D]", s):
        return False
    a, b = s[0], s[1]
    return a not in "DFIQUV" and b not in "DFIOQUV" and s[:2] not in _NINO_BAD_PREFIX


# --- patterns (over the normalised text) -------------------------------------------------------------
_B = r"(?<![0-9A-Za-z])"  # not inside a longer alphanumeric run
_E = r"(?![0-9A-Za-z])"
_RE_ID = re.compile(_B + r"(\d(?:[ -]?\d){16}[ -]?[\dXx])" + _E)
_RE_CARD = re.compile(_B + r"(\d(?:[ -]?\d){12,18})" + _E)
_RE_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
_RE_NINO = re.compile(_B + r"([A-Za-z]{2} ?\d{2} ?\d{2} ?\d{2} ?[A-Da-d])" + _E)
_RE_SSN = re.compile(_B + r"(\d{3}([ -]?)\d{2}\2\d{4})" + _E)
_RE_IBAN = re.compile(_B + r"([A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30})" + _E)
#: a password value: a run of ASCII printable characters (so a Chinese particle after it, '改成abc123了', is not
#: taken with it), else a run up to a separator
_PW_VAL = r"(?P<val>[A-Za-z0-9!@#$%^&*_+=\-.~/\\|<>\[\]{}'\"`]+|[^\s，。,;；！？、）)]+)"
_PW_WORD = r"(?:password|passwd|passcode|pwd|pin(?:\s*code)?|wi-?fi\s*key|密码|口令|pin码)"
#: what links a password word to its value: a copula or sign, or a verb of setting it to a new value
#: ('changed to', 'is now', '改成', '换成', '设为'): a changed password is as secret as a stated one
_PW_LINK = (r"(?:\s*(?:is|was|are|now|(?:been\s+)?(?:changed|reset|set|updated|switched)\s+to|=|:|：|是|为|為"
            r"|改成|改为|改為|换成|換成|设成|设为|設為|设置成|设置为|更新为|更新成|变成|變成)\s*)+")
_RE_PASSWORD = re.compile(
    _PW_WORD + r"(?P<mid>(?:\s+(?!is\b|was\b|are\b)[A-Za-z][\w'-]*){0,6}?|[^\s，。,;；:：=是为]{0,8}?)"
    r"(?P<link>" + _PW_LINK + r")" + _PW_VAL,
    re.IGNORECASE,
)
#: a verb of setting before the password word: 'changed my wifi password to X', 'set the PIN to X'
_RE_PASSWORD_SET = re.compile(
    r"\b(?:change[ds]?|changing|reset(?:s|ting)?|set(?:s|ting)?|update[ds]?|updating|switch(?:ed|es)?)\s+"
    r"(?:(?:my|the|our|his|her|their|your)\s+)?(?:[A-Za-z][\w'-]*\s+){0,3}?" + _PW_WORD
    + r"\s+(?:to|as|into)\s+" + _PW_VAL,
    re.IGNORECASE,
)
_RE_PASSWORD_BARE = re.compile(_PW_WORD + r"\s*" + _PW_VAL, re.IGNORECASE)
_TRAIL = ".!?'\"”’)]}>"

_CTX_CARD = re.compile(r"卡|card|visa|master|amex|credit|debit|unionpay|银联|信用|储蓄|借记", re.IGNORECASE)
_CTX_PHONE = re.compile(
    r"电话|手机|联系|致电|打给|拨|来电|微信|tel|phone|call|mobile|cell|fax|whatsapp|text me|reach me|contact",
    re.IGNORECASE,
)
_CTX_ORDER = re.compile(
    r"订单|单号|运单|快递|编号|流水|序列|工单|发票|票号|order|tracking|invoice|ref|ticket|serial|sku|id\b|no\.|#",
    re.IGNORECASE,
)
_CTX_SSN = re.compile(r"ssn|social security|社会安全|社保号", re.IGNORECASE)


@dataclass(frozen=True)
class Redaction:
    """Result of :func:`redact`: the cleaned text, the placeholder kinds used, in order found, and
    the values they replaced (``values[i]`` belongs to ``kinds[i]``; never stored, see
    :func:`fingerprints`)."""

    text: str
    kinds: tuple[str, ...]
    values: tuple[str, ...] = ()


@dataclass
class _Spans:
    taken: list[tuple[int, int, str]] = field(default_factory=list)

    def free(self, a: int, b: int) -> bool:
        return all(b <= s or a >= e for s, e, _ in self.taken)

    def add(self, a: int, b: int, kind: str) -> bool:
        if a >= b or not self.free(a, b):
            return False
        self.taken.append((a, b, kind))
        return True


def _before(norm: str, a: int, n: int) -> str:
    return norm[max(0, a - n) : a]


def _last(pattern: re.Pattern[str], s: str) -> int:
    """End of the last match of ``pattern`` in ``s`` (-1 when none)."""
    end = -1
    for m in pattern.finditer(s):
        end = m.end()
    return end


def _digits(s: str) -> str:
    return re.sub(r"[^0-9]", "", s)


def redact(text: str, settings: PiiSettings | None = None) -> Redaction:
    """Replace PII by ``[ID_NUMBER]``, ``[NINO]``, ``[SSN]``, ``[IBAN]``, ``[BANK_CARD]``, ``[PHONE]``,
    ``[EMAIL]``, ``[PASSWORD]`` (the password word itself is kept). ``settings`` None = every detector,
    phone regions CN/US/GB. Pure; never raises on any text."""
    cfg = settings or DEFAULT_SETTINGS
    on = set(cfg.detectors)
    norm = normalise(text)
    spans = _Spans()
    ctx = cfg.context_chars

    if "PASSWORD" in on:
        linked: set[int] = set()
        for m in _RE_PASSWORD.finditer(norm):
            a, b = m.span("val")
            b -= len(m.group("val")) - len(m.group("val").rstrip(_TRAIL))
            if len(m.group("mid")) > 2 and not re.search(r"[!-~]", m.group("val")):
                continue  # '密码改了好几次还是记不住': a clause of Chinese words after a long gap is no value
            spans.add(a, b, "PASSWORD")
            linked.add(m.start())
        for m in _RE_PASSWORD_SET.finditer(norm):
            a, b = m.span("val")
            b -= len(m.group("val")) - len(m.group("val").rstrip(_TRAIL))
            if b > a:
                spans.add(a, b, "PASSWORD")
                linked.add(m.start())
        for m in _RE_PASSWORD_BARE.finditer(norm):
            if m.start() in linked:
                continue
            v = m.group("val").rstrip(_TRAIL)
            if v and re.search(r"[\d\W_]", v) and not re.fullmatch(r"[:：=]+", v):
                a = m.start("val")
                spans.add(a, a + len(v), "PASSWORD")
    if "EMAIL" in on:
        for m in _RE_EMAIL.finditer(norm):
            spans.add(m.start(), m.end(), "EMAIL")
    if "IBAN" in on:
        for m in _RE_IBAN.finditer(norm):
            cand = m.group(1)
            # the greedy run may swallow a following word: shrink until the checksum holds
            for end in range(len(cand), 14, -1):
                piece = cand[:end].rstrip()
                if _iban.is_valid(piece):
                    spans.add(m.start(1), m.start(1) + len(piece), "IBAN")
                    break
    if "ID_NUMBER" in on:
        for m in _RE_ID.finditer(norm):
            raw = m.group(1).replace(" ", "").replace("-", "")
            if cn_id_valid(raw) and _cn_birth_ok(raw):
                spans.add(m.start(1), m.end(1), "ID_NUMBER")
    if "NINO" in on:
        for m in _RE_NINO.finditer(norm):
            if m.group(1)[:2].isupper() and nino_valid(m.group(1)):
                spans.add(m.start(1), m.end(1), "NINO")
    if "SSN" in on:
        for m in _RE_SSN.finditer(norm):
            sep = m.group(2)
            if _ssn.is_valid(_digits(m.group(1))) and (sep or _CTX_SSN.search(_before(norm, m.start(), 2 * ctx))):
                spans.add(m.start(1), m.end(1), "SSN")
    if "BANK_CARD" in on:
        for m in _RE_CARD.finditer(norm):
            digits = _digits(m.group(1))
            if not (13 <= len(digits) <= 19 and luhn_valid(digits)):
                continue
            before = _before(norm, m.start(), ctx)
            card_at, order_at = _last(_CTX_CARD, before), _last(_CTX_ORDER, before)
            if card_at > order_at or (card_at < 0 and order_at < 0 and card_bin_plausible(digits)):
                spans.add(m.start(1), m.end(1), "BANK_CARD")
    if "PHONE" in on:
        for a, b in _phone_spans(norm, cfg.phone_regions, ctx):
            spans.add(a, b, "PHONE")

    taken = sorted(spans.taken)
    kinds = tuple(k for _, _, k in taken)
    values = tuple(norm[a:b] for a, b, _ in taken)
    out: list[str] = []
    pos = 0
    for a, b, kind in taken:
        out.append(text[pos:a])
        out.append(f"[{kind}]")
        pos = b
    out.append(text[pos:])
    return Redaction("".join(out), kinds, values)


#: kinds never fingerprinted: a password's fingerprint would let anyone holding the key confirm a guess
_NO_FINGERPRINT = frozenset({"PASSWORD"})


def _canonical(kind: str, value: str, regions: Iterable[str]) -> str:
    """One spelling per value: a phone as country code + national number (``+86 153-7256-6054`` and
    ``15372566054`` agree), an e-mail lower-cased, any other id upper-cased letters and digits."""
    if kind == "PHONE":
        raw = value.strip()
        if raw.startswith("00"):
            raw = "+" + raw[2:]
        for region in (None, *regions) if raw.startswith("+") else tuple(regions):
            try:
                n = phonenumbers.parse(raw, region)
            except phonenumbers.NumberParseException:
                continue
            return f"{n.country_code}{n.national_number}"
        return _digits(raw)
    if kind == "EMAIL":
        return value.strip().lower()
    return re.sub(r"[^0-9A-Za-z]", "", value).upper()


def fingerprints(red: Redaction, key: bytes, settings: PiiSettings | None = None) -> tuple[str, ...]:
    """Search terms standing for the values ``red`` replaced, so a memory whose phone number or
    e-mail was redacted is still found by a question that names the same value, without the value
    being stored: ``pii<kind><first 16 hex digits of HMAC-SHA256(key, canonical value)>`` (keyed, so
    the term cannot be recomputed from a guessed number without the workspace's secret; RFC 2104).
    Passwords get none. ``key`` empty -> ()."""
    if not key:
        return ()
    regions = (settings or DEFAULT_SETTINGS).phone_regions
    out: dict[str, None] = {}
    for kind, value in zip(red.kinds, red.values, strict=False):
        if kind in _NO_FINGERPRINT:
            continue
        digest = hmac.new(key, _canonical(kind, value, regions).encode("utf-8"), hashlib.sha256).hexdigest()
        out[f"pii{kind.lower()}{digest[:16]}"] = None
    return tuple(out)


def _phone_spans(norm: str, regions: Iterable[str], ctx: int) -> list[tuple[int, int]]:
    """Spans of valid phone numbers (``phonenumbers`` leniency VALID) of any region written
    internationally, and of ``regions`` written nationally (see the module docstring for order ids)."""
    if not re.search(r"\d{3}", norm.replace(" ", "").replace("-", "")):
        return []  # phonenumbers' matcher is the slowest detector: skip texts without a digit run
    found: dict[tuple[int, int], None] = {}
    for region in regions or ("ZZ",):
        try:
            matcher = phonenumbers.PhoneNumberMatcher(norm, region, leniency=phonenumbers.Leniency.VALID)
            for m in matcher:
                raw = m.raw_string
                international = raw.lstrip("(").startswith(("+", "00"))
                if not international:
                    before = _before(norm, m.start, ctx)
                    if raw.isdigit() and _last(_CTX_ORDER, before) > _last(_CTX_PHONE, before):
                        continue  # "order number 13812345678": the nearer context word decides
                found[(m.start, m.end)] = None
        except Exception:  # noqa: BLE001, S112 - an odd text must not stop the write; the other detectors ran
            continue
    return list(found)


def redact_value(value: Any, settings: PiiSettings | None = None) -> tuple[Any, tuple[str, ...]]:
    """``value`` with every string inside it redacted (dict values and list items, recursively; dict keys
    are names and kept), and the kinds found. For metadata, fact values, dead letters."""
    kinds: list[str] = []

    def walk(v: Any, depth: int) -> Any:
        if isinstance(v, str):
            r = redact(v, settings)
            kinds.extend(r.kinds)
            return r.text
        if depth > 32:  # deeper nesting is kept as its text, redacted
            r = redact(str(v), settings)
            kinds.extend(r.kinds)
            return r.text
        if isinstance(v, dict):
            return {k: walk(x, depth + 1) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return type(v)(walk(x, depth + 1) for x in v)
        if isinstance(v, int) and not isinstance(v, bool) and len(str(abs(v))) >= 9:
            r = redact(str(v), settings)  # a phone or card given as a number
            if r.kinds:
                kinds.extend(r.kinds)
                return r.text
        return v

    return walk(value, 0), tuple(kinds)
