"""The fault simulator (``manage.py simulate_faults``, docs/simulation.md): seeds
of both families run clean with faults injected, a run is reproducible from its
seed, a planted bug is caught, named, minimised and replayed, and production
settings refuse it. Runs on whichever database the suite runs on (PostgreSQL
with DATABASE_URL, else SQLite); one house seed and one poker seed also run in
a SQLite subprocess."""

from __future__ import annotations

import io
import json
import os
import pathlib
import subprocess
import sys
from datetime import timedelta

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings

from casino.checks import check_production_settings
from games.simulation.core import START, TIMINGS, SimulationRefused, Simulator
from games.simulation.families import FAMILIES
from games.simulation.poker import PokerFamily

STEPS = 100
ROOT = pathlib.Path(__file__).resolve().parents[2]


def run(family: str, seed: int, namespace: str, steps: int = STEPS, **options: object) -> Simulator:
    sim = Simulator(FAMILIES[family](), seed=seed, steps=steps, namespace=namespace, **options)  # type: ignore[arg-type]
    sim.run()
    return sim


def command(*args: str) -> tuple[int, list[str]]:
    """``simulate_faults --in-place`` with ``args``: its exit code and output lines."""
    out = io.StringIO()
    try:
        call_command("simulate_faults", "--in-place", *args, stdout=out)
        code = 0
    except SystemExit as exited:
        code = int(exited.code or 0)
    return code, out.getvalue().strip().splitlines()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("family", "seed"), [("house", 1), ("poker", 2), ("all", 3)])
def test_a_seed_runs_clean_with_faults_injected(family: str, seed: int) -> None:
    sim = run(family, seed, f"s{seed}", steps=120)
    report = sim.report
    assert report.violations == [], "\n".join(report.lines)
    assert report.faults_injected > 0
    if family in ("house", "all"):
        assert report.rounds > 0
    if family in ("poker", "all"):
        assert report.hands > 0
    trace = "\n".join(sim.trace)
    assert "-> ok" in trace
    assert "refused" in trace
    if family == "house":
        for what in (": bet ", ": decide ", ": join", ": leave", "advance h"):
            assert what in trace, what


@pytest.mark.django_db(transaction=True)
def test_every_fault_kind_is_injected_and_recovered_from() -> None:
    sim = run("all", 12, "f", steps=100, fault_rate=0.5)
    trace = "\n".join(sim.trace)
    assert sim.report.violations == [], "\n".join(sim.report.lines)
    for kind in ("exception, retried", "lost_connection, retried", "interrupted_batch, retried", "dropped",
                 "redelivered"):  # fmt: skip
        assert kind in trace, kind


@pytest.mark.django_db(transaction=True)
def test_the_same_seed_and_steps_give_the_same_json_apart_from_timings() -> None:
    first, second = run("all", 5, "a", 60).report.summary(), run("all", 5, "b", 60).report.summary()
    for name in TIMINGS:
        first.pop(name), second.pop(name)
    assert first == second
    assert run("all", 6, "c", 60).report.trace_digest != first["trace_digest"]


@pytest.mark.django_db(transaction=True)
def test_a_step_draws_the_same_whichever_steps_ran_before_it() -> None:
    """Removing steps leaves the others' choices intact: each step's generators
    depend on the seed and its number only."""
    whole, part = Simulator(PokerFamily(), seed=9, steps=10), Simulator(PokerFamily(), seed=9, steps=10)
    whole.begin_step(3)
    whole.rng.random()
    whole.begin_step(7)
    part.begin_step(7)
    assert [whole.rng.random() for _ in range(5)] == [part.rng.random() for _ in range(5)]
    assert whole.deck_rng.randbelow(52) == part.deck_rng.randbelow(52)


def test_the_overdue_bound_counts_from_the_deadline_or_the_end_of_an_outage() -> None:
    """A table is overdue beyond the bound (``CASINO_DEALER_GONE_VOID_SECONDS`` and
    12 sweeps) only that long after its deadline and after the dealer came back
    from an outage: the outage itself is the next sweeps' to void."""
    sim = Simulator(PokerFamily(), seed=1, steps=1)
    bound = timedelta(seconds=settings.CASINO_DEALER_GONE_VOID_SECONDS + 12 * sim.sweep_every)
    sim.now = START + timedelta(hours=1)
    assert sim.overdue_cutoff() == sim.now - bound
    sim.dealer_back = sim.now - bound + timedelta(seconds=1)
    assert sim.overdue_cutoff() is None
    sim.dealer_back = sim.now - bound - timedelta(seconds=1)
    assert sim.overdue_cutoff() == sim.now - bound


@pytest.mark.django_db(transaction=True)
def test_a_planted_bug_is_caught_minimised_and_its_subset_replays_it() -> None:
    code, lines = command("--family", "poker", "--seed", "3", "--steps", "80", "--plant", "corrupt_balance",
                          "--plant-step", "40")  # fmt: skip
    assert code == 1
    assert lines[0] == "VIOLATION seed=3 step=40 invariant=money_sums_to_zero"
    header = next(line for line in lines if line.startswith("minimised trace ("))
    kept, total = (int(word) for word in header.removeprefix("minimised trace (").split()[0:4:3])
    assert kept < total == 40
    replay = next(line for line in lines if line.startswith("replay: "))
    subset = replay.split("--only-steps ")[1].split()[0]
    assert len(subset.split(",")) == kept
    assert subset.endswith(",40")  # the planted step is part of it
    assert any("planted" in line for line in lines)
    summary = json.loads(lines[-1])
    assert "money_sums_to_zero" in summary["invariants_violated"]

    code, again = command("--family", "poker", "--seed", "3", "--steps", "80", "--plant", "corrupt_balance",
                          "--plant-step", "40", "--only-steps", subset, "--minimize-seconds", "0")  # fmt: skip
    assert code == 1
    assert again[0] == "VIOLATION seed=3 step=40 invariant=money_sums_to_zero"


@pytest.mark.django_db(transaction=True)
def test_a_hold_released_outside_its_round_is_named_hold_resolved_once() -> None:
    """A house bet's hold voided by SQL while its wager is in play: the round's
    holds no longer match its wagers (``check_round_holds``)."""
    code, lines = command("--family", "house", "--seed", "4", "--steps", "80", "--plant", "release_hold",
                          "--plant-step", "25")  # fmt: skip
    assert code == 1
    assert lines[0] == "VIOLATION seed=4 step=25 invariant=hold_resolved_once"
    assert any("has no pending hold" in line for line in lines)
    replay = next(line for line in lines if line.startswith("replay: "))
    subset = replay.split("--only-steps ")[1].split()[0].split(",")
    assert subset[-1] == "25"
    assert 2 <= len(subset) < 25  # a bet, then the plant
    assert json.loads(lines[-1])["invariants_violated"] == ["hold_resolved_once"]


@pytest.mark.django_db(transaction=True)
def test_the_command_prints_json_last() -> None:
    code, lines = command("--seed", "4", "--steps", "40", "--namespace", "j")
    summary = json.loads(lines[-1])
    assert code == 0
    assert {"seed", "steps", "rounds", "hands", "faults_injected", "violations"} <= set(summary)
    assert (summary["seed"], summary["steps"], summary["family"], summary["violations"]) == (4, 40, "all", 0)


def test_production_settings_refuse_the_simulator() -> None:
    with override_settings(PRODUCTION=True), pytest.raises(SimulationRefused):
        Simulator(PokerFamily(), seed=1, steps=1).run()
    with override_settings(CASINO_ALLOW_SIMULATOR=False), pytest.raises(CommandError):
        call_command("simulate_faults", "--seed", "1", "--steps", "1", "--in-place")


def test_check_deploy_refuses_the_simulator() -> None:
    with override_settings(CASINO_ALLOW_SIMULATOR=True):
        assert "casino.E008" in {e.id for e in check_production_settings()}
    with override_settings(CASINO_ALLOW_SIMULATOR=False):
        assert "casino.E008" not in {e.id for e in check_production_settings()}


def test_a_house_seed_and_a_poker_seed_run_clean_on_sqlite_too(tmp_path: pathlib.Path) -> None:
    """The issue asks for seeds over both databases in CI: whichever the suite
    runs on, a house seed and a poker seed also run in a subprocess on a
    scratch SQLite file (migrated once)."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env["DATABASE_URL"] = f"sqlite:///{tmp_path}/sim.sqlite3"
    env["CASINO_VAR_DIR"] = str(tmp_path)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True, timeout=300)
    for family, seed in (("house", 5), ("poker", 5)):
        done = subprocess.run(
            [sys.executable, "manage.py", "simulate_faults", "--family", family, "--seed", str(seed), "--steps",
             "120", "--in-place", "--namespace", family[0]],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        summary = json.loads(done.stdout.strip().splitlines()[-1])
        assert (summary["family"], summary["violations"], summary["steps"]) == (family, 0, 120)
        assert summary["rounds" if family == "house" else "hands"] > 0
