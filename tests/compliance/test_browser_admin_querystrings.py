"""What a shift manager sees in a real browser (Debian's chromium, headless,
``tests.compliance.browser``) when an admin URL carries a lookup the admin
refuses or the database cannot run (issue 35, part 2): never a server error
page. A lookup on event data answers Django's 400 page; a bad regular
expression on a named field sends the changelist back to ``?e=1`` with a
notice that the whole list is shown; searching rounds by round id (a named safe field) finds
the round. Screenshots go to ``$CASINO_SCREENSHOTS`` when it is set.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from compliance.roles import OPERATOR, setup_roles
from games.house.models import HouseRound
from tests.compliance.browser import admin_login, needs_browser
from tests.house.services.conftest import make_table, open_round

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres, needs_browser]


def test_refused_lookups_show_the_admins_own_answers_not_a_server_error(live_server, browser, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    shots = Path(os.environ.get("CASINO_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    setup_roles()
    operator = get_user_model().objects.create_user("night", password="night-shift-pw", is_staff=True)
    operator.groups.add(Group.objects.get(name=OPERATOR))
    table = make_table("uth", code="UTHQ")
    open_round(table)
    round_row = HouseRound.objects.get()

    browser.set_window_size(1400, 900)
    admin_login(browser, live_server.url, username="night", password="night-shift-pw",
                next_path="/admin/games/houseround/", title="house round")  # fmt: skip

    # The red team's lookup on event data: Django's 400 page, not a 500.
    browser.get(f"{live_server.url}/admin/ledger/event/?data__contains=x")
    browser.save_screenshot(str(shots / "admin-json-lookup-400.png"))
    body = browser.find_element(By.TAG_NAME, "body").text
    assert "Bad Request (400)" in body
    assert "nothing was read or changed" in body  # the site's own 400 page, which says what to use instead
    assert "Server Error" not in body

    # A regular expression PostgreSQL cannot compile, on a named field: back to the list, ?e=1.
    browser.get(f"{live_server.url}/admin/games/houseround/?game_number__regex=(")
    assert browser.current_url.endswith("?e=1"), browser.current_url
    browser.save_screenshot(str(shots / "admin-bad-regex-e1.png"))
    notice = browser.find_element(By.CSS_SELECTOR, "ul.messagelist").text
    assert "could not be run" in notice  # not read as the filtered answer
    assert "whole list" in notice

    # The round found by its round id (an exact search on a named field).
    browser.get(f"{live_server.url}/admin/games/houseround/?q={round_row.round_id}")
    browser.save_screenshot(str(shots / "admin-search-round-id.png"))
    assert round_row.game_number in browser.find_element(By.ID, "result_list").text
