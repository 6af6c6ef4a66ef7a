"""Issue 33, "Done when": mid-round, as a non-superuser operator, a superuser
and a compliance user, no admin page, lookup, recall, export or API answer
contains a face-down card; after the round every staff surface shows the full round.

The hidden cards are read the way the dealer reads them (the shuffle's sealed
deck opened with the deal's key, ``tests.compliance.hidden_cards.opened_deck``):
a UTH round after the deal and before the flop hides the dealer's two cards,
the five board cards and the undealt deck (every card but the shared hand's
two); a poker hand before the flop hides all 52 (every hole card, the rest of
the deck). Each surface's answer is scanned with ``hidden_cards.cards_in``.

Surfaces: every registered admin's changelist and the change pages of its
latest rows (every event's), the event admin with its lookups (those on event
data refused: 400), the rounds' admin timeline, the poker hand page, game
recall with and without a player, every compliance report, the fairness
answers and the table views, and an audit export (the API's zip, the exporter's
files, which also verify), and the log records written meanwhile.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from collections.abc import Callable, Iterable
from datetime import date, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from django.conf import settings
from django.contrib import admin
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from casino.errors import DomainError
from compliance.exports import ExportFilters, export_audit, public_key_hex
from compliance.reports import REPORTS
from compliance.roles import COMPLIANCE, OPERATOR, setup_roles
from games.house.models import HouseRound
from games.house.round.events import CARDS_DEALT, SHUFFLED
from games.house.store import round_stream
from games.poker import event_types as et
from games.poker.models import PokerHand
from games.tables.dealkeys import DealKey
from ledger.models import Event
from tests.compliance.hidden_cards import cards_in, dir_texts, leaked, opened_deck, zip_texts
from tests.compliance.staff import staff
from tests.conftest import ROOT
from tests.house.services.conftest import dealt_round, play_out
from tests.poker.tables import act, advance, heads_up_dealt, sit
from tests.poker.tables import make_player as make_poker_player
from tests.poker.tables import make_table as make_poker_table

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

PLAYER_HAND = ("As", "Kd")
DEALER = ("2c", "3c")
BOARD = ("Ah", "7d", "9s", "Jc", "4h")
ROWS_PER_MODEL = 5  # change pages per admin, newest first (every event's page is read)


def roles() -> dict[str, Client]:
    """A non-superuser operator, a superuser and a compliance user, logged in."""
    setup_roles()
    return {
        "operator": staff("shift-op", OPERATOR)[1],
        "superuser": staff("root-su", superuser=True)[1],
        "compliance": staff("auditor", COMPLIANCE)[1],
    }


def admin_pages() -> list[str]:
    """Every registered admin's changelist and the change pages of its latest rows (every event's)."""
    urls = []
    for model in admin.site._registry:
        label = f"admin:{model._meta.app_label}_{model._meta.model_name}"
        urls.append(reverse(f"{label}_changelist"))
        if not model._meta.managed:
            continue  # not a table (the compliance reports page)
        rows = model._default_manager.order_by("-pk").values_list("pk", flat=True)
        for pk in rows if model is Event else rows[:ROWS_PER_MODEL]:
            urls.append(reverse(f"{label}_change", args=[pk]))
    return urls


def report_urls() -> list[str]:
    today = date.today()
    start, end = (timezone.now() - timedelta(days=1)).isoformat(), (timezone.now() + timedelta(days=1)).isoformat()
    params = {"player-account-summary": f"day={today}", "house-days": f"from={today}&days=1"}
    return [
        f"/api/compliance/reports/{name}/?{params.get(name, f'from={start}&to={end}'.replace('+', '%2B'))}{suffix}"
        for name in REPORTS
        for suffix in ("", "&output=csv")
    ]


def read_all(client: Client, urls: Iterable[str]) -> dict[str, tuple[int, str]]:
    """Each url's status and body (redirects not followed: a 302 body is empty)."""
    return {url: ((r := client.get(url)).status_code, r.content.decode()) for url in urls}


def export_zip(client: Client) -> tuple[int, dict[str, str]]:
    """The compliance export API's answer for the last hour: status, and each file of the zip."""
    body = {"start": (timezone.now() - timedelta(hours=1)).isoformat(),
            "end": (timezone.now() + timedelta(seconds=1)).isoformat()}  # fmt: skip
    # Exported at once: no transaction of another database holds the seal back (issue 35).
    response = client.post("/api/compliance/exports/", body, content_type="application/json")
    files = zip_texts(response.content) if response.status_code == 200 else {}
    return response.status_code, files


def assert_nothing_leaks(answers: dict[str, tuple[int, str]], hidden: Iterable[str], who: str) -> None:
    problems = {url: sorted(leaked(text, hidden)) for url, (_, text) in answers.items() if leaked(text, hidden)}
    assert not problems, (who, problems)
    errors = {url: status for url, (status, _) in answers.items() if status >= 500}
    assert not errors, (who, errors)


def refused_lookups(stream_id: str, shuffled_type: str, probe: str) -> list[str]:
    """The red team's oracle and its neighbours: lookups on event data and metadata."""
    return [
        f"/admin/ledger/event/?stream_id={stream_id}&type={shuffled_type}&data__icontains=%22{probe}%22",
        f"/admin/ledger/event/?stream_id={stream_id}&data__icontains={probe}",
        "/admin/ledger/event/?data__contains=x",
        f"/admin/ledger/event/?data__cards__0__card={probe}",
        "/admin/ledger/event/?metadata__actor__icontains=user",
        f"/admin/ledger/transfer/?event__data__icontains={probe}",
        f"/admin/games/houseround/?summary__icontains={probe}",
        f"/admin/games/playerround/?state__icontains={probe}",
        f"/admin/games/pokerhand/?players__icontains={probe}",
    ]


def scan_mid_deal(
    clients: dict[str, Client], hidden: set[str], *, stream_id: str, shuffled_type: str, pages: list[str]
) -> dict[str, dict[str, tuple[int, str]]]:
    """Every staff surface as each role, scanned; the answers by role."""
    seen: dict[str, dict[str, tuple[int, str]]] = {}
    probe = sorted(hidden)[0]
    for who, client in clients.items():
        listed = [
            f"/admin/ledger/event/?stream_id={stream_id}",
            f"/admin/ledger/event/?q={stream_id}",
            f"/admin/ledger/event/?stream_id={stream_id}&type={shuffled_type}",
            "/admin/ledger/event/?_facets=1",
        ]
        answers = read_all(client, [*admin_pages(), *report_urls(), *pages, *listed])
        assert_nothing_leaks(answers, hidden, who)
        for url in refused_lookups(stream_id, shuffled_type, probe):
            status = client.get(url).status_code
            assert status == 400, (who, url, status)  # the oracle is refused, never a 500
        seen[who] = answers
    return seen


def assert_logs_clean(caplog: pytest.LogCaptureFixture, hidden: set[str]) -> None:
    for record in caplog.records:
        # URL-decoded too: a logged request line with its query (?data__icontains=%222c%22) counts.
        text = unquote(record.getMessage() + (record.exc_text or ""))
        assert not leaked(text, hidden), (record.name, text[:300])


def uth_round_after_the_deal() -> tuple[Any, int, Any, set[str]]:
    """A shared-hand UTH round dealt (the preflop decision open): table, player, tick, hidden cards."""
    table, alice, tick = dealt_round("uth", " ".join(PLAYER_HAND), dealer=" ".join(DEALER), board=" ".join(BOARD),
                                     code="UTHS")  # fmt: skip
    assert tick.phase == "preflop", tick.phase
    deck = opened_deck(stream_id=round_stream(tick.round_id), shuffled_type=SHUFFLED,
                       deal_id=f"house-round:{tick.round_id}")  # fmt: skip
    hidden = set(deck) - set(PLAYER_HAND)
    assert set(DEALER) | set(BOARD) <= hidden
    assert len(hidden) == 50
    return table, alice, tick, hidden


def test_mid_round_no_staff_surface_shows_a_face_down_house_card(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    clients = roles()
    table, alice, tick, hidden = uth_round_after_the_deal()
    round_row = HouseRound.objects.get(round_id=tick.round_id)
    timeline = f"/admin/games/houseround/{round_row.pk}/change/"
    recall = f"/api/compliance/game-recall/{tick.game_number}/"
    pages = [timeline, recall, f"{recall}?player={alice}", f"/api/rounds/{tick.game_number}/fairness/",
             f"/api/tables/{table.pk}/", f"/api/history/games/{tick.game_number}/"]  # fmt: skip
    seen = scan_mid_deal(clients, hidden, stream_id=round_stream(tick.round_id), shuffled_type=SHUFFLED, pages=pages)
    for who, answers in seen.items():
        # Each role reached the surfaces that matter, and sees the round as the table does.
        for url in (timeline, recall, f"{recall}?player={alice}"):
            assert answers[url][0] == 200, (who, url, answers[url][0])
        assert cards_in(answers[timeline][1]) == set(PLAYER_HAND), who
        assert "house_round.cards_dealt" in answers[timeline][1]
        dealt = json.loads(answers[recall][1])["dealt"]
        assert [c["card"] for c in dealt["cards"] if c["to"] == "shared"] == list(PLAYER_HAND)
        assert all(c["card"] is None for c in dealt["cards"] if c["to"] in ("dealer", "board"))
    assert_logs_clean(caplog, hidden)

    # Over: every staff surface shows the whole round.
    play_out(table, tick)
    assert HouseRound.objects.get(pk=round_row.pk).status == "settled"
    stream_events = Event.objects.filter(stream_id=round_stream(tick.round_id)).order_by("id")
    for who, client in clients.items():
        full = set(PLAYER_HAND) | set(DEALER) | set(BOARD)
        assert full <= cards_in(client.get(timeline).content.decode()), who
        assert full <= cards_in(client.get(recall).content.decode()), who
        event_pages = "".join(client.get(f"/admin/ledger/event/{e.pk}/change/").content.decode() for e in stream_events)
        assert full <= cards_in(event_pages), who


def test_mid_hand_no_staff_surface_shows_a_poker_card(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    clients = roles()
    table = make_poker_table()
    players = [make_poker_player(), make_poker_player()]
    for seat, player in enumerate(players, start=1):
        sit(table, player, seat)
    table = advance(table)  # the hand is dealt: blinds posted, hole cards dealt, preflop
    hand_id = table.current_hand_id
    assert hand_id
    assert not Event.objects.filter(stream_id=et.hand_stream(hand_id), type="poker.board_dealt").exists()
    hidden = poker_hidden(hand_id)
    hand = PokerHand.objects.get(hand_id=hand_id)
    hand_page = f"/admin/games/pokerhand/{hand.pk}/change/"
    pages = [hand_page, f"/api/poker/hands/{hand_id}/", f"/api/poker/hands/{hand_id}/replay/",
             f"/api/poker/hands/{hand_id}/fairness/", f"/api/poker/tables/{table.pk}/"]  # fmt: skip
    seen = scan_mid_deal(clients, hidden, stream_id=et.hand_stream(hand_id), shuffled_type=et.SHUFFLED, pages=pages)
    for who, answers in seen.items():
        assert answers[hand_page][0] == 200, who
        assert "poker.hole_cards_dealt" in answers[hand_page][1]
    assert_logs_clean(caplog, hidden)

    # Over (called down to the showdown): the hand's pages show the board.
    play_to_the_end(table, hand_id, lambda seat: players[seat - 1])
    board = [c for e in Event.objects.filter(stream_id=et.hand_stream(hand_id), type="poker.board_dealt")
             for c in e.data["cards"]]  # fmt: skip
    assert len(board) == 5
    shown = {c for e in Event.objects.filter(stream_id=et.hand_stream(hand_id), type="poker.hand_shown")
             for c in e.data["cards"]}  # fmt: skip
    assert shown, "called down: a hand is shown"
    for who, client in clients.items():
        assert set(board) | shown <= cards_in(client.get(hand_page).content.decode()), who


def poker_hidden(hand_id: str) -> set[str]:
    """Before the flop the table has seen no card of the hand's deck: all 52 are hidden,
    but for the cards of the button draw (``poker_hand.button_drawn``, from a deck of
    its own, shown to the table) that a code scan cannot tell from the same card of the deck."""
    stream = et.hand_stream(hand_id)
    deck = opened_deck(stream_id=stream, shuffled_type=et.SHUFFLED, deal_id=f"poker-hand:{hand_id}")
    draws = Event.objects.filter(stream_id=stream, type=et.BUTTON_DRAWN)
    drawn = {card for event in draws for card in event.data["draws"].values()}
    hidden = set(deck) - drawn
    assert len(hidden) >= 52 - len(drawn)
    return hidden


def play_to_the_end(table: Any, hand_id: str, player_in: Callable[[int], int]) -> None:
    """Check or call until the hand is over."""
    for _ in range(40):
        hand = PokerHand.objects.get(hand_id=hand_id)
        if hand.status != "playing":
            return
        if hand.actor_seat is None:
            advance(table)
            continue
        try:
            act(table, player_in(hand.actor_seat), "check")
        except DomainError:
            act(table, player_in(hand.actor_seat), "call")
    raise AssertionError("the hand did not end")


def exported_mid_deal(tmp_path: Path, name: str, file_format: str) -> tuple[Path, dict[str, str]]:
    out = tmp_path / name
    start, end = timezone.now() - timedelta(hours=1), timezone.now() + timedelta(seconds=1)
    export_audit(start=start, end=end, filters=ExportFilters(), file_format=file_format, out=out)
    run = subprocess.run([sys.executable, "-I", str(ROOT / "tools" / "verify_export.py"), str(out), "--public-key",
                          public_key_hex()], capture_output=True, text=True, cwd="/", env={})  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    return out, dir_texts(out)


def assert_no_key_in(texts: dict[str, str]) -> None:
    """No deal key (wrapped) nor the card key in an export."""
    everything = "\n".join(texts.values())
    assert "games_dealkey" not in everything
    assert settings.CASINO_CARD_KEY not in everything
    wrapped = [row.wrapped["ct"] for row in DealKey.objects.all()]
    assert wrapped, "the deal has a key"
    assert not [ct for ct in wrapped if ct in everything]


def exports_by_role(hidden: set[str]) -> None:
    """The export API as each role: the operator may not; the zip of the others shows no hidden card."""
    for who, client in roles().items():
        status, files = export_zip(client)
        assert status == (403 if who == "operator" else 200), (who, status)
        problems = {name: sorted(leaked(text, hidden)) for name, text in files.items() if leaked(text, hidden)}
        assert not problems, (who, problems)


def test_an_export_taken_mid_round_carries_the_face_down_cards_sealed_and_verifies(tmp_path: Path) -> None:
    _, _, tick, hidden = uth_round_after_the_deal()
    exports_by_role(hidden)
    for file_format in ("jsonl", "csv"):
        _, texts = exported_mid_deal(tmp_path, f"mid-round-{file_format}", file_format)
        problems = {name: sorted(leaked(text, hidden)) for name, text in texts.items() if leaked(text, hidden)}
        assert not problems, (file_format, problems)
        assert_no_key_in(texts)
        # The face-down cards are in it, sealed as stored: the events' rows are the stored rows.
        stored = Event.objects.get(stream_id=round_stream(tick.round_id), type=CARDS_DEALT)
        exported = [json.loads(line) for line in texts["events.jsonl"].splitlines()] if file_format == "jsonl" else []
        for row in exported:
            if row["position"] == stored.pk:
                assert row["data"] == stored.data
    # The player's own face-up hand is there (the scan would see a card).
    assert set(PLAYER_HAND) <= cards_in(texts["events.csv"])


def test_an_export_taken_mid_hand_carries_no_poker_card_in_clear(tmp_path: Path) -> None:
    table = heads_up_dealt()
    hand_id = table.current_hand_id
    hidden = poker_hidden(hand_id)
    exports_by_role(hidden)
    _, texts = exported_mid_deal(tmp_path, "mid-hand", "jsonl")
    assert "poker.hole_cards_dealt" in texts["events.jsonl"]
    problems = {name: sorted(leaked(text, hidden)) for name, text in texts.items() if leaked(text, hidden)}
    assert not problems, problems
    assert_no_key_in(texts)
