"""RULES.md, "Malfunction voids all pays and play", at the poker tables: an
operator may pause the hand in play at any time; a paused hand is either
resumed or voided. While paused no clock runs and nobody may act. Voiding
returns every chip each player put into the hand and pays nothing (no pot
awarded, no rake); the reason is recorded and players are told."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from io import StringIO
from typing import Any

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError

from games.poker import event_types as et
from games.poker import services
from games.poker.models import PokerHand, PokerHandPlayer, PokerSeat, PokerTable
from games.poker.realtime import presenters
from games.poker.realtime.consumers import deltas
from games.poker.services import hands
from ledger.models import Transfer
from ledger.services import balance_of, read_stream
from ledger.services.verify import verify_ledger
from tests.db import ledger_sums
from tests.poker.tables import T0, act, advance, key, make_table, refused, seat_balance, snapshot, wallet
from tests.poker.test_tables import AA_VS_KK, three_handed

pytestmark = pytest.mark.django_db

OPERATOR = "operator:7"
BUY_IN = 1000


def pause(table: PokerTable, reason: Any = "card reader fault", *, at: datetime = T0) -> services.HandControlResult:
    return services.pause_hand(table_id=table.pk, actor=OPERATOR, reason=reason, now=at)


def resume(table: PokerTable, *, at: datetime = T0) -> services.HandControlResult:
    return services.resume_hand(table_id=table.pk, actor=OPERATOR, now=at)


def void(table: PokerTable, reason: Any = "card reader fault", *, at: datetime = T0) -> services.HandControlResult:
    return services.void_hand(table_id=table.pk, actor=OPERATOR, reason=reason, now=at)


def hand_events(hand_id: str, kind: str) -> list:
    return [e for e in read_stream(stream_id=et.hand_stream(hand_id)) if e.type == kind]


def pot_balance(hand_id: str) -> int:
    return balance_of(account_id=services.pot_account(hand_id=hand_id, currency="EUR"))


def rake_balance(table: PokerTable) -> int:
    return balance_of(account_id=services.rake_account(table_id=table.pk, currency="EUR"))


def test_pause_stops_the_clock_and_every_action_resume_continues_and_the_hand_finishes() -> None:
    table, (p1, p2, p3) = three_handed()
    table = advance(table, cards=AA_VS_KK)
    hand_id = table.current_hand_id
    act(table, p1, "raise", 30)  # turn timer of seat 2: T0 + 5 s
    table.refresh_from_db()
    seq_before = table.phase_seq

    paused = pause(table, "shuffler jammed", at=T0 + timedelta(seconds=2))
    table.refresh_from_db()
    assert (paused.phase, paused.status, table.phase, table.deadline) == ("paused", "playing", "paused", None)
    assert table.phase_seq == seq_before + 1  # queued dealer tasks go stale
    [event] = hand_events(hand_id, et.PAUSED)
    assert event.data["reason"] == "shuffler jammed"
    assert event.data["actor"] == OPERATOR
    assert (event.data["seat"], event.data["remaining_ms"]) == (2, 3000)
    assert event.metadata["actor"] == OPERATOR

    # Nothing moves while paused: no dealer step (even long after), no action, no sweep.
    later = T0 + timedelta(hours=1)
    before = snapshot()
    for seq in (seq_before, table.phase_seq):
        assert services.advance_table(table_id=table.pk, expected_seq=seq, now=later) is None
    assert services.sweep(now=later)["advanced"] == 0
    assert snapshot() == before
    refused("poker_hand_paused", lambda: act(table, p2, "call"))
    refused("poker_hand_paused", lambda: act(table, p3, "fold"))
    refused("poker_hand_paused", lambda: pause(table))
    # A player still in the hand may not leave with the chips in play.
    refused("poker_in_hand", lambda: services.stand_up(table_id=table.pk, player_id=p2, idempotency_key=key(),
                                                        now=T0))  # fmt: skip

    resumed = resume(table, at=later)
    table.refresh_from_db()
    assert (resumed.phase, table.phase) == ("hand", "hand")
    assert table.deadline == later + timedelta(seconds=3)  # the 3 s seat 2 had left
    [event] = hand_events(hand_id, et.RESUMED)
    assert (event.data["actor"], event.data["seat"]) == (OPERATOR, 2)
    refused("poker_hand_not_paused", lambda: resume(table))

    # Play on: seat 2's restarted clock runs out (a fold), seat 3 folds, seat 1 wins.
    table = advance(table)
    assert [e.data["seat"] for e in hand_events(hand_id, et.TIMED_OUT)] == [2]
    act(table, p3, "fold", at=later)
    hand = PokerHand.objects.get(hand_id=hand_id)
    assert hand.status == "complete"
    assert PokerSeat.objects.get(table=table, player_id=p1).stack == BUY_IN + 5 + 10
    assert pot_balance(hand_id) == 0
    assert ledger_sums() == {"EUR": 0}
    assert verify_ledger(key=settings.CASINO_SEAL_KEY.encode()) == []


def test_a_hand_paused_without_a_clock_resumes_with_the_full_turn_time() -> None:
    table, _ = three_handed()
    table = advance(table, cards=AA_VS_KK)
    PokerHand.objects.filter(hand_id=table.current_hand_id).update(deadline=None)
    pause(table)
    assert hand_events(table.current_hand_id, et.PAUSED)[0].data["remaining_ms"] is None
    resume(table, at=T0 + timedelta(minutes=5))
    table.refresh_from_db()
    assert table.deadline == T0 + timedelta(minutes=5, seconds=table.turn_seconds)


def test_void_returns_exactly_what_each_player_put_in_and_pays_nothing() -> None:
    table, (p1, p2, p3) = three_handed()
    table = advance(table, cards=AA_VS_KK)
    hand_id = table.current_hand_id
    act(table, p1, "raise", 30)
    act(table, p2, "call")
    act(table, p3, "call")
    act(table, p2, "check")  # flop
    act(table, p3, "bet", 60)
    rake_before = rake_balance(table)
    assert pot_balance(hand_id) == 150
    at = T0 + timedelta(seconds=9)

    voided = void(table, "dealer screen froze", at=at)

    table.refresh_from_db()
    hand = PokerHand.objects.get(hand_id=hand_id)
    assert (voided.status, voided.phase, voided.hand_id) == ("voided", "between", hand_id)
    assert (hand.status, hand.ended_at, hand.deadline) == ("voided", at, None)
    assert (table.phase, table.deadline) == ("between", at + timedelta(seconds=table.between_hands_seconds))
    for player in (p1, p2, p3):  # every chip put in is back, nothing won
        assert PokerSeat.objects.get(table=table, player_id=player).stack == BUY_IN
        assert seat_balance(table, player) == BUY_IN
        row = PokerHandPlayer.objects.get(hand=hand, player_id=player)
        assert row.stack_after == row.stack_before == BUY_IN
    assert pot_balance(hand_id) == 0
    assert rake_balance(table) == rake_before == hand.rake == 0
    [event] = hand_events(hand_id, et.VOIDED)
    assert event.data["reason"] == "dealer screen froze"
    assert event.data["actor"] == event.metadata["actor"] == OPERATOR
    assert event.data["pot"] == 150
    assert {r["player_id"]: r["amount"] for r in event.data["refunds"]} == {p1: 30, p2: 30, p3: 90}
    refunds = Transfer.objects.filter(event_id=event.position, kind="void_refund")
    assert sorted(refunds.values_list("amount", flat=True)) == [30, 30, 90]
    assert not hand_events(hand_id, "poker.pot_awarded")
    assert not hand_events(hand_id, "poker.rake_taken")
    assert ledger_sums() == {"EUR": 0}
    assert verify_ledger(key=settings.CASINO_SEAL_KEY.encode()) == []

    # A voided hand is over: no second void, no pause, no action; the next hand deals.
    refused("poker_hand_voided", lambda: void(table))
    refused("poker_hand_voided", lambda: pause(table))
    refused("poker_hand_voided", lambda: resume(table))
    for player in (p1, p2, p3):  # seat 1 was next to act when the hand was voided
        refused("poker_hand_voided", lambda p=player: act(table, p, "check"))  # type: ignore[misc]
    table = advance(table, cards=AA_VS_KK)
    assert table.phase == "hand"
    assert table.current_hand_id != hand_id


def test_void_of_a_paused_hand_refunds_a_player_who_folded_and_left_to_the_wallet() -> None:
    table, (p1, p2, p3) = three_handed()
    table = advance(table, cards=AA_VS_KK)
    hand_id = table.current_hand_id
    act(table, p1, "raise", 30)
    act(table, p2, "fold")  # the small blind (5) stays in the pot
    services.stand_up(table_id=table.pk, player_id=p2, idempotency_key=key(), now=T0)
    assert wallet(p2) == 100_000 - 5
    pause(table)
    void(table, "malfunction while paused")
    # Voided, then the board's leaves revealed (none: voided preflop) as the deal key is shredded.
    assert [e.type for e in read_stream(stream_id=et.hand_stream(hand_id))][-3:] == [
        et.PAUSED, et.VOIDED, et.CARDS_REVEALED
    ]  # fmt: skip
    assert wallet(p2) == 100_000
    assert PokerSeat.objects.get(table=table, player_id=p1).stack == BUY_IN
    assert PokerSeat.objects.get(table=table, player_id=p3).stack == BUY_IN
    [event] = hand_events(hand_id, et.VOIDED)
    assert {r["player_id"]: (r["amount"], r["to"]) for r in event.data["refunds"]} == {
        p1: (30, "seat"),
        p2: (5, "wallet"),
        p3: (10, "seat"),
    }
    assert pot_balance(hand_id) == 0
    assert ledger_sums() == {"EUR": 0}
    assert verify_ledger(key=settings.CASINO_SEAL_KEY.encode()) == []


def test_refusals_change_nothing() -> None:
    table, (p1, p2, p3) = three_handed()
    # No hand yet (the table waits between hands), and a table that never dealt.
    for call in (lambda: pause(table), lambda: resume(table), lambda: void(table)):
        refused("poker_no_hand", call)
    idle = make_table()
    refused("poker_no_hand", lambda: void(idle))
    refused("poker_table_not_found", lambda: void(PokerTable(pk=999_999)))
    refused("poker_table_not_found", lambda: resume(PokerTable(pk=999_999)))
    table = advance(table, cards=AA_VS_KK)
    for reason in ("", "   ", None, 7, "x" * 501):
        refused("reason_required", lambda r=reason: pause(table, r))  # type: ignore[misc]
        refused("reason_required", lambda r=reason: void(table, r))  # type: ignore[misc]
    refused("poker_hand_not_paused", lambda: resume(table))
    # A completed hand cannot be paused or voided: its pots were awarded.
    act(table, p1, "raise", 30)
    act(table, p2, "fold")
    act(table, p3, "fold")
    assert PokerHand.objects.get(hand_id=table.current_hand_id).status == "complete"
    refused("poker_hand_complete", lambda: void(table))
    refused("poker_hand_complete", lambda: pause(table))


def _new_messages(hand_id: str, viewer: int, cursor: dict[str, int]) -> list[dict[str, Any]]:
    """The hand's events after ``cursor`` (updated) as the websocket feed frames them for ``viewer``."""
    events = read_stream(stream_id=et.hand_stream(hand_id), after_version=cursor["hand_version"])
    cursor["hand_version"] = events[-1].version if events else cursor["hand_version"]
    frames = []
    for _, _, delta in deltas(events):
        own = delta.private.get(viewer)
        frames.append(json.loads(own if own is not None and delta.instead else str(delta.public)))
    return frames


def test_players_are_told_snapshot_history_replay_and_websocket() -> None:
    table, (p1, p2, _p3) = three_handed()
    table = advance(table, cards=AA_VS_KK)
    hand_id = table.current_hand_id
    act(table, p1, "raise", 30)
    view = presenters.table_view(table_id=table.pk, viewer_id=p2)
    assert (view["hand"]["paused"], view["hand"]["voided"], view["hand"]["reason"]) == (False, False, None)
    cursor = {"hand_version": PokerHand.objects.get(hand_id=hand_id).stream_version}

    pause(table, "shuffler jammed")
    view = presenters.table_view(table_id=table.pk, viewer_id=p2)
    assert view["table"]["phase"] == "paused"
    assert (view["hand"]["paused"], view["hand"]["reason"]) == (True, "shuffler jammed")
    [message] = _new_messages(hand_id, p2, cursor)
    assert message["type"] == "delta"
    assert message["event"]["type"] == et.PAUSED
    assert message["event"]["reason"] == "shuffler jammed"

    void(table, "shuffler broken")
    message, revealed = _new_messages(hand_id, p2, cursor)
    assert (message["event"]["type"], message["event"]["reason"]) == (et.VOIDED, "shuffler broken")
    assert (revealed["event"]["type"], revealed["event"]["revealed"]) == (et.CARDS_REVEALED, [])
    view = presenters.table_view(table_id=table.pk, viewer_id=p2)
    assert (view["hand"]["status"], view["hand"]["voided"], view["hand"]["paused"]) == ("voided", True, False)
    assert view["hand"]["reason"] == "shuffler broken"
    history = presenters.hand_history(hand_id=hand_id, viewer_id=p2)
    assert (history["status"], history["voided"], history["reason"]) == ("voided", True, "shuffler broken")
    assert {r["player_id"]: r["amount"] for r in history["refunds"]}[p1] == 30
    # The void, then the leaves the table saw (none: voided preflop) as the deal key was shredded.
    assert [e["type"] for e in history["events"]][-3:] == [et.PAUSED, et.VOIDED, et.CARDS_REVEALED]
    assert history["events"][-1]["revealed"] == []
    replay = presenters.hand_replay(hand_id=hand_id, viewer_id=p2)
    assert (replay["voided"], replay["reason"]) == (True, "shuffler broken")
    assert replay["steps"][-1]["event"]["type"] == "poker.action_taken"
    [row] = presenters.hand_list_page(player_id=p2, limit=5, offset=0)["results"]
    assert (row["status"], row["net"]) == ("voided", 0)
    # A voided hand has no result to export as PHH.
    with pytest.raises(CommandError, match="poker_hand_voided"):
        call_command("poker_export", hand_id, stdout=StringIO())


def test_a_hand_whose_dealer_was_gone_too_long_is_voided_by_the_sweep() -> None:
    """RULES.md: a round that cannot continue (its dealer process gone past a
    grace period) is voided automatically, players told why. The sweep does not
    time out players who could not act while nothing ran: it voids the hand."""
    table, (p1, _, _) = three_handed()
    table = advance(table, cards=AA_VS_KK)
    hand_id = table.current_hand_id
    act(table, p1, "raise", 30)
    table.refresh_from_db()
    assert table.deadline is not None
    gone = timedelta(seconds=settings.CASINO_DEALER_GONE_VOID_SECONDS)
    # Overdue, but not yet past the limit: the backstop plays the step as the dealer would.
    assert services.sweep(now=table.deadline + timedelta(seconds=10))["advanced"] == 1
    assert [e.data["seat"] for e in hand_events(hand_id, et.TIMED_OUT)] == [2]
    table.refresh_from_db()
    stacks = {row.player_id: row.stack_before for row in PokerHandPlayer.objects.filter(hand__hand_id=hand_id)}

    done = services.sweep(now=table.deadline + gone + timedelta(seconds=1))
    assert done["voided"] == 1
    assert done["advanced"] == 0
    [event] = hand_events(hand_id, et.VOIDED)
    assert (event.data["reason"], event.data["actor"], event.data["automatic"]) == ("dealer_gone", "system", True)
    assert PokerHand.objects.get(hand_id=hand_id).status == "voided"
    assert hand_events(hand_id, et.TIMED_OUT)[-1].data["seat"] == 2  # seat 3 was not timed out
    for player, stack in stacks.items():
        assert PokerSeat.objects.get(table=table, player_id=player).stack == stack
    assert pot_balance(hand_id) == 0
    assert ledger_sums() == {"EUR": 0}
    assert verify_ledger(key=settings.CASINO_SEAL_KEY.encode()) == []


def test_one_tables_failure_does_not_keep_the_sweep_from_the_others(monkeypatch) -> None:
    """The beat backstop goes on to the next table when one table's step fails
    (a bug, a lost connection): that table is counted as failed and left as it
    was, and the others are still advanced."""
    tables = []
    for _ in range(2):
        table, (p1, _, _) = three_handed()
        table = advance(table, cards=AA_VS_KK)
        act(table, p1, "raise", 30)
        table.refresh_from_db()
        tables.append(table)
    broken, healthy = tables
    real_advance = hands.advance_table

    def failing_for_one_table(*, table_id: int, **kwargs: Any) -> Any:
        if table_id == broken.pk:
            raise RuntimeError("simulated failure")
        return real_advance(table_id=table_id, **kwargs)

    monkeypatch.setattr(hands, "advance_table", failing_for_one_table)
    overdue = max(t.deadline for t in tables if t.deadline is not None) + timedelta(seconds=10)
    done = services.sweep(now=overdue)
    assert (done["failed"], done["advanced"]) == (1, 1)
    assert PokerTable.objects.get(pk=broken.pk).phase_seq == broken.phase_seq
    assert PokerTable.objects.get(pk=healthy.pk).phase_seq > healthy.phase_seq
