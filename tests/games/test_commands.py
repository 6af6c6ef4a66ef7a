"""The management commands of the cards/evaluation part: output format and refusals."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError


def run(*args: str) -> dict:
    out = StringIO()
    call_command(*args, stdout=out)
    return json.loads(out.getvalue().strip().splitlines()[-1])


def test_hand_rank_prints_category_rank_and_best_five():
    assert run("hand_rank", "As", "Ks", "Qs", "Js", "Ts", "2c", "3d") == {
        "category": "royal_flush",
        "rank": 7462,
        "best_five": ["As", "Ks", "Qs", "Js", "Ts"],
    }
    wheel = run("hand_rank", "Ah", "2d", "3c", "4s", "5h", "9c", "9d")
    assert wheel["category"] == "straight"
    assert wheel["best_five"] == ["5h", "4s", "3c", "2d", "Ah"]


@pytest.mark.parametrize(
    ("cards", "code"),
    [
        (["As", "Ks", "Qs", "Js", "Tx"], "invalid_card"),
        (["As", "Ks", "Qs", "Js", "As"], "duplicate_card"),
        (["As", "Ks"], "invalid_hand"),
    ],
)
def test_hand_rank_refuses_bad_cards_with_a_code(cards, code):
    with pytest.raises(CommandError, match=code):
        call_command("hand_rank", *cards, stdout=StringIO())


def test_enumerate_five_card_hands():
    result = run("enumerate_hands", "--cards", "5")
    assert result["total"] == result["expected_total"] == 2_598_960
    assert result["counts"]["royal_flush"] == 4
    assert result["counts"]["straight_flush"] == 36
    assert result["counts"]["high_card"] == 1_302_540
    assert result["distinct_ranks"] == 7462
    assert result["matches_published_table"] is True


def test_shuffle_stats_passes_the_fair_shuffle_and_fails_a_biased_one():
    fair = run("shuffle_stats", "--shuffles", "3000", "--seed", "11")
    assert fair["passes"] is True
    assert fair["source"] == "seeded:11"
    with pytest.raises(CommandError, match="failed"):
        call_command(
            "shuffle_stats", "--shuffles", "3000", "--seed", "11", "--shuffle", "naive_swap", stdout=StringIO()
        )
