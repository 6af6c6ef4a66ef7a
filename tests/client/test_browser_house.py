"""The house tables in a real browser (issue 38; Debian's chromium, headless): a
player logs in through the page, opens Ultimate Texas Hold'em, Casino Hold'em and
Xtreme Hold'em side by side (``#/house/<a>,<b>,<c>``), places chips from the tray
(only the chips the balance covers are enabled: seed 000:179), uses seed 000's
shortcut keys, takes the decisions offered, and sees each result and the new
balance. Closing the page before "No More Bets" declines the bets (seeds 000/003)
and the reopened page says so; a second browser of the same player at the same
table closes the first with the 4409 message. Real uvicorn, Celery dealer,
PostgreSQL and Redis. Screenshots of each step go to ``$CASINO_SCREENSHOTS``."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from games.house.models import HouseTable, PlayerRound
from games.house.realtime.presenters import game_history
from games.house.services import dealer
from ledger.services import player_balances
from tests.client.house_helpers import PHONE, Shots, attr, chromium, data, element, funded_player, log_in, wait
from tests.compliance.browser import needs_browser
from tests.conftest import celery_worker
from tests.house.live.conftest import fast_table, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres, needs_browser]

CHIPS = [100, 500, 1000, 10_000]
FUNDS = 5_000  # covers the 1, 5 and 10 euro chips, not the 100 euro one
PROGRESSIVES = {
    "reset": {"star": 1_000_000, "spade": 250_000, "heart": 100_000, "diamond": 50_000, "club": 25_000},
    "contribution_bp": {"star": 200, "spade": 150, "heart": 100, "diamond": 75, "club": 50},
}
WHEEL = {"name": "test-wheel", "version": "1", "segments": [
    {"label": "10x", "multiple": 10, "weight": 3}, {"label": "50x", "multiple": 50, "weight": 1}]}  # fmt: skip
PHASES = {"decision_seconds": 6, "deal_pause_seconds": 1, "between_rounds_seconds": 1, "warning_seconds": 2}
REPLACED = "This table was opened in another window or device"


@pytest.fixture(scope="module")
def dealer_worker(django_db_setup, django_db_blocker) -> Iterator[Any]:
    """The dealer, with a one-second REST presence grace (docs/websocket.md, "Presence"):
    a page closed a few seconds before "No More Bets" is absent at it."""
    with celery_worker(log_name="test-worker-client-house.log", env={"CASINO_PRESENCE_GRACE_SECONDS": "1"}) as worker:
        yield worker


def click(driver: Any, table_id: int, name: str, attempts: int = 20) -> None:
    """Click the panel's element (found again if a redraw replaced it)."""
    from selenium.common.exceptions import StaleElementReferenceException

    for _ in range(attempts):
        found = element(driver, table_id, name)
        try:
            if found is not None and found.is_enabled():
                found.click()
                return
        except StaleElementReferenceException:
            pass
        time.sleep(0.05)
    raise AssertionError(f"t{table_id}-{name} not clickable")


def amount(driver: Any, table_id: int, name: str, field: str = "amount") -> int:
    value = data(driver, table_id, name, field)
    return int(value) if value not in (None, "") else 0


def betting_window(driver: Any, table_id: int, *, seconds: int) -> bool:
    left = data(driver, table_id, "countdown", "seconds")
    return data(driver, table_id, "light", "light") == "green" and left not in (None, "") and int(left) >= seconds


def press(driver: Any, *keys: str, hold: float = 0) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    chain = ActionChains(driver)
    for key in keys:
        chain.key_down(key)
    if hold:
        chain.pause(hold)
    for key in reversed(keys):
        chain.key_up(key)
    chain.perform()


def keyboard_betting(driver: Any, table_id: int) -> None:
    """Seed 000's keys at the UTH panel while betting is open: 1..9 pick a chip,
    Ctrl+Z and Delete undo, Space repeats and then doubles, holding Delete clears."""
    from selenium.webdriver.common.keys import Keys

    press(driver, "2")
    wait(driver, 5).until(lambda d: data(d, table_id, "chip-500", "amount") and
                          attr(d, table_id, "chip-500", "aria-checked") == "true")  # fmt: skip
    press(driver, "4")  # the 100 euro chip is not covered by the balance: nothing changes
    assert attr(driver, table_id, "chip-500", "aria-checked") == "true"
    press(driver, "1")
    wait(driver, 5).until(lambda d: attr(d, table_id, "chip-100", "aria-checked") == "true")
    click(driver, table_id, "spot-ante")
    wait(driver, 5).until(lambda d: amount(d, table_id, "total", "minor") == 200)  # Ante + automatic Ante Plus
    press(driver, Keys.CONTROL, "z")
    wait(driver, 5).until(lambda d: amount(d, table_id, "total", "minor") == 0)
    click(driver, table_id, "spot-ante")
    wait(driver, 5).until(lambda d: amount(d, table_id, "total", "minor") == 200)
    press(driver, " ")  # bets on the table: Space doubles them
    wait(driver, 5).until(lambda d: amount(d, table_id, "total", "minor") == 400)
    press(driver, Keys.DELETE)  # a tap: undo the last bet (the double)
    wait(driver, 5).until(lambda d: amount(d, table_id, "total", "minor") == 200)
    press(driver, Keys.DELETE, hold=3.2)  # held three seconds: every bet cleared
    wait(driver, 5).until(lambda d: amount(d, table_id, "total", "minor") == 0)
    click(driver, table_id, "spot-ante")
    wait(driver, 5).until(lambda d: amount(d, table_id, "total", "minor") == 200)


def play(driver: Any, bets: dict[int, list[str]], shots: Shots, *, keyboard: int | None = None) -> None:
    """Bet ``bets[table]`` spots (one 1-euro chip each) at each panel when its betting
    opens, take the optimal (hinted) option whenever decisions are offered, until every
    panel shows its result."""
    state = dict.fromkeys(bets, "bet")
    clicked: dict[int, float] = {}
    deadline = time.monotonic() + 90
    while any(s != "done" for s in state.values()):
        assert time.monotonic() < deadline, state
        for table_id, spots in bets.items():
            if state[table_id] == "bet" and betting_window(driver, table_id, seconds=4 if table_id != keyboard else 9):
                # Seed 000:179: only the chips the balance covers are enabled.
                assert attr(driver, table_id, "chip-10000", "disabled") is not None
                assert attr(driver, table_id, "chip-100", "disabled") is None
                click(driver, table_id, "chip-100")
                if table_id == keyboard:
                    keyboard_betting(driver, table_id)
                for spot in spots:
                    if table_id == keyboard and spot == "ante":
                        continue
                    click(driver, table_id, f"spot-{spot}")
                    wait(driver, 5).until(lambda d, t=table_id, s=spot: amount(d, t, f"spot-{s}") == 100)
                shots.take(driver, f"bets-{table_id}")
                state[table_id] = "decide"
            elif state[table_id] == "decide":
                if element(driver, table_id, "result") is not None:
                    state[table_id] = "done"
                    shots.take(driver, f"result-{table_id}")
                    continue
                # The hinted option once the hint is in (the first offered when the optimal one is not).
                chosen = driver.execute_script(
                    "const [panel, hint] = arguments;"
                    "const o = document.querySelector(`${panel} .option.optimal`) ||"
                    " (document.getElementById(hint)?.textContent ? document.querySelector(`${panel} .option`) : null);"
                    "return o && o.dataset.option;",
                    f"#house-{table_id} .decision",
                    f"t{table_id}-hint",
                )
                # Clicked again if still offered 1.5 s later (a redraw under the pointer loses a click).
                if chosen and time.monotonic() - clicked.get(table_id, 0) > 1.5:
                    shots.take(driver, f"decision-{table_id}")
                    click(driver, table_id, f"option-{chosen}")
                    clicked[table_id] = time.monotonic()
        time.sleep(0.1)


def test_a_player_plays_uth_casino_holdem_and_xtreme_side_by_side(asgi_server, dealer_worker, tmp_path: Path) -> None:
    shots = Shots(tmp_path)
    uth = fast_table("uth", chips=CHIPS, betting_seconds=14, **PHASES)
    che = fast_table("casino_holdem", chips=CHIPS, betting_seconds=7, **PHASES)
    xtr = fast_table("xtreme", hand_mode="per_seat", chips=CHIPS, betting_seconds=7, wheel=WHEEL,
                     progressives=PROGRESSIVES, **PHASES)  # fmt: skip
    player_id, password = funded_player("house-browser", FUNDS)
    for table in (uth, che, xtr):
        dealer.start(table_id=table.pk)
    with chromium() as driver:
        log_in(driver, asgi_server, "house-browser", password)
        shots.take(driver, "lobby")
        driver.get(f"{asgi_server}/#/house/{uth.pk},{che.pk},{xtr.pk}")
        for table in (uth, che, xtr):
            wait(driver).until(lambda d, t=table.pk: data(d, t, "feed", "state") == "open")
        # Xtreme: the STAX meter and the Bonus Spin wheel's segments.
        # (the pools are seeded when the first round opens: a house_round.jackpot delta)
        wait(driver).until(lambda d: "Star Progressive" in (attr(d, xtr.pk, "jackpot", "text") or ""))
        segments = driver.execute_script(
            f"return [...document.querySelectorAll('#t{xtr.pk}-wheel li')].map(li => li.textContent)"
        )
        assert segments == ["10x", "50x"]
        shots.take(driver, "three-tables")
        play(driver, {uth.pk: ["ante"], che.pk: ["ante", "bonus"], xtr.pk: ["ante", "stax", "bonus_spin"]},
             shots, keyboard=uth.pk)  # fmt: skip
        for table in (uth, che, xtr):
            row = PlayerRound.objects.get(player_id=player_id, round__table=table, status="settled")
            # Decisions taken in the page (not all left to the timeout).
            recall = game_history(game_number=row.round.game_number, player_id=player_id)
            assert any(not d["auto"] for d in recall["player"]["decisions"]), recall["player"]["decisions"]
            shown = attr(driver, table.pk, "net", "text") or ""
            assert row.staked > 0
            sign = "-" if row.net < 0 else ""
            assert f"{sign}€{abs(row.net) / 100:,.2f}".replace(".00", "") in shown, (shown, row.net)
        # The balance after the three results: the top bar's equals the wallet's.
        balance, _ = player_balances(player_id=player_id, currency="EUR")
        nets = sum(PlayerRound.objects.filter(player_id=player_id).values_list("net", flat=True))
        assert balance == FUNDS + nets
        assert balance != FUNDS or nets == 0
        wait(driver).until(lambda d: d.find_element("id", "balance").get_attribute("data-minor") == str(balance))
        # Esc closes the result pop-up of the active panel.
        from selenium.webdriver.common.keys import Keys

        click(driver, uth.pk, "phase")
        press(driver, Keys.ESCAPE)
        wait(driver, 5).until(lambda d: element(d, uth.pk, "result") is None)
        shots.take(driver, "after-results")


def test_a_page_closed_before_no_more_bets_shows_the_bets_declined_and_a_second_browser_replaces_it(
    asgi_server, dealer_worker, tmp_path: Path
) -> None:
    shots = Shots(tmp_path)
    table = fast_table("uth", chips=CHIPS, betting_seconds=8, **PHASES)
    player_id, password = funded_player("house-leaver", FUNDS)
    dealer.start(table_id=table.pk)
    with chromium() as first:
        log_in(first, asgi_server, "house-leaver", password)
        first.get(f"{asgi_server}/#/house/{table.pk}")
        wait(first).until(lambda d: betting_window(d, table.pk, seconds=5))
        click(first, table.pk, "spot-ante")
        wait(first, 5).until(lambda d: amount(d, table.pk, "total", "minor") == 200)
        round_id = data(first, table.pk, "game-number", "round") or HouseTable.objects.get(pk=table.pk).current_round_id
        shots.take(first, "bet-before-leaving")
        # The tab is closed before "No More Bets" (the browser stays, in a new tab).
        tab = first.current_window_handle
        first.switch_to.new_window("tab")
        fresh = first.current_window_handle
        first.switch_to.window(tab)
        first.close()
        first.switch_to.window(fresh)
        declined = wait_for(lambda: PlayerRound.objects.filter(player_id=player_id, status="declined").first(),
                            timeout=30, what="the bets declined")  # fmt: skip
        assert declined.round.round_id == round_id
        assert player_balances(player_id=player_id, currency="EUR")[0] == FUNDS  # every chip returned
        first.get(f"{asgi_server}/#/house/{table.pk}")
        wait(first).until(lambda d: element(d, table.pk, "declined") is not None)
        text = attr(first, table.pk, "declined", "text") or ""
        assert declined.round.game_number in text
        assert "declined" in text
        assert "€2" in text  # the Ante and the automatic Ante Plus, returned
        shots.take(first, "declined-after-reopening")
        wait(first).until(lambda d: data(d, table.pk, "feed", "state") == "open")
        # The same player opens the table on another device (a phone): the first page stops, with the reason.
        with chromium(PHONE) as second:
            log_in(second, asgi_server, "house-leaver", password)
            second.get(f"{asgi_server}/#/house/{table.pk}")
            wait(second).until(lambda d: data(d, table.pk, "feed", "state") == "open")
            wait(first).until(lambda d: data(d, table.pk, "feed", "state") == "closed")
            assert data(first, table.pk, "feed", "code") == "4409"
            assert REPLACED in (attr(first, table.pk, "feed-reason", "text") or "")
            assert data(first, table.pk, "light", "light") == "red"
            assert first.execute_script(
                f"return [...document.querySelectorAll('#house-{table.pk} button.spot')].every(b => b.disabled)"
            )
            shots.take(first, "replaced-by-another-device")
            shots.take(second, "phone")


def test_several_tables_at_once_up_to_the_limit_the_next_shows_the_apis_refusal(asgi_server, tmp_path: Path) -> None:
    """``#/house/a,b,c,d,e``: one panel per table, each with its own feed; the player
    takes seats in order and the fifth is refused (RULES.md: at most 4 tables), its
    panel says so with the API's message and watches."""
    shots = Shots(tmp_path)
    tables = [fast_table("uth", chips=CHIPS) for _ in range(5)]
    _, password = funded_player("house-many", FUNDS)
    with chromium() as driver:
        log_in(driver, asgi_server, "house-many", password)
        driver.get(f"{asgi_server}/#/house/{','.join(str(t.pk) for t in tables)}")
        for table in tables:
            wait(driver).until(lambda d, t=table.pk: data(d, t, "feed", "state") == "open")
        refused = wait(driver).until(lambda d: attr(d, tables[-1].pk, "watching", "text"))
        assert "too_many_tables" in refused
        assert all(element(driver, t.pk, "watching") is None for t in tables[:-1])
        shots.take(driver, "five-tables")
