"""Property tests: random shoes, wagers and decisions played through the services.

For every example: money is conserved (the ledger sums to zero, each wallet moved
by exactly its settled net, the house by the opposite of all nets and pool moves),
replaying every stream gives the projected state, and a command in a wrong phase
is refused without changing anything."""

from __future__ import annotations

import os

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casino.errors import DomainError
from games.cards.shuffle import SeededRandomSource, shuffled_deck
from games.house.models import PlayerRound
from games.house.round.state import replay_player, replay_round
from games.house.rules.registry import game
from games.house.services import make_decision, place_chip
from games.house.store import load_round, player_stream, round_stream, state_from_json
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


@pytest.mark.django_db
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    code=st.sampled_from(["uth", "casino_holdem", "xtreme"]),
    hand_mode=st.sampled_from(["shared", "per_seat"]),
    seed=st.integers(0, 2**32),
    plans=st.lists(player_plan, min_size=1, max_size=3),
)
def test_random_rounds_conserve_money_and_replay(code: str, hand_mode: str, seed: int, plans: list[dict]) -> None:
    progressives = {"reset": {"star": 5_000, "spade": 2_000}, "contribution_bp": {"star": 300, "spade": 100}}
    wheel = {"name": "w", "version": "1", "segments": [{"label": "5x", "multiple": 5, "weight": 1}]}
    table = make_table(code, hand_mode=hand_mode, progressives=progressives, wheel=wheel)
    players = [make_player(table, funds=plan["funds"]) for plan in plans]
    before = {p: wallet(p) for p in players}
    tick = open_round(table, shoe_cards=shuffled_deck(SeededRandomSource(seed)))
    spots = SIDE[code]
    for p, plan in zip(players, plans, strict=True):
        for spot, amount in (("ante", plan["ante"]), (spots[plan["side"] % len(spots)], plan["side"])):
            try:
                with transaction.atomic():
                    place_chip(table_id=table.pk, player_id=p, spot=spot, amount=amount, idempotency_key=key(),
                               now=later(tick))  # fmt: skip
            except DomainError:
                pass  # below minimum, not covered...: refused, nothing placed
    # A decision while betting is open is a wrong-phase command: refused, nothing changes.
    frozen = snapshot()
    with pytest.raises(DomainError), transaction.atomic():
        make_decision(table_id=table.pk, player_id=players[0], option="check", idempotency_key=key(), now=later(tick))
    assert snapshot() == frozen
    tick = step(table, tick)
    street = 0
    while tick.phase not in ("between", "idle"):
        # Betting is closed now: a chip is refused and changes nothing.
        frozen = snapshot()
        with pytest.raises(DomainError), transaction.atomic():
            place_chip(table_id=table.pk, player_id=players[0], spot="ante", amount=100, idempotency_key=key(),
                       now=later(tick))  # fmt: skip
        assert snapshot() == frozen
        for p, plan in zip(players, plans, strict=True):
            options = OPTIONS[code]
            option = options[plan["choices"][street % 3] % len(options)]
            if option is None:
                continue
            try:
                with transaction.atomic():
                    make_decision(table_id=table.pk, player_id=p, option=option, idempotency_key=key(),
                                  now=later(tick))  # fmt: skip
            except DomainError:
                pass
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
