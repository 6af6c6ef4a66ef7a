"""``PlayerState``'s folds over its chips (``totals``, ``staked``, ``chip_rows``)
are kept per state and carried over a chip placed by ``apply_player``: whatever
was computed before, each answers what the same fold over the chips answers
from scratch (a state rebuilt from its fields), after chips placed, removed,
declined and decided."""

from __future__ import annotations

import json

from games.house.round.events import BET_PLACED, BET_REMOVED, DECISION_MADE, PLAYER_DECLINED, Event
from games.house.round.state import Chip, PlayerState, apply_player
from games.house.store.rows import state_text, state_to_json


def _fresh(state: PlayerState) -> PlayerState:
    """The same state, built anew: nothing computed yet."""
    return PlayerState(
        state.player_id, state.chips, state.doubled, state.decisions, state.call_amount, state.call_hold_id,
        state.folded, state.settled, state.voided, state.returned, state.version, state.declined,
    )  # fmt: skip


def _check(state: PlayerState) -> None:
    fresh = _fresh(state)
    assert state == fresh
    assert state.totals() == fresh.totals()
    assert state.staked == fresh.staked
    assert (
        state.chip_rows()
        == fresh.chip_rows()
        == [[c.spot, c.amount, c.hold_id, dict(c.automatic)] for c in state.chips]
    )


def _placed(spot: str, amount: int, hold: str, automatic: dict[str, int] | None = None) -> Event:
    return Event(BET_PLACED, {"spot": spot, "amount": amount, "hold_id": hold, "held": amount,
                              "automatic": automatic or {}}, 7)  # fmt: skip


_CALL = {"street": "preflop", "option": "call4x", "auto": False, "folds": False, "amount": 400, "hold_id": "h5"}


def test_memos_follow_every_change_of_the_chips() -> None:
    state = PlayerState(7)
    steps = [
        _placed("ante", 100, "h1", {"ante_plus": 100}),
        _placed("best_five", 50, "h2"),
        _placed("ante", 25, "h3", {"ante_plus": 25}),
        Event(BET_REMOVED, {"hold_ids": ["h3"]}, 7),
        _placed("ante", 10, "h4", {"ante_plus": 10}),
        Event(DECISION_MADE, _CALL, 7),
    ]
    for computed_before in (True, False):
        state = PlayerState(7)
        for event in steps:
            if computed_before:  # the memos exist before the event: carried over or forgotten
                state.totals(), state.staked, state.chip_rows()
            state = apply_player(state, event)
            _check(state)
    assert state.totals() == {"ante": 110, "ante_plus": 110, "best_five": 50}
    assert state.staked == 100 + 100 + 50 + 10 + 10 + 400
    declined = apply_player(state, Event(PLAYER_DECLINED, {}, 7))
    _check(declined)
    assert declined.totals() == {}
    assert declined.staked == 400


def test_answers_are_the_callers_to_change() -> None:
    state = PlayerState(7, chips=(Chip("ante", 100, "h1", {"ante_plus": 100}),))
    state.totals()["ante"] = 1
    state.chip_rows().append(["x", 1, "h", {}])
    assert state.totals() == {"ante": 100, "ante_plus": 100}
    assert len(state.chip_rows()) == 1


def test_state_text_is_the_stored_document() -> None:
    """``state_text`` (the batch's written form) is ``state_to_json``'s JSON
    value, whether the chips' text was kept from earlier states or not."""
    state = PlayerState(7)
    for i, event in enumerate([_placed("ante", 100, "h1", {"ante_plus": 100}), _placed("best_five", 5, "h2"),
                               Event(BET_REMOVED, {"hold_ids": ["h1"]}, 7), _placed("ante", 10, "h3")]):  # fmt: skip
        if i % 2:
            state.chip_texts()
        state = apply_player(state, event)
        assert json.loads(state_text(state)) == state_to_json(state)
        assert json.loads(state_text(_fresh(state))) == state_to_json(state)
