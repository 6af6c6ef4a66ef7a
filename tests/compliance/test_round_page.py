"""A round's admin page tells its story and offers only the controls that apply
(issue 36, part 2; docs/compliance.md, "Rounds in the admin"); the round list
hides empty rounds unless asked (Django's test client; the browser tests are
tests/compliance/test_browser_round_timeline.py).

- The page: header with totals via ``display_money``; cards drawn as cards
  (face-down ones as card backs, never their faces); one line in words per
  event, bets, decisions and payouts included, the data behind a toggle; the
  commitment, and the proof after the end.
- Controls: pause only on a round in play and not paused, resume only on a
  paused one, void on any round not over; only for ``games.change_houseround``.
  Out of state, the control (form or POST) is refused with its code
  (``round_over``, ``round_paused``, ``round_not_paused``) and nothing is appended.
- A poker hand's page: the same treatment (hole cards as backs in play, the
  board and the story in words, the proof checked after the end).
"""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client

from casino.admin_story import card_html
from compliance.roles import COMPLIANCE, OPERATOR, setup_roles
from games.house.models import HouseRound
from games.house.round.events import SHUFFLED
from games.house.services import place_chip
from games.poker.event_types import hand_stream
from games.poker.models import PokerHand
from ledger.currencies import display_money
from ledger.models import Event
from tests.compliance.hidden_cards import cards_in, opened_deck
from tests.compliance.round_pages import (
    ANTE,
    BOARD,
    DEALER,
    PLAYER_HAND,
    empty_round,
    face,
    finished_round,
    round_in_play,
)
from tests.compliance.staff import staff
from tests.compliance.test_staff_sees_no_hidden_card import play_to_the_end, poker_hidden
from tests.house.services.conftest import key, later, make_player, make_table, open_round, step
from tests.poker.tables import heads_up_dealt

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]


def page_of(client: Client, round_row: HouseRound) -> str:
    response = client.get(f"/admin/games/houseround/{round_row.pk}/change/")
    assert response.status_code == 200
    return str(response.content.decode())


def text_of(page: str) -> str:
    """The page's words: no markup, no raw data behind the toggles."""
    page = re.sub(r"<pre>.*?</pre>", "", page, flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def control_links(page: str) -> set[str]:
    return set(re.findall(r'id="control-(\w+)"', page))


def test_card_html_draws_suits_in_colour_and_a_face_down_card_as_a_back() -> None:
    assert 'class="card red" data-card="Ah">A♥<' in card_html("Ah")
    assert 'class="card red" data-card="Td">10♦<' in card_html("Td")
    assert 'class="card black" data-card="Qs">Q♠<' in card_html("Qs")
    assert 'class="card black" data-card="2c">2♣<' in card_html("2c")
    back = card_html(None)
    assert "card back" in back
    assert "data-card" not in back
    assert "<script>" not in card_html("<script>")  # a forged value is escaped text


def test_a_round_in_play_tells_its_story_without_a_face_down_card() -> None:
    setup_roles()
    _, operator = staff("shift-op", OPERATOR)
    _table, _demo, _tick, round_row, hidden = round_in_play("RPG1")
    page = page_of(operator, round_row)
    words = text_of(page)
    # No face-down card, neither as a code nor drawn: the dealer's two and the board's five are backs.
    assert cards_in(page) == set(PLAYER_HAND)
    assert not [card for card in hidden if face(card) in words or f'data-card="{card}"' in page]
    cards_panel = page[page.index('id="round-cards"') : page.index('id="round-players"')]
    assert cards_panel.count("card back") == len(DEALER) + len(BOARD)
    # The header, the players' bets in words, with money as people read it.
    assert "RPG1" in words
    assert "Ultimate Texas Hold'em" in words
    assert "EUR" in words
    assert "demo bet Ante 10.00 EUR and Ante Plus 10.00 EUR" in words
    assert "demo bet Best Five 5.00 EUR" in words
    assert "25.00 EUR" in words  # staked so far
    assert "Betting opened, closes" in words
    assert "No more bets: 1 player in the round" in words
    assert "house_round.cards_dealt" in page  # each event's data behind its toggle
    assert "<details>" in page
    assert "state after" not in page
    # The commitment, no proof yet.
    shuffled = Event.objects.get(stream_id=f"round-{round_row.round_id}", type="house_round.shuffled")
    assert shuffled.data["commitment"] in words
    assert "revealed when the round ends" in words
    assert control_links(page) == {"pause", "void"}


def test_after_the_end_the_page_shows_every_card_the_payouts_and_the_proof() -> None:
    setup_roles()
    _, operator = staff("shift-op", OPERATOR)
    round_row, demo = finished_round("RPG2")
    page = page_of(operator, round_row)
    words = text_of(page)
    assert {*PLAYER_HAND, *DEALER, *BOARD} <= cards_in(page)
    assert "demo raised 4\N{MULTIPLICATION SIGN} (40.00 EUR) at the pre-flop" in words
    assert "Board dealt: A♥ 7♦ 9♠ J♣ 4♥" in words  # no decision left after the raise: the board at once
    assert "Dealer shows 2♣ 3♣" in words
    settled = Event.objects.get(stream_id__endswith=f"-player-{demo}", type="house_player.settled")
    paid = settled.data["returned"]
    assert paid > 0
    assert f"demo paid {paid // 100:,}.{paid % 100:02d} EUR for 65.00 EUR staked" in words
    # The proof: the deck as revealed, checked, and how to check it.
    assert "Proof checked" in words
    deck = Event.objects.get(stream_id=f"round-{round_row.round_id}", type="house_round.deck_revealed").data["deck"]
    proof = page[page.index('id="revealed-deck"') :]
    assert re.findall(r'data-card="(\w\w)"', proof)[:52] == deck
    assert "tools/verify_deal.py" in words
    assert control_links(page) == set()


def refused(client: Client, round_row: HouseRound, action: str, code: str, body: dict[str, str]) -> None:
    """The control (its form and its POST) is refused with ``code``; nothing appended."""
    before = Event.objects.count()
    url = f"/admin/games/houseround/{round_row.pk}/control/{action}/"
    for response in (client.get(url, follow=True), client.post(url, body, follow=True)):
        assert response.status_code == 200
        assert response.redirect_chain[-1][0] == f"/admin/games/houseround/{round_row.pk}/change/"
        assert f"{code}: " in text_of(response.content.decode()).lower()  # the admin capitalises messages
    assert Event.objects.count() == before


def test_controls_only_where_they_apply_and_refused_out_of_state() -> None:
    setup_roles()
    _, operator = staff("shift-op", OPERATOR)
    _table, _demo, _tick, round_row, _ = round_in_play("RPG3")
    confirm = {"reason": "shuffler jam", "confirm": "on"}
    refused(operator, round_row, "resume", "round_not_paused", {})
    assert operator.post(f"/admin/games/houseround/{round_row.pk}/control/pause/", confirm).status_code == 302
    page = page_of(operator, round_row)
    assert control_links(page) == {"resume", "void"}
    assert "paused" in text_of(page)
    assert "shuffler jam" in text_of(page)
    refused(operator, round_row, "pause", "round_paused", confirm)
    assert operator.post(f"/admin/games/houseround/{round_row.pk}/control/resume/", {}).status_code == 302
    assert control_links(page_of(operator, round_row)) == {"pause", "void"}
    # Compliance reads the page but is offered nothing and may do nothing.
    _, auditor = staff("auditor", COMPLIANCE)
    assert control_links(page_of(auditor, round_row)) == set()
    assert auditor.post(f"/admin/games/houseround/{round_row.pk}/control/void/", confirm).status_code == 403
    assert operator.post(f"/admin/games/houseround/{round_row.pk}/control/void/", confirm).status_code == 302
    round_row.refresh_from_db()
    assert round_row.status == "voided"
    page = page_of(operator, round_row)
    assert control_links(page) == set()
    assert "Voided by shift-op: “shuffler jam”" in text_of(page)
    assert "demo refunded 25.00 EUR" in text_of(page)
    for action in ("pause", "resume", "void"):
        refused(operator, round_row, action, "round_over", confirm)
    # A round that does not exist: 404, never a 500.
    assert operator.get("/admin/games/houseround/999999/control/void/").status_code == 404


def test_the_round_list_hides_empty_rounds_unless_asked() -> None:
    setup_roles()
    _, operator = staff("shift-op", OPERATOR)
    played, _ = finished_round("RPG4")
    empty = empty_round("RPG5")
    assert empty.status == "empty"

    def listed(query: str) -> str:
        response = operator.get(f"/admin/games/houseround/{query}")
        assert response.status_code == 200
        return text_of(response.content.decode())

    default = listed("")
    assert played.game_number in default
    assert empty.game_number not in default
    assert "with bets (default)" in default
    assert f"{played.staked // 100:,}.{played.staked % 100:02d} EUR" in default  # money with its currency
    chosen = listed("?players=with_bets")
    assert played.game_number in chosen
    assert empty.game_number not in chosen
    only_empty = listed("?players=empty")
    assert empty.game_number in only_empty
    assert played.game_number not in only_empty
    # Looked for by its game number, a round is found, empty or not.
    assert empty.game_number in listed(f"?q={empty.game_number}")
    assert empty.game_number not in listed(f"?q={empty.game_number}&players=with_bets")
    every = listed("?players=all")
    assert played.game_number in every
    assert empty.game_number in every


def test_a_poker_hand_page_draws_its_cards_and_tells_its_story() -> None:
    setup_roles()
    _, operator = staff("shift-op", OPERATOR)
    table = heads_up_dealt()
    hand = PokerHand.objects.get(hand_id=table.current_hand_id)
    url = f"/admin/games/pokerhand/{hand.pk}/change/"
    hidden = poker_hidden(hand.hand_id)
    page = operator.get(url).content.decode()
    words = text_of(page)
    # In play: both seats' hole cards are backs, no card of the deck drawn or named.
    assert not cards_in(page) & hidden
    assert not [card for card in hidden if face(card) in words or f'data-card="{card}"' in page]
    assert page[page.index('id="hand-cards"') : page.index('id="hand-timeline"')].count("card back") == 4
    assert "posts the small blind" in words
    assert "posts the big blind" in words
    assert "The cards the table saw are proven when the hand ends" in words
    seats = {int(seat): player for seat, player in hand.players.items()}
    play_to_the_end(table, hand.hand_id, lambda seat: seats[seat])
    hand.refresh_from_db()
    page = operator.get(url).content.decode()
    words = text_of(page)
    board = [c for e in Event.objects.filter(stream_id=hand_stream(hand.hand_id), type="poker.board_dealt")
             for c in e.data["cards"]]  # fmt: skip
    assert f"Flop dealt: {' '.join(face(c) for c in board[:3])}" in words
    assert set(board) <= cards_in(page)
    assert "Proof checked" in words
    assert display_money(hand.pot, hand.currency) in words  # the header's pot, with its currency
    assert "wins" in words


def test_a_per_seat_round_in_play_shows_no_seats_hole_cards() -> None:
    """Per-seat: a spectator sees no seat's own hand while the round is in play, nor does staff."""
    setup_roles()
    _, operator = staff("shift-op", OPERATOR)
    table = make_table("xtreme", code="RPS1", hand_mode="per_seat")
    players = [make_player(table, name=name) for name in ("ann", "bob")]
    tick = open_round(table)
    for player in players:
        place_chip(table_id=table.pk, player_id=player, spot="ante", amount=ANTE, idempotency_key=key(),
                   now=later(tick))  # fmt: skip
    tick = step(table, tick)
    assert tick.phase not in ("betting", "between"), tick.phase
    round_row = HouseRound.objects.get(round_id=tick.round_id)
    deck = opened_deck(stream_id=f"round-{round_row.round_id}", shuffled_type=SHUFFLED,
                       deal_id=f"house-round:{round_row.round_id}")  # fmt: skip
    page = page_of(operator, round_row)
    words = text_of(page)
    assert not cards_in(page)
    assert not [card for card in deck if face(card) in words]
    cards_panel = page[page.index('id="round-cards"') : page.index('id="round-players"')]
    assert "ann&#x27;s hand" in cards_panel
    assert "bob&#x27;s hand" in cards_panel
    assert "data-card" not in cards_panel
