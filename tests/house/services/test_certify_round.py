"""certify_round: refused unless scripted shoes are allowed; prints the stated JSON."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings

from tests.db import ledger_sums

pytestmark = pytest.mark.django_db


def certify(*args: str) -> dict:
    out = io.StringIO()
    call_command("certify_round", *args, stdout=out)
    return json.loads(out.getvalue().strip().splitlines()[-1])


@override_settings(CASINO_ALLOW_SCRIPTED_SHOE=False)
def test_refused_without_the_setting() -> None:
    with pytest.raises(CommandError, match="CASINO_ALLOW_SCRIPTED_SHOE"):
        certify("--game", "uth", "--player", "As Kd", "--dealer", "2c 3c", "--board", "Ah 7d 9s Jc 4h",
                "--wager", "ante=100")  # fmt: skip


@override_settings(CASINO_ALLOW_SCRIPTED_SHOE=True)
def test_issue_example_uth() -> None:
    result = certify(
        "--game", "uth", "--player", "As Kd", "--dealer", "2c 3c", "--board", "Ah 7d 9s Jc 4h",
        "--wager", "ante=100", "--wager", "best_five=50", "--decision", "preflop=check", "--decision", "flop=call2x",
    )  # fmt: skip
    assert result["game_number"].startswith("CERT-UTH-S-")
    assert result["player"] == {"category": "pair", "best_five": ["As", "Ah", "Kd", "Jc", "9s"]}
    assert result["dealer"]["qualifies"] is False
    # Dealer does not qualify: Ante pushes; Ante Plus pushes (a pair); Call 2x wins 1:1; Best Five (a pair) loses.
    assert result["wagers"] == [
        {"wager": "ante", "stake": 100, "outcome": "push", "returned": 100},
        {"wager": "ante_plus", "stake": 100, "outcome": "push", "returned": 100},
        {"wager": "best_five", "stake": 50, "outcome": "lose", "returned": 0},
        {"wager": "call", "stake": 200, "outcome": "win", "returned": 400},
    ]
    assert result["net"] == 150
    assert ledger_sums() == {"EUR": 0}


@override_settings(CASINO_ALLOW_SCRIPTED_SHOE=True)
def test_missing_decisions_take_the_timeout_default_and_paytable_is_chosen() -> None:
    result = certify(
        "--game", "xtreme", "--seat", "1=Ah Kh", "--seat", "2=2c 2d", "--dealer", "3s 4s",
        "--board", "Qh Jh Th 8c 7d", "--wager", "ante=100", "--wager", "player_bonus=100",
        "--paytable", "player_bonus=2",
    )  # fmt: skip
    first = result["seats"][0]
    assert [d["option"] for d in first["decisions"]] == ["check", "check", "fold"]
    assert all(d["auto"] for d in first["decisions"])
    wagers = {w["wager"]: w for w in first["wagers"]}
    assert wagers["ante"]["outcome"] == "lose"
    assert wagers["xtra_bonus"]["outcome"] == "lose"
    assert wagers["player_bonus"]["outcome"] == "win"  # a royal flush, whatever the decisions
    assert result["net"] == sum(s["net"] for s in result["seats"])


@override_settings(CASINO_ALLOW_SCRIPTED_SHOE=True)
def test_casino_holdem_and_bad_input() -> None:
    result = certify(
        "--game", "casino_holdem", "--player", "As Ad", "--dealer", "4c 4h", "--board", "Ah 7d 9s Jc 2h",
        "--wager", "ante=101", "--wager", "bonus=50", "--decision", "flop=call",
    )  # fmt: skip
    assert {w["wager"]: w["returned"] for w in result["wagers"]} == {"ante": 202, "bonus": 400, "call": 404}
    with pytest.raises(CommandError, match="twice"):
        certify("--game", "uth", "--player", "As Kd", "--dealer", "As 3c", "--board", "Ah 7d 9s Jc 4h",
                "--wager", "ante=100")  # fmt: skip
    with pytest.raises(CommandError, match="option_not_offered"):
        certify("--game", "uth", "--player", "As Kd", "--dealer", "2c 3c", "--board", "Ah 7d 9s Jc 4h",
                "--wager", "ante=100", "--decision", "preflop=call9x")  # fmt: skip
