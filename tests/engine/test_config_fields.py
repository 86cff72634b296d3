"""Every configuration field is read by the library (a field nobody reads makes a
sweep over it "have no effect"), and modes are enums."""

from __future__ import annotations

import re
from enum import Enum
from pathlib import Path

from pydantic import BaseModel

from memory_engine.config import EngineConfig, HalfLives
from memory_engine.models import MemoryType

PKG = Path(__file__).resolve().parents[2] / "memory_engine"


def _leaves(model: type[BaseModel], prefix: str = ""):
    for name, f in model.model_fields.items():
        ann = f.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            yield from _leaves(ann, f"{prefix}{name}.")
        else:
            yield f"{prefix}{name}", ann


def test_every_config_field_is_read_by_the_library():
    src = "\n".join(p.read_text(encoding="utf-8") for p in PKG.rglob("*.py") if p.name != "config.py")
    # half-lives are looked up by memory type name: getattr(retrieval.half_life_days, memory_type)
    assert set(HalfLives.model_fields) == {t.value for t in MemoryType}
    assert "getattr(rcfg.half_life_days, mtype" in src
    # planted-instruction weights are read by signal name: getattr(write.injection_weights, signal)
    from memory_engine.config import InjectionWeights
    from memory_engine.write.injection import SIGNAL_NAMES

    assert set(InjectionWeights.model_fields) == set(SIGNAL_NAMES)
    assert "getattr(weights, s" in src
    unread = [dotted for dotted, _ in _leaves(EngineConfig)
              if not dotted.startswith(("retrieval.half_life_days.", "write.injection_weights."))
              and not re.search(r"\." + re.escape(dotted.rsplit(".", 1)[-1]) + r"\b", src)
              and f'"{dotted}"' not in src]
    assert unread == []


def test_modes_are_enums():
    modes = {dotted: ann for dotted, ann in _leaves(EngineConfig)
             if dotted.endswith(("fusion", "supersede_mode", "erase_warehouse"))}
    assert len(modes) == 3
    for dotted, ann in modes.items():
        assert isinstance(ann, type) and issubclass(ann, Enum), dotted
