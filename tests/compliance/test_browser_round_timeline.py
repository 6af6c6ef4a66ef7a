"""The rounds' admin timeline in a real browser (Debian's chromium, headless,
through the system chromedriver: ``make browser-deps``), as a non-superuser
operator reads it: mid-round (UTH dealt, before the flop) the rendered page
shows the shared hand and no dealer or board card; after the round it shows
them all. Screenshots of the timeline both times go to ``$CASINO_SCREENSHOTS``
(a folder; default: the test's temporary folder), to be looked at.

Skipped outside CI without chromium and chromedriver, failing in CI (``tests.compliance.browser``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from compliance.roles import OPERATOR, setup_roles
from games.house.models import HouseRound
from tests.compliance.browser import needs_browser
from tests.compliance.hidden_cards import cards_in
from tests.house.services.conftest import dealt_round, play_out

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres, needs_browser]

PLAYER_HAND, DEALER, BOARD = ("As", "Kd"), ("2c", "3c"), ("Ah", "7d", "9s", "Jc", "4h")


def test_the_round_timeline_in_a_browser_hides_the_face_down_cards_until_the_round_ends(
    live_server, browser, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    shots = Path(os.environ.get("CASINO_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    setup_roles()
    operator = get_user_model().objects.create_user("floor", password="floor-manager-pw", is_staff=True)
    operator.groups.add(Group.objects.get(name=OPERATOR))
    table, _, tick = dealt_round("uth", " ".join(PLAYER_HAND), dealer=" ".join(DEALER), board=" ".join(BOARD),
                                 code="UTHT")  # fmt: skip
    assert tick.phase == "preflop"
    round_row = HouseRound.objects.get(round_id=tick.round_id)

    browser.set_window_size(1600, 2400)
    browser.get(f"{live_server.url}/admin/login/?next=/admin/games/houseround/{round_row.pk}/change/")
    browser.find_element(By.NAME, "username").send_keys("floor")
    browser.find_element(By.NAME, "password").send_keys("floor-manager-pw")
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    timeline = browser.find_element(By.ID, "round-timeline")
    browser.execute_script("arguments[0].scrollIntoView();", timeline)
    timeline.screenshot(str(shots / "round-timeline-mid-round.png"))
    mid_round = timeline.text
    assert "house_round.cards_dealt" in mid_round
    assert cards_in(mid_round) == set(PLAYER_HAND)  # the shared hand only: no dealer card, no board card
    assert "(sealed)" in mid_round  # the shuffle's sealed deck
    # The configuration in force is a shift manager's to read in full, in play too.
    assert '"durations": {"betting": ' in mid_round
    assert "(not shown to the table yet)" not in mid_round

    play_out(table, tick)
    browser.refresh()
    timeline = browser.find_element(By.ID, "round-timeline")
    browser.execute_script("arguments[0].scrollIntoView();", timeline)
    timeline.screenshot(str(shots / "round-timeline-after.png"))
    assert {*PLAYER_HAND, *DEALER, *BOARD} <= cards_in(timeline.text)
