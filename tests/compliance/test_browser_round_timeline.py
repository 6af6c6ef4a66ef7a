"""A round's admin page in a real browser (Debian's chromium, headless, through
the system chromedriver: ``make browser-deps``), at 1280 px wide, as a
non-superuser operator reads it (issue 36, part 2):

- in play (UTH dealt, before the flop): the shared hand drawn as cards, the
  dealer's and the board's cards as card backs, no face-down card in the page
  source (neither as a code nor drawn), pause and void offered, resume not;
- after the end: every card, the raise and the payout in words, the proof (the
  revealed deck) checked, no control; an event's data opens behind its toggle;
- the round list: a round nobody bet in is hidden unless the Players filter asks;
- a poker hand's page after the end (the board drawn, the proof checked).

Screenshots of the whole page each time go to ``$CASINO_SCREENSHOTS`` (a folder;
default: the test's temporary folder), to be looked at; no page scrolls sideways.

Skipped outside CI without chromium and chromedriver, failing in CI (``tests.compliance.browser``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from compliance.roles import OPERATOR, setup_roles
from tests.compliance.browser import needs_browser
from tests.compliance.hidden_cards import cards_in
from tests.compliance.round_pages import (
    BOARD,
    DEALER,
    PLAYER_HAND,
    empty_round,
    face,
    finished_round,
    raise_and_finish,
    round_in_play,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres, needs_browser]

WIDTH = 1280


def screenshots(tmp_path: Path) -> Path:
    shots = Path(os.environ.get("CASINO_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    return shots


def log_in_as_operator(browser: Any, live_server: Any, next_url: str) -> None:
    """A non-superuser operator logs in and lands on ``next_url`` (waited for)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    setup_roles()
    operator = get_user_model().objects.create_user("floor", password="floor-manager-pw", is_staff=True)
    operator.groups.add(Group.objects.get(name=OPERATOR))
    browser.set_window_size(WIDTH, 900)
    browser.get(f"{live_server.url}/admin/login/?next={next_url}")
    browser.find_element(By.NAME, "username").send_keys("floor")
    browser.find_element(By.NAME, "password").send_keys("floor-manager-pw")
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    WebDriverWait(browser, 10).until(expected_conditions.url_contains(next_url))


def sideways(browser: Any) -> list[str]:
    """The page, and every box of it that scrolls, wider than its window or box (once laid out, fonts loaded)."""
    return list(
        browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        document.fonts.ready.then(() => {
          const wide = [];
          const page = document.documentElement;
          if (page.scrollWidth > page.clientWidth) wide.push('page ' + page.scrollWidth + '/' + page.clientWidth);
          for (const box of document.querySelectorAll('body *')) {
            const style = getComputedStyle(box);
            if (!['auto', 'scroll'].includes(style.overflowX) || box.clientWidth <= 1) continue;
            if (box.scrollWidth > box.clientWidth)
              wide.push(box.tagName + '.' + box.className + ' ' + box.scrollWidth + '/' + box.clientWidth);
          }
          done(wide);
        });""")
    )


def whole_page(browser: Any, path: Path) -> None:
    """A screenshot of the whole page at ``WIDTH``, after checking that nothing scrolls sideways."""
    assert not sideways(browser), f"scrolls sideways at {WIDTH} px: {sideways(browser)}"
    height = browser.execute_script("return document.documentElement.scrollHeight")
    browser.set_window_size(WIDTH, min(max(height + 120, 900), 8000))
    browser.save_screenshot(str(path))
    browser.set_window_size(WIDTH, 900)


def test_a_round_page_in_play_and_after_the_end_in_a_browser(live_server, browser, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    shots = screenshots(tmp_path)
    table, demo, tick, round_row, hidden = round_in_play("UTHT")
    page_url = f"/admin/games/houseround/{round_row.pk}/change/"
    log_in_as_operator(browser, live_server, page_url)

    # In play: the shared hand only; the dealer's and the board's cards are backs.
    source = browser.page_source
    assert cards_in(source) == set(PLAYER_HAND)
    body = browser.find_element(By.TAG_NAME, "body").text
    assert not [card for card in hidden if face(card) in body or f'data-card="{card}"' in source]
    cards = browser.find_element(By.ID, "round-cards")
    assert len(cards.find_elements(By.CSS_SELECTOR, ".card.back")) == len(DEALER) + len(BOARD)
    assert [c.text for c in cards.find_elements(By.CSS_SELECTOR, ".card[data-card]")] == [face(c) for c in PLAYER_HAND]
    story = browser.find_element(By.ID, "round-timeline").text
    assert "demo bet Ante 10.00 EUR and Ante Plus 10.00 EUR" in story
    assert "house_round.cards_dealt" in story  # the toggle of each event's data, closed
    assert '"durations"' not in story
    assert browser.find_element(By.ID, "control-pause").is_displayed()
    assert browser.find_element(By.ID, "control-void").is_displayed()
    assert not browser.find_elements(By.ID, "control-resume")
    assert "revealed when the round ends" in browser.find_element(By.ID, "round-fairness").text
    whole_page(browser, shots / "round-page-in-play.png")

    # After the end: every card, the raise and the payout in words, the proof.
    raise_and_finish(table, demo, tick)
    browser.refresh()
    cards = browser.find_element(By.ID, "round-cards")
    assert {*PLAYER_HAND, *DEALER, *BOARD} == {
        c.get_attribute("data-card") for c in cards.find_elements(By.CSS_SELECTOR, ".card")
    }
    story = browser.find_element(By.ID, "round-timeline").text
    assert "demo raised 4\N{MULTIPLICATION SIGN} (40.00 EUR) at the pre-flop" in story
    assert "demo paid 100.00 EUR for 65.00 EUR staked" in story
    fairness = browser.find_element(By.ID, "round-fairness")
    assert "Proof checked" in fairness.text
    assert len(fairness.find_elements(By.CSS_SELECTOR, "#revealed-deck .card")) == 52
    assert not browser.find_elements(By.CSS_SELECTOR, "#round-controls a")
    # The configuration in force, behind the first event's toggle.
    browser.find_element(By.CSS_SELECTOR, "#round-timeline details summary").click()
    assert '"durations"' in browser.find_element(By.CSS_SELECTOR, "#round-timeline details pre").text
    browser.find_element(By.CSS_SELECTOR, "#round-timeline details summary").click()
    whole_page(browser, shots / "round-page-after.png")


def test_the_round_list_in_a_browser_hides_empty_rounds(live_server, browser, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    shots = screenshots(tmp_path)
    played, _ = finished_round("UTHL")
    empty = empty_round("UTHM")
    log_in_as_operator(browser, live_server, "/admin/games/houseround/")
    results = browser.find_element(By.ID, "result_list").text
    assert played.game_number in results
    assert empty.game_number not in results
    assert "65.00 EUR" in results
    assert "100.00 EUR" in results
    whole_page(browser, shots / "round-list.png")
    browser.find_element(By.LINK_TEXT, "empty").click()
    WebDriverWait(browser, 10).until(expected_conditions.url_contains("players=empty"))
    results = browser.find_element(By.ID, "result_list").text
    assert empty.game_number in results
    assert played.game_number not in results


def test_a_poker_hand_page_after_the_end_in_a_browser(live_server, browser, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    from games.poker.models import PokerHand
    from tests.compliance.test_staff_sees_no_hidden_card import play_to_the_end
    from tests.poker.tables import heads_up_dealt

    shots = screenshots(tmp_path)
    table = heads_up_dealt()
    hand = PokerHand.objects.get(hand_id=table.current_hand_id)
    seats = {int(seat): player for seat, player in hand.players.items()}
    play_to_the_end(table, hand.hand_id, lambda seat: seats[seat])
    log_in_as_operator(browser, live_server, f"/admin/games/pokerhand/{hand.pk}/change/")
    board = browser.find_element(By.CSS_SELECTOR, "#hand-cards .hand")
    assert len(board.find_elements(By.CSS_SELECTOR, ".card[data-card]")) == 5
    assert "Proof checked" in browser.find_element(By.ID, "hand-fairness").text
    whole_page(browser, shots / "poker-hand-after.png")
