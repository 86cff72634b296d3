"""Config: documented fields, dotted overrides, TOML round trip, stable hash."""

import pytest

from memory_engine import ConfigError, EngineConfig

pytestmark = pytest.mark.unit


def test_every_field_has_a_description():
    from pydantic import BaseModel

    missing = []

    def walk(model, prefix):
        for name, f in model.model_fields.items():
            if not f.description:
                missing.append(prefix + name)
            ann = f.annotation
            if isinstance(ann, type) and issubclass(ann, BaseModel):
                walk(ann, f"{prefix}{name}.")

    walk(EngineConfig, "")
    assert missing == []


def test_seed_defaults():
    c = EngineConfig()
    assert c.write.threshold == 0.6 and c.write.dedup_similarity == 0.92
    assert (c.retrieval.weights.similarity, c.retrieval.weights.recency, c.retrieval.weights.importance) == (0.5, 0.3, 0.2)
    w = c.retrieval.five_term_weights
    assert (w.vector, w.keyword, w.metadata, w.time, w.importance) == (0.4, 0.2, 0.1, 0.2, 0.1)
    assert c.retrieval.tau_days == 7 and c.retrieval.rrf_k == 60
    # issue 16: floor 0.25 (seed 0.45) and the hybrid fusion, chosen by sweeps on dev data
    assert c.retrieval.floor == 0.25 and c.retrieval.fusion == "hybrid"
    assert c.retrieval.half_life_days.episodic == 30 and c.retrieval.half_life_days.semantic == 90
    assert c.retrieval.half_life_days.procedural is None
    assert c.retrieval.top_k == 5 and c.retrieval.token_budget == 1500


def test_dotted_overrides_parse_and_validate():
    c = EngineConfig().with_overrides({"retrieval.floor": "0.3", "retrieval.fusion": "rrf", "memory.enabled": "false"})
    assert c.retrieval.floor == 0.3 and c.retrieval.fusion.value == "rrf" and c.memory.enabled is False
    assert c.get("retrieval.weights.recency") == 0.3
    with pytest.raises(ConfigError, match="unknown config key 'retrieval.flor'"):
        EngineConfig().with_overrides({"retrieval.flor": 1})
    with pytest.raises(ConfigError, match="retrieval.fusion"):
        EngineConfig().with_overrides({"retrieval.fusion": "max"})
    with pytest.raises(ConfigError, match="retrieval.floor"):
        EngineConfig().with_overrides({"retrieval.floor": 2})


def test_toml_round_trip_and_hash(tmp_path):
    c = EngineConfig().with_overrides({"retrieval.tau_days": 14, "write.threshold": 0.55})
    p = tmp_path / "best.toml"
    p.write_text(c.to_toml())
    back = EngineConfig.from_toml(p)
    assert back.retrieval.tau_days == 14 and back.write.threshold == 0.55
    assert back.config_hash() == c.config_hash() != EngineConfig().config_hash()
    # workspace does not change behaviour, so not the hash
    assert EngineConfig(workspace="/tmp/x").config_hash() == EngineConfig().config_hash()
    p.write_text("[retrieval]\nfloor = 'high'\n")
    with pytest.raises(ConfigError, match="best.toml"):
        EngineConfig.from_toml(p)


def test_env_prefix(monkeypatch):
    monkeypatch.setenv("MEMWB_RETRIEVAL__TOP_K", "8")
    assert EngineConfig().retrieval.top_k == 8
    assert EngineConfig.defaults().retrieval.top_k == 5
    assert EngineConfig().with_overrides({"retrieval.top_k": 3}).retrieval.top_k == 3  # explicit beats env


def test_override_lines_skip_comments_and_name_the_bad_line():
    from memory_engine.config import parse_override_lines

    assert parse_override_lines("# c\nretrieval.floor = 0.4\n\nretrieval.top_k=8") == {
        "retrieval.floor": "0.4", "retrieval.top_k": "8"}
    with pytest.raises(ConfigError, match="line 2"):
        parse_override_lines("a=1\nbroken")


def test_import_boundary():
    import subprocess
    import sys

    code = "import sys, memory_engine; from memory_engine import EngineConfig; print('streamlit' in sys.modules, 'torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False"]
