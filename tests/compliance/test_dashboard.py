"""The operator's dashboard (issue 36, part 2): the admin's index page shows each
table live or closed with its phase, time left, players seated and watching and the
round or hand in play; today's handle, payouts, hold and hold % per currency; and
alerts, each with a link to where to act, raised by real rows: a paused round, a
phase deadline passed long ago (dealer gone) or a while ago (queue lag), unsealed
events, a payment the provider rejected, a player at 90 % of a limit. Only what the
viewer's role may see: no money without the ledger's or the reports' permission.
Never a card or a token."""

from __future__ import annotations

import html as html_text
import re
from datetime import timedelta
from html.parser import HTMLParser
from typing import Any

import psycopg
import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.db import connection
from django.test import Client
from django.utils import timezone

from casino.cashier import provider_callback, request_deposit
from casino.models import ResponsibleGaming
from casino.responsible_gaming import exclude
from compliance.dashboard import CRITICAL, Sees, operator_dashboard
from compliance.roles import COMPLIANCE, OPERATOR, setup_roles
from games.poker import services
from ledger.services.seals import seal
from tests.compliance.dashboard_floor import FOLDED_ANTE, Floor, build_floor
from tests.compliance.hidden_cards import cards_in
from tests.compliance.staff import staff
from tests.house.services.conftest import make_player

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]
NOTHING = "\N{EN DASH}"  # an empty cell


class _Cells(HTMLParser):
    """The text of each cell of the rows carrying ``attribute`` (its value -> cells), and
    the links in them, of an HTML page."""

    def __init__(self, attribute: str) -> None:
        super().__init__()
        self.attribute = attribute
        self.rows: dict[str, list[str]] = {}
        self.links: dict[str, list[str]] = {}
        self._row: str | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "tr" and self.attribute in found:
            self._row = str(found[self.attribute])
            self.rows[self._row], self.links[self._row] = [], []
        elif tag == "td" and self._row is not None:
            self._cell = []
        elif tag == "a" and self._row is not None:
            self.links[self._row].append(str(found.get("href")))

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._row is not None and self._cell is not None:
            self.rows[self._row].append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr":
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def cells(html: str, attribute: str) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    parser = _Cells(attribute)
    parser.feed(html)
    return parser.rows, parser.links


def alerts(html: str) -> list[tuple[str, str, str]]:
    """(level, text, link) of each alert shown."""
    found = re.findall(r'<li class="(critical|warning)" data-kind="[a-z_]+"><span>(.*?)</span> <a href="(.*?)">', html)
    return [(level, " ".join(html_text.unescape(text).split()), link) for level, text, link in found]


@pytest.fixture
def thresholds(settings: Any) -> Any:
    # The late table's phase ended a minute ago, the gone one's an hour ago.
    settings.CASINO_DASHBOARD_QUEUE_LAG_SECONDS = 30
    settings.CASINO_DASHBOARD_DEALER_GONE_SECONDS = 600
    return settings


@pytest.fixture
def floor(thresholds: Any) -> tuple[Floor, Client]:
    setup_roles()
    operator, client = staff("floor", OPERATOR)
    return build_floor(operator), client


def test_the_dashboard_shows_every_table_as_it_stands(floor: tuple[Floor, Client]) -> None:
    built, client = floor
    page = client.get("/admin/")
    assert page.status_code == 200
    html = page.content.decode()
    rows, links = cells(html, "data-table")
    # Table, game, status, phase, time left, seated, watching, in play.
    live = rows["LIVE1"]
    assert live[2:4] == ["live", "betting"]
    seconds = int(live[4].removesuffix(" s"))
    assert 0 < seconds <= 600  # the 600 s betting window opened just now
    assert live[5:8] == ["2", "1", built.live_round.game_number]
    assert f"/admin/games/houseround/{built.live_round.pk}/change/" in links["LIVE1"]
    assert f"/admin/games/housetable/{built.live.pk}/change/" in links["LIVE1"]
    assert rows["LATE1"][2:4] == ["late", "betting"]
    assert re.fullmatch(r"\d+ s over", rows["LATE1"][4])
    assert rows["GONE1"][2] == "dealer gone"
    assert rows["PAUSE1"][2:4] == ["paused", "paused"]
    assert rows["PAUSE1"][7] == built.paused_round.game_number
    assert rows["SHUT1"][2:8] == ["closed", "idle", NOTHING, "0", "0", NOTHING]
    poker = rows["NL1"]
    assert poker[1] == "Hold'em, no limit (blinds 0.05 EUR/0.10 EUR)"
    assert poker[2:4] == ["live", "hand"]
    assert poker[5:8] == ["2", "0", built.hand.hand_id]
    assert f"/admin/games/pokerhand/{built.hand.pk}/change/" in links["NL1"]
    counts = re.search(r'<p class="tiles" id="dash-counts">(.*?)</p>', html, re.S)
    assert counts is not None
    # Live: LIVE1 and NL1; late or gone: LATE1, GONE1; closed: SHUT1 and the settled round's table.
    assert " ".join(re.sub(r"<[^>]+>", " ", counts.group(1)).split()) == (
        "2 live 1 paused 2 late or dealer gone 2 closed 8 players seated 1 watching"
    )
    # The app list stays, folded below.
    assert '<details id="all-models">' in html


def test_the_dashboard_shows_todays_handle_and_hold_per_currency(floor: tuple[Floor, Client]) -> None:
    _, client = floor
    rows, _ = cells(client.get("/admin/").content.decode(), "data-currency")
    # The one settled round: a 10.00 EUR ante folded. Bets of rounds in play are not handle yet.
    assert FOLDED_ANTE == 1_000
    assert rows["EUR"] == ["EUR", "10.00 EUR", "0.00 EUR", "10.00 EUR", "100.00 %", "0.00 EUR"]


def test_each_alert_is_raised_by_its_row_and_links_to_where_to_act(floor: tuple[Floor, Client], settings: Any) -> None:
    built, client = floor
    settings.CASINO_DASHBOARD_SEAL_AGE_SECONDS = 0  # every unsealed event is overdue
    shown = alerts(client.get("/admin/").content.decode())
    texts = "\n".join(text for _, text, _ in shown)
    assert shown[0][0] == CRITICAL  # the critical ones first
    by_start = {text.split(":")[0]: (level, text, link) for level, text, link in shown}

    assert by_start["Table GONE1"][0] == CRITICAL
    assert "dealer gone" in by_start["Table GONE1"][1]
    assert by_start["Table GONE1"][2] == f"/admin/games/housetable/{built.gone.pk}/change/"
    assert "the dealer is" in by_start["Table LATE1"][1]
    assert "s late" in by_start["Table LATE1"][1]
    assert "round paused" in by_start["Table PAUSE1"][1]
    assert by_start["Table PAUSE1"][2] == f"/admin/games/houseround/{built.paused_round.pk}/change/"
    assert "Ledger not sealed" in by_start
    assert by_start["Ledger not sealed"][2] == "/admin/ledger/seal/"
    assert "1 payment (25.00 EUR) rejected by the payment provider in the last 24 h." in texts
    assert "Player near-nina has used 90 % of their daily deposit limit (90.00 EUR of 100.00 EUR)." in texts
    assert "half-hal" not in texts  # 50 % of the limit: below the 80 % threshold
    assert "Table LIVE1" not in by_start
    assert "Table SHUT1" not in by_start
    assert "Table NL1" not in by_start


def test_the_dashboard_refreshes_from_its_fragment_and_shows_no_card_or_token(floor: tuple[Floor, Client]) -> None:
    built, client = floor
    fragment = client.get("/admin/dashboard/")
    assert fragment.status_code == 200
    assert fragment["X-Dashboard"] == "1"
    html = fragment.content.decode()
    assert "<html" not in html  # the dashboard alone, put in place by the index page's script
    assert cells(html, "data-table")[0]["LIVE1"][7] == built.live_round.game_number
    page = client.get("/admin/").content.decode()
    assert 'data-url="/admin/dashboard/"' in page
    for shown in (html, page):
        assert cards_in(shown) == set()  # the shared hand is not even dealt; the poker hole cards never shown
    assert "token" not in html.lower()
    assert "password" not in html.lower()
    # Signed out: the login page, never the dashboard.
    anonymous = Client().get("/admin/dashboard/")
    assert anonymous.status_code == 302
    assert "X-Dashboard" not in anonymous


def test_a_role_without_ledger_or_report_permission_sees_no_money(floor: tuple[Floor, Client]) -> None:
    built, _ = floor
    pit = Group.objects.create(name="pit boss")
    pit.permissions.set(Permission.objects.filter(content_type__app_label="games", codename__startswith="view_"))
    user, client = staff("pit")
    user.groups.add(pit)
    html = client.get("/admin/").content.decode()
    rows, _ = cells(html, "data-table")
    assert rows["LIVE1"][7] == built.live_round.game_number  # the tables, yes
    assert cells(html, "data-currency")[0] == {}  # no handle, payouts, hold or rake
    assert "Today (" not in html
    assert "EUR</td>" not in html
    shown = "\n".join(text for _, text, _ in alerts(html))
    assert "Table PAUSE1" in shown
    assert "Table GONE1" in shown
    assert "payment" not in shown
    assert "near-nina" not in shown
    assert "sealed" not in shown

    _, compliance = staff("auditor", COMPLIANCE)  # the reports' permission: the money, and every alert
    audited = compliance.get("/admin/").content.decode()
    assert cells(audited, "data-currency")[0]["EUR"][1] == "10.00 EUR"
    assert "near-nina" in audited
    assert "25.00 EUR" in audited

    _, nobody = staff("intern")  # staff without a permission: nothing to read
    empty = nobody.get("/admin/").content.decode()
    assert cells(empty, "data-table")[0] == {}
    assert "No table you may see." in empty
    assert alerts(empty) == []


def test_an_unsealed_event_older_than_the_threshold_is_an_alert_with_its_age(floor: tuple[Floor, Client]) -> None:
    everything = Sees(house_tables=True, poker_tables=True, money=True, ledger=True, cashier=True,
                      responsible_gaming=True)  # fmt: skip
    now = timezone.now()
    assert not [a for a in operator_dashboard(now=now, sees=everything).alerts if a.kind == "seal_age"]
    later = operator_dashboard(now=now + timedelta(hours=1), sees=everything)
    [sealing] = [a for a in later.alerts if a.kind == "seal_age"]
    assert sealing.level == CRITICAL
    assert "events recorded 60 min ago are not sealed yet (never sealed" in sealing.text


def test_a_transaction_held_open_is_feed_lag(settings: Any) -> None:
    settings.CASINO_DASHBOARD_FEED_LAG_SECONDS = 0
    tables = Sees(house_tables=True)
    assert [a.kind for a in operator_dashboard(now=timezone.now(), sees=tables).alerts] == []
    database = connection.settings_dict
    with psycopg.connect(dbname=database["NAME"], user=database["USER"], host=database["HOST"],
                         port=database["PORT"] or 5432, password=database["PASSWORD"] or None) as other:  # fmt: skip
        other.execute("SELECT pg_current_xact_id()")  # a transaction that could write events, left open
        [lag] = operator_dashboard(now=timezone.now(), sees=tables).alerts
        assert lag.kind == "feed_lag"
        assert lag.text.startswith("Feed lag: a database transaction has been open for ")
        other.rollback()
    assert operator_dashboard(now=timezone.now(), sees=tables).alerts == []


@pytest.mark.django_db(transaction=True)  # sealing needs its own transactions
def test_the_seal_alert_goes_once_every_event_is_sealed_and_comes_back_with_the_next(settings: Any) -> None:
    settings.CASINO_DASHBOARD_SEAL_AGE_SECONDS = 0
    ledger_only = Sees(ledger=True)

    def sealing() -> list[str]:
        return [a.kind for a in operator_dashboard(now=timezone.now(), sees=ledger_only).alerts]

    make_player(funds=500)  # a deposit: events
    assert sealing() == ["seal_age"]
    assert seal() is not None
    assert sealing() == []
    make_player(funds=500)
    assert sealing() == ["seal_age"]


def test_limits_are_shown_without_amounts_to_a_role_without_money(floor: tuple[Floor, Client]) -> None:
    no_money = Sees(responsible_gaming=True)
    [near] = operator_dashboard(now=timezone.now(), sees=no_money).alerts
    assert near.text == "Player near-nina has used 90 % of their daily deposit limit (EUR)."
    assert near.url.startswith("/admin/casino/responsiblegaming/")


def test_a_forged_limits_row_leaves_the_dashboard_readable(floor: tuple[Floor, Client]) -> None:
    built, client = floor
    odd = get_user_model().objects.create_user("odd-otto", password="pw-odd-otto-1")
    ResponsibleGaming.objects.create(user=odd, currency="EUR", limits={"EUR": {"loss_day": {"amount": "lots"}}})
    page = client.get("/admin/")
    assert page.status_code == 200
    assert "odd-otto" not in page.content.decode()  # a limit that is no amount is left out
    ResponsibleGaming.objects.filter(user=odd).update(limits=["not", "a", "mapping"])
    page = client.get("/admin/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "The dashboard could not read the players&#x27; limits (the error is in the server&#x27;s log)." in html
    assert cells(html, "data-table")[0]["LIVE1"][7] == built.live_round.game_number  # the rest is there
    assert "1 payment (25.00 EUR) rejected" in html


def test_a_paused_hand_a_refund_due_and_an_unanswered_payment_are_alerts(floor: tuple[Floor, Client]) -> None:
    built, client = floor
    operator = get_user_model().objects.get(username="floor")
    services.operator_hand_control(table_id=built.poker.pk, operator=operator, action="pause", reason="dealer's slip")
    # Paid by the provider after the player cooled off: the money waits for a refund.
    cooled = get_user_model().objects.create_user("cool-cora", password="pw-cool-cora-1")
    paid = request_deposit(player_id=cooled.pk, amount=4_000, currency="EUR", request_key="cora-1",
                           now=timezone.now())  # fmt: skip
    exclude(player_id=cooled.pk, currency="EUR", kind="cool_off", days=1, now=timezone.now())
    provider_callback(external_reference=paid.external_reference, status="paid", amount=4_000, currency="EUR",
                      provider="acme", now=timezone.now())  # fmt: skip
    # Asked for an hour ago; the provider never answered.
    slow = get_user_model().objects.create_user("slow-sid", password="pw-slow-sid-1")
    request_deposit(player_id=slow.pk, amount=1_200, currency="EUR", request_key="sid-1",
                    now=timezone.now() - timedelta(hours=1))  # fmt: skip

    shown = alerts(client.get("/admin/").content.decode())
    texts = {text: (level, link) for level, text, link in shown}
    [paused] = [text for text in texts if text.startswith("Table NL1:")]
    assert paused == f"Table NL1: hand {built.hand.hand_id} paused; nobody may act until it is resumed or voided."
    assert texts[paused][1] == f"/admin/games/pokertable/{built.poker.pk}/change/"
    refund = ("1 deposit (40.00 EUR) paid by the provider could not be credited (the player is excluded since): "
              "refund through the provider.")  # fmt: skip
    assert texts[refund] == (CRITICAL, "/admin/casino/cashiertransaction/?state__exact=refund_due")
    waiting = "1 payment (12.00 EUR) waiting over 30 min for the provider's callback."
    assert texts[waiting][1] == "/admin/casino/cashiertransaction/?state__exact=requested"
    rows, _ = cells(client.get("/admin/").content.decode(), "data-table")
    assert rows["NL1"][2:4] == ["paused", "paused"]
