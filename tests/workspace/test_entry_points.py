"""Every entry point opens the workspace the same way (composition root, memory_engine.workspace).

Two bugs of the time before the composition root, each reproduced through the real CLI
(Typer runner, in process) and the real app (Streamlit AppTest on the Memory explorer page):

1. after ``memwb reembed`` the app and ``memwb retrieve``/``add`` kept the old shard and model
   (only the lifecycle commands read ``active_embedding.json``), so a memory forgotten by
   ``memwb lifecycle forget`` was still retrieved and listed, and a memory added by ``memwb add``
   was invisible to the lifecycle commands;
2. erasing a user on the Memory explorer page with "pseudonymise" or "keep" deleted the user's
   trace rows anyway (the engine's own erase applied the config's mode first) and the report
   then said 0 rows touched.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memory_engine.cli import load_commands

pytestmark = [pytest.mark.integration, pytest.mark.app]

APP = Path(__file__).resolve().parents[2] / "app"
EXPLORER = APP / "pages" / "6_Memory_explorer.py"
VICTIM = "alice-0xdead"


def _cli(*args: str) -> str:
    res = CliRunner().invoke(load_commands(), list(args))
    assert res.exit_code == 0, (args, res.output, res.exception)
    return res.stdout


def _add(text: str, user: str) -> str:
    return json.loads(_cli("add", text, "--user", user).strip().splitlines()[-1])["memory_id"]


def _explorer(user: str, tenant: str = "default"):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(EXPLORER), default_timeout=180).run()
    assert not at.exception, [e.value for e in at.exception]
    at.sidebar.text_input(key="ex_tenant").set_value(tenant)
    at.sidebar.text_input(key="ex_user").set_value(user).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.slow
def test_after_reembed_the_app_and_every_command_use_the_new_store(tmp_path, monkeypatch):
    ws = tmp_path / "ws"
    monkeypatch.setenv("MEMWB_HOME", str(ws))
    tea = _add("My favourite tea is oolong from Taiwan", "u1")
    rep = json.loads(_cli("reembed", "--model", "all-MiniLM-L6-v2", "--json"))
    assert rep["switched"] and rep["target_version"] == "st:all-MiniLM-L6-v2:384"
    # written after the switch: must land where every command (and the app) reads
    car = _add("I always park my car in the Harbour garage on level 3", "u1")
    out = _cli("lifecycle", "forget", "--user", "u1", "--id", car, "--dry-run", "--json")
    assert json.loads(out)["deleted"] == [car]
    assert "Harbour" in _cli("retrieve", "where do I park the car", "--user", "u1")
    # forgotten through the lifecycle command: gone for retrieve and for the app too
    out = _cli("lifecycle", "forget", "--user", "u1", "--id", tea, "--json")
    assert json.loads(out)["deleted"] == [tea]
    assert "oolong" not in _cli("retrieve", "favourite tea", "--user", "u1")

    at = _explorer("u1")
    assert any(s.value == "u1 (default): 1 memories" for s in at.subheader), [s.value for s in at.subheader]
    shown = at.dataframe[0].value
    assert list(shown["id"]) == [car]
    from memory_engine.workspace import open_workspace

    with open_workspace(active_embedding=True) as w:  # what the app opened: the switched config
        assert w.config.embedding.backend == "sentence_transformers"
        assert w.paths.qdrant == Path(rep["target"])


def _seed(ws: Path) -> dict[str, int]:
    """Two users with writes, retrievals and answers in the workspace warehouse (through the CLI);
    returns the victim's row count per derived table."""
    for uid in (VICTIM, "bob"):
        _add("I always travel to Zanzibar in July", uid)
        _add("My locker code is qwertyuiop", uid)
        assert "Zanzibar" in _cli("retrieve", "When do I go to Zanzibar?", "--user", uid)
    from memory_engine.observability.warehouse import Warehouse

    wh = Warehouse.open(ws)
    counts = {t: wh.fetchone(f"SELECT count(*) FROM {t} WHERE user_id = ?", [VICTIM])[0]
              for t in ("writes", "retrievals")}
    assert counts["writes"] == 2 and counts["retrievals"] == 1
    return counts


def _erase_on_explorer(mode: str):
    at = _explorer(VICTIM)
    assert any(s.value == f"{VICTIM} (default): 2 memories" for s in at.subheader)
    at.selectbox(key="ex_erase_mode").select(mode)
    at.text_input(key="ex_erase_confirm").set_value(VICTIM).run()
    at.button(key="ex_erase").click().run()
    assert not at.exception, [e.value for e in at.exception]
    flash = [s.value for s in at.success if s.value.startswith(f"Erased {VICTIM}")]
    assert flash, [s.value for s in at.success]
    assert any(s.value == f"{VICTIM} (default): 0 memories" for s in at.subheader)
    return flash[0]


@pytest.mark.slow
def test_explorer_erase_pseudonymises_the_trace_rows_and_counts_them(tmp_path, monkeypatch):
    from memory_engine.lifecycle.forget import pseudonym, workspace_salt
    from memory_engine.observability.warehouse import Warehouse

    ws = tmp_path / "ws"
    monkeypatch.setenv("MEMWB_HOME", str(ws))
    before = _seed(ws)
    flash = _erase_on_explorer("pseudonymise")
    n = int(re.search(r"warehouse pseudonymise (\d+) rows", flash).group(1))
    wh = Warehouse.open(ws)
    alias = pseudonym(VICTIM, "default", workspace_salt(ws))  # pseudonyms are salted per workspace
    for table, count in before.items():
        # kept for the metrics, under the pseudonym, with the user's text gone
        assert wh.fetchone(f"SELECT count(*) FROM {table} WHERE user_id = ?", [alias])[0] == count, table
        assert wh.fetchone(f"SELECT count(*) FROM {table} WHERE user_id = ?", [VICTIM])[0] == 0, table
    assert wh.fetchone("SELECT query FROM retrievals WHERE user_id = ?", [alias])[0] is None
    assert n >= sum(before.values())  # the report counts what it touched (spans included)
    assert wh.fetchone("SELECT count(*) FROM retrievals WHERE user_id = 'bob'")[0] == 1


@pytest.mark.slow
def test_explorer_erase_keep_leaves_the_trace_rows(tmp_path, monkeypatch):
    from memory_engine.observability.warehouse import Warehouse

    ws = tmp_path / "ws"
    monkeypatch.setenv("MEMWB_HOME", str(ws))
    before = _seed(ws)
    flash = _erase_on_explorer("keep")
    assert "warehouse keep 0 rows" in flash
    wh = Warehouse.open(ws)
    for table, count in before.items():
        assert wh.fetchone(f"SELECT count(*) FROM {table} WHERE user_id = ?", [VICTIM])[0] == count, table


@pytest.mark.slow
def test_health_page_scores_with_the_health_config_like_memwb_health(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    ws = tmp_path / "ws"
    monkeypatch.setenv("MEMWB_HOME", str(ws))
    monkeypatch.setenv("MEMWB_HEALTH__KEY_ATTRIBUTES", '["shipping.courier", "home.city"]')
    _cli("add", "My default courier is SF Express", "--user", "u1", "--fact", "shipping.courier=SF")
    _cli("retrieve", "which courier do I use", "--user", "u1")  # the owner is known to the warehouse
    cli = _cli("health")
    assert re.search(r"coverage\s+score 0\.50", cli), cli  # 1 of 2 key attributes
    at = AppTest.from_file(str(APP / "pages" / "7_Health.py"), default_timeout=180).run()
    assert not at.exception, [e.value for e in at.exception]
    comps = at.dataframe[0].value
    assert comps.set_index("component").loc["coverage", "score"] == pytest.approx(0.5)
    assert any(w.value.startswith("coverage: 50.0% (1/2)") for w in at.warning), [w.value for w in at.warning]
