"""Issue #24: the poker read models are projections of the log, one projector
per model (``games.poker.projectors``): the live rows are written by them,
``manage.py rebuild_projections`` rebuilds them, ``--check`` and
``verify_ledger`` name a row that differs from its rebuild, a rebuild repairs it."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import connection

from games.poker import event_types as et
from games.poker import services
from games.poker.models import PokerHand, PokerHandPlayer, PokerTable
from games.poker.projectors import PokerHandPlayerProjector, PokerHandProjector, PokerTableProjector
from ledger.services import read_stream
from ledger.services.projectors import apply_events, check_projections, rebuild
from ledger.services.verify import verify_ledger
from tests.db import rows
from tests.poker.tables import T0, advance, play_the_raked_hand
from tests.poker.test_tables import AA_VS_KK, three_handed

pytestmark = pytest.mark.django_db
POKER_TABLES = ("games_pokerhand", "games_pokerhandplayer", "games_pokertable")


def played_hand() -> tuple[PokerTable, PokerHand]:
    """A complete three-handed hand, and the next one dealt (a hand in play)."""
    table, players = three_handed()
    table = advance(table, cards=AA_VS_KK)
    hand = PokerHand.objects.get(hand_id=table.current_hand_id)
    play_the_raked_hand(table, *players)
    table = advance(table)  # the next hand: dealt, in play
    return table, hand


def check(*options: str) -> str:
    with pytest.raises(CommandError) as failure:
        call_command("rebuild_projections", "--check", *options)
    return str(failure.value)


def test_the_live_rows_equal_their_rebuild() -> None:
    played_hand()
    assert check_projections() == []
    result = rebuild(check=True)
    assert result.rows["poker_hand"] == 2
    assert result.rows["poker_hand_player"] == 6
    call_command("rebuild_projections", "--check")  # exits zero


def test_a_changed_row_is_named_by_check_and_verify_ledger(capsys: pytest.CaptureFixture[str]) -> None:
    _, hand = played_hand()
    player = PokerHandPlayer.objects.filter(hand=hand).order_by("seat_number").first()
    assert player is not None
    assert player.stack_after is not None
    with connection.cursor() as cursor:
        cursor.execute("UPDATE games_pokerhandplayer SET stack_after = 7 WHERE id = %s", [player.pk])
    assert "projections differ from their rebuild (1 differences)" in check()
    named = capsys.readouterr().err
    assert (
        f"games_pokerhandplayer [poker_hand_player] row hand__hand_id={hand.hand_id!r}, "
        f"player_id={player.player_id}: stack_after live 7, rebuilt {player.stack_after}"
    ) in named
    assert "projections differ" in check("--only", "poker_hand_player")
    call_command("rebuild_projections", "--check", "--only", "poker_hand", "--only", "money")  # not that one
    problems = verify_ledger(key=settings.CASINO_SEAL_KEY.encode())
    assert [p.check for p in problems] == ["projection"]
    assert "stack_after live 7" in problems[0].message
    assert verify_ledger(key=settings.CASINO_SEAL_KEY.encode(), projections=False) == []
    with pytest.raises(CommandError, match="1 problems"):
        call_command("verify_ledger")
    call_command("verify_ledger", "--no-projections")
    # A rebuild repairs it (and says what it repaired).
    call_command("rebuild_projections")
    assert "1 differences repaired" in capsys.readouterr().out
    rebuilt = PokerHandPlayer.objects.get(hand__hand_id=hand.hand_id, player_id=player.player_id)  # a new row
    assert rebuilt.stack_after == player.stack_after
    assert check_projections() == []


def test_a_rebuild_restores_a_lost_hand() -> None:
    table, hand = played_hand()
    live = rows(*POKER_TABLES)
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM games_pokerhandplayer WHERE hand_id = %s", [hand.pk])
        cursor.execute("DELETE FROM games_pokerhand WHERE id = %s", [hand.pk])
        cursor.execute("UPDATE games_pokertable SET hands_played = 0, button_seat = NULL WHERE id = %s", [table.pk])
    differences = {str(d) for d in check_projections()}
    assert f"games_pokerhand [poker_hand] row hand_id={hand.hand_id!r}: missing (the log has it)" in differences
    assert f"games_pokertable [poker_table] row id={table.pk}: hands_played live 0, rebuilt 2" in differences
    assert len(differences) == 1 + 3 + 2  # the hand, its three players, the table's two columns
    repaired = rebuild(check=False)
    assert len(repaired.differences) == 6
    assert check_projections() == []
    restored = PokerHand.objects.get(hand_id=hand.hand_id)
    assert (restored.status, restored.rake, restored.hand_number) == ("complete", 5, 1)
    assert sorted(restored.participants.values_list("seat_number", "stack_before", "stack_after")) == [
        (1, 1000, 910), (2, 1000, 970), (3, 1000, 1115),
    ]  # fmt: skip
    # Row for row as before but the ids (the hand's and its players' are new) and the seat links (kept live).
    current = PokerHand.objects.get(hand_id=table.current_hand_id)
    assert PokerHandPlayer.objects.filter(hand=current).exclude(seat=None).count() == 3
    assert rows("games_pokertable") == {"games_pokertable": live["games_pokertable"]}
    # Play goes on on the rebuilt rows.
    assert current.actor_seat is not None
    actor = current.participants.get(seat_number=current.actor_seat).player_id
    services.act(table_id=table.pk, player_id=actor, action="fold", idempotency_key="after-rebuild", now=T0)


def test_applying_an_event_again_changes_nothing() -> None:
    table, hand = played_hand()
    before = rows(*POKER_TABLES)
    for hand_id in (hand.hand_id, table.current_hand_id):
        events = read_stream(stream_id=et.hand_stream(hand_id))
        for _ in range(2):
            apply_events(events)  # the registered projectors, fresh
            for event in events:  # one by one, each projector afresh
                for projector in (PokerHandProjector(), PokerHandPlayerProjector(), PokerTableProjector()):
                    if projector.wants(event):
                        projector.apply_many([event])
    assert rows(*POKER_TABLES) == before
    assert check_projections() == []


def test_unknown_projection_is_refused() -> None:
    with pytest.raises(CommandError, match="no such projection: nope"):
        call_command("rebuild_projections", "--check", "--only", "nope")
