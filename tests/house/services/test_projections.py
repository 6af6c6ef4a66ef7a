"""Issue #24: the house read models are projections of the log, one projector
per model (``games.house.projectors``): the live rows are written by them and
hold the rules' figures, a rebuild from the log gives the same rows, applying
events again changes nothing, and a row changed behind the log's back is named
by ``check_projections``, ``verify_ledger`` and ``rebuild_projections --check``
and repaired by ``rebuild_projections``."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import connection

from games.house.event_types import SEAT_LEFT, SEAT_TAKEN, seat_stream
from games.house.models import HouseRound, HouseTable, PlayerRound, TableSeat
from games.house.projectors import HOUSE_PROJECTORS
from games.house.round.errors import NotSeated
from games.house.services import make_decision, place_chip, void_round
from games.house.services.seats import AlreadySeated, leave_table, take_seat
from ledger.services import read_stream
from ledger.services.projectors import apply_events, check_projections, iter_log, rebuild, registered_projectors
from ledger.services.verify import verify_ledger
from tests.db import ledger_sums, rows
from tests.house.services.conftest import T0, key, later, make_player, make_table, open_round, shoe, step, wallet

pytestmark = pytest.mark.django_db
HOUSE_TABLES = ("games_houseround", "games_playerround", "games_tableseat")
ANTE = 100
FUNDS = 100_000


def house_rows() -> dict[str, Any]:
    # Every column but the ids (a rebuild makes new rows).
    return {
        "rounds": sorted(HouseRound.objects.values_list(*HOUSE_COLUMNS["round"])),
        "players": sorted(
            PlayerRound.objects.values_list("round__round_id", "player_id", *HOUSE_COLUMNS["player"]), key=str
        ),
        "seats": sorted(TableSeat.objects.values_list("table_id", "player_id", "seat_number", "joined_at")),
    }


HOUSE_COLUMNS = {
    "round": ("round_id", "table_id", "game_number", "status", "phase", "phase_seq", "deadline", "stream_version",
              "participants", "staked", "returned", "opened_at", "closed_at", "config_version", "rules_version"),
    "player": ("stream_version", "staked", "returned", "net", "status", "last_street", "done_deciding", "created_at",
               "settled_at", "balance_before", "balance_after"),
}  # fmt: skip


def settled_round() -> tuple[HouseTable, str, int, int]:
    """A shared-hand UTH round: A calls 4x preflop and wins with a flush against
    the dealer's pair of kings; B checks to the river and is folded there by the
    timeout. Returns (table, round id, A, B)."""
    table = make_table("uth")
    a, b = make_player(table, funds=FUNDS), make_player(table, funds=FUNDS)
    tick = open_round(table, shoe_cards=shoe("Ah 5h", dealer="Kd Qs", board="2h 7h 9h Kc 3d"))
    for player in (a, b):
        place_chip(table_id=table.pk, player_id=player, spot="ante", amount=ANTE, idempotency_key=key(),
                   now=later(tick))  # fmt: skip
    tick = step(table, tick)
    assert tick.phase == "preflop"
    make_decision(table_id=table.pk, player_id=a, option="call4x", idempotency_key=key(), now=later(tick))
    make_decision(table_id=table.pk, player_id=b, option="check", idempotency_key=key(), now=later(tick))
    while tick.phase not in ("between", "idle"):
        tick = step(table, tick)
    return table, tick.round_id, a, b


def test_a_settled_round_projects_the_rules_figures_and_equals_its_rebuild() -> None:
    _table, round_id, a, b = settled_round()
    winner = PlayerRound.objects.get(round__round_id=round_id, player_id=a)
    # RULES.md (UTH): Ante pays 1:1 (dealer qualifies), Ante Plus 3:2 for a flush, the call 1:1.
    assert (winner.staked, winner.returned, winner.net, winner.status) == (600, 200 + 250 + 800, 650, "settled")
    assert winner.totals == {"ante": ANTE, "ante_plus": ANTE, "call": 4 * ANTE}
    assert (winner.balance_before, winner.balance_after) == (FUNDS, FUNDS + 650) == (FUNDS, wallet(a))
    folder = PlayerRound.objects.get(round__round_id=round_id, player_id=b)
    assert (folder.staked, folder.returned, folder.net, folder.status) == (200, 0, -200, "settled")
    assert folder.state["folded"]
    assert folder.last_street == "river"
    assert wallet(b) == FUNDS - 200
    summary = HouseRound.objects.get(round_id=round_id)
    assert (summary.status, summary.participants, summary.staked, summary.returned) == ("settled", 2, 800, 1250)
    assert summary.closed_at is not None
    # Times come from the events: a player row is created at its first chip, settled at the showdown.
    first = read_stream(stream_id=f"round-{round_id}-player-{a}")[0]
    assert winner.created_at.isoformat() == first.metadata["at"]
    settled = read_stream(stream_id=f"round-{round_id}-player-{a}")[-1]
    assert settled.type == "house_player.settled"
    assert winner.settled_at == summary.closed_at
    assert winner.settled_at is not None
    assert winner.settled_at.isoformat() == settled.data["at"]
    assert check_projections() == []
    before = house_rows()
    result = rebuild(check=False)
    assert result.differences == []
    assert (result.rows["house_round"], result.rows["house_player_round"], result.rows["house_table_seat"]) == (1, 2, 2)
    assert house_rows() == before  # rebuilt whole: balances (ledger links) kept too
    assert ledger_sums() == {"EUR": 0}


def test_a_voided_round_refunds_every_stake_and_equals_its_rebuild() -> None:
    table = make_table("uth")
    a, b = make_player(table, funds=FUNDS), make_player(table, funds=FUNDS)
    tick = open_round(table)
    place_chip(table_id=table.pk, player_id=a, spot="ante", amount=ANTE, idempotency_key=key(), now=later(tick))
    place_chip(table_id=table.pk, player_id=b, spot="ante", amount=ANTE, idempotency_key=key(), now=later(tick))
    place_chip(table_id=table.pk, player_id=b, spot="best_five", amount=300, idempotency_key=key(), now=later(tick))
    tick = step(table, tick)
    make_decision(table_id=table.pk, player_id=a, option="call3x", idempotency_key=key(), now=later(tick))
    void_round(table_id=table.pk, actor="user:1", reason="malfunction", now=later(tick))
    for player, staked in ((a, 2 * ANTE + 3 * ANTE), (b, 2 * ANTE + 300)):
        row = PlayerRound.objects.get(round__round_id=tick.round_id, player_id=player)
        # RULES.md: a void returns every wager, calls included.
        assert (row.staked, row.returned, row.net, row.status) == (staked, staked, 0, "voided")
        assert wallet(player) == FUNDS
    summary = HouseRound.objects.get(round_id=tick.round_id)
    assert summary.status == "voided"
    assert summary.summary["void"]["reason"] == "malfunction"
    assert summary.phase == "voided"
    assert check_projections() == []
    assert ledger_sums() == {"EUR": 0}


def seats_of(table: HouseTable) -> dict[int, int | None]:
    return dict(TableSeat.objects.filter(table=table).values_list("player_id", "seat_number"))


def test_seats_are_taken_left_and_taken_again_by_events() -> None:
    table = make_table("uth", hand_mode="per_seat")
    a, b = make_player(funds=0), make_player(funds=0)
    seat = take_seat(table_id=table.pk, player_id=a)
    take_seat(table_id=table.pk, player_id=b)
    assert seats_of(table) == {a: 1, b: 2}
    [taken] = read_stream(stream_id=seat_stream(table.pk, a))
    assert taken.type == SEAT_TAKEN
    assert taken.data["seat_number"] == 1
    assert seat.joined_at.isoformat() == taken.data["at"]
    # One seat per table: the refusal appends nothing.
    with pytest.raises(AlreadySeated):
        take_seat(table_id=table.pk, player_id=a)
    assert len(read_stream(stream_id=seat_stream(table.pk, a))) == 1
    leave_table(table_id=table.pk, player_id=a, now=T0)
    assert seats_of(table) == {b: 2}
    with pytest.raises(NotSeated):
        leave_table(table_id=table.pk, player_id=a, now=T0)
    assert [e.type for e in read_stream(stream_id=seat_stream(table.pk, a))] == [SEAT_TAKEN, SEAT_LEFT]
    # The freed seat number is taken by the next to join; the first player rejoins on another.
    c = make_player(funds=0)
    take_seat(table_id=table.pk, player_id=c)
    take_seat(table_id=table.pk, player_id=a)
    assert seats_of(table) == {c: 1, b: 2, a: 3}
    assert [e.type for e in read_stream(stream_id=seat_stream(table.pk, a))] == [SEAT_TAKEN, SEAT_LEFT, SEAT_TAKEN]
    assert check_projections() == []
    before = house_rows()
    rebuild(check=False)
    assert house_rows() == before


def test_applying_the_events_again_changes_nothing() -> None:
    settled_round()
    table = make_table("uth", hand_mode="per_seat")
    a, b = make_player(table, funds=0), make_player(table, funds=0)
    tick = open_round(table)
    leave_table(table_id=table.pk, player_id=a, now=later(tick))
    take_seat(table_id=table.pk, player_id=a)
    assert seats_of(table) == {b: 2, a: 1}
    before = house_rows()
    projectors = [cls() for cls in HOUSE_PROJECTORS]
    prefixes = sorted({p for cls in HOUSE_PROJECTORS for p in cls.stream_prefixes})
    events = list(iter_log(prefixes))
    apply_events(events, projectors)
    assert house_rows() == before
    for event in events:  # one by one, each again, in log order: none changes a row
        apply_events([event], [cls() for cls in HOUSE_PROJECTORS])
        assert house_rows() == before, (event.stream_id, event.version, event.type)
    assert check_projections() == []


def refuse_check(*options: str) -> str:
    with pytest.raises(CommandError) as failure:
        call_command("rebuild_projections", "--check", *options)
    return str(failure.value)


@pytest.mark.parametrize(
    ("table_name", "projector", "column", "forged"),
    [
        ("games_playerround", "house_player_round", "returned", 1),
        ("games_houseround", "house_round", "staked", 7),
        ("games_tableseat", "house_table_seat", None, None),
    ],
)
def test_a_changed_row_is_named_by_check_and_verify_ledger_and_repaired_by_a_rebuild(
    table_name: str, projector: str, column: str | None, forged: int | None, capsys: pytest.CaptureFixture[str]
) -> None:
    _, round_id, a, _ = settled_round()
    row = PlayerRound.objects.get(round__round_id=round_id, player_id=a)
    seat = TableSeat.objects.get(player_id=a)
    live = {"games_playerround": row.returned, "games_houseround": HouseRound.objects.get(round_id=round_id).staked}
    with connection.cursor() as cursor:
        if column is None:
            cursor.execute("DELETE FROM games_tableseat WHERE id = %s", [seat.pk])
            named = (
                f"games_tableseat [house_table_seat] row table_id={seat.table_id}, player_id={a}: "
                "missing (the log has it)"
            )
        elif table_name == "games_playerround":
            cursor.execute("UPDATE games_playerround SET returned = %s WHERE id = %s", [forged, row.pk])
            named = (
                f"games_playerround [house_player_round] row round__round_id={round_id!r}, player_id={a}: "
                f"returned live {forged}, rebuilt {live[table_name]}"
            )
        else:
            cursor.execute("UPDATE games_houseround SET staked = %s WHERE round_id = %s", [forged, round_id])
            named = f"games_houseround [house_round] row round_id={round_id!r}: staked live {forged}, rebuilt 800"
    assert [str(d) for d in check_projections()] == [named]
    # rebuild_projections --check names it and changes nothing.
    forged_rows = rows(*HOUSE_TABLES)
    assert "projections differ from their rebuild (1 differences)" in refuse_check()
    assert named in capsys.readouterr().err
    assert "projections differ" in refuse_check("--only", projector)
    other = next(name for name in registered_projectors() if name.startswith("house_") and name != projector)
    call_command("rebuild_projections", "--check", "--only", other)  # not that one: exits zero
    assert rows(*HOUSE_TABLES) == forged_rows
    # verify_ledger names it too, unless told to skip the projections.
    problems = verify_ledger(key=settings.CASINO_SEAL_KEY.encode())
    assert [(p.check, p.message) for p in problems] == [("projection", named)]
    assert verify_ledger(key=settings.CASINO_SEAL_KEY.encode(), projections=False) == []
    with pytest.raises(CommandError, match="1 problems"):
        call_command("verify_ledger")
    call_command("verify_ledger", "--no-projections")
    # A rebuild repairs it, and says what it repaired.
    capsys.readouterr()
    call_command("rebuild_projections")
    assert "1 differences repaired" in capsys.readouterr().out
    assert check_projections() == []
    repaired = PlayerRound.objects.get(round__round_id=round_id, player_id=a)
    assert (repaired.returned, repaired.balance_before, repaired.balance_after) == (
        row.returned, row.balance_before, row.balance_after,
    )  # fmt: skip
    assert HouseRound.objects.get(round_id=round_id).staked == 800
    assert TableSeat.objects.filter(player_id=a, table_id=seat.table_id, joined_at=seat.joined_at).exists()
    call_command("verify_ledger")


def test_every_house_read_table_has_its_registered_projector() -> None:
    names = {cls.model._meta.db_table: cls.name for cls in registered_projectors().values()}
    assert {table: names.get(table) for table in HOUSE_TABLES} == {
        "games_houseround": "house_round", "games_playerround": "house_player_round",
        "games_tableseat": "house_table_seat",
    }  # fmt: skip
    order = list(registered_projectors())
    assert order.index("house_round") < order.index("house_player_round")  # rows refer to their round's


def test_not_even_a_superuser_writes_a_house_projection_through_the_admin() -> None:
    """The admin shows the projections and refuses every add, change and delete
    (the log is the only way in): nothing differs from the rebuild afterwards."""
    from tests.compliance.staff import staff

    table, round_id, a, _ = settled_round()
    before = house_rows()
    _, client = staff("boss", superuser=True)
    pages = {
        "tableseat": TableSeat.objects.get(table=table, player_id=a).pk,
        "houseround": HouseRound.objects.get(round_id=round_id).pk,
        "playerround": PlayerRound.objects.get(round__round_id=round_id, player_id=a).pk,
    }
    for name, pk in pages.items():
        base = f"/admin/games/{name}/"
        assert client.get(base).status_code == 200, name
        assert client.get(f"{base}{pk}/change/").status_code == 200, name  # viewed
        assert client.get(f"{base}add/").status_code == 403, name
        assert client.post(f"{base}{pk}/change/", {"seat_number": 7, "staked": 1}).status_code == 403, name
        assert client.post(f"{base}{pk}/delete/", {"post": "yes"}).status_code == 403, name
    assert house_rows() == before
    assert check_projections() == []
