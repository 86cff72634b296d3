"""Clean + redact, the first write stage (seed 000): trim, cap the length, and
replace PII by typed placeholders before anything is embedded or stored."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..config import WriteSection
from ..errors import ConfigError
from .pii import PiiSettings, fingerprints, redact, redact_value

__all__ = ["Cleaned", "Cleaner"]


@dataclass(frozen=True)
class Cleaned:
    """The text as it will be stored, the PII kinds replaced in it (e.g. ``("phone",)``) and the
    keyed search terms of the replaced values (:func:`memory_engine.write.pii.fingerprints`)."""

    text: str
    redactions: tuple[str, ...] = ()
    fingerprints: tuple[str, ...] = ()


class Cleaner:
    """``Cleaner(write_section, pii_settings)(text)``: strip, keep the first ``write.max_chars``
    characters, then (``write.redact_pii``) redact with the ``config.pii`` detectors; with a
    ``fingerprint_key`` the replaced values leave keyed search terms. Raises ConfigError at
    construction for ``max_chars`` < 1."""

    def __init__(self, cfg: WriteSection, pii: PiiSettings | None = None, fingerprint_key: bytes = b"") -> None:
        if cfg.max_chars < 1:
            raise ConfigError("write.max_chars must be >= 1", key="write.max_chars")
        self.max_chars = cfg.max_chars
        self.redact_pii = cfg.redact_pii
        self.pii = pii
        self.fingerprint_key = fingerprint_key

    def value(self, v: Any) -> Any:
        """Any JSON-like value (metadata, a fact value) with PII redacted in every string inside it
        (unchanged when ``write.redact_pii`` is off)."""
        return redact_value(v, self.pii)[0] if self.redact_pii else v

    def __call__(self, text: str, answers: str | None = None) -> Cleaned:
        """``answers``: the secret kind the assistant's turn before asked for (write/pii.py ``asked_secret``)."""
        clean = text.strip()[: self.max_chars]
        if not self.redact_pii:
            return Cleaned(clean)
        red = redact(clean, self.pii, answers)
        return Cleaned(red.text, tuple(red.kinds), fingerprints(red, self.fingerprint_key, self.pii))
