"""The web client's poker views in a real Chromium (issue 38): two players, each
in their own browser, sit down with the buy-in chooser at a no-limit table,
play a hand to the showdown against each other (one raises with a preset of the
action bar, the other calls, then both check it down), see the result, replay
the hand step by step from their history; and a player registers for a Sit &
Go from the lobby. A real uvicorn serves the client and the API, a real Celery
worker deals and runs the clock. Screenshots of each step go to
``$CASINO_SCREENSHOTS`` when it is set."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from games.poker.models import PokerHand, PokerTable
from games.poker.realtime import presenters
from games.poker.tournament import services as tournament_services
from games.poker.tournament.models import TournamentEntry
from tests.compliance.browser import browser, needs_browser
from tests.poker.tables import make_player, make_table, make_tournament, wallet

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres, needs_browser]
PASSWORD = "poker-pass-1"
WAIT = 30

# A second player's own Chromium, made as the ``browser`` fixture makes the first.
second_browser = pytest.fixture(browser._get_wrapped_function(), name="second_browser")


def player(name: str) -> tuple[int, str]:
    player_id = make_player(funds=50_000)
    user = get_user_model().objects.get(pk=player_id)
    user.username = name
    user.set_password(PASSWORD)
    user.save()
    return player_id, name


def log_in(browser: Any, base: str, username: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(f"{base}/#/login")
    browser.find_element(By.ID, "username").send_keys(username)
    browser.find_element(By.ID, "password").send_keys(PASSWORD)
    browser.find_element(By.ID, "login-submit").click()
    WebDriverWait(browser, WAIT).until(lambda b: b.execute_script("return location.hash") == "#/lobby")


def wait_for(browser: Any, css: str, timeout: float = WAIT) -> Any:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, timeout).until(
        expected_conditions.visibility_of_element_located((By.CSS_SELECTOR, css))
    )


def click(browser: Any, css: str) -> None:
    """Click ``css`` once it is there: the lobby redraws its rows every few seconds, so
    an element found just before a redraw is stale and is looked up again."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    def clicked(page: Any) -> bool:
        page.find_element(By.CSS_SELECTOR, css).click()
        return True

    WebDriverWait(browser, WAIT, ignored_exceptions=(StaleElementReferenceException,)).until(clicked)


def text_of(browser: Any, css: str) -> str:
    """The text of ``css`` once it is there and not empty (looked up again if a redraw replaced it)."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    return str(
        WebDriverWait(browser, WAIT, ignored_exceptions=(StaleElementReferenceException,)).until(
            lambda page: page.find_element(By.CSS_SELECTOR, css).text
        )
    )


def wait_text(browser: Any, css: str, needle: str) -> None:
    """Wait until the text of ``css`` says ``needle`` (the page redraws from the feed)."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, WAIT).until(lambda page: needle in text_of(page, css))


def present(browser: Any, css: str) -> Any:
    from selenium.webdriver.common.by import By

    found = browser.find_elements(By.CSS_SELECTOR, css)
    return found[0] if found else None


def euros(cents: int) -> str:
    """Money as the client writes it in English (``ui.money``): €0.59, €2."""
    return f"€{cents // 100}" if cents % 100 == 0 else f"€{cents / 100:.2f}"


def console_errors(browser: Any) -> list[str]:
    """The page's script errors (a missing favicon is the page shell's, not a poker view's)."""
    logged = browser.get_log("browser")
    return [e["message"] for e in logged if e["level"] == "SEVERE" and "favicon.ico" not in e["message"]]


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    path = Path(os.environ.get("CASINO_SCREENSHOTS") or tmp_path)
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def browsers(browser: Any, second_browser: Any) -> tuple[Any, Any]:
    for each in (browser, second_browser):
        each.set_window_size(1280, 800)
        each.implicitly_wait(0)
    return browser, second_browser


def sit(browser: Any, seat: int) -> int:
    """Sit at ``seat`` through the buy-in chooser (one step up, one down: the
    default buy-in); returns the buy-in the chooser shows."""
    click(browser, f"#sit-{seat}")
    wait_for(browser, "#buy-in")
    minus, plus = present(browser, "#buy-in-minus"), present(browser, "#buy-in-plus")
    start = int(present(browser, "#buy-in-input").get_attribute("value"))
    plus.click()
    assert int(present(browser, "#buy-in-input").get_attribute("value")) > start
    minus.click()
    assert int(present(browser, "#buy-in-input").get_attribute("value")) == start
    present(browser, "#buy-in-confirm").click()
    wait_for(browser, f"#seat-{seat}.you")
    return start


def play_to_showdown(players: list[tuple[Any, int]], shots: Path) -> None:
    """Whoever has the action bar acts: the first turn raises with the pot
    preset, then everyone calls or checks (with the bar's key) until the result is shown."""
    from selenium.webdriver.common.action_chains import ActionChains

    raised = False
    deadline = time.monotonic() + 90
    shot_turn = False
    while time.monotonic() < deadline:
        if all(present(b, "#showdown li") for b, _ in players):
            return
        for page, _seat in players:
            if present(page, "#act-fold") is None:
                continue
            if not shot_turn:
                page.save_screenshot(str(shots / "poker-03-action-bar.png"))
                page.set_window_size(390, 844)  # on a phone the bar stays at the bottom of the screen
                page.save_screenshot(str(shots / "poker-03-action-bar-phone.png"))
                page.set_window_size(1280, 800)
                shot_turn = True
            if not raised and present(page, "#preset-pot"):
                click(page, "#preset-pot")
                click(page, "#act-raise")
                raised = True
            else:  # the action bar's key: C checks or calls
                ActionChains(page).send_keys("c").perform()
            # The bar goes away once the action is taken (the next view comes from the feed).
            end = time.monotonic() + 10
            while present(page, "#act-fold") is not None and time.monotonic() < end:
                time.sleep(0.05)
        time.sleep(0.1)
    raise AssertionError(f"no showdown within 90 s: {[console_errors(b) for b, _ in players]}")


def test_two_browsers_play_a_hand_to_showdown_and_replay_it(
    asgi_server: str, celery_worker_process: Any, browsers: tuple[Any, Any], shots: Path
) -> None:
    from selenium.webdriver.common.by import By

    table = make_table(code="NLB", name="Browser NL", turn_seconds=30, time_bank_seconds=10,
                       between_hands_seconds=1, buy_in_min=200, buy_in_max=2000)  # fmt: skip
    first, second = browsers
    alice, bob = player("alice_b"), player("bob_b")

    log_in(first, asgi_server, alice[1])
    row = text_of(first, f'#poker-tables tr[data-table="{table.code}"]')
    assert "€0.05 / €0.10" in row
    assert "0 / 6" in row
    first.save_screenshot(str(shots / "poker-01-lobby.png"))
    click(first, f"#open-poker-{table.code}")
    wait_for(first, "#seat-1, #sit-1")
    assert "open" in present(first, "#feed-status").get_attribute("class")
    buy_in = sit(first, 1)
    assert 200 <= buy_in <= 2000
    first.save_screenshot(str(shots / "poker-02-seated.png"))

    log_in(second, asgi_server, bob[1])
    second.get(f"{asgi_server}/#/poker/{table.pk}")
    sit(second, 2)

    # The dealer deals: each player sees their own two cards, the other's face down.
    for page, mine, theirs in ((first, 1, 2), (second, 2, 1)):
        wait_for(page, f"#hole-{mine} .card:not(.back)")
        assert len(page.find_elements(By.CSS_SELECTOR, f"#hole-{theirs} .card.back")) == 2
        assert not page.find_elements(By.CSS_SELECTOR, f"#hole-{theirs} .card:not(.back)")

    play_to_showdown([(first, 1), (second, 2)], shots)
    hand = PokerHand.objects.filter(table=table).order_by("hand_number").first()
    assert hand is not None
    assert hand.status == "complete"
    # The first to act (the button, heads-up) raised with the pot preset: call the 5 to 10, then
    # raise the pot after the call (15 + 5 = 20): to 30. The other called; then checks to the river.
    actions = [e for e in presenters.hand_history(hand_id=hand.hand_id, viewer_id=alice[0])["events"]
               if e["type"] == "poker.action_taken"]  # fmt: skip
    assert (actions[0]["action"], actions[0]["total"]) == ("raise", 30)
    assert [a["action"] for a in actions[1:]] == ["call"] + ["check"] * 6
    won = hand.pot - hand.rake  # heads-up: one pot, to one player or split
    for page in (first, second):
        result = text_of(page, "#showdown")
        assert f"wins {euros(won)}" in result or result.count("wins") == 2, result
        # A showdown: the winner's cards are shown to both players.
        assert page.find_elements(By.CSS_SELECTOR, "#showdown .shown .card:not(.back)")
    first.save_screenshot(str(shots / "poker-04-showdown.png"))
    second.set_window_size(390, 844)
    second.save_screenshot(str(shots / "poker-05-showdown-phone.png"))
    second.set_window_size(1280, 800)

    # The hand's replay, step by step, from the player's history.
    present(first, "#history-refresh").click()
    wait_for(first, f'#hand-list tr[data-hand="{hand.hand_id}"] .replay-open').click()
    wait_for(first, "#replay-stage")
    assert "1 of" in present(first, "#replay-position").text or "1 sur" in present(first, "#replay-position").text
    for _ in range(6):
        present(first, "#replay-next").click()
    assert "Seat" in present(first, "#replay-event").text
    first.save_screenshot(str(shots / "poker-06-replay.png"))
    present(first, "#replay-last").click()
    assert "Hand over" in present(first, "#replay-event").text or present(first, "#replay-next").get_attribute(
        "disabled"
    )

    assert not console_errors(first)
    assert not console_errors(second)

    # Sit out (from the next hand: the seat says so), then in again.
    click(second, "#sit-out")
    wait_for(second, "#sit-in")
    wait_text(second, "#seat-2", "sitting out")
    wait_text(first, "#seat-2", "sitting out")  # the other player sees it too
    click(second, "#sit-in")
    wait_for(second, "#sit-out")

    # The same player opens the table in a second tab: the first one is told it plays there now (4409).
    original = first.current_window_handle
    first.switch_to.new_window("tab")
    first.get(f"{asgi_server}/#/poker/{table.pk}")
    wait_for(first, "#seat-1.you")
    first.switch_to.window(original)
    assert "another window" in text_of(first, "#closed-reason")
    assert "closed" in present(first, "#feed-status").get_attribute("class")
    first.save_screenshot(str(shots / "poker-07-replaced.png"))


def test_a_player_registers_for_a_sit_and_go_from_the_lobby_and_is_seated_when_it_starts(
    asgi_server: str, celery_worker_process: Any, browser: Any, shots: Path
) -> None:
    tournament = make_tournament(name="Browser SNG", max_players=2, table_seats=2)
    carol = player("carol_b")
    before = wallet(carol[0])
    browser.set_window_size(1280, 800)
    log_in(browser, asgi_server, carol[1])
    click(browser, f"#register-{tournament.pk}")
    wait_for(browser, f"#registered-{tournament.pk}")
    assert wallet(carol[0]) == before - tournament.buy_in - tournament.fee
    click(browser, f"#unregister-{tournament.pk}")
    click(browser, f"#register-{tournament.pk}")  # refunded, then in again
    wait_for(browser, f"#registered-{tournament.pk}")
    assert "1 / 2" in text_of(browser, f'#poker-tournaments tr[data-tournament="{tournament.pk}"]')
    states = TournamentEntry.objects.filter(tournament=tournament, player_id=carol[0]).values_list("state", flat=True)
    assert sorted(states) == ["registered", "unregistered"]
    assert wallet(carol[0]) == before - tournament.buy_in - tournament.fee
    browser.save_screenshot(str(shots / "poker-08-registered.png"))

    browser.get(f"{asgi_server}/#/tournament/{tournament.pk}")
    wait_for(browser, "#t-registered")
    assert text_of(browser, "#t-players") == "1 registered of 2"
    wait_for(browser, "#feed-status.open")
    wait_text(browser, "#t-standings", "carol_b (you)")
    browser.save_screenshot(str(shots / "poker-09-tournament.png"))
    # The second player fills the Sit & Go: it starts, and Carol's page opens her table.
    dave = make_player()
    tournament_services.register(
        tournament_id=tournament.pk, player_id=dave, idempotency_key="dave", now=timezone.now()
    )
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    table_id = PokerTable.objects.get(tournament=tournament).pk
    WebDriverWait(browser, WAIT).until(lambda b: b.execute_script("return location.hash") == f"#/poker/{table_id}")
    wait_for(browser, ".seat.you")
    assert "1,500 chips" in text_of(browser, ".seat.you")
    browser.save_screenshot(str(shots / "poker-10-tournament-table.png"))
    # In French: the table's own words and the chips.
    Select(browser.find_element(By.ID, "language")).select_by_value("fr")
    wait_text(browser, "#seats", "Siège 1")
    assert "1 500 jetons" in text_of(browser, ".seat.you").replace("\u202f", " ")
    browser.save_screenshot(str(shots / "poker-11-tournament-table-fr.png"))
    # Back at the tournament: the standings with both players' chips, the link to her table.
    click(browser, "#poker-tournament-link")
    wait_text(browser, "#t-standings", "carol_b (vous)")
    assert text_of(browser, "#t-standings").replace("\u202f", " ").count("1 500") == 2
    wait_for(browser, "#t-my-table")
    browser.save_screenshot(str(shots / "poker-12-tournament-running-fr.png"))
