"""The poker family of the simulator: ring tables, their players and operator.

The clients are bots (``games.poker.tournament.driver.bot_action``) and
mischief: actions out of turn or out of range, unknown actions, seats taken,
buy-ins out of range, top-ups, leaving the table, sitting out and in,
disconnecting and rejoining, and repeating a command with the same idempotency
key. The operator pauses, resumes and voids hands and edits the tables'
settings (timers, blinds, opening and closing, the currency). The dealer's
tasks are ``advance_table`` at the deadlines the steps scheduled, and the beat's
``sweep``; their bodies run when the simulator's queue delivers them.

Extra invariants: a playing hand's table moves on within a bounded simulated
time after its deadline (unless an operator paused it); an ended hand's pot is
at zero and was settled once (awarded or voided, never both, never twice);
replaying a playing hand's stream gives the engine state the services use
(their cache) and the dealt-in seats' stacks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, ClassVar

from django.contrib.auth import get_user_model
from django.db import connection

from games.poker import event_types as et
from games.poker import services
from games.poker.engine.events import PotAwarded
from games.poker.engine.hand import legal_actions
from games.poker.models import PokerHand, PokerSeat, PokerTable
from games.poker.services import tables as table_services
from games.poker.tournament.driver import bot_action
from games.simulation.clients import Command, TableClients
from games.simulation.core import Simulator, Violation
from games.tables import pacing, presence
from ledger.services import deposit, player_accounts, read_stream

FUNDS = 50_000
ACTIONS = ("fold", "check", "call", "bet", "raise", "all_in", "dance")


@dataclass
class PokerFamily(TableClients):
    KEY_PREFIX: ClassVar[str] = "sim"
    ADVANCE: ClassVar[str] = pacing.POKER_ADVANCE

    tables_count: int = 2
    players_count: int = 9
    name: str = "poker"
    tables: list[int] = field(default_factory=list)
    players: list[int] = field(default_factory=list)
    sockets: dict[int, str] = field(default_factory=dict)  # player -> connection, connected at their table
    last: Command | None = None
    keys: int = 0
    write_points: list[tuple[str, str]] = field(
        default_factory=lambda: [
            # A step's ledger batch: written at once, or queued and sent with the step's
            # other writes in one pipeline (games.poker.store.act.deferred_writes).
            ("games.poker.services.hands", "settle_small_batch"),
            ("games.poker.services.hands", "_queue_batch"),
            ("games.poker.store.act", "stop_deferring"),
            ("games.poker.services.hands", "append_events"),
            ("games.poker.services.hands", "set_table"),
            ("games.poker.services.hands", "sit_out_seat"),
            ("games.poker.services.operator", "settle_batch"),
            ("games.poker.services.operator", "append_events"),
            ("games.poker.services.operator", "set_table"),
            ("games.poker.services.seats", "transfer"),
            ("games.poker.services.seats", "table_append"),
            ("games.poker.services.seats", "maybe_start_soon"),
        ]
    )

    #: The kind of account ``--plant corrupt_balance`` moves (a seat: ``seat_matches_ledger`` names it too).
    plant_account_kind: str = "poker_seat"

    def fresh(self) -> PokerFamily:
        return PokerFamily(tables_count=self.tables_count, players_count=self.players_count)

    # --- setup --------------------------------------------------------------------------------

    def replacements(self, sim: Simulator) -> dict[tuple[str, str], Any]:
        # Every deck the dealer shuffles (the sweep's deals too) comes from the seed.
        return {("games.poker.services.hands", "SecureRandomSource"): lambda: sim.deck_rng}

    def setup(self, sim: Simulator) -> None:
        self.forget()
        variants = ("no_limit", "pot_limit", "fixed_limit")
        for index in range(self.tables_count):
            table = PokerTable.objects.create(
                code=f"{sim.namespace}T{index}"[:12], name=f"sim {index}", variant=variants[index % 3], max_seats=6,
                currency="EUR", small_blind=5, big_blind=10, buy_in_min=200, buy_in_max=2000, turn_seconds=5,
                time_bank_seconds=4 * (index % 2), disconnection_bank_seconds=3, reservation_seconds=30,
                between_hands_seconds=2, is_open=True,
            )  # fmt: skip
            self.tables.append(table.pk)
        users = get_user_model()
        for index in range(self.players_count):
            user = users.objects.create(username=f"sim-{sim.namespace}-{index}")
            wallet = player_accounts(player_id=user.pk, currency="EUR").wallet
            deposit(wallet=wallet, amount=FUNDS, currency="EUR", external_reference=f"sim-{sim.namespace}-{index}",
                    idempotency_key=f"sim-{sim.namespace}-dep-{index}", actor="simulator")  # fmt: skip
            self.players.append(int(user.pk))

    def forget(self) -> None:
        """Empty the hands' cache of the process (as a fresh process)."""
        table_services._HAND_CACHE.clear()

    def t(self, table_id: int) -> str:
        # Another run's table (a shared database: its sweep is global) by its id.
        return f"t{self.tables.index(table_id)}" if table_id in self.tables else f"poker table #{table_id}"

    def p(self, player_id: int) -> str:
        return f"p{self.players.index(player_id)}" if player_id in self.players else f"player #{player_id}"

    # --- the clients --------------------------------------------------------------------------

    def bot_move(self, sim: Simulator) -> Command | None:
        """The player to act at a random table with a hand in play, deciding like a bot."""
        tables = list(PokerTable.objects.filter(pk__in=self.tables, phase=services.HAND).order_by("pk"))
        if not tables:
            return None
        table = sim.rng.choice(tables)
        hand = PokerHand.objects.filter(hand_id=table.current_hand_id).first()
        if hand is None:
            return None
        state, _ = services.hand_state(hand)
        legal = legal_actions(state) if state is not None else None
        if state is None or legal is None:
            return None
        player = int(state.players[state.positions[legal.seat]].player_id)
        action = bot_action(state, legal, sim.rng.random(), 0.3)
        key, now = self.key(sim), sim.now
        return Command(
            f"{self.p(player)}@{self.t(table.pk)}", f"act {action}",
            lambda: services.act(table_id=table.pk, player_id=player, action=action, idempotency_key=key, now=now),
        )  # fmt: skip

    def client_step(self, sim: Simulator) -> None:
        roll = self.run_if_made(sim, sim.rng.random(), 0.55, self.bot_move)
        if roll is None:
            return
        player = sim.rng.choice(self.players)
        table = sim.rng.choice(self.tables)
        key, now, who = self.key(sim), sim.now, f"{self.p(player)}@{self.t(table)}"
        if roll < 0.65:
            action = sim.rng.choice(ACTIONS)
            amount = sim.rng.choice((None, -5, 0, 7, 20, 60, 10**9))
            self.run(sim, Command(who, f"act {action} {amount}", lambda: services.act(
                table_id=table, player_id=player, action=action, amount=amount, idempotency_key=key,
                now=now)))  # fmt: skip
        elif roll < 0.88:
            self.run(sim, self.seat_command(sim, player, table, key, who))
        elif roll < 0.95:
            self.presence_step(sim, player)
        else:
            self.repeat_last(sim)

    def seat_command(self, sim: Simulator, player: int, table: int, key: str, who: str) -> Command:
        now = sim.now
        seat = PokerSeat.objects.filter(player_id=player, table_id__in=self.tables).first()
        if seat is None or sim.rng.random() < 0.1:
            number = sim.rng.randint(1, 7)
            buy_in = sim.rng.choice((150, 200, 500, 1000, 2000, 2100))
            return Command(who, f"sit_down seat {number} buy_in {buy_in}", lambda: services.sit_down(
                table_id=table, player_id=player, seat_number=number, buy_in=buy_in, idempotency_key=key,
                now=now))  # fmt: skip
        table, who = seat.table_id, f"{self.p(player)}@{self.t(seat.table_id)}"
        choice = sim.rng.choice(("top_up", "stand_up", "sit_out", "sit_in", "sit_in"))
        if choice == "top_up":
            amount = sim.rng.choice((100, 500, 5000))
            return Command(who, f"top_up {amount}", lambda: services.top_up(
                table_id=table, player_id=player, amount=amount, idempotency_key=key, now=now))  # fmt: skip
        if choice == "stand_up":
            return Command(who, "stand_up", lambda: services.stand_up(
                table_id=table, player_id=player, idempotency_key=key, now=now))  # fmt: skip
        if choice == "sit_out":
            return Command(who, "sit_out", lambda: services.sit_out(table_id=table, player_id=player, now=now))
        return Command(who, "sit_in", lambda: services.sit_in(table_id=table, player_id=player, now=now))

    def presence_step(self, sim: Simulator, player: int) -> None:
        """Leave (the socket closes) or rejoin (a socket opens again, ``rejoin``)."""
        seat = PokerSeat.objects.filter(player_id=player, table_id__in=self.tables).first()
        if seat is None:
            return
        table, now, who = seat.table_id, sim.now, f"{self.p(player)}@{self.t(seat.table_id)}"
        name = f"sim-{player}"
        if player in self.sockets or sim.rng.random() < 0.5:
            if player not in self.sockets:
                presence.hold_socket(family=presence.POKER, table_id=table, player_id=player, connection=name, now=now)
            presence.release_socket(connection=name, now=now)
            self.sockets.pop(player, None)
            sim.note(who, "leave (socket closed)", "ok")
            return
        presence.hold_socket(family=presence.POKER, table_id=table, player_id=player, connection=name, now=now)
        self.sockets[player] = name
        self.run(sim, Command(who, "rejoin", lambda: services.rejoin(table_id=table, player_id=player, now=now)))

    def on_tick(self, sim: Simulator) -> None:
        presence.refresh_sockets(connections=list(self.sockets.values()), now=sim.now)

    # --- the operator -------------------------------------------------------------------------

    def operator_step(self, sim: Simulator) -> None:
        table, now = sim.rng.choice(self.tables), sim.now
        who, roll = f"operator@{self.t(table)}", sim.rng.random()
        if roll < 0.3:
            sim.execute(who, "pause", lambda: services.pause_hand(table_id=table, actor="sim", reason="sim", now=now))
        elif roll < 0.6:
            sim.execute(who, "resume", lambda: services.resume_hand(table_id=table, actor="sim", now=now))
        elif roll < 0.7:
            sim.execute(who, "void", lambda: services.void_hand(table_id=table, actor="sim", reason="sim", now=now))
        else:
            changes = sim.rng.choice((
                {"turn_seconds": sim.rng.choice((3, 5, 10))},
                {"between_hands_seconds": sim.rng.choice((1, 2, 5))},
                {"small_blind": 10, "big_blind": 20},
                {"small_blind": 5, "big_blind": 10},
                {"is_open": False},
                {"is_open": True},
                {"is_open": True},
                {"time_bank_seconds": sim.rng.choice((0, 5))},
                {"disconnection_bank_seconds": sim.rng.choice((0, 3))},
                {"currency": sim.rng.choice(("USD", "EUR"))},
            ))  # fmt: skip
            sim.execute(who, f"update {changes}", lambda: services.update_table(table_id=table, changes=changes))

    # --- the dealer's tasks -------------------------------------------------------------------

    def sweep(self, sim: Simulator) -> Mapping[str, int]:
        return services.sweep(now=sim.now)

    def advance(self, sim: Simulator, table_id: int, seq: int) -> Any:
        return services.advance_table(table_id=table_id, expected_seq=seq, now=sim.now, rng=sim.deck_rng)

    def drain(self, sim: Simulator) -> None:
        """The end: the operator resumes every paused hand and closes the tables,
        the clients stop, the dealer runs (no faults) until every hand has ended;
        then everyone stands up. A hand still playing after ``limit`` simulated
        seconds is a violation."""
        for table in PokerTable.objects.filter(pk__in=self.tables).order_by("pk"):
            who, table_id = f"operator@{self.t(table.pk)}", table.pk
            if table.phase == services.PAUSED:
                sim.note(who, "resume (drain)", sim._call(
                    partial(services.resume_hand, table_id=table_id, actor="sim", now=sim.now)))  # fmt: skip
            sim.note(who, "close (drain)", sim._call(
                partial(services.update_table, table_id=table_id, changes={"is_open": False})))  # fmt: skip
        for hand_id in self.run_dealer_while(sim, self.playing):
            sim.violate("bounded_end", f"hand {hand_id} still playing at the end of the drain")
        for seat in PokerSeat.objects.filter(table_id__in=self.tables).order_by("pk"):
            key = self.key(sim)
            sim.note(f"{self.p(seat.player_id)}@{self.t(seat.table_id)}", "stand_up (drain)", sim._call(
                partial(services.stand_up, table_id=seat.table_id, player_id=seat.player_id, idempotency_key=key,
                        now=sim.now)))  # fmt: skip

    def playing(self) -> list[str]:
        return list(
            PokerHand.objects.filter(table_id__in=self.tables, status="playing")
            .order_by("hand_id")
            .values_list("hand_id", flat=True)
        )

    # --- checks -------------------------------------------------------------------------------

    def fingerprint(self) -> tuple[Any, ...]:
        rows = PokerTable.objects.filter(pk__in=self.tables).order_by("pk").values_list("phase", "phase_seq")
        seats = (
            PokerSeat.objects.filter(table_id__in=self.tables)
            .order_by("pk")
            .values_list("player_id", "stack", "sitting_out")
        )
        return (tuple(rows), tuple(seats))

    def check(self, sim: Simulator, *, full: bool) -> list[tuple[str, str]]:
        """After every step (two plain queries: the ORM's own cost is most of a
        cheap check's): no table overdue; no ended hand's pot holding money."""
        with connection.cursor() as cursor:
            found = self.overdue(sim, cursor, table=PokerTable, current="hand", paused=services.PAUSED)
            cursor.execute(
                f"SELECT h.hand_id, h.status, a.balance FROM ledger_account a JOIN {PokerHand._meta.db_table} h "
                "ON a.owner = %s || h.hand_id WHERE a.kind = 'poker_pot' AND a.balance <> 0 AND h.status <> %s "
                "ORDER BY h.hand_id",
                ["poker-hand:", "playing"],
            )
            for hand_id, status, balance in cursor.fetchall():
                found.append(("pot_resolved_once", f"hand {hand_id} is {status}, its pot holds {balance}"))
        if full:
            found += self.replay_checks()
        return found

    def replay_checks(self) -> list[tuple[str, str]]:
        """Each hand of the run settled once; a playing hand's stream replays to the
        services' state and its dealt-in seats' stacks."""
        found: list[tuple[str, str]] = []
        for hand in PokerHand.objects.filter(table_id__in=self.tables).order_by("hand_id"):
            events = read_stream(stream_id=et.hand_stream(hand.hand_id))
            voided = sum(e.type == et.VOIDED for e in events)
            awarded = sum(e.type == PotAwarded.type for e in events)
            if voided > 1 or (voided and awarded):
                found.append(("no_wager_paid_twice", f"hand {hand.hand_id}: voided {voided}x, pots awarded {awarded}"))
            if hand.status != "playing":
                continue
            # The dealer's replay (the hole cards opened with the deal key, while the hand runs).
            replayed, _, _ = table_services.load_hand(hand.hand_id, dealer=True)
            used, _ = services.hand_state(hand)
            if replayed != used:
                found.append(("replay_equals_state", f"hand {hand.hand_id}: the services' state differs from replay"))
            if replayed is None:
                continue
            for number, seat in table_services.dealt_in_seats(hand).items():
                stack = replayed.players[replayed.positions[number]].stack
                if seat.stack != stack:
                    found.append(("replay_equals_state", f"hand {hand.hand_id} seat {number}: stack {seat.stack}, "
                                                         f"replay {stack}"))  # fmt: skip
        return found

    def counts(self) -> dict[str, int]:
        return {"hands": PokerHand.objects.filter(table_id__in=self.tables).count(), "rounds": 0}

    def evidence(self, sim: Simulator, violation: Violation) -> list[str]:
        """The last events of the hands in play (or the last hand) at every table."""
        return self.current_events(table=PokerTable, current="hand", stream=et.hand_stream)
