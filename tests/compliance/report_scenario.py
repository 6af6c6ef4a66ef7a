"""Issue 36's reports scenario, played through the real services on whichever
database Django is configured with: a house round on a STAX table (the demo's
five progressive pools, 1,425,000 seeded from the house when the round opens;
the Star pool hit by a royal flush, the contributions, the reset), a winning
round on a second table (the house pays), a voided round, a poker ring hand with rake (seed 001:
5 of a 210 pot), a Sit & Go with a guarantee (an overlay from the house) played
to the end by seeded bots, and a Sit & Go cancelled with its refunds.

Imported by ``tests/compliance/test_report_figures.py`` (the suite's database,
PostgreSQL) and run as a program on a fresh SQLite file
(``python -m tests.compliance.report_scenario``, ``DATABASE_URL=sqlite:///...``:
migrate, play, print ``normalised_reports()`` as JSON), so the two databases'
figures are compared. Everything that decides a figure is fixed here: names,
codes, decks, seeds.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any
from unittest import mock

SEED = 36
ANTE, STAX_STAKE, UTH_ANTE, VOIDED_ANTE = 100, 1_000, 500, 300
GUARANTEE = 5_000
FUNDS = 1_000_000
# Each play's table codes carry a tag of their own: the games' in-process caches are
# keyed by round and hand ids (code and time), which a rolled-back test leaves behind.
_plays = itertools.count(1)


@dataclass(frozen=True)
class Played:
    """What the scenario made (name or code -> id): players, house tables, the poker table,
    tournaments; ``tag``: the suffix of this play's table codes (``XTR-R`` is ``XTR-R<tag>``)."""

    players: dict[str, int]
    tables: dict[str, int]
    poker_table: int
    tournaments: dict[str, int]
    tag: str


def _player(name: str) -> int:
    from django.contrib.auth import get_user_model

    from ledger.services import deposit, player_accounts

    user = get_user_model().objects.create(username=name)
    wallet = player_accounts(player_id=user.pk, currency="EUR").wallet
    deposit(wallet=wallet, amount=FUNDS, currency="EUR", external_reference=f"ref-{name}",
            idempotency_key=f"deposit-{name}", actor="test")  # fmt: skip
    return int(user.pk)


def _house_rounds(players: dict[str, int], tag: str) -> dict[str, int]:
    """The STAX round with a pool hit, a losing round and a voided round."""
    from games.house.demo import DEMO_TABLES
    from games.house.services import assign_seat, make_decision, place_chip, start_table, void_round
    from tests.house.services.conftest import T0, later, make_table, play_out, shoe, step

    tables = {}
    progressives = next(t["progressives"] for t in DEMO_TABLES if t["code"] == "XTR1")
    rounds = (
        # A royal flush in diamonds on the two cards and the flop: the Star pool's hit.
        # The ante is lost (no decision: the timeouts fold), the STAX bet wins the pool.
        ("XTR-R", "xtreme", progressives, "ada", {"ante": ANTE, "stax": STAX_STAKE},
         ("Ad Kd", "2c 3s", "Qd Jd Td 5c 8h"), None),
        # Aces raised 4x against a dealer who does not qualify: the house pays.
        ("UTH-R", "uth", None, "bea", {"ante": UTH_ANTE}, ("As Ad", "2c 7d", "Kh Qs 9d 4c 3h"), "call4x"),
    )  # fmt: skip
    for code, game, pools, name, bets, (hand, dealer, board), decision in rounds:
        table = make_table(game, code=code + tag, progressives=pools)
        assign_seat(table_id=table.pk, player_id=players[name])
        tick = start_table(table_id=table.pk, now=T0, shoe=shoe(hand, dealer=dealer, board=board))
        for spot, amount in bets.items():
            place_chip(table_id=table.pk, player_id=players[name], spot=spot, amount=amount,
                       idempotency_key=f"{code}-{spot}", now=later(tick))  # fmt: skip
        tick = step(table, tick)
        if decision:
            make_decision(table_id=table.pk, player_id=players[name], option=decision,
                          idempotency_key=f"{code}-{decision}", now=later(tick))  # fmt: skip
        play_out(table, tick)
        tables[code] = table.pk
    voided = make_table("uth", code="UTH-V" + tag)
    assign_seat(table_id=voided.pk, player_id=players["bea"])
    tick = start_table(table_id=voided.pk, now=T0)
    place_chip(table_id=voided.pk, player_id=players["bea"], spot="ante", amount=VOIDED_ANTE,
               idempotency_key="UTH-V-ante", now=later(tick))  # fmt: skip
    void_round(table_id=voided.pk, actor="operator:report", reason="shuffler fault", now=later(tick))
    tables["UTH-V"] = voided.pk
    return tables


def _poker_hand(players: dict[str, int], tag: str) -> int:
    """The three-handed hand of ``tests/poker/test_tables.py``: a 210 pot, 5 raked."""
    from games.poker.models import PokerTable
    from tests.poker.tables import advance, make_table, play_the_raked_hand, sit
    from tests.poker.test_tables import AA_VS_KK

    table = make_table(code="NL-R" + tag)
    seated = [players[name] for name in ("cy", "dee", "eve")]
    for number, player in enumerate(seated, start=1):
        sit(table, player, number)
    PokerTable.objects.filter(pk=table.pk).update(button_seat=3)  # the first hand's button moves to seat 1
    table = advance(table, cards=AA_VS_KK)
    play_the_raked_hand(table, *seated)
    return int(table.pk)


def _tournaments(players: dict[str, int]) -> dict[str, int]:
    """A 3-player Sit & Go guaranteed 5,000 (3 x 1,000 collected: a 2,000 overlay),
    one player unregistering and coming back, played out by seeded bots; and a Sit &
    Go cancelled before its start (buy-ins and fees refunded)."""
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from games.cards.shuffle import SeededRandomSource
    from games.poker.tournament import services
    from games.poker.tournament.driver import TournamentDriver
    from games.poker.tournament.services import start
    from tests.poker.tables import make_tournament

    played = make_tournament(name="Report SNG", max_players=3, table_seats=3, guarantee=GUARANTEE)
    entrants = [players[name] for name in ("fay", "gus", "hal")]

    def register(tournament_id: int, player: int, key: str) -> None:
        services.register(tournament_id=tournament_id, player_id=player, idempotency_key=key, now=timezone.now())

    register(played.pk, entrants[0], "reg-fay")
    register(played.pk, entrants[1], "reg-gus")
    services.unregister(tournament_id=played.pk, player_id=entrants[1], idempotency_key="unreg-gus",
                        now=timezone.now())  # fmt: skip
    register(played.pk, entrants[1], "reg-gus-again")
    # The last seat taken starts it, its seats drawn at random: from the scenario's seed
    # (as the driver deals), so both databases see the same tournament.
    with mock.patch.object(start, "SecureRandomSource", return_value=SeededRandomSource(SEED)):
        register(played.pk, entrants[2], "reg-hal")
    drive = TournamentDriver(played.pk, start=timezone.now(), seed=SEED, aggression=1.0,
                             rng_source=SeededRandomSource(SEED))  # fmt: skip
    report = drive.run(max_rounds=5000)
    assert report.finished, report
    cancelled = make_tournament(name="Report SNG cancelled")
    for name in ("ida", "jo"):
        register(cancelled.pk, players[name], f"reg-{name}-cancelled")
    operator = get_user_model().objects.create(username="report-operator", is_staff=True)
    services.cancel_tournament(tournament_id=cancelled.pk, operator=operator, reason="no quorum", now=timezone.now())
    return {"Report SNG": played.pk, "Report SNG cancelled": cancelled.pk}


def play() -> Played:
    """Play the whole scenario (module docstring) on the current database."""
    names = ("ada", "bea", "cy", "dee", "eve", "fay", "gus", "hal", "ida", "jo")
    players = {name: _player(name) for name in names}
    tag = str(next(_plays))
    return Played(players=players, tables=_house_rounds(players, tag), poker_table=_poker_hand(players, tag),
                  tournaments=_tournaments(players), tag=tag)  # fmt: skip


def window() -> dict[str, Any]:
    """The reports' period: a day either side of both the scenario's table clock
    (rounds and hands are opened at ``T0``) and now (the ledger's clock)."""
    from django.utils import timezone

    from tests.house.services.conftest import T0

    start = min(T0, timezone.now()) - timedelta(days=1)
    end = max(T0, timezone.now()) + timedelta(days=1)
    return {"start": start, "end": end}


def report_arguments(name: str) -> dict[str, Any]:
    """Each report's arguments over ``window()``."""
    from django.utils import timezone

    period = window()
    if name == "player-account-summary":
        return {"day": timezone.now().date()}
    if name == "house-days":
        first: date = period["start"].date()
        return {"start": first, "days": (period["end"].date() - first).days + 1}
    return period


def normalised_reports(played: Played) -> dict[str, list[dict[str, Any]]]:
    """Every report's rows over ``window()`` with what differs between two databases
    given the same play taken out: ids become names (players, tournaments, pools'
    tables), event positions and timestamps are dropped, and the house-days rows
    are summed per currency (the two runs may fall on different days)."""
    from compliance.reports import REPORTS

    player_names = {str(pk): name for name, pk in played.players.items()}
    tournament_names = {pk: name for name, pk in played.tournaments.items()}
    table_codes = {str(pk): code for code, pk in played.tables.items()}
    dropped = {"event", "opened_at", "voided_at", "cancelled_at", "day"}
    out: dict[str, list[dict[str, Any]]] = {}
    for name, report in REPORTS.items():
        rows = []
        for row in report(**report_arguments(name)).rows:
            row = {k: v for k, v in row.items() if k not in dropped}
            if "player" in row:
                row["player"] = player_names.get(row["player"], row["player"])
            if "tournament" in row:
                row["tournament"] = tournament_names.get(row["tournament"], row["tournament"])
            if "pool" in row:  # table:<id>:<wager>:<pool>
                parts = row["pool"].split(":")
                row["pool"] = ":".join([parts[0], table_codes.get(parts[1], parts[1]), *parts[2:]])
            for column in ("table", "game_number"):  # a game number starts with its table's code
                if column in row:
                    code, _, rest = row[column].partition("-20")
                    row[column] = code.removesuffix(played.tag) + _ + rest
            rows.append(row)
        if name == "house-days":
            rows = _summed(rows)
        out[name] = sorted(rows, key=lambda r: json.dumps(r, sort_keys=True))
    return out


def _summed(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    totals: dict[str, dict[str, Any]] = {}
    for row in rows:
        total = totals.setdefault(row["currency"], {"currency": row["currency"]})
        for column, value in row.items():
            if isinstance(value, int):
                total[column] = total.get(column, 0) + value
    return list(totals.values())


def main() -> None:
    """Migrate the (fresh) database of ``DATABASE_URL``, play, print the normalised reports as JSON."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casino.settings")
    django.setup()
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)
    played = play()
    json.dump({"vendor": _vendor(), "reports": normalised_reports(played)}, sys.stdout, sort_keys=True)


def _vendor() -> str:
    from django.db import connection

    return str(connection.vendor)


if __name__ == "__main__":
    main()
