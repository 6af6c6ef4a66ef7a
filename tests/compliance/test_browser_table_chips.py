"""A shift manager sets a table's chips, mandatory side bets and multi-play in
the admin in a real browser (Debian's chromium, headless,
``tests.compliance.browser``; issue 37, parts 1 and 3): the change form shows
the table's chip set in minor units, the mandatory-wager boxes of the spots the
table offers and the multi-play box; a chip list out of order is refused on its
field and changes nothing; the saved change is a new configuration version, and
the table's help page (what a player opens) then lists the chips and the
mandatory STAX. Screenshots go to ``$CASINO_SCREENSHOTS`` when it is set.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.utils import timezone

from compliance.roles import OPERATOR, setup_roles
from games.help.services import table_help
from games.house.models import HouseTable, TableConfigVersion
from games.house.rules.table_config import betting_spots, required_spots
from games.house.services.tables import create_table
from tests.compliance.browser import admin_login, needs_browser

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres, needs_browser]

XTREME_LIMITS = {
    "ante": {"min": 100, "max": 10_000},
    "player_bonus": {"min": 100, "max": 2_500},
    "stax": {"min": 100, "max": 500},
}


def test_an_operator_sets_chips_mandatory_stax_and_multi_play_in_a_real_browser(
    live_server, browser, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    shots = Path(os.environ.get("CASINO_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    setup_roles()
    operator = get_user_model().objects.create_user("pit", password="pit-boss-pw", is_staff=True)
    operator.groups.add(Group.objects.get(name=OPERATOR))
    table = create_table(
        operator=operator,
        code="XTC",
        game_code="xtreme",
        currency="EUR",
        now=timezone.now(),
        config={
            "name": "Xtreme chips",
            "hand_mode": "per_seat",
            "max_seats": 7,
            "limits": XTREME_LIMITS,
            "pay_tables": {"xtra_bonus": 1, "player_bonus": 2, "stax": 6},
            "wheel": {},
            "progressives": {
                "reset": dict.fromkeys(("star", "spade", "heart", "diamond", "club"), 100000),
                "contribution_bp": dict.fromkeys(("star", "spade", "heart", "diamond", "club"), 100),
            },
            "betting_seconds": 15,
            "warning_seconds": 5,
            "decision_seconds": 12,
            "deal_pause_seconds": 2,
            "between_rounds_seconds": 5,
        },
    )
    assert table.chips == [100, 500, 1_000, 2_500, 10_000, 50_000]  # the euro's default set

    browser.set_window_size(1400, 1600)
    admin_login(browser, live_server.url, username="pit", password="pit-boss-pw",
                next_path=f"/admin/games/housetable/{table.pk}/change/", title="Change")  # fmt: skip
    chips = browser.find_element(By.NAME, "chips")
    assert chips.get_attribute("value") == "100, 500, 1000, 2500, 10000, 50000"
    optional = sorted(set(betting_spots("xtreme")) - set(required_spots("xtreme")))
    boxes = browser.find_elements(By.CSS_SELECTOR, "input[name=mandatory_wagers]")
    assert sorted(box.get_attribute("value") for box in boxes) == optional  # the game's side bets
    assert browser.find_element(By.NAME, "multi_play").is_selected()

    # Out of order: refused on its field, nothing saved.
    chips.clear()
    chips.send_keys("500, 100")
    browser.find_element(By.NAME, "reason").send_keys("new chip tray")
    browser.find_element(By.CSS_SELECTOR, "input[name=_save]").click()
    WebDriverWait(browser, 10).until(expected_conditions.presence_of_element_located((By.CSS_SELECTOR, ".errorlist")))
    browser.save_screenshot(str(shots / "admin-table-chips-refused.png"))
    assert "ascending" in browser.find_element(By.CSS_SELECTOR, ".errorlist").text
    assert HouseTable.objects.get(pk=table.pk).config_version == 1

    chips = browser.find_element(By.NAME, "chips")
    chips.clear()
    chips.send_keys("100, 500, 2500")
    stax = browser.find_element(By.CSS_SELECTOR, "input[name=mandatory_wagers][value=stax]")
    if not stax.is_selected():
        stax.click()
    browser.find_element(By.NAME, "multi_play").click()  # untick: this table is played alone
    browser.save_screenshot(str(shots / "admin-table-chips-form.png"))
    browser.find_element(By.CSS_SELECTOR, "input[name=_save]").click()
    WebDriverWait(browser, 10).until(expected_conditions.presence_of_element_located((By.CSS_SELECTOR, ".messagelist")))

    table.refresh_from_db()
    assert (table.chips, table.mandatory_wagers, table.multi_play) == ([100, 500, 2_500], ["stax"], False)
    version = TableConfigVersion.objects.get(table=table, version=2)
    assert version.changes["chips"] == {"from": [100, 500, 1_000, 2_500, 10_000, 50_000], "to": [100, 500, 2_500]}
    assert version.changes["mandatory_wagers"] == {"from": [], "to": ["stax"]}
    assert version.changes["multi_play"] == {"from": True, "to": False}
    assert version.reason == "new chip tray"

    # What a French player reads on the table's help page.
    page = table_help(table_id=table.pk, language="fr")["table"]
    assert page["chips"] == [100, 500, 2_500]
    assert [w["wager"] for w in page["mandatory_wagers"]] == ["stax"]
    assert page["multi_play"] is False
    assert "Cette table n'est pas disponible pour le jeu sur plusieurs tables." in page["paragraphs"]
