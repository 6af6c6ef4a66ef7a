"""Our engine against pokerkit on random legal hands (docs/poker.md lists
the deliberate differences the driver tolerates, by name), on scripted short
all-in hands, and on hands pokerkit plays by itself replayed from PHH."""

from __future__ import annotations

import pytest

from games.poker.engine.rules import Reopening
from games.poker.tooling.differential import (
    KNOWN_DIFFERENCES,
    SCRIPTED_HANDS,
    Scripted,
    play_scripted,
    run_differential,
    run_pokerkit_replay,
)


def test_random_hands_agree_with_pokerkit() -> None:
    hands = 2000
    report = run_differential(hands, seed=20261122)
    assert report.hands == hands
    # The sample really covers the rules under test.
    assert min(report.by_variant.values()) > hands // 5
    assert report.side_pots > hands // 4
    assert report.showdowns > hands // 2
    assert report.raked > hands // 4
    assert hands // 3 < report.pokerkit_rules < 2 * hands // 3  # pokerkit's rules: no difference tolerated
    assert set(report.known) <= set(KNOWN_DIFFERENCES)
    assert "split_of_merged_pots" not in KNOWN_DIFFERENCES  # every hand settled by pokerkit's split matches it
    # Table-rules hands split each pot on its own; an odd chip elsewhere is rare.
    assert report.per_pot_odd_chips <= hands // 50


def test_every_hand_pokerkit_plays_replays_from_phh_to_its_stacks() -> None:
    """Issue #23: pokerkit's default definitions (``FixedLimitTexasHoldem``:
    four bet/raise actions a street), random stacks so short all-ins happen;
    ``replay_phh`` with the PHH defaults (pokerkit's cap, reopening rule and
    split of tied pots) must accept every hand and end on pokerkit's
    finishing stacks exactly (the driver raises on any difference)."""
    hands = 200
    report = run_pokerkit_replay(hands, seed=23)
    assert report.played == {"NT": hands, "FT": hands}
    assert report.exact == {"NT": hands, "FT": hands}
    # The sample holds hands our table default cap would have stopped.
    assert report.raises_over_table_cap > hands // 10


@pytest.mark.parametrize(
    ("script", "reopening"),
    [(s, r) for s in SCRIPTED_HANDS for r in s.rules if s.pokerkit_agrees],
    ids=[f"{r.value}: {s.name}" for s in SCRIPTED_HANDS for r in s.rules if s.pokerkit_agrees],
)
def test_short_all_in_hands_agree_with_pokerkit(script: Scripted, reopening: Reopening) -> None:
    play_scripted(script, reopening)  # raises on any disagreement with pokerkit


def test_poker_differential_command_reports_the_run() -> None:
    import json
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("poker_differential", "--hands", "60", "--seed", "3", "--pokerkit-played", "20", stdout=out)
    summary = json.loads(out.getvalue().strip().splitlines()[-1])
    assert summary["hands"] == 60
    assert sum(summary["by_variant"].values()) == 60
    assert set(summary["known_differences"]) <= set(KNOWN_DIFFERENCES)
    replayed = summary["pokerkit_played"]
    assert replayed["played"] == {"NT": 20, "FT": 20}
    assert replayed["exact"] == {"NT": 20, "FT": 20}
    assert "odd_chip" not in replayed
    assert summary["per_pot_odd_chips"] >= 0
