"""Property tests: random shoes, wagers and decisions played through the services.

For every example: money is conserved (the ledger sums to zero, each wallet moved
by exactly its settled net, the house by the opposite of all nets and pool moves),
replaying every stream gives the projected state, and a command in a wrong phase
is refused without changing anything. Each example runs on both bet paths: the
single services one command at a time, and group commit (``run_commands``: all
players' chips of the betting window in one batch, all decisions of a street in
one batch)."""

from __future__ import annotations

import os
from datetime import datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casino.errors import DomainError
from games.cards.shuffle import SeededRandomSource, shuffled_deck
from games.house.models import PlayerRound
from games.house.round.state import replay_player, replay_round
from games.house.rules.registry import game
from games.house.services.group import CommandResult, MakeDecision, PlaceChip, PlayerCommand, run_commands, run_one
from games.house.store.rows import state_from_json
from games.house.store.streams import load_round, player_stream, round_stream
from ledger.services import read_stream
from tests.db import ledger_sums
from tests.house.services.conftest import key, later, make_player, make_table, open_round, snapshot, step, wallet

EXAMPLES = int(os.environ.get("ROUNDS_PROPERTY_EXAMPLES", "12"))

SIDE = {"uth": ["best_five"], "casino_holdem": ["bonus"], "xtreme": ["player_bonus", "hole_card_bonus", "stax"]}
OPTIONS = {
    "uth": ["call4x", "call3x", "check", "call2x", "call1x", "fold", None],
    "casino_holdem": ["call", "fold", None],
    "xtreme": ["play4x", "play3x", "check", "play2x", "play1x", "fold", None],
}

player_plan = st.fixed_dictionaries(
    {
        "funds": st.sampled_from([300, 1_000, 50_000]),
        "ante": st.integers(100, 700),
        "side": st.integers(0, 300),
        "choices": st.lists(st.integers(0, 6), min_size=3, max_size=3),
    }
)


def send(path: str, table_id: int, commands: list[PlayerCommand], now: datetime) -> list[CommandResult]:
    """The commands through the single services one by one, or as one group commit."""
    if path == "single":
        return [run_one(table_id=table_id, command=c, now=now) for c in commands]
    return run_commands(table_id=table_id, commands=commands, now=now)


@pytest.mark.parametrize("path", ["single", "batched"])
@pytest.mark.django_db
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    code=st.sampled_from(["uth", "casino_holdem", "xtreme"]),
    hand_mode=st.sampled_from(["shared", "per_seat"]),
    seed=st.integers(0, 2**32),
    plans=st.lists(player_plan, min_size=1, max_size=3),
)
def test_random_rounds_conserve_money_and_replay(
    path: str, code: str, hand_mode: str, seed: int, plans: list[dict]
) -> None:
    progressives = {"reset": {"star": 5_000, "spade": 2_000}, "contribution_bp": {"star": 300, "spade": 100}}
    wheel = {"name": "w", "version": "1", "segments": [{"label": "5x", "multiple": 5, "weight": 1}]}
    table = make_table(code, hand_mode=hand_mode, progressives=progressives, wheel=wheel)
    players = [make_player(table, funds=plan["funds"]) for plan in plans]
    before = {p: wallet(p) for p in players}
    tick = open_round(table, shoe_cards=shuffled_deck(SeededRandomSource(seed)))
    spots = SIDE[code]
    # Below minimum, not covered...: refused, nothing placed (a refusal is a result here).
    chips: list[PlayerCommand] = [
        PlaceChip(p, key(), spot, amount)
        for p, plan in zip(players, plans, strict=True)
        for spot, amount in (("ante", plan["ante"]), (spots[plan["side"] % len(spots)], plan["side"]))
    ]
    send(path, table.pk, chips, later(tick))
    # A decision while betting is open is a wrong-phase command: refused, nothing changes.
    frozen = snapshot()
    wrong = send(path, table.pk, [MakeDecision(p, key(), "check") for p in players], later(tick))
    assert all(isinstance(r, DomainError) for r in wrong)
    assert snapshot() == frozen
    tick = step(table, tick)
    street = 0
    while tick.phase not in ("between", "idle"):
        # Betting is closed now: a chip is refused and changes nothing.
        frozen = snapshot()
        late = send(path, table.pk, [PlaceChip(p, key(), "ante", 100) for p in players], later(tick))
        assert all(isinstance(r, DomainError) for r in late)
        assert snapshot() == frozen
        options = OPTIONS[code]
        decisions: list[PlayerCommand] = [
            MakeDecision(p, key(), option)
            for p, plan in zip(players, plans, strict=True)
            if (option := options[plan["choices"][street % 3] % len(options)]) is not None
        ]
        send(path, table.pk, decisions, later(tick))  # refusals (not covered, not in the round) change nothing
        street += 1
        tick = step(table, tick)
    assert ledger_sums() == {"EUR": 0}
    rows = {r.player_id: r for r in PlayerRound.objects.filter(round__round_id=tick.round_id)}
    for p in players:
        net = rows[p].net if p in rows else 0
        assert wallet(p) - before[p] == net
    state = load_round(tick.round_id)
    assert replay_round(read_stream(stream_id=round_stream(tick.round_id))) == state
    for p, row in rows.items():
        assert replay_player(p, read_stream(stream_id=player_stream(tick.round_id, p))) == state_from_json(p, row.state)
        settled = [e.data for e in read_stream(stream_id=player_stream(tick.round_id, p)) if e.type.endswith("settled")]
        if row.staked:
            assert settled, "every participant with stakes is settled"
    assert game(code).code == code
