"""Queued grid trials are claimed once each by workers sharing one SQLite storage.

Several threads, each with its own RDBStorage (its own engine and connections, as a
worker process has), drain one queue of WAITING trials at once. optuna's own
``set_trial_state_values`` reads the state and then writes it; SQLite ignores its
``FOR UPDATE``, so two workers could both claim one trial and run one grid point twice
(seen in CI: 7 trials run for a grid of 6).
"""

from __future__ import annotations

import threading

import optuna
import pytest
from optuna.trial import TrialState

from memory_engine.evaluation.sweep_study import _claim_waiting, _pop_waiting, open_storage

QUEUED = 40
WORKERS = 4


def _queue(url: str) -> str:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(storage=open_storage(url), study_name="q")
    for i in range(QUEUED):
        study.enqueue_trial({"x": float(i)})
    return study.study_name


def _drain(url: str, name: str, claimed: list[int], barrier: threading.Barrier) -> None:
    store = open_storage(url)
    study = optuna.load_study(study_name=name, storage=store)
    barrier.wait()
    while (trial := _pop_waiting(study, store)) is not None:
        claimed.append(trial._trial_id)


@pytest.mark.parametrize("round_", range(3))
def test_every_queued_trial_is_claimed_by_exactly_one_worker(tmp_path, round_):
    url = f"sqlite:///{tmp_path / 'shared.sqlite3'}"
    name = _queue(url)
    claimed: list[int] = []
    barrier = threading.Barrier(WORKERS)
    threads = [threading.Thread(target=_drain, args=(url, name, claimed, barrier)) for _ in range(WORKERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert len(claimed) == QUEUED, f"{len(claimed) - len(set(claimed))} trial(s) claimed twice"
    assert len(set(claimed)) == QUEUED
    states = [t.state for t in optuna.load_study(study_name=name, storage=url).trials]
    assert states == [TrialState.RUNNING] * QUEUED


def test_a_claimed_or_finished_trial_is_not_claimed_again(tmp_path):
    url = f"sqlite:///{tmp_path / 'one.sqlite3'}"
    store = open_storage(url)
    study = optuna.create_study(storage=store, study_name="one")
    study.enqueue_trial({"x": 1.0})
    tid = study.trials[0]._trial_id
    assert _claim_waiting(store, tid) is True
    assert _claim_waiting(store, tid) is False
    study.tell(study.trials[0].number, 1.0)
    assert _claim_waiting(store, tid) is False
    ran = optuna.load_study(study_name="one", storage=url).trials[0]
    assert ran.state == TrialState.COMPLETE and ran.datetime_start is not None


def test_in_memory_storage_keeps_optunas_claim():
    store = open_storage(None)
    study = optuna.create_study(storage=store)
    study.enqueue_trial({"x": 1.0})
    tid = study.trials[0]._trial_id
    assert _claim_waiting(store, tid) is True and _claim_waiting(store, tid) is False
