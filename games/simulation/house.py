"""The house family of the simulator: Ultimate Texas Hold'em, Casino Hold'em and
Xtreme Hold'em tables, their players and their operator.

The clients join and leave, close their socket and rejoin (presence: an absent
player's bets are declined at "No More Bets"), place chips on the main and side
spots (amounts out of range, unknown spots, outside the betting window), undo,
clear, repeat and double, decide (valid options, options of another game, out
of turn, twice) and repeat a command with the same idempotency key. The
operator pauses, resumes and voids rounds (``dealer.operator_round_control``),
changes the configuration (``configure_table``: timers, limits; invalid ones and
identity changes refused), closes and opens tables. The dealer's tasks are
``games.advance`` at the deadlines the steps scheduled (``dealer.advance``), and
the beat's sweep (``dealer.sweep``); their bodies run when the simulator's queue
delivers them. Every deck and wheel spin comes from the step's seeded source.

Extra invariants: a table (not paused) moves on within a bounded simulated time
after its deadline; every wager of an ended round is settled or voided (its
holds resolved: the registered ``house_hold`` check runs after every step);
no round or player stream is settled or voided twice; replaying a round's
streams gives its stored projections (round row and player rows).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, ClassVar

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Count, Sum

from casino.errors import DomainError
from games.house.demo import DEMO_TABLES
from games.house.models import HouseRound, HouseTable, PlayerRound, TableSeat
from games.house.round.events import PLAYER_SETTLED, PLAYER_VOIDED, SETTLED, VOIDED_EVENT
from games.house.round.state import replay_player, replay_round
from games.house.services import bets, dealer, group
from games.house.services import seats as seating
from games.house.services.tables import configure_table
from games.house.store import player_stream, round_stream
from games.house.store.rows import state_from_json
from games.simulation.clients import Command, TableClients
from games.simulation.core import Simulator, Violation
from games.tables import pacing, presence
from ledger.services import deposit, player_accounts, read_stream

FUNDS = 200_000
ANTE = {"min": 100, "max": 5_000}
SIDE = {"min": 100, "max": 1_000}
#: Short phases, so that many rounds run in few simulated minutes.
TIMERS = {"betting_seconds": 8, "warning_seconds": 3, "decision_seconds": 6, "deal_pause_seconds": 1,
          "between_rounds_seconds": 2}  # fmt: skip
DECISIONS = {
    "uth": ("call4x", "call3x", "check", "call2x", "call1x", "fold"),
    "casino_holdem": ("call", "fold"),
    "xtreme": ("play4x", "play3x", "check", "play2x", "play1x", "fold"),
}
#: Options no game offers, or another game's.
INVALID_DECISIONS = ("dance", "call9x", "play4x", "call")
AMOUNTS = (-100, 0, 50, 100, 100, 200, 500, 1_000, 5_000, 10**9)
# The tables' chips: 50 and 200 of ``AMOUNTS`` are no chip (``invalid_chip``), 10**9 one capped at the maximum.
SIM_CHIPS = [100, 500, 1_000, 5_000, 10**9]
WAITING = ("idle", "")


def _specs() -> list[dict[str, Any]]:
    """The demo tables' games and modes (UTH and Casino Hold'em shared, Xtreme per
    seat with three seats, so that ``table_full`` and ``round_full`` happen)."""
    specs = []
    for demo in DEMO_TABLES:
        spec = {k: v for k, v in demo.items() if k not in ("code", "name")}
        limits = {spot: dict(ANTE if spot == "ante" else SIDE) for spot in spec["limits"]}
        if "bonus_spin" in limits:
            limits["bonus_spin"] = {"min": 100, "max": 500}
        spec["limits"] = limits
        if spec["hand_mode"] == "per_seat":
            spec["max_seats"] = 3
        specs.append(spec)
    return specs


@dataclass
class HouseFamily(TableClients):
    KEY_PREFIX: ClassVar[str] = "simh"
    ADVANCE: ClassVar[str] = pacing.HOUSE_ADVANCE

    players_count: int = 8
    name: str = "house"
    tables: list[int] = field(default_factory=list)
    games: dict[int, str] = field(default_factory=dict)
    players: list[int] = field(default_factory=list)
    operator: Any = None
    sockets: dict[tuple[int, int], str] = field(default_factory=dict)  # (player, table) -> connection
    last: Command | None = None
    keys: int = 0
    verified: set[str] = field(default_factory=set)  # ended rounds whose streams were replayed
    write_points: list[tuple[str, str]] = field(
        default_factory=lambda: [
            ("games.house.store.commit", "settle_prepared"),
            ("games.house.store.commit", "open_hold"),
            ("games.house.store.commit", "append_events"),
            ("games.house.store.commit", "append_in_cursor"),
            # ``save_rows`` where it is called: the player-round projector's write,
            # and the commands' last write on SQLite.
            ("games.house.projectors", "save_rows"),
            ("games.house.store.commands", "save_rows"),
            ("games.house.store.batches", "save_rows"),
            # Made after the step's events and money are written, before the round row is.
            ("games.house.store.commit", "HouseRoundProjector"),
            ("games.house.services.rounds", "_set_table"),
            ("games.house.services.bets", "save_player"),
            ("games.house.services.bets", "save_decision"),
            ("games.house.services.seats", "commit"),
        ]
    )
    #: The kind of account ``--plant corrupt_balance`` moves (a player's wallet).
    plant_account_kind: str = "wallet"

    def fresh(self) -> HouseFamily:
        return HouseFamily(players_count=self.players_count)

    # --- setup --------------------------------------------------------------------------------

    def replacements(self, sim: Simulator) -> dict[tuple[str, str], Any]:
        # Every deck the dealer shuffles and every wheel spin comes from the step's seed.
        return {("games.house.services.rounds", "SecureRandomSource"): lambda: sim.deck_rng}

    def setup(self, sim: Simulator) -> None:
        """Three open tables dealing their first round, funded players seated at
        one of them each (sockets open: present), and a staff operator."""
        self.forget()
        users = get_user_model()
        self.operator = users.objects.create(username=f"simh-{sim.namespace}-operator", is_staff=True)
        for index, spec in enumerate(_specs()):
            table = HouseTable.objects.create(
                code=f"{sim.namespace}H{index}"[:12], name=f"sim {spec['game']}", currency="EUR", is_open=True,
                chips=SIM_CHIPS, **spec, **TIMERS,
            )  # fmt: skip
            self.tables.append(table.pk)
            self.games[table.pk] = table.game
        for index in range(self.players_count):
            user = users.objects.create(username=f"simh-{sim.namespace}-{index}")
            wallet = player_accounts(player_id=user.pk, currency="EUR").wallet
            # The first two players are short of money: calls and doubles they cannot afford.
            funds = FUNDS if index >= 2 else 1_500
            deposit(wallet=wallet, amount=funds, currency="EUR", external_reference=f"simh-{sim.namespace}-{index}",
                    idempotency_key=f"simh-{sim.namespace}-dep-{index}", actor="simulator")  # fmt: skip
            self.players.append(int(user.pk))
            seat_at = self.tables[index % len(self.tables)]
            seating.take_seat(table_id=seat_at, player_id=user.pk)
            self.open_socket(sim, int(user.pk), seat_at)
        for table_id in self.tables:
            start = partial(dealer.start, table_id=table_id, now=sim.now)
            sim.note(f"dealer@{self.t(table_id)}", "start", sim._call(start))

    def forget(self) -> None:
        """Empty the round and player caches of the process (as a fresh process)."""
        from games.house.store import cache

        cache._ROUND_CACHE.clear()
        cache._PLAYER_CACHE.clear()

    def t(self, table_id: int) -> str:
        # Another run's table (a shared database: its sweep is global) by its id.
        return f"h{self.tables.index(table_id)}" if table_id in self.tables else f"house table #{table_id}"

    def p(self, player_id: int) -> str:
        return f"q{self.players.index(player_id)}" if player_id in self.players else f"player #{player_id}"

    def open_socket(self, sim: Simulator, player: int, table: int) -> None:
        name = f"simh-{sim.namespace}-{player}-{table}"
        presence.hold_socket(family=presence.HOUSE, table_id=table, player_id=player, connection=name, now=sim.now)
        self.sockets[(player, table)] = name

    def close_socket(self, sim: Simulator, player: int, table: int) -> None:
        name = self.sockets.pop((player, table), None)
        if name is not None:
            presence.release_socket(connection=name, now=sim.now)

    # --- the clients --------------------------------------------------------------------------

    def client_step(self, sim: Simulator) -> None:
        roll = self.run_if_made(sim, sim.rng.random(), 0.2, self.decider)
        if roll is not None:
            roll = self.run_if_made(sim, roll, 0.28, self.batch)
        if roll is None:
            return
        player, table = sim.rng.choice(self.players), sim.rng.choice(self.tables)
        if roll < 0.73 and sim.rng.random() < 0.85:
            # Mostly a seated player (else: not_seated), mostly where betting is open (else: betting_closed).
            seated = list(
                TableSeat.objects.filter(table_id__in=self.tables)
                .order_by("pk")
                .values_list("player_id", "table_id", "table__phase")
            )
            betting = [(p, t) for p, t, phase in seated if phase == "betting"]
            pool = betting if betting and sim.rng.random() < 0.8 else [(p, t) for p, t, _ in seated]
            if pool:
                player, table = sim.rng.choice(pool)
        key, now, who = self.key(sim), sim.now, f"{self.p(player)}@{self.t(table)}"
        if roll < 0.55:
            limits = HouseTable.objects.filter(pk=table).values_list("limits", flat=True).first() or {}
            spot = sim.rng.choice((*sorted(limits), "ante", "ante", "nonsense", "call"))
            amount = sim.rng.choice(AMOUNTS)
            self.run(sim, Command(who, f"bet {spot} {amount}", lambda: bets.place_chip(
                table_id=table, player_id=player, spot=spot, amount=amount, idempotency_key=key, now=now)))  # fmt: skip
        elif roll < 0.63:
            option = sim.rng.choice(DECISIONS[self.games[table]] + INVALID_DECISIONS)
            self.run(sim, self.decision(player, table, option, key, now))
        elif roll < 0.73:
            name = sim.rng.choice(("undo", "undo", "clear", "repeat", "repeat", "double"))
            service = {"undo": bets.undo_bet, "clear": bets.clear_bets, "repeat": bets.repeat_bets,
                       "double": bets.double_bets}[name]  # fmt: skip
            self.run(sim, Command(who, name, lambda: service(
                table_id=table, player_id=player, idempotency_key=key, now=now)))  # fmt: skip
        elif roll < 0.85:
            self.seat_step(sim, player, table, who)
        elif roll < 0.93:
            self.presence_step(sim, player, table, who)
        else:
            self.repeat_last(sim)

    def decision(self, player: int, table: int, option: str, key: str, now: Any) -> Command:
        """A decision as the API takes it: after the last one outstanding, the
        dealer is asked to move on at once (``games.house.api.play.answer_of``)."""

        def body() -> str:
            result = bets.make_decision(table_id=table, player_id=player, option=option, idempotency_key=key, now=now)
            if result.all_decided and result.tick is not None:
                dealer.advance_now(table_id=table, expected_seq=result.tick.phase_seq)
                return "ok, all decided"
            return "ok"

        return Command(f"{self.p(player)}@{self.t(table)}", f"decide {option}", body)

    def batch(self, sim: Simulator) -> Command | None:
        """Two to four commands of the players seated at one table, run together
        as the API's request threads bring them (``group.run_commands``: one group
        commit on PostgreSQL; a refusal is that command's answer)."""
        open_now = sorted(
            HouseTable.objects.filter(pk__in=self.tables).exclude(phase__in=(*WAITING, "paused", "between"))
            .values_list("pk", flat=True)
        )  # fmt: skip
        table = sim.rng.choice(open_now if open_now and sim.rng.random() < 0.8 else self.tables)
        seated = sorted(TableSeat.objects.filter(table_id=table).values_list("player_id", flat=True))
        if not seated:
            return None
        limits = HouseTable.objects.filter(pk=table).values_list("limits", flat=True).first() or {}
        commands: list[group.PlayerCommand] = []
        for _ in range(sim.rng.randint(2, 4)):
            player, key, kind = sim.rng.choice(seated), self.key(sim), sim.rng.random()
            if kind < 0.5:
                spot = sim.rng.choice((*sorted(limits), "ante", "ante", "nonsense"))
                commands.append(group.PlaceChip(player, key, spot, sim.rng.choice(AMOUNTS)))
            elif kind < 0.75:
                option = sim.rng.choice(DECISIONS[self.games[table]] + INVALID_DECISIONS[:1])
                commands.append(group.MakeDecision(player, key, option))
            else:
                simple = sim.rng.choice((group.UndoBet, group.ClearBets, group.RepeatBets, group.DoubleBets))
                commands.append(simple(player, key))
        now = sim.now

        def body() -> str:
            results = group.run_commands(table_id=table, commands=commands, now=now)
            for result in results:
                if isinstance(result, bets.DecisionResult) and result.all_decided and result.tick is not None:
                    dealer.advance_now(table_id=table, expected_seq=result.tick.phase_seq)
            return " ".join(r.code if isinstance(r, DomainError) else "ok" for r in results)

        what = "batch " + ", ".join(f"{self.p(c.player_id)} {type(c).__name__}" for c in commands)
        return Command(f"group@{self.t(table)}", what, body)

    def decider(self, sim: Simulator) -> Command | None:
        """A player with a wager in play who has not finished deciding, taking one
        of their game's options (the service refuses it outside their window)."""
        rows = list(
            PlayerRound.objects.filter(
                table_id__in=self.tables, status="betting", staked__gt=0, done_deciding=False, round__status="open"
            )
            .order_by("pk")
            .values_list("player_id", "table_id")
        )
        if not rows:
            return None
        player, table = sim.rng.choice(rows)
        option = sim.rng.choice(DECISIONS[self.games[table]])
        return self.decision(player, table, option, self.key(sim), sim.now)

    def seat_step(self, sim: Simulator, player: int, table: int, who: str) -> None:
        """Join (``take_seat``), or give the seat up (``leave_table``: bets of a
        round still betting are returned; later ones stay in play)."""
        now = sim.now
        if not TableSeat.objects.filter(table_id=table, player_id=player).exists() or sim.rng.random() < 0.6:
            self.run(sim, Command(who, "join", lambda: seating.take_seat(table_id=table, player_id=player)))
            if (
                TableSeat.objects.filter(table_id=table, player_id=player).exists()
                and (player, table) not in self.sockets
            ):
                self.open_socket(sim, player, table)
            return
        self.run(sim, Command(who, "leave", lambda: seating.leave_table(table_id=table, player_id=player, now=now)))
        if not TableSeat.objects.filter(table_id=table, player_id=player).exists():
            self.close_socket(sim, player, table)

    def presence_step(self, sim: Simulator, player: int, table: int, who: str) -> None:
        """The socket closes (still seated: absent at "No More Bets" once the grace
        runs out), or opens again."""
        if (player, table) in self.sockets:
            self.close_socket(sim, player, table)
            sim.note(who, "socket closed", "ok")
        else:
            self.open_socket(sim, player, table)
            sim.note(who, "socket opened (rejoin)", "ok")

    def on_tick(self, sim: Simulator) -> None:
        presence.refresh_sockets(connections=sorted(self.sockets.values()), now=sim.now)

    # --- the operator -------------------------------------------------------------------------

    def operator_step(self, sim: Simulator) -> None:
        table, now, operator = sim.rng.choice(self.tables), sim.now, self.operator
        roll = sim.rng.random()
        paused = sorted(HouseTable.objects.filter(pk__in=self.tables, phase="paused").values_list("pk", flat=True))
        if paused and roll < 0.5:  # an operator who paused a round attends to it (resume or void)
            table, roll = sim.rng.choice(paused), sim.rng.uniform(0.25, 0.6)
        who = f"operator@{self.t(table)}"
        if roll < 0.6:
            action = "pause" if roll < 0.25 else "resume" if roll < 0.5 else "void"
            sim.execute(who, action, lambda: dealer.operator_round_control(
                table_id=table, operator=operator, action=action, reason="sim", now=now))  # fmt: skip
        elif roll < 0.85:
            changes = self.config_change(sim, table)
            sim.execute(who, f"configure {changes}", lambda: configure_table(
                table_id=table, operator=operator, config=changes, reason="sim", now=now))  # fmt: skip
        elif roll < 0.9:
            sim.execute(who, "close", lambda: dealer.operator_close(table_id=table, operator=operator, now=now))
        else:
            sim.execute(who, "open", lambda: dealer.operator_open(table_id=table, operator=operator, now=now))

    def config_change(self, sim: Simulator, table: int) -> dict[str, Any]:
        """A configuration change (from the next round), sometimes an invalid one
        (the warning not shorter than betting) or a fixed identity (the currency)."""
        limits = HouseTable.objects.filter(pk=table).values_list("limits", flat=True).first() or {}
        ante = {"min": 100, "max": sim.rng.choice((1_000, 5_000, 20_000))}
        base = next(spec for spec in _specs() if spec["game"] == self.games[table])
        sides = sorted(spot for spot in limits if spot != "ante")
        # A side bet withdrawn (a repeat of last round's bets then names a spot no longer offered), or all back.
        fewer = {spot: limit for spot, limit in limits.items() if spot != (sides[0] if sides else "")}
        return dict(sim.rng.choice((
            {"betting_seconds": sim.rng.choice((5, 8, 12))},
            {"decision_seconds": sim.rng.choice((4, 6, 10))},
            {"between_rounds_seconds": sim.rng.choice((1, 2, 4))},
            {"limits": {**limits, "ante": ante}},
            {"limits": fewer},
            {"limits": base["limits"]},
            {"hand_mode": sim.rng.choice(("shared", "per_seat")), "max_seats": sim.rng.choice((1, 2, 3, 7))},
            {"warning_seconds": 30},
            {"currency": "USD"},
        )))  # fmt: skip

    # --- the dealer's tasks -------------------------------------------------------------------

    def sweep(self, sim: Simulator) -> Mapping[str, int]:
        return dealer.sweep(now=sim.now)

    def advance(self, sim: Simulator, table_id: int, seq: int) -> Any:
        return dealer.advance(table_id=table_id, expected_seq=seq, now=sim.now)

    def drain(self, sim: Simulator) -> None:
        """The end: the operator resumes every paused round and closes the tables,
        the clients stop, the dealer runs (no faults) until every table idles; then
        everyone leaves. A table still in a round after ``limit`` simulated seconds
        is a violation."""
        for table in HouseTable.objects.filter(pk__in=self.tables).order_by("pk"):
            who = f"operator@{self.t(table.pk)}"
            if table.phase == "paused":
                resume = partial(dealer.operator_round_control, table_id=table.pk, operator=self.operator,
                                 action="resume", reason="drain", now=sim.now)  # fmt: skip
                sim.note(who, "resume (drain)", sim._call(resume))
            if table.is_open:
                close = partial(dealer.operator_close, table_id=table.pk, operator=self.operator, now=sim.now)
                sim.note(who, "close (drain)", sim._call(close))
        for code in self.run_dealer_while(sim, self.in_play):
            sim.violate("bounded_end", f"table {code} still in a round at the end of the drain")
        for seat in TableSeat.objects.filter(table_id__in=self.tables).order_by("pk"):
            leave = partial(seating.leave_table, table_id=seat.table_id, player_id=seat.player_id, now=sim.now)
            sim.note(f"{self.p(seat.player_id)}@{self.t(seat.table_id)}", "leave (drain)", sim._call(leave))

    def in_play(self) -> list[str]:
        tables = HouseTable.objects.filter(pk__in=self.tables).exclude(phase__in=WAITING)
        open_rounds = HouseRound.objects.filter(table_id__in=self.tables, status="open")
        return sorted({*tables.values_list("code", flat=True), *open_rounds.values_list("round_id", flat=True)})

    # --- checks -------------------------------------------------------------------------------

    def fingerprint(self) -> tuple[Any, ...]:
        tables = HouseTable.objects.filter(pk__in=self.tables).order_by("pk").values_list("phase", "phase_seq")
        rows = PlayerRound.objects.filter(table_id__in=self.tables).aggregate(n=Count("id"), staked=Sum("staked"))
        seats = TableSeat.objects.filter(table_id__in=self.tables).count()
        return (tuple(tables), rows["n"], rows["staked"], seats)

    def check(self, sim: Simulator, *, full: bool) -> list[tuple[str, str]]:
        """After every step (one plain query: the ORM's own cost is most of a cheap
        check's): no table (not paused) overdue by more than the bound."""
        with connection.cursor() as cursor:
            found = self.overdue(sim, cursor, table=HouseTable, current="round", paused="paused")
        if full:
            found += self.replay_checks(final=sim.step > sim.steps)
        return found

    def replay_checks(self, *, final: bool) -> list[tuple[str, str]]:
        """Every round of the run (an ended one once, and all again at the end):
        its stream settled or voided at most once, each player's stream too; an
        ended round holds no wager still betting; the round row and the player
        rows are what their streams replay to."""
        found: list[tuple[str, str]] = []
        rounds = HouseRound.objects.filter(table_id__in=self.tables).order_by("pk")
        for row in rounds:
            if row.round_id in self.verified and not final:
                continue
            events = read_stream(stream_id=round_stream(row.round_id))
            ends = sum(e.type in (SETTLED, VOIDED_EVENT) for e in events)
            if ends > 1:
                found.append(("no_wager_paid_twice", f"round {row.round_id} settled or voided {ends} times"))
            state = replay_round(events)
            if (row.stream_version, row.phase_seq) != (state.version, state.phase_seq):
                stored, replayed_at = (row.stream_version, row.phase_seq), (state.version, state.phase_seq)
                found.append(("replay_equals_state", f"round {row.round_id}: row (version, seq) {stored}, "
                                                     f"replay {replayed_at}"))  # fmt: skip
            expected = "settled" if any(e.type == SETTLED for e in events) else "voided" if any(
                e.type == VOIDED_EVENT for e in events) else None  # fmt: skip
            if expected is not None and row.status != expected:
                found.append(("replay_equals_state", f"round {row.round_id} is {row.status}, its stream {expected}"))
            for player_row in PlayerRound.objects.filter(round=row).order_by("pk"):
                pid = player_row.player_id
                player_events = read_stream(stream_id=player_stream(row.round_id, pid))
                paid = sum(e.type in (PLAYER_SETTLED, PLAYER_VOIDED) for e in player_events)
                if paid > 1:
                    found.append(("no_wager_paid_twice", f"round {row.round_id} player {pid}: settled or voided "
                                                         f"{paid} times"))  # fmt: skip
                replayed = replay_player(pid, player_events)
                if player_row.stream_version != replayed.version or state_from_json(pid, player_row.state) != replayed:
                    found.append(("replay_equals_state", f"round {row.round_id} player {pid}: the row differs from "
                                                         f"the stream's replay (row v{player_row.stream_version}, "
                                                         f"stream v{replayed.version})"))  # fmt: skip
                if row.status != "open" and player_row.staked > 0 and player_row.status == "betting":
                    what = f"ended ({row.status}) with player {pid}'s wagers ({player_row.staked}) still betting"
                    found.append(("hold_resolved_once", f"round {row.round_id} {what}"))
            if row.status != "open":
                self.verified.add(row.round_id)
        return found

    def counts(self) -> dict[str, int]:
        return {"rounds": HouseRound.objects.filter(table_id__in=self.tables).count(), "hands": 0}

    def evidence(self, sim: Simulator, violation: Violation) -> list[str]:
        """The last events of every table's current round."""
        return self.current_events(table=HouseTable, current="round", stream=round_stream)
