"""Our engine against pokerkit on random legal hands (docs/poker.md lists
the deliberate differences the driver tolerates, by name)."""

from __future__ import annotations

from games.poker.differential import KNOWN_DIFFERENCES, run_differential


def test_random_hands_agree_with_pokerkit() -> None:
    hands = 2000
    report = run_differential(hands, seed=20261122)
    assert report.hands == hands
    # The sample really covers the rules under test.
    assert min(report.by_variant.values()) > hands // 5
    assert report.side_pots > hands // 4
    assert report.showdowns > hands // 2
    assert report.raked > hands // 4
    assert set(report.known) <= set(KNOWN_DIFFERENCES)


def test_poker_differential_command_reports_the_run() -> None:
    import json
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("poker_differential", "--hands", "60", "--seed", "3", stdout=out)
    summary = json.loads(out.getvalue().strip().splitlines()[-1])
    assert summary["hands"] == 60
    assert sum(summary["by_variant"].values()) == 60
    assert set(summary["known_differences"]) <= set(KNOWN_DIFFERENCES)
