"""Optional LLM access through any OpenAI-compatible chat endpoint.

Used by the LLM fact extractor (consolidation) and the LLM summariser (working
memory); both fall back to the rule-based versions when no endpoint is set.
Configured by environment (nothing is sent anywhere unless it is set):

* ``MEMWB_LLM_BASE_URL`` (or ``OPENAI_BASE_URL``): e.g. ``http://127.0.0.1:8000/v1``
* ``MEMWB_LLM_MODEL``: model name the endpoint serves (required with the URL)
* ``MEMWB_LLM_API_KEY`` (or ``OPENAI_API_KEY``): optional bearer key
* ``MEMWB_LLM_TIMEOUT_S``: request timeout in seconds (default 30)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..errors import LLMError

__all__ = ["ChatClient", "LLMError", "OpenAICompatibleClient", "client_from_env"]



@runtime_checkable
class ChatClient(Protocol):
    """One chat completion: ``complete(system, user, json_mode)`` returns the
    assistant text. Raises :class:`LLMError` on transport or API failure."""

    model: str

    def complete(self, system: str, user: str, *, json_mode: bool = False) -> str: ...


@dataclass
class OpenAICompatibleClient:
    """:class:`ChatClient` on the ``openai`` package against ``base_url``
    (vLLM, llama.cpp server, Ollama, OpenAI...). ``temperature`` 0 for repeatable output."""

    base_url: str
    model: str
    api_key: str | None = None
    timeout_s: float = 30.0
    temperature: float = 0.0
    max_retries: int = 2

    def __post_init__(self) -> None:
        from openai import OpenAI

        self._client = OpenAI(base_url=self.base_url, api_key=self.api_key or "not-needed",
                              timeout=self.timeout_s, max_retries=self.max_retries)

    def complete(self, system: str, user: str, *, json_mode: bool = False) -> str:
        import openai

        kw: dict = {"response_format": {"type": "json_object"}} if json_mode else {}
        try:
            resp = self._client.chat.completions.create(
                model=self.model, temperature=self.temperature,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}], **kw,
            )
        except openai.OpenAIError as e:
            raise LLMError(f"LLM endpoint {self.base_url} failed: {e}") from e
        if not resp.choices or resp.choices[0].message.content is None:
            raise LLMError(f"LLM endpoint {self.base_url} returned no content")
        return resp.choices[0].message.content


def client_from_env(env: Mapping[str, str] | None = None) -> OpenAICompatibleClient | None:
    """The configured client, or None when no endpoint is set. Raises LLMError
    when a URL is set without ``MEMWB_LLM_MODEL`` or the timeout is not a number."""
    e = os.environ if env is None else env
    url = e.get("MEMWB_LLM_BASE_URL") or e.get("OPENAI_BASE_URL")
    if not url:
        return None
    model = e.get("MEMWB_LLM_MODEL")
    if not model:
        raise LLMError("MEMWB_LLM_BASE_URL is set but MEMWB_LLM_MODEL is not")
    try:
        timeout = float(e.get("MEMWB_LLM_TIMEOUT_S", "30"))
    except ValueError as err:
        raise LLMError(f"MEMWB_LLM_TIMEOUT_S must be a number, got {e.get('MEMWB_LLM_TIMEOUT_S')!r}") from err
    return OpenAICompatibleClient(base_url=url, model=model,
                                  api_key=e.get("MEMWB_LLM_API_KEY") or e.get("OPENAI_API_KEY"), timeout_s=timeout)
