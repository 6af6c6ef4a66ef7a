"""The player's account pages in a real browser (Debian's chromium, headless,
``tests.compliance.browser``; issue 38): a player logs in through the page, opens
their game history, recalls a round they played and checks its fairness proof in
the page (Web Crypto, ``js/fairness.js``), which also refuses tampered proofs, as
``tools/verify_deal.py`` does; changes a volume and the language (the client then
speaks French); asks for a deposit; sets a loss limit. Only REST: the page served
by ``live_server`` is enough. Screenshots go to ``$CASINO_SCREENSHOTS`` when set.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sys
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from casino.models import CashierTransaction, PlayerProfile, ResponsibleGaming
from games.house.models import PlayerRound
from games.house.realtime.presenters import game_history, round_fairness
from games.house.services import assign_seat, place_chip
from games.poker.models import PokerSeat, PokerTable
from tests.compliance.browser import needs_browser
from tests.house.services.conftest import key, later, make_player, make_table, open_round, play_out, wallet
from tests.poker import tables as poker_tables
from tests.poker.test_fairness import play_script
from tests.poker.test_tables import AA_VS_KK
from tools.verify_deal import leaf_of, merkle_root_of, proofs_of, verify

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres, needs_browser]

PASSWORD = "account-pw-38"


def round_in_play(player: int) -> str:
    """The player's Ante at another table whose round is still taking bets: its game number."""
    table = make_table("casino_holdem", code="CHEACC")
    assign_seat(table_id=table.pk, player_id=player)
    tick = open_round(table)
    place_chip(table_id=table.pk, player_id=player, spot="ante", amount=100, idempotency_key=key(), now=later(tick))
    return str(PlayerRound.objects.get(player_id=player, round__table=table).game_number)


def played_hand(player: int) -> str:
    """A poker hand to its showdown with ``player`` in seat 1, who mucks (tests/poker/test_fairness.py's
    script): the hand id."""
    table = poker_tables.make_table()
    for seat, who in enumerate([player, poker_tables.make_player(), poker_tables.make_player()], start=1):
        poker_tables.sit(table, who, seat)
    PokerTable.objects.filter(pk=table.pk).update(button_seat=3)
    table = poker_tables.advance(table, cards=AA_VS_KK)
    hand_id = str(table.current_hand_id)
    play_script(table, [player, *PokerSeat.objects.filter(table=table).exclude(player_id=player)
                        .order_by("seat_number").values_list("player_id", flat=True)])  # fmt: skip
    return hand_id


def played_round() -> tuple[str, str]:
    """A settled UTH round played by a new player through the services (Ante and
    Best Five, the decisions left to their timeouts): (username, game number)."""
    table = make_table("uth", code="UTHACC")
    player = make_player(table, funds=100_000, name="alice")
    user = get_user_model().objects.get(pk=player)
    user.set_password(PASSWORD)
    user.save()
    tick = open_round(table)
    for spot, amount in (("ante", 500), ("best_five", 200)):
        place_chip(
            table_id=table.pk, player_id=player, spot=spot, amount=amount, idempotency_key=key(), now=later(tick)
        )
    play_out(table, tick)
    row = PlayerRound.objects.get(player_id=player)
    assert row.status == "settled"
    return user.username, row.game_number


def poker_answer() -> dict[str, Any]:
    """A poker hand's fairness answer (docs/fairness.md) over a shuffled deck: the
    board and one shown hand revealed, the viewer's own two cards, each with its
    proof, built with the reference checker's own Merkle functions."""
    deck = [rank + suit for rank in "23456789TJQKA" for suit in "shdc"]
    random.Random(38).shuffle(deck)
    salts = [hashlib.sha256(f"salt-{i}".encode()).hexdigest() for i in range(52)]
    leaves = [leaf_of(salts[i], i, card) for i, card in enumerate(deck)]
    places = {0: ("seat:1", 0), 2: ("seat:1", 1), 1: ("seat:2", 0), 3: ("seat:2", 1)}
    places |= {5 + i: ("board", i) for i in range(3)} | {9: ("board", 3), 11: ("board", 4)}
    proofs = proofs_of(leaves, list(places))

    def entry(position: int) -> dict[str, Any]:
        to, slot = places[position]
        return {"position": position, "card": deck[position], "salt": salts[position], "proof": proofs[position],
                "to": to, "slot": slot}  # fmt: skip

    return {
        "game_number": "NL1-20261128-160000",
        "algorithm": "merkle-sha256",
        "commitment": merkle_root_of(leaves),
        "deck_size": 52,
        "revealed": [entry(p) for p in (1, 3, 5, 6, 7, 9, 11)],
        "yours": [entry(0), entry(2)],
    }


def wait(driver: Any, condition: Any, timeout: float = 30) -> Any:
    """``condition`` within ``timeout`` s: 30, not Selenium's usual 10, because CI shares 2 cores
    between this browser, its live server and the other xdist worker (a 10 s wait timed out there
    once). A timeout names the test's line that waited, since CI's log may cut the traceback."""
    from selenium.webdriver.support.ui import WebDriverWait

    line = sys._getframe(1).f_lineno
    return WebDriverWait(driver, timeout).until(condition, message=f"waited {timeout} s at line {line}")


def js_verify(driver: Any, answer: Any, history: Any = None) -> list[str]:
    """``verify`` of ``js/fairness.js`` run in the page on ``answer`` (and ``history``)."""
    script = """
        const [answer, history, done] = arguments;
        import('/static/client/js/fairness.js')
          .then((m) => m.verify(answer, history)).then(done, (e) => done(['threw: ' + e]));
    """
    return driver.execute_async_script(script, answer, history)


def test_history_recall_fairness_settings_cashier_and_limits_in_a_real_browser(
    live_server,
    browser,
    tmp_path: Path,
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import Select

    shots = Path(os.environ.get("CASINO_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    username, game_number = played_round()
    player_id = get_user_model().objects.get(username=username).pk
    in_play = round_in_play(player_id)
    hand_id = played_hand(player_id)
    browser.set_window_size(1280, 800)
    browser.set_script_timeout(20)

    # Log in through the page.
    browser.get(f"{live_server.url}/#/login")
    browser.find_element(By.ID, "username").send_keys(username)
    browser.find_element(By.ID, "password").send_keys(PASSWORD)
    browser.find_element(By.ID, "login-submit").click()
    wait(browser, ec.url_contains("#/lobby"))

    # The history lists the round; the recall shows its cards and wagers.
    browser.get(f"{live_server.url}/#/account/history")
    row = wait(
        browser, ec.presence_of_element_located((By.CSS_SELECTOR, f'#history-rounds tr[data-game="{game_number}"]'))
    )
    assert "Ultimate Texas Hold'em" in row.text
    browser.save_screenshot(str(shots / "account-1-history.png"))
    row.find_element(By.LINK_TEXT, game_number).click()
    wait(browser, ec.text_to_be_present_in_element((By.ID, "account-heading"), game_number))
    wagers = browser.find_element(By.ID, "recall-wagers").text
    assert "Ante" in wagers
    assert "Best Five" in wagers
    recall = game_history(game_number=game_number, player_id=player_id)
    shown = browser.find_elements(By.CSS_SELECTOR, ".facts .card")
    assert len(shown) == 2 + 5 + 2  # the dealer's two, the board's five, the player's two, face up
    assert {c.get_attribute("aria-label") for c in shown} == {
        *recall["cards"]["dealer"],
        *recall["cards"]["board"],
        *recall["cards"]["player"],
    }

    browser.find_element(By.CSS_SELECTOR, "#recall-terms summary").click()
    terms = browser.find_element(By.ID, "recall-terms").text
    assert "Best Five" in terms
    assert "pay table 1" in terms  # the tables in force when the round was played (the fixture's table 1)

    # The fairness proof, checked in the page.
    browser.find_element(By.ID, "fairness-verify").click()
    result = wait(browser, ec.presence_of_element_located((By.CSS_SELECTOR, "#fairness-result[data-outcome]")))
    assert result.get_attribute("data-outcome") == "verified", result.text
    assert "Verified." in result.text
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", result)
    browser.save_screenshot(str(shots / "account-2-recall-verified.png"))

    # A poker hand: the board, the aces shown, and the player's own mucked kings, each proven.
    browser.get(f"{live_server.url}/#/account/history")
    wait(browser, ec.presence_of_element_located((By.CSS_SELECTOR, f'#history-hands tr[data-hand="{hand_id}"]')))
    browser.find_element(By.LINK_TEXT, hand_id).click()
    wait(browser, ec.element_to_be_clickable((By.ID, "fairness-verify"))).click()
    proven = wait(browser, ec.presence_of_element_located((By.CSS_SELECTOR, "#fairness-result[data-outcome]")))
    assert proven.get_attribute("data-outcome") == "verified", proven.text
    assert "9 cards" in proven.text  # five on the board, two shown, two of the player's own
    shown = {c.get_attribute("aria-label") for c in browser.find_elements(By.CSS_SELECTOR, ".facts .card")}
    assert {"3h", "8s", "9d", "Jc", "4s", "As", "Ah", "Ks", "Kh"} <= shown
    assert not {"2c", "7d"} & shown  # the folded hand is nobody else's to see
    assert "Your hand (seat 1)" in browser.find_element(By.CSS_SELECTOR, ".facts").text
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", proven)
    browser.save_screenshot(str(shots / "account-2b-poker-hand-verified.png"))

    # A round still in play shows its commitment only: nothing to check yet, and nothing failed.
    browser.get(f"{live_server.url}/#/account/history/{in_play}")
    wait(browser, ec.element_to_be_clickable((By.ID, "fairness-verify"))).click()
    pending = wait(browser, ec.presence_of_element_located((By.CSS_SELECTOR, "#fairness-result[data-outcome]")))
    assert pending.get_attribute("data-outcome") == "pending", pending.text
    assert "still in play" in pending.text

    # The page's verifier and tools/verify_deal.py agree, on the true proof and on tampered ones.
    answer = json.loads(json.dumps(round_fairness(game_number=game_number), default=str))
    history = json.loads(json.dumps(recall, default=str))
    assert verify(answer, history) == [] == js_verify(browser, answer, history)
    swapped = json.loads(json.dumps(answer))
    first, second = swapped["leaves"][0], swapped["leaves"][1]
    first["card"], second["card"] = second["card"], first["card"]  # two cards exchanged after the commitment
    salted = json.loads(json.dumps(answer))
    salted["leaves"][7]["salt"] = "0" * 64  # one position's salt forged
    recalled = json.loads(json.dumps(history))
    dealt = recalled["cards"]["board"]
    recalled["cards"]["board"] = [dealt[1], dealt[0], *dealt[2:]]  # a history showing another board order
    for forged, with_history in ((swapped, None), (salted, None), (answer, recalled)):
        expected = verify(forged, with_history)
        assert expected, "the tampering must be caught by the reference checker"
        assert js_verify(browser, forged, with_history) == expected
    legacy_cut = {**answer, "commitment": "f" * 64}
    assert js_verify(browser, legacy_cut) == verify(legacy_cut) != []
    # A poker hand's shape: single leaves proven by their Merkle paths.
    poker = poker_answer()
    assert verify(poker) == [] == js_verify(browser, poker)
    moved = json.loads(json.dumps(poker))
    moved["revealed"][0]["position"] += 1  # a leaf claimed at another place than its own
    borrowed = json.loads(json.dumps(poker))
    borrowed["yours"][0]["proof"] = poker["revealed"][0]["proof"]  # another leaf's path
    for forged in (moved, borrowed):
        assert verify(forged) != []
        assert js_verify(browser, forged) == verify(forged)

    # Settings: a volume and the language, drawn from the API's own description.
    browser.get(f"{live_server.url}/#/account/settings")
    volume = wait(browser, ec.element_to_be_clickable((By.ID, "setting-game_sound_volume")))
    before = int(volume.get_attribute("value"))
    browser.execute_script("arguments[0].focus()", volume)
    volume.send_keys(Keys.ARROW_LEFT, Keys.ARROW_LEFT)  # the keyboard moves the slider (and saves each step)
    wait(browser, ec.text_to_be_present_in_element((By.ID, "setting-game_sound_volume-value"), str(before - 2)))
    wait(browser, lambda _: PlayerProfile.objects.filter(user__username=username,
                                                         game_sound_volume=before - 2).exists())  # fmt: skip
    browser.save_screenshot(str(shots / "account-3-settings.png"))
    Select(browser.find_element(By.ID, "setting-language")).select_by_value("fr")
    wait(browser, ec.text_to_be_present_in_element((By.CSS_SELECTOR, ".account h1"), "Mon compte"))
    assert browser.find_element(By.ID, "account-tab-history").text == "Historique de jeu"
    assert browser.find_element(By.CSS_SELECTOR, "#topbar nav").text.split() == ["Salon", "Compte"]
    assert PlayerProfile.objects.get(user__username=username).language == "fr"
    # The API's own labels follow: the settings panel is drawn again in French.
    wait(browser, ec.text_to_be_present_in_element((By.CSS_SELECTOR, "#settings-sound legend"), "Son"))
    browser.save_screenshot(str(shots / "account-4-settings-french.png"))

    # The cashier: a deposit request waits for the payment provider.
    browser.get(f"{live_server.url}/#/account/cashier")
    wait(browser, ec.element_to_be_clickable((By.ID, "cashier-deposit-amount"))).send_keys("25")
    browser.find_element(By.ID, "cashier-deposit-submit").click()
    wait(browser, ec.text_to_be_present_in_element((By.ID, "cashier-deposit-status"), "Dépôt de 25"))
    txn = CashierTransaction.objects.get(player__username=username)
    assert (txn.kind, txn.amount, txn.state) == ("deposit", 2500, "requested")
    wait(browser, ec.text_to_be_present_in_element((By.ID, "cashier-transactions"), "demandé"))
    # A withdrawal larger than the balance is refused (nothing held); a smaller one is held at once.
    balance = wallet(txn.player_id)
    withdraw = browser.find_element(By.ID, "cashier-withdrawal-amount")
    withdraw.send_keys("5000")
    browser.find_element(By.ID, "cashier-withdrawal-submit").click()
    wait(browser, ec.text_to_be_present_in_element((By.ID, "cashier-withdrawal-status"), "(insufficient_funds)"))
    assert wallet(txn.player_id) == balance
    withdraw.clear()
    withdraw.send_keys("5")
    browser.find_element(By.ID, "cashier-withdrawal-submit").click()
    wait(browser, ec.text_to_be_present_in_element((By.ID, "cashier-withdrawal-status"), "Retrait de 5"))
    assert wallet(txn.player_id) == balance - 500
    wait(browser, ec.text_to_be_present_in_element((By.ID, "cashier-balance"), str((balance - 500) // 100)))
    browser.save_screenshot(str(shots / "account-5a-cashier.png"))

    # The statement: the deposit made before the round, the round's stakes with its game number.
    browser.get(f"{live_server.url}/#/account/statement")
    wait(browser, ec.text_to_be_present_in_element((By.ID, "statement-lines"), game_number))
    lines = browser.find_element(By.ID, "statement-lines").text
    assert "dépôt" in lines
    assert "mise" in lines
    browser.save_screenshot(str(shots / "account-5b-statement.png"))

    # A loss limit, applied at once (more protective); a refusal is the API's, in French.
    browser.get(f"{live_server.url}/#/account/limits")
    loss = wait(browser, ec.element_to_be_clickable((By.ID, "limit-loss_day")))
    loss.send_keys("100")
    browser.find_element(By.ID, "limits-save").click()
    wait(browser, ec.text_to_be_present_in_element((By.ID, "limit-loss_day-now"), "100"))
    assert ResponsibleGaming.objects.get(user__username=username).limits["EUR"]["loss_day"]["amount"] == 10_000
    browser.find_element(By.ID, "exclusion-kind")
    Select(browser.find_element(By.ID, "exclusion-kind")).select_by_value("self_exclusion")
    days = browser.find_element(By.ID, "exclusion-days")
    days.clear()
    days.send_keys("10")  # a self-exclusion is 180 days or more
    browser.find_element(By.ID, "exclusion-confirm").click()
    browser.find_element(By.ID, "exclusion-submit").click()
    wait(browser, ec.text_to_be_present_in_element((By.ID, "exclusion-status"), "(invalid_limit)"))
    assert not ResponsibleGaming.objects.get(user__username=username).excluded_until
    browser.save_screenshot(str(shots / "account-6-limits.png"))

    # The games' help pages, as the API serves them in the player's language.
    browser.get(f"{live_server.url}/#/account/help/casino_holdem")
    wait(browser, ec.text_to_be_present_in_element((By.ID, "help-page"), "Casino Hold'em"))
    assert browser.find_element(By.ID, "help-page").get_attribute("lang") == "fr"
    browser.save_screenshot(str(shots / "account-7-help.png"))

    # A phone: the history and the recall stay readable, and the proof checks.
    browser.set_window_size(390, 844)
    browser.get(f"{live_server.url}/#/account/history")
    wait(browser, ec.presence_of_element_located((By.CSS_SELECTOR, f'#history-rounds tr[data-game="{game_number}"]')))
    browser.save_screenshot(str(shots / "account-8-phone-history.png"))
    browser.get(f"{live_server.url}/#/account/history/{game_number}")
    wait(browser, ec.element_to_be_clickable((By.ID, "fairness-verify"))).click()
    wait(browser, ec.text_to_be_present_in_element((By.ID, "fairness-result"), "Vérifiée."))
    browser.execute_script("document.getElementById('fairness-verify').scrollIntoView({block: 'start'})")
    browser.save_screenshot(str(shots / "account-9-phone-recall.png"))
