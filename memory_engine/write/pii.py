"""PII detection and redaction (seed 000/004: redact before anything is stored).

Each detector validates what it can, so ordinary numbers survive:

* ``ID_NUMBER`` - Chinese resident ID: ISO 7064 MOD 11-2 check digit and a real birth date (GB 11643-1999); after an
  id word (身份证, 证件号, ID card) a real birth date is enough (a typo in the check digit is still the user's id);
  and after the name of a common national or tax id (SIN, Aadhaar, CPF, DNI, PESEL, BSN, TFN, 'national id', 'id
  number', 身份证号 ...) any value of ``national_id_min_digits`` digits or more, at most 20 letters and digits;
* ``NINO`` - UK National Insurance number: HMRC's prefix rules (no D F I Q U V, second letter not O, none of
  BG GB KN NK NT TN ZZ), six digits, suffix A-D; after its name ('NINO', 'national insurance') any prefix;
* ``SSN`` - US Social Security number: ``python-stdnum`` rules (no area 000/666/9xx, group 00, serial 0000,
  nor the numbers known to be invalid); nine bare digits need an SSN word nearby, after which any number of the
  shape is taken (a published sample or a typo is as private);
* ``IBAN`` - ISO 13616 mod-97 check digits and the country's length (``python-stdnum``); after an account word
  (IBAN, bank account, 账号) a value of IBAN shape, 15-34 characters, whatever its check digits;
* ``BANK_CARD`` - Luhn (ISO/IEC 7812) **and** either a card word nearby or a plausible issuer prefix (BIN) and
  length without an order/reference word before it: about 10% of random 13-19 digit order numbers pass Luhn; after
  a card number's name (卡号, 'card number', 'credit card') any 13-19 digits (a typo is still the card);
* ``BANK_ACCOUNT`` - ``national_id_min_digits`` or more digits after a bank account's name (checking / savings /
  bank account, account number, routing number, sort code, 银行账号), the nearer context word no order word;
* ``PHONE`` - any region through Google's ``phonenumbers`` (``is_valid_number``): international numbers
  (``+44 ...``, ``0086 ...``) of every region; national numbers of ``phone_regions``, except a bare digit run
  right after an order/reference word with no phone word (an 11-digit order id starting 13-19 is not a phone) and,
  after a record word nearer than any phone word, a run grouped as the region writes no phone number ("Lowe's item
  5013-421-987");
  and, with ``phone_context_any_region``, a national number of any other region when a phone word is the
  nearer context word before it ('我妈在慕尼黑，电话是 089 1234567': valid in DE, whose region no setting names);
* ``EMAIL``, also spelled out ('john dot harper at gmail dot com', 'jo[at]example[dot]org') at a mail provider or
  after an e-mail word; ``PASSWORD`` - the token after a password word and a linker ("password is: X", "the wifi password
  for the office is X", 密码是X, a new value: "changed my password to X", "password is now X", 密码改成X), or right after the word when the token looks like a secret (has a digit or a
  symbol); a value is the whole run of ASCII characters it is typed in, so a closing ``!``, ``#`` or ``*``
  is part of it ('Sunshine2024!', '4471#'); a closing ``.`` ``,`` ``?`` ``;`` ``:``, quotes and brackets are
  the sentence's. A linked value needs an ASCII character, is not an English function word or a word
  describing the password, nor a number shorter than ``code_min_digits`` (``密码是什么``, ``the password is in
  the drawer``, ``is expired``, ``密码是6位数`` name no value); a value right after the word without a linker
  is an ASCII run with a digit or symbol (``密码错了3次`` is a count). A password word is a whole word ('pin'
  in 'happiness' or 'pinimg.com' is none); ``pw`` needs a linker;
* ``ACCESS_CODE`` - the value after a code word (door / gate / locker / alarm / unlock / security / 2FA
  recovery or backup codes, 门禁, 解锁码, 开锁码, 恢复码, 备用码) with at least ``code_min_digits`` digits, and
  the further values of a list ('codes are 8f3a1-b92c4 and 77d0e-a1f53', '备用码：4F7K-9QX2、M8PL-3RT6');
* ``API_KEY`` - keys and tokens in the formats of ``detect-secrets`` (Yelp; its regex plugins named by
  ``secret_plugins``: AWS, GitHub, GitLab, Slack, Stripe, JWT, private keys, a password inside a URL ...),
  formats it lacks by their documented prefixes (``sk-`` keys of OpenAI / Anthropic / DeepSeek, Google
  ``AIza``, Alibaba Cloud ``LTAI``, Hugging Face ``hf_``, GitHub ``github_pat_``), a whole PEM / OpenSSH
  private key block, and a token-like value (``key_min_chars`` or more, letters and digits) after a key word
  (API key, token, secret, AccessKey, Bearer, 密钥, 令牌);
* ``PASSPORT`` - a passport number (``passport_min_chars`` to 9 letters and digits, ICAO Doc 9303's
  document-number field) after passport / 护照.

A user's turn that answers the assistant's request for one of these ('What's the alarm code?' ->
"it's 7391, ...") has its leading value redacted as that kind (:func:`asked_secret`, ``answers=`` of
:func:`redact`; the write pipeline looks up the turn before).

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
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date
from functools import cache, partial
from typing import Any

import phonenumbers
from stdnum import iban as _iban
from stdnum.us import ssn as _ssn

from ..errors import ConfigError

DETECTORS = ("API_KEY", "PASSWORD", "ACCESS_CODE", "PASSPORT", "EMAIL", "IBAN", "ID_NUMBER", "NINO", "SSN",
             "BANK_CARD", "BANK_ACCOUNT", "PHONE")
"""Every detector, in the order they claim text (an earlier one wins an overlap)."""

SECRET_PLUGINS = ("AWSKeyDetector", "AzureStorageKeyDetector", "BasicAuthDetector", "DiscordBotTokenDetector",
                  "GitHubTokenDetector", "GitLabTokenDetector", "JwtTokenDetector", "MailchimpDetector", "NpmDetector",
                  "OpenAIDetector", "PrivateKeyDetector", "PypiTokenDetector", "SendGridDetector", "SlackDetector",
                  "SquareOAuthDetector", "StripeDetector", "TelegramBotTokenDetector", "TwilioKeyDetector")
"""detect-secrets' format plugins used by ``API_KEY`` (not its keyword, entropy, IP or Artifactory plugins:
they are written for source files, and Artifactory's ``AP[0-9A-F]...`` takes ordinary codes such as
'APAC2026Q3' in prose)."""


@dataclass(frozen=True)
class PiiSettings:
    """What :func:`redact` looks for: ``detectors`` (subset of :data:`DETECTORS`), ``phone_regions`` (ISO
    3166 codes whose national numbers are recognised; international ``+``/``00`` numbers of every region
    always are), ``context_chars`` (how far before a number a context word counts), ``secret_plugins``
    (detect-secrets regex plugin class names of ``API_KEY``), ``key_min_chars`` / ``code_min_digits`` /
    ``passport_min_chars`` / ``national_id_min_digits`` (the least a value after a key / code / passport / national
    id word must have); see
    ``config.pii`` for each field's range and reason."""

    detectors: tuple[str, ...] = DETECTORS
    phone_regions: tuple[str, ...] = ("CN", "US", "GB")
    context_chars: int = 16
    secret_plugins: tuple[str, ...] = SECRET_PLUGINS
    key_min_chars: int = 8
    code_min_digits: int = 3
    passport_min_chars: int = 6
    national_id_min_digits: int = 6
    phone_context_any_region: bool = True
    phone_context_min_digits: int = 7

    @classmethod
    def from_config(cls, section: object | None) -> PiiSettings:
        """From a config section with ``detectors``/``phone_regions``/``context_chars`` (``None`` = defaults)."""
        if section is None:
            return DEFAULT_SETTINGS
        return cls(
            detectors=tuple(d.upper() for d in getattr(section, "detectors", DETECTORS)),
            phone_regions=tuple(r.upper() for r in getattr(section, "phone_regions", ("CN", "US", "GB"))),
            context_chars=int(getattr(section, "context_chars", 16)),
            secret_plugins=tuple(getattr(section, "secret_plugins", SECRET_PLUGINS)),
            key_min_chars=int(getattr(section, "key_min_chars", 8)),
            code_min_digits=int(getattr(section, "code_min_digits", 3)),
            passport_min_chars=int(getattr(section, "passport_min_chars", 6)),
            national_id_min_digits=int(getattr(section, "national_id_min_digits", 6)),
            phone_context_any_region=bool(getattr(section, "phone_context_any_region", True)),
            phone_context_min_digits=int(getattr(section, "phone_context_min_digits", 7)),
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
#: an address spelled out against scrapers ('john dot harper at gmail dot com', 'jo[at]example[dot]org',
#: 'li.lei (at) 163 (dot) com'): words joined by 'dot' / '.', an 'at' / '@', a domain and a 'dot' before a TLD
_SPOKEN_DOT = r"\s*(?:\.|\bdot\b|\[dot\]|\(dot\))\s*"
_RE_EMAIL_SPOKEN = re.compile(
    r"(?<![A-Za-z0-9])([A-Za-z0-9_%+-]+(?:" + _SPOKEN_DOT + r"[A-Za-z0-9_%+-]+)*\s*(?:@|\bat\b|\[at\]|\(at\))\s*"
    r"(?P<domain>[A-Za-z0-9-]+)(?:" + _SPOKEN_DOT + r"[A-Za-z0-9-]+)*?" + _SPOKEN_DOT +
    r"(?:com|net|org|edu|gov|io|co|me|info|cn|uk|de|fr|jp|ca|au|in)\b)", re.IGNORECASE)
#: the mail providers whose name after 'at' is an address without an e-mail word before it
_MAIL_PROVIDERS = frozenset({"gmail", "googlemail", "outlook", "hotmail", "live", "yahoo", "icloud", "me", "aol",
                             "proton", "protonmail", "gmx", "qq", "163", "126", "sina", "foxmail", "yandex", "mail"})
_CTX_EMAIL = re.compile(r"e-?mail|mail me|邮箱|邮件|电邮|address", re.IGNORECASE)
_RE_NINO = re.compile(_B + r"([A-Za-z]{2} ?\d{2} ?\d{2} ?\d{2} ?[A-Da-d])" + _E)
_RE_SSN = re.compile(_B + r"(\d{3}([ -]?)\d{2}\2\d{4})" + _E)
_RE_IBAN = re.compile(_B + r"([A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30})" + _E)
#: a password value: a run of ASCII printable characters (so a Chinese particle after it, '改成abc123了', is not
#: taken with it), else a run up to a separator
_ASCII_VAL = r"[A-Za-z0-9!@#$%^&*_+=\-.~/\\|<>\[\]{}'\"`]+"
_PW_VAL = r"(?P<val>" + _ASCII_VAL + r"|[^\s，。,;；！？、）)]+)"
_PW_WORD = r"(?:passwords?|passwd|passcodes?|pwd|pw|pins?(?:\s*code)?|wi-?fi\s*key|密码|口令|pin码)"
#: 'pw' counts only with a linker ('pw is X', 'pw: X'): bare it is also a model name ('Kindle PW5')
_PW_WORD_BARE = _PW_WORD.replace("|pw|", "|")
#: what links a password word to its value: a copula or sign, or a verb of setting it to a new value
#: ('changed to', 'is now', '改成', '换成', '设为'): a changed password is as secret as a stated one
_PW_LINK = (r"(?:\s*(?:is|was|are|now|(?:been\s+)?(?:changed|reset|set|updated|switched)\s+to|=|:|：|是|为|為"
            r"|改成|改为|改為|换成|換成|设成|设为|設為|设置成|设置为|更新为|更新成|变成|變成)\s*)+")
_MID = r"(?P<mid>(?:\s+(?!is\b|was\b|are\b)[A-Za-z][\w'-]*){0,6}?|[^\s，。,;；:：=是为]{0,8}?)"


#: an English word starts after a non-letter ('pw' is not the end of 'upw'); a Chinese one anywhere ('wifi密码')
_WORD_START = r"(?:(?<![A-Za-z])(?=[A-Za-z])|(?![A-Za-z]))"
#: ... and ends before a letter or '_' ('passwordless', 'secretary', 'pw_hint' are other words; 'DB_PASSWORD=' is one)
_WORD_END = r"(?:(?<=[A-Za-z])(?![A-Za-z_])|(?<![A-Za-z]))"


def _linked(word: str, val: str = _PW_VAL) -> re.Pattern[str]:
    """``word``, up to six English words or eight other characters, a linker (:data:`_PW_LINK`), the value."""
    return re.compile(_WORD_START + word + _WORD_END + _MID + r"(?P<link>" + _PW_LINK + r")" + val, re.IGNORECASE)


def _bare(word: str, val: str = _PW_VAL, gap: str = r"\s*") -> re.Pattern[str]:
    """``word`` and the value right after it (no linker)."""
    return re.compile(_WORD_START + word + _WORD_END + gap + val, re.IGNORECASE)


_RE_PASSWORD = _linked(_PW_WORD)
#: a verb of setting before the password word: 'changed my wifi password to X', 'set the PIN to X'
_RE_PASSWORD_SET = re.compile(
    r"\b(?:change[ds]?|changing|reset(?:s|ting)?|set(?:s|ting)?|update[ds]?|updating|switch(?:ed|es)?)\s+"
    r"(?:(?:my|the|our|his|her|their|your)\s+)?(?:[A-Za-z][\w'-]*\s+){0,3}?" + _PW_WORD
    + r"\s+(?:to|as|into)\s+" + _PW_VAL,
    re.IGNORECASE,
)
#: a bare value is typed in ASCII: a Chinese clause right after the word ('密码错了3次', '密码忘了') is no value
_RE_PASSWORD_BARE = _bare(_PW_WORD_BARE, r"(?P<val>" + _ASCII_VAL + r")")
#: closing characters that belong to the sentence, not the value ('hunter2.', "'abc123'", '(pin: 1234)');
#: '!', '#', '*' stay in it: 'Sunshine2024!', '4471#', '1925*'
_TRAIL = ".,;:?'\"”’)]}>"
_LEAD = "'\"“‘([{<"
#: English closed-class words (articles, pronouns, prepositions, auxiliaries, wh-words): after a linker they
#: begin a clause ('the password is in the drawer', 'is the same as before', 'is what?'), not a value
_FUNCTION_WORDS = frozenset(
    "a an the my your our his her their its this that these those it i you he she we they me him us them "
    "in on at under inside behind by for from with without of to into onto near next above below over "
    "is are was were be been being am do does did has have had will would can could should shall may might must "
    "not no never still also just same what which where when why how who whom whose here there "
    "and or but so if as than then because".split()
)
#: what a password is said to be rather than what it is ('my password is wrong / too short'); so do the -ed / -ing
#: forms ('is expired', 'is saved', 'is working') and the irregular participles listed here ('written', 'hidden')
_STATE_WORDS = frozenset(
    "wrong right correct incorrect invalid valid weak strong short long new old different empty blank "
    "required optional mandatory case-sensitive secure insecure unsafe safe fine ok okay written hidden "
    "forgotten taken known unknown lost gone too very really".split()
)

_CODE_WORD = (
    r"(?:(?:door|gate|entry|entrance|garage|alarm|locker|lock|safe|unlock|lock\s*screen|lockbox|key\s*box|keypad|"
    r"building|access|security|combination|backup|recovery|2fa|two[\s-]factor|verification)"
    # the device between the place and 'code': 'garage opener code', 'gate keypad code', 'front door remote code'
    r"(?:\s+(?:door|opener|remote|keypad|panel|box|lock))?\s*codes?|"
    r"combination|combo|解锁码|开锁码|锁屏码|门禁(?:码|卡)?|恢复码|备用码|备份码|救援码|安全码)"
)
_KEY_WORD = (
    r"(?:api[\s_-]?keys?|apikey|access[\s_-]?keys?(?:[\s_-]?(?:id|secret))?|secret(?:[\s_-]?(?:access[\s_-]?)?key)?|"
    r"client[\s_-]?secret|(?:auth|access|api|bot|bearer|refresh|personal\s+access)?[\s_-]?tokens?|bearer|keys?|"
    r"密钥|秘钥|令牌)"
)
_PASSPORT_WORD = r"(?:passport(?:\s*(?:no\.?|number|num|#))?|护照(?:号码|号)?)"
#: the name of a national or tax id (a closed list of the common ones: Canada SIN, India Aadhaar, Brazil CPF, Spain
#: DNI / NIE, Poland PESEL, Netherlands BSN, Sweden personnummer, Italy codice fiscale, Australia TFN, generic
#: 'national id' / 'id number' / 'tax id', zh 身份证 / 身分证 / 证件号): before a value shaped like an id it makes the
#: value the user's id whether or not its check digit holds (a typo is still theirs)
_NATIONAL_ID_WORD = re.compile(
    r"(?<![A-Za-z])(?:social insurance (?:number|no)|sin|aadhaa?r|cpf|dni|nie|pesel|bsn|personnummer|codice fiscale|"
    r"tfn|tax file number|(?:national|citizen|identity|personal) (?:id|identification|identity)|"
    r"id (?:number|no)|identity number|tax (?:id|identification))(?![A-Za-z])|"
    r"身份证|身分证|证件号|身份号码|个人编号", re.IGNORECASE)
#: an id value: digit groups split by a space, hyphen or dot, with at most two letters before and one after
#: ('046 454 286', '2345 6789 0123', '123.456.789-09', '12345678Z', 'X1234567L'); letters after a space end it
_RE_NATIONAL_ID = re.compile(r"(?<![A-Za-z0-9])([A-Za-z]{0,2}\d+(?:[ .-]\d+)*[A-Za-z]?)(?![A-Za-z0-9])")
#: the name of a bank account number (not a card): after one, a run of ``national_id_min_digits`` or more digits
#: is the account ('checking account 004512983377, routing 021000021', '银行账号 6214...')
_BANK_ACCOUNT_WORD = re.compile(
    r"(?<![A-Za-z])(?:checking|savings|current|bank) account|account (?:number|no)|acct(?: no)?|routing(?: number)?|"
    r"sort code|aba(?: number)?(?![A-Za-z])|银行账号|银行账户|开户账号|对公账号|收款账号", re.IGNORECASE)
_RE_ACCOUNT_VALUE = re.compile(r"(?<![A-Za-z0-9])(\d(?:[ -]?\d){5,33})(?![A-Za-z0-9])")
_RE_CODE = _linked(_CODE_WORD, r"(?P<val>" + _ASCII_VAL + r")")
_RE_CODE_BARE = _bare(_CODE_WORD, r"(?P<val>" + _ASCII_VAL + r")")
_RE_KEY = _linked(_KEY_WORD, r"(?P<val>" + _ASCII_VAL + r")")
_RE_KEY_BARE = _bare(_KEY_WORD, r"(?P<val>" + _ASCII_VAL + r")", gap=r"\s+")
_RE_PASSPORT = _linked(_PASSPORT_WORD, r"(?P<val>[A-Za-z0-9]+)(?![A-Za-z0-9])")
_RE_PASSPORT_BARE = _bare(_PASSPORT_WORD, r"(?P<val>[A-Za-z0-9]+)(?![A-Za-z0-9])")
#: what joins the values of a list ('8f3a1-b92c4 and 77d0e-a1f53', '4F7K-9QX2、M8PL-3RT6')
_RE_MORE = re.compile(r"\s*(?:[,、，/;；&+]|\band\b|\bor\b|和|及|与|或)\s*(" + _ASCII_VAL + r")", re.IGNORECASE)
#: key formats detect-secrets 1.5 lacks, by their vendors' documented prefixes: 'sk-' (OpenAI incl. sk-proj-,
#: Anthropic sk-ant-, DeepSeek), Google 'AIza' + 35, Alibaba Cloud AccessKey id 'LTAI', Hugging Face 'hf_',
#: GitHub fine-grained 'github_pat_'
_RE_KEY_FORMAT = re.compile(
    _B + r"(?:sk-(?:proj-|ant-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}|AIza[0-9A-Za-z_-]{35}|LTAI[A-Za-z0-9]{12,30}"
    r"|hf_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})" + _E
)
#: a PEM / OpenSSH / PGP private key: the header line to its END line, or to the last base64 line after it
_RE_KEY_END = re.compile(r"-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----")
_RE_B64_LINE = re.compile(r"\n[ \t]*[A-Za-z0-9+/=]+(?=\n|$)")
#: the assistant asks for something (a question, or 'tell me' / 'send me' / 请提供 / 告诉我 / 发我)
_RE_ASKS = re.compile(
    r"[?？]|\b(?:what|which|tell me|send me|give me|share|provide|enter|type)\b|多少|什么|请提供|告诉我|发我|发给我|输入",
    re.IGNORECASE,
)
#: how an answer starts before its value: "it's 7391", "sure, it is X", '是 X', '密码是X'
_RE_ANSWER = re.compile(
    r"^\W*(?:(?:it'?s|it\s+is|that'?s|sure|ok(?:ay)?|yes|yeah|yep|here(?:'s|\s+it\s+is|\s+you\s+go)?|the\s+\w+\s+is"
    r"|是|就是|好的?|嗯|哦)[\s,，:：!！.。]*)*(?P<val>" + _ASCII_VAL + r")",
    re.IGNORECASE,
)

_CTX_CARD = re.compile(r"卡|card|visa|master|amex|credit|debit|unionpay|银联|信用|储蓄|借记", re.IGNORECASE)
_CTX_PHONE = re.compile(
    r"电话|手机|座机|联系|致电|打给|拨|来电|微信|tel|phone|call|mobile|cell|fax|whatsapp|text me|reach|contact|"
    r"landline|\bsim\b|\bhandy\b",
    re.IGNORECASE,
)
_CTX_ORDER = re.compile(
    r"订单|单号|运单|快递|编号|流水|序列|工单|发票|票号|型号|货号|order|model|tracking|invoice|ref|ticket|serial|sku|"
    r"\bitem\b|id\b|no\.|#",
    re.IGNORECASE,
)
_CTX_ID = re.compile(r"身份证|身分证|证件号|id card|identity card|national id|resident id", re.IGNORECASE)
#: the names of a payment card's number: after one a 13-19 digit run is the card even when Luhn fails (a typo)
_CTX_CARD_NUMBER = re.compile(r"卡号|银行卡|信用卡|储蓄卡|借记卡|card (?:number|no)|credit card|debit card", re.IGNORECASE)
_CTX_SSN = re.compile(r"ssn|social security|\bsocial\b(?! (?:insurance|media|worker|club|life))|社会安全|社保号",
                      re.IGNORECASE)
#: the records whose 'id number' is no national id: orders, bookings, tickets, cases, staff, students, members
_NOT_NATIONAL = re.compile(r"order|tracking|invoice|ticket|booking|reservation|confirmation|case|policy|reference|"
                           r"\bref\b|employee|staff|student|member|customer|account|订单|快递|单号|工号|学号|会员",
                           re.IGNORECASE)
_CTX_NINO = re.compile(r"\bnino\b|national insurance|\bni (?:number|no)\b|国民保险", re.IGNORECASE)
_CTX_IBAN = re.compile(r"\biban\b|bank account|account (?:number|no)|银行账号|银行账户|账号", re.IGNORECASE)


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


def _trimmed(m: re.Match[str], group: str = "val") -> tuple[int, int]:
    """The span of ``group`` without the sentence's opening / closing characters (:data:`_LEAD`, :data:`_TRAIL`)."""
    a, b = m.span(group)
    v = m.group(group)
    return a + len(v) - len(v.lstrip(_LEAD)), b - (len(v) - len(v.rstrip(_TRAIL)))


def _linked_value(v: str, min_digits: int) -> bool:
    """A value after a linker: typed in ASCII (a Chinese run, '密码是什么', '密码为什么错了', names none), not an
    English function word ('the password is in the drawer') nor a lower-case word describing the password
    ('is expired', 'is wrong', 'is saved'), and not a number shorter than ``min_digits`` ('密码是6位数', 'PIN is
    4 digits': a length, not a PIN)."""
    if not re.search(r"[!-~]", v) or (v.isdigit() and len(v) < min_digits):
        return False
    w = v.lower()
    if w in _FUNCTION_WORDS:
        return False
    return not (v.isalpha() and v.islower() and (w in _STATE_WORDS or w.endswith(("ed", "ing"))))


def _key_like(v: str, n: int) -> bool:
    """A key or token: at least ``n`` characters with a letter and a digit (words after 'key' have none)."""
    return len(v) >= n and bool(re.search(r"[A-Za-z]", v)) and bool(re.search(r"\d", v))


def _code_like(v: str, n: int) -> bool:
    """An access code: at least ``n`` digits ('4471#', '8f3a1-b92c4'; 'code of conduct', '2 beeps' have fewer)."""
    return sum(c.isdigit() for c in v) >= n


def _id_like(v: str, n: int) -> bool:
    """A labelled national id: ``n`` or more digits and at most 20 letters and digits (separators not counted)."""
    alnum = re.sub(r"[^A-Za-z0-9]", "", v)
    return sum(ch.isdigit() for ch in alnum) >= n and len(alnum) <= 20


def _passport_like(v: str, n: int) -> bool:
    """A passport number: ``n`` to 9 letters and digits with a digit (ICAO Doc 9303 document number field)."""
    return n <= len(v) <= 9 and any(c.isdigit() for c in v)


_VALUE_OK: dict[str, Callable[[str, PiiSettings], bool]] = {
    "PASSWORD": lambda v, c: bool(re.search(r"[\d\W_]", v)),
    "ACCESS_CODE": lambda v, c: _code_like(v, c.code_min_digits),
    "API_KEY": lambda v, c: _key_like(v, c.key_min_chars),
    "PASSPORT": lambda v, c: _passport_like(v, c.passport_min_chars),
}
"""What a value must look like to be redacted as the kind the assistant asked for (a password needs a digit
or a symbol, as one right after the word does)."""


def _valued(norm: str, pattern: re.Pattern[str], ok: Callable[[str], bool], more: bool = True) -> list[tuple[int, int]]:
    """Spans of the values ``pattern`` finds that pass ``ok``, each followed (``more``) by the further values
    of its list that pass ``ok`` too ('codes are A and B', '备用码：A、B')."""
    out: list[tuple[int, int]] = []
    for m in pattern.finditer(norm):
        a, b = _trimmed(m)
        if a >= b or not ok(norm[a:b]):
            continue
        out.append((a, b))
        while more:
            nxt = _RE_MORE.match(norm, b)
            if nxt is None:
                break
            a2, b2 = _trimmed(nxt, 1)  # type: ignore[arg-type]
            if a2 >= b2 or not ok(norm[a2:b2]):
                break
            out.append((a2, b2))
            b = b2
    return out


@cache
def load_secret_plugins(names: tuple[str, ...]) -> tuple[Any, ...]:
    """detect-secrets plugin instances by class name (imported once: the package takes ~1 s to import).
    Raises ConfigError naming an unknown plugin."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    mapping: dict[Any, Any] = get_mapping_from_secret_type_to_class()
    by_name: dict[str, Any] = {plugin.__name__: plugin for plugin in mapping.values()}
    bad = [n for n in names if n not in by_name]
    if bad:
        raise ConfigError(f"unknown detect-secrets plugin(s) {bad}; valid: {', '.join(sorted(by_name))}",
                          key="pii.secret_plugins")
    return tuple(by_name[n]() for n in names)


def _secret_spans(norm: str, names: tuple[str, ...]) -> list[tuple[int, int]]:
    """Spans of the keys and tokens the detect-secrets plugins ``names`` recognise. A regex with a group marks
    the secret in it (the password of ``://user:pw@``); a match is extended over the token characters after
    it (JWT's pattern stops before the signature); a private key header takes the whole block."""
    if not names or not re.search(r"[A-Za-z0-9]{6}", norm):
        return []
    out: list[tuple[int, int]] = []
    for plugin in load_secret_plugins(names):
        name = type(plugin).__name__
        for regex in plugin.denylist:
            for m in regex.finditer(norm):
                if name == "PrivateKeyDetector":
                    out.append(_key_block(norm, m))
                    continue
                g = next((i for i in range(1, (m.lastindex or 0) + 1) if m.group(i)), 0)
                a, b = m.span(g)
                tail = re.match(r"[A-Za-z0-9_\-+/=.]*" if name == "JwtTokenDetector" else r"[A-Za-z0-9_\-+/=]*", norm[b:])
                b += tail.end() if tail else 0
                a += len(norm[a:b]) - len(norm[a:b].lstrip(" \t\"'=:"))
                b -= len(norm[a:b]) - len(norm[a:b].rstrip(" \t\"'.:"))
                if name == "JwtTokenDetector" and not plugin.is_formally_valid(norm[a:b]):
                    continue
                if a < b:
                    out.append((a, b))
    return out


def _key_block(norm: str, m: re.Match[str]) -> tuple[int, int]:
    """A private key from its '-----BEGIN' to its END line, or (cut off) over the base64 lines after it."""
    a = m.start()
    while a > 0 and norm[a - 1] == "-":
        a -= 1
    end = _RE_KEY_END.search(norm, m.end())
    if end is not None:
        return a, end.end()
    nl = norm.find("\n", m.end())
    b = len(norm) if nl < 0 else nl
    while (line := _RE_B64_LINE.match(norm, b)) is not None:
        b = line.end()
    return a, b


#: the kinds an assistant can ask for, by their words (checked in this order: '门禁密码' asks for a code)
_ASKED = (("ACCESS_CODE", re.compile(_CODE_WORD, re.IGNORECASE)), ("API_KEY", re.compile(
    r"(?<![A-Za-z])(?:api[\s_-]?key|access[\s_-]?key|secret|tokens?|密钥|秘钥|令牌)(?![A-Za-z])", re.IGNORECASE)),
    ("PASSPORT", re.compile(_PASSPORT_WORD, re.IGNORECASE)),
    ("PASSWORD", re.compile(r"(?<![A-Za-z])" + _PW_WORD + r"(?![A-Za-z])", re.IGNORECASE)))


def asked_secret(question: str) -> str | None:
    """The kind of secret an assistant's turn asks for ('What's the alarm code?' -> ``ACCESS_CODE``,
    '请问管理员密码是多少？' -> ``PASSWORD``), None when it asks for none or asks nothing. Pure."""
    q = normalise(question or "")
    if not _RE_ASKS.search(q):
        return None
    for kind, words in _ASKED:
        if words.search(q):
            return kind
    return None


def leads_with_value(text: str) -> bool:
    """Whether ``text`` starts like an answer with a value ("it's 7391", 'Tp@Link2580，...'): the cheap test
    the write pipeline makes before it looks up the turn before."""
    norm = normalise(text or "")
    m = _RE_ANSWER.match(norm)
    if m is None:
        return False
    a, b = _trimmed(m)
    return a < b and _VALUE_OK["PASSWORD"](norm[a:b], DEFAULT_SETTINGS)  # the least any kind's value needs


def redact(text: str, settings: PiiSettings | None = None, answers: str | None = None) -> Redaction:
    """Replace PII by ``[API_KEY]``, ``[PASSWORD]``, ``[ACCESS_CODE]``, ``[PASSPORT]``, ``[ID_NUMBER]``,
    ``[NINO]``, ``[SSN]``, ``[IBAN]``, ``[BANK_CARD]``, ``[PHONE]``, ``[EMAIL]`` (the word before a value is
    kept). ``answers``: the kind the turn before asked for (:func:`asked_secret`); the value ``text`` starts
    with ("it's 7391, ...") is redacted as that kind. ``settings`` None = every detector, phone regions
    CN/US/GB. Pure; never raises on any text."""
    cfg = settings or DEFAULT_SETTINGS
    on = set(cfg.detectors)
    norm = normalise(text)
    spans = _Spans()
    ctx = cfg.context_chars

    if "API_KEY" in on:
        for a, b in _secret_spans(norm, cfg.secret_plugins):
            spans.add(a, b, "API_KEY")
        for m in _RE_KEY_FORMAT.finditer(norm):
            spans.add(m.start(), m.end(), "API_KEY")
        key_ok = partial(_key_like, n=cfg.key_min_chars)
        for pattern in (_RE_KEY, _RE_KEY_BARE):
            for a, b in _valued(norm, pattern, key_ok):
                spans.add(a, b, "API_KEY")
    if "PASSWORD" in on:
        linked: set[int] = set()
        for pattern in (_RE_PASSWORD, _RE_PASSWORD_SET):
            for m in pattern.finditer(norm):
                a, b = _trimmed(m)
                if a < b and _linked_value(norm[a:b], cfg.code_min_digits):
                    spans.add(a, b, "PASSWORD")
                    linked.add(m.start())
        for m in _RE_PASSWORD_BARE.finditer(norm):
            a, b = _trimmed(m)
            if m.start() not in linked and a < b and re.search(r"[\d\W_]", norm[a:b]) and not re.fullmatch(r"[:=]+", norm[a:b]):
                spans.add(a, b, "PASSWORD")
    if "ACCESS_CODE" in on:
        code_ok = partial(_code_like, n=cfg.code_min_digits)
        for pattern in (_RE_CODE, _RE_CODE_BARE):
            for a, b in _valued(norm, pattern, code_ok):
                spans.add(a, b, "ACCESS_CODE")
    if "PASSPORT" in on:
        passport_ok = partial(_passport_like, n=cfg.passport_min_chars)
        for pattern in (_RE_PASSPORT, _RE_PASSPORT_BARE):
            for a, b in _valued(norm, pattern, passport_ok, more=False):
                spans.add(a, b, "PASSPORT")
    if answers is not None and answers in on:
        lead = _RE_ANSWER.match(norm)
        if lead is not None:
            a, b = _trimmed(lead)
            if a < b and _VALUE_OK[answers](norm[a:b], cfg):
                spans.add(a, b, answers)
    if "EMAIL" in on:
        for m in _RE_EMAIL.finditer(norm):
            spans.add(m.start(), m.end(), "EMAIL")
        for m in _RE_EMAIL_SPOKEN.finditer(norm):
            if "@" in m.group(1) or m.group("domain").lower() in _MAIL_PROVIDERS \
                    or _CTX_EMAIL.search(_before(norm, m.start(), 2 * ctx)):
                spans.add(m.start(1), m.end(1), "EMAIL")
    if "IBAN" in on:
        for m in _RE_IBAN.finditer(norm):
            cand = m.group(1)
            # the greedy run may swallow a following word: shrink until the checksum holds
            for end in range(len(cand), 14, -1):
                piece = cand[:end].rstrip()
                if _iban.is_valid(piece):
                    spans.add(m.start(1), m.start(1) + len(piece), "IBAN")
                    break
            else:
                piece = cand.rstrip()
                # after an account word a value of IBAN shape is the user's account whatever its check digits
                if 15 <= len(piece.replace(" ", "")) <= 34 and _CTX_IBAN.search(_before(norm, m.start(), 2 * ctx)):
                    spans.add(m.start(1), m.start(1) + len(piece), "IBAN")
    if "ID_NUMBER" in on:
        for m in _RE_ID.finditer(norm):
            raw = m.group(1).replace(" ", "").replace("-", "")
            if _cn_birth_ok(raw) and (cn_id_valid(raw) or _CTX_ID.search(_before(norm, m.start(), ctx))):
                # an id word before it is the evidence a wrong check digit (the user's typo) does not take away
                spans.add(m.start(1), m.end(1), "ID_NUMBER")
        for m in _RE_NATIONAL_ID.finditer(norm):
            # the id's name within twice the context before it ("my SIN again, it's 046 454 286"), the nearest
            # name no record's ('the order id number is 12345678', 'student id number 2023...')
            before = _before(norm, m.start(), 2 * ctx)
            label = next(reversed(list(_NATIONAL_ID_WORD.finditer(before))), None)  # the nearest name
            if label is None or not _id_like(m.group(1), cfg.national_id_min_digits) \
                    or _last(_BANK_ACCOUNT_WORD, before) > label.end():
                continue
            # a record word right before the name makes it the record's ('order id number', 'student id number');
            # another value's name or a value between the name and this run means the name had its own value
            # ('身份证110101…，卡号4111 …': the card number is no id)
            gap = before[label.end():]
            if not _NOT_NATIONAL.search(before[max(0, label.start() - ctx): label.start()]) \
                    and not re.search(rf"\d{{{cfg.national_id_min_digits}}}", re.sub(r"[ .-]", "", gap)) \
                    and not (_CTX_CARD.search(gap) or _CTX_PHONE.search(gap) or _CTX_ORDER.search(gap)):
                spans.add(m.start(1), m.end(1), "ID_NUMBER")
    if "NINO" in on:
        for m in _RE_NINO.finditer(norm):
            labelled = _CTX_NINO.search(_before(norm, m.start(), 2 * ctx)) is not None
            if m.group(1)[:2].isupper() and (nino_valid(m.group(1)) or labelled):
                # after its name an invalid prefix (the HMRC sample 'QQ 12 34 56 C', a typo) is still the number
                spans.add(m.start(1), m.end(1), "NINO")
    if "SSN" in on:
        for m in _RE_SSN.finditer(norm):
            sep = m.group(2)
            labelled = _CTX_SSN.search(_before(norm, m.start(), 2 * ctx)) is not None
            if labelled or (_ssn.is_valid(_digits(m.group(1))) and sep):
                # after an SSN word the number is the user's whatever stdnum says (219-09-9999, 078-05-1120 are
                # published samples stdnum rejects; a real number with a typo is as private)
                spans.add(m.start(1), m.end(1), "SSN")
    if "BANK_CARD" in on:
        for m in _RE_CARD.finditer(norm):
            digits = _digits(m.group(1))
            before = _before(norm, m.start(), ctx)
            if not 13 <= len(digits) <= 19:
                continue
            if not luhn_valid(digits):
                if _last(_CTX_CARD_NUMBER, before) > _last(_CTX_ORDER, before):
                    spans.add(m.start(1), m.end(1), "BANK_CARD")  # '卡号6225 8801 2345 6789' with a typo is the card
                continue
            card_at, order_at = _last(_CTX_CARD, before), _last(_CTX_ORDER, before)
            if card_at > order_at or (card_at < 0 and order_at < 0 and card_bin_plausible(digits)):
                spans.add(m.start(1), m.end(1), "BANK_CARD")
    if "BANK_ACCOUNT" in on:
        for m in _RE_ACCOUNT_VALUE.finditer(norm):
            before = _before(norm, m.start(), 2 * ctx)
            at = _last(_BANK_ACCOUNT_WORD, before)
            if len(_digits(m.group(1))) >= cfg.national_id_min_digits and at > _last(_CTX_ORDER, before) \
                    and not (_CTX_PHONE.search(before[at:]) or _CTX_CARD_NUMBER.search(before[at:])):
                spans.add(m.start(1), m.end(1), "BANK_ACCOUNT")  # the nearer name is no phone's or card's
    if "PHONE" in on:
        phones = _phone_spans(norm, cfg.phone_regions, ctx)
        if cfg.phone_context_any_region:
            # twice the context: a phone word often comes before whom and where ('reach my mum in Munich at ...')
            phones += _context_phone_spans(norm, phones, 2 * ctx, cfg.phone_context_min_digits)
        for a, b in phones:
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


#: kinds never fingerprinted: a secret's fingerprint would let anyone holding the key confirm a guess (a 4-digit
#: code in 10,000 tries)
_NO_FINGERPRINT = frozenset({"PASSWORD", "API_KEY", "ACCESS_CODE"})


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
                    # after a record word nearer than any phone word: "order number 13812345678" (a bare run) and
                    # "Lowe's item 5013-421-987" (grouped as no phone number of the region is) are no phones
                    if _last(_CTX_ORDER, before) > _last(_CTX_PHONE, before) and (
                            raw.isdigit() or not _phone_grouping(raw, m.number)):
                        continue
                found[(m.start, m.end)] = None
        except Exception:  # noqa: BLE001, S112 - an odd text must not stop the write; the other detectors ran
            continue
    return list(found)


def _phone_grouping(raw: str, number: Any) -> bool:
    """Whether the digit groups of ``raw`` (split at spaces, hyphens, dots, brackets) are the region's national
    grouping of ``number`` (``phonenumbers`` NATIONAL format) or a coarsening of it (adjacent groups written
    together: '010-12345678' of '010 1234 5678'); a bare run has one group and always is."""
    groups = [len(g) for g in re.split(r"\D+", raw) if g]
    if len(groups) <= 1:
        return True
    formatted = [len(g) for g in re.split(r"\D+", phonenumbers.format_number(
        number, phonenumbers.PhoneNumberFormat.NATIONAL)) if g]
    i, acc = 0, 0
    for g in groups:
        while acc < g and i < len(formatted):
            acc += formatted[i]
            i += 1
        if acc != g:
            return False
        acc = 0
    return i == len(formatted)


#: a digit run as people write phone numbers: digits with spaces, hyphens, dots or brackets between them
_RE_DIGIT_RUN = re.compile(r"(?<![\w+])\(?\d[\d\s\-.()]*\d(?![\w])")
#: a run that starts as a calendar date (year, month, day)
_RE_DATE_START = re.compile(r"\(?(?:19|20)\d\d[-./]\d{1,2}[-./]\d{1,2}")


def _context_phone_spans(norm: str, taken: list[tuple[int, int]], ctx: int, min_digits: int
                         ) -> list[tuple[int, int]]:
    """Spans of national numbers of any region (``phonenumbers`` ``is_valid_number`` for some region of
    ``phonenumbers.SUPPORTED_REGIONS``) that a phone word introduces: the nearer context word within ``ctx``
    (:func:`redact` passes twice ``context_chars``)
    characters before the run is a phone word (``_CTX_PHONE``), not an order/reference word, and the run has at
    least ``min_digits`` digits. ``taken`` (spans already found) are skipped. Why: a user abroad gives a local
    number without its country code, and the configured regions cannot list every country; the phone word is
    the evidence a digit run alone is not."""
    out: list[tuple[int, int]] = []
    for m in _RE_DIGIT_RUN.finditer(norm):
        a, b = m.start(), m.end()
        raw = m.group(0).strip(" .-")
        if (len(_digits(raw)) < min_digits or any(a < tb and ta < b for ta, tb in taken)
                or _RE_DATE_START.match(raw) or norm[b:b + 1] in (":", "：")):
            continue  # a date ('2026-06-10 10:30') or a clock time is no number to call
        before = _before(norm, a, ctx)
        if _last(_CTX_PHONE, before) < 0 or _last(_CTX_ORDER, before) > _last(_CTX_PHONE, before):
            continue
        if _valid_somewhere(raw):
            out.append((a, a + len(m.group(0).rstrip(" .-"))))
    return out


@cache
def _valid_somewhere(raw: str) -> bool:
    """Whether ``raw`` is a valid national number of at least one region phonenumbers knows."""
    for region in sorted(phonenumbers.SUPPORTED_REGIONS):
        try:
            if phonenumbers.is_valid_number(phonenumbers.parse(raw, region)):
                return True
        except phonenumbers.NumberParseException:
            continue
    return False


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
