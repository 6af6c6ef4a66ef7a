"""A stateful fuzz of one poker table through its services (issue #20), on real
PostgreSQL: two to four players sit down, top up, stand up, sit out and in, act
(a random legal action from the table view), time out (the clock past the
deadline, then the Celery task's step), rejoin (fold, stand up and sit down at
another seat mid-hand), wait for the sweeper; an operator pauses, resumes and
voids; the dealer deals from decks seeded by Hypothesis.

After every step:
- each seat's stack equals its ``poker_seat`` account's balance, and a player
  without a seat has nothing in that account (``verify_ledger``'s check agrees);
- the hand in play's pot account holds the hand's pot, every other hand's none;
- the ledger sums to zero per currency;
- no player's money is lost or made: wallet + seat + what they put into the
  hand in play equals their deposit plus what the finished hands' histories say
  they won or lost, and the players' results sum to minus the rake taken.
A refused command changes nothing; an action the table view offers is never
refused, one out of turn always is; a dealer step and an operator's pause,
resume or void where it applies are never refused (a refused dealer step jams
the table; a refused void leaves the chips in the pot).

The suite runs a short fixed-seed search. ``make fuzz-poker`` runs it long with
fresh seeds: ``POKER_FUZZ_EXAMPLES`` (and ``POKER_FUZZ_STEPS``) set the size.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.db import transaction
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from casino.errors import DomainError
from games.cards.shuffle import SeededRandomSource, shuffled_deck
from games.poker import services
from games.poker.models import PokerHand, PokerHandPlayer, PokerSeat, PokerTable
from games.poker.realtime.presenters import table_view
from games.poker.services.verify import check_seat_stacks
from ledger.models import Account
from ledger.services import player_accounts
from tests.db import ledger_sums
from tests.poker.tables import T0, key, make_player, make_table, snapshot

FUZZING = "POKER_FUZZ_EXAMPLES" in os.environ
EXAMPLES = int(os.environ.get("POKER_FUZZ_EXAMPLES", "30"))
STEPS = int(os.environ.get("POKER_FUZZ_STEPS", "25"))
FUNDS = 20_000
OPERATOR = "user:fuzz-operator"
FINISHED = ("complete", "voided")


class PokerTableMachine(RuleBasedStateMachine):
    """One table, its players and the clock; every example in a transaction rolled back at the end."""

    def __init__(self) -> None:
        super().__init__()
        self._example = transaction.atomic()
        self._example.__enter__()
        self.now = T0
        self.players: list[int] = []
        self.table = PokerTable()
        self.seated: dict[int, bool] = {}  # seated player -> sitting out
        # Ledger accounts by player (wallet, poker_seat) and by hand (poker_pot), and the table's rake.
        self.wallets: dict[int, int] = {}
        self.seat_accounts: dict[int, int] = {}
        self.pots: dict[str, int] = {}
        self.rake = 0

    def teardown(self) -> None:
        transaction.set_rollback(True)
        self._example.__exit__(None, None, None)

    # -- helpers ---------------------------------------------------------------------------------

    def _tick(self, seconds: float = 1) -> datetime:
        self.now += timedelta(seconds=seconds)
        return self.now

    def _refresh(self) -> None:
        """Read again what the preconditions look at: the table, who is seated and who sits out."""
        self.table.refresh_from_db()
        self.seated = dict(PokerSeat.objects.filter(table=self.table).values_list("player_id", "sitting_out"))

    def _attempt(self, command: Callable[[], object]) -> bool:
        """Run a command that may be refused; a refusal must change nothing."""
        before = snapshot()
        try:
            with transaction.atomic():
                command()
        except DomainError:
            assert snapshot() == before
            return False
        finally:
            self._refresh()
        return True

    def _hand(self) -> PokerHand | None:
        """The hand being played (or paused)."""
        if not self.table.current_hand_id:
            return None
        return PokerHand.objects.filter(hand_id=self.table.current_hand_id, status="playing").first()

    def _actor(self) -> tuple[int, dict[str, Any]] | None:
        """The player to act and the legal actions their table view offers."""
        hand = self._hand()
        if hand is None or self.table.phase != services.HAND or hand.actor_seat is None:
            return None
        player = PokerSeat.objects.get(table=self.table, seat_number=hand.actor_seat).player_id
        view = table_view(table_id=self.table.pk, viewer_id=player)["hand"]
        assert view is not None
        assert "legal" in view, view
        return player, view

    def _play_legal(self, player: int, view: dict[str, Any], data: st.DataObject, *, fold: bool = False) -> None:
        legal = view["legal"]
        # Folding last: Hypothesis shrinks towards the first choice, and a shrunk hand should go on.
        options = ["check" if legal["can_check"] else "call"]
        if legal["can_raise"]:
            options.append("raise" if any(p["bet"] > 0 for p in view["players"]) else "bet")
        action = "fold" if fold else data.draw(st.sampled_from([*options, "fold"]), label="action")
        amount = None
        if action in ("bet", "raise"):
            amount = data.draw(st.integers(legal["min_to"], legal["max_to"]), label="to")
        # An action the view offers is never refused: no _attempt here.
        services.act(table_id=self.table.pk, player_id=player, action=action, amount=amount,
                     idempotency_key=key("fuzz-act"), now=self._tick())  # fmt: skip
        self._refresh()

    def _sit(self, player: int, seat: int, buy_in: int) -> bool:
        def sit_down() -> object:
            return services.sit_down(table_id=self.table.pk, player_id=player, seat_number=seat, buy_in=buy_in,
                                     idempotency_key=key("fuzz-sit"), now=self._tick())  # fmt: skip

        return self._attempt(sit_down)

    def _dealer_step(self, **extra: Any) -> None:
        """What ``games.poker.advance`` runs once the deadline has passed."""
        assert self.table.deadline is not None
        self.now = max(self.now, self.table.deadline)
        moved = services.advance_table(table_id=self.table.pk, expected_seq=self.table.phase_seq, now=self.now,
                                       **extra)  # fmt: skip
        assert moved is not None
        self._refresh()

    # -- set up ----------------------------------------------------------------------------------

    @initialize(
        count=st.sampled_from([3, 4, 2]),  # three first: a rejoin during the hand needs two players left in it
        variant=st.sampled_from(["no_limit", "pot_limit", "fixed_limit"]),
        ante=st.sampled_from([0, 0, 2]),
        time_bank=st.sampled_from([0, 4]),
        buy_ins=st.lists(st.integers(200, 2_000), min_size=4, max_size=4),
        shuffle=st.integers(0, 2**32),
    )
    def open_table(self, count: int, variant: str, ante: int, time_bank: int, buy_ins: list[int],
                   shuffle: int) -> None:  # fmt: skip
        """The players sit down and the first hand is dealt (the steps start in a hand)."""
        self.table = make_table(variant=variant, ante=ante, time_bank_seconds=time_bank)
        self.players = [make_player(funds=FUNDS) for _ in range(count)]
        self.wallets = {p: player_accounts(player_id=p, currency="EUR").wallet for p in self.players}
        self.seat_accounts = {
            p: services.seat_account(table_id=self.table.pk, player_id=p, currency="EUR") for p in self.players
        }
        self.rake = services.rake_account(table_id=self.table.pk, currency="EUR")
        for number, (player, buy_in) in enumerate(zip(self.players, buy_ins, strict=False), start=1):
            services.sit_down(table_id=self.table.pk, player_id=player, seat_number=number, buy_in=buy_in,
                              idempotency_key=key("fuzz-sit"), now=self.now)  # fmt: skip
        self._refresh()
        self.deal_next_hand(shuffle)

    # -- players ---------------------------------------------------------------------------------

    # Each player command goes to a player it can concern (no seat / a seat / sitting
    # out), so the steps are not spent on trivial refusals; amounts and seat numbers
    # still reach outside the table's limits, and hands in play refuse the rest.

    @precondition(lambda self: len(self.seated) < len(self.players))
    @rule(data=st.data(), buy_in=st.integers(150, 2_100))
    def sit_down(self, data: st.DataObject, buy_in: int) -> None:
        player = data.draw(st.sampled_from([p for p in self.players if p not in self.seated]), label="player")
        seat = data.draw(st.integers(1, self.table.max_seats + 1), label="seat")
        self._sit(player, seat, buy_in)

    @precondition(lambda self: self.seated)
    @rule(data=st.data(), amount=st.integers(1, 1_500))
    def top_up(self, data: st.DataObject, amount: int) -> None:
        player = data.draw(st.sampled_from(sorted(self.seated)), label="player")
        self._attempt(lambda: services.top_up(table_id=self.table.pk, player_id=player, amount=amount,
                                              idempotency_key=key("fuzz-top-up"), now=self._tick()))  # fmt: skip

    @precondition(lambda self: self.seated)
    @rule(data=st.data())
    def stand_up(self, data: st.DataObject) -> None:
        player = data.draw(st.sampled_from(sorted(self.seated)), label="player")
        self._attempt(lambda: services.stand_up(table_id=self.table.pk, player_id=player,
                                                idempotency_key=key("fuzz-leave"), now=self._tick()))  # fmt: skip

    @precondition(lambda self: not all(self.seated.values()))
    @rule(data=st.data())
    def sit_out(self, data: st.DataObject) -> None:
        player = data.draw(st.sampled_from(sorted(p for p, out in self.seated.items() if not out)), label="player")
        self._attempt(lambda: services.sit_out(table_id=self.table.pk, player_id=player, now=self._tick()))

    @precondition(lambda self: any(self.seated.values()))
    @rule(data=st.data())
    def sit_in(self, data: st.DataObject) -> None:
        player = data.draw(st.sampled_from(sorted(p for p, out in self.seated.items() if out)), label="player")
        self._attempt(lambda: services.sit_in(table_id=self.table.pk, player_id=player, now=self._tick()))

    @precondition(lambda self: self.table.phase == services.HAND)
    @rule(data=st.data(), moves=st.integers(1, 6))
    def act(self, data: st.DataObject, moves: int) -> None:
        """The players to act make ``moves`` legal actions in turn (fewer if the hand ends)."""
        for _ in range(moves):
            turn = self._actor()
            if turn is None:
                return
            self._play_legal(*turn, data)

    @precondition(lambda self: self.table.phase in (services.HAND, services.PAUSED))
    @rule(data=st.data(), action=st.sampled_from(["fold", "check", "call"]))
    def act_out_of_turn(self, data: st.DataObject, action: str) -> None:
        """Anyone but the player to act (seated or not, folded or not) is refused."""
        actor = self._actor()
        player = data.draw(st.sampled_from([p for p in self.players if actor is None or p != actor[0]]), label="player")
        assert not self._attempt(lambda: services.act(table_id=self.table.pk, player_id=player, action=action,
                                                      idempotency_key=key("fuzz-act"), now=self._tick()))  # fmt: skip

    @precondition(lambda self: self.table.phase in (services.HAND, services.PAUSED))
    @rule(data=st.data(), buy_in=st.integers(200, 2_000))
    def rejoin(self, data: st.DataObject, buy_in: int) -> None:
        """A folded player (the player to act folds first if nobody has) stands
        up and sits down at another free seat during the same hand."""
        hand = self._hand()
        if hand is None:
            return
        state, _, _ = services.load_hand(hand.hand_id)
        assert state is not None
        folded = [int(p.player_id) for p in state.players if p.folded]
        candidates = sorted(set(folded) & self.seated.keys())
        if not candidates:
            turn = self._actor()
            if turn is None:
                return
            self._play_legal(*turn, data, fold=True)
            candidates = [turn[0]]
        player = data.draw(st.sampled_from(candidates), label="player")
        services.stand_up(table_id=self.table.pk, player_id=player, idempotency_key=key("fuzz-leave"),
                          now=self._tick())  # fmt: skip
        taken = set(PokerSeat.objects.filter(table=self.table).values_list("seat_number", flat=True))
        free = [n for n in range(1, self.table.max_seats + 1) if n not in taken]
        seat = data.draw(st.sampled_from(free), label="seat")
        self._sit(player, seat, buy_in)

    # -- the dealer and the clock ----------------------------------------------------------------

    @precondition(lambda self: self.table.phase == services.HAND)
    @rule()
    def time_out(self) -> None:
        self._dealer_step()

    @precondition(lambda self: self.table.phase == services.BETWEEN)
    @rule(shuffle=st.integers(0, 2**32))
    def deal_next_hand(self, shuffle: int) -> None:
        """The dealer's next hand, from a deck (and a button draw) seeded by ``shuffle``."""
        cards = [str(card) for card in shuffled_deck(SeededRandomSource(shuffle))]
        self._dealer_step(deck=cards, rng=SeededRandomSource(shuffle + 1))
        if self.table.phase == services.HAND:  # dealt (not idle: fewer than two players ready)
            hand_id = self.table.current_hand_id
            self.pots[hand_id] = services.pot_account(hand_id=hand_id, currency="EUR")

    # Not while between hands: the sweep would deal from the secure shuffle (not reproducible).
    @precondition(lambda self: self.table.phase != services.BETWEEN)
    @rule(seconds=st.sampled_from([1, 10, 70, 130, 400]))
    def wait_and_sweep(self, seconds: int) -> None:
        """Time passes (reservations run out, a dealer may be gone), then the beat sweep runs."""
        done = services.sweep(now=self._tick(seconds))
        assert not done["failed"], done
        self._refresh()
        # The sweep logs a refused step and moves on: a hand still overdue was refused (a jammed table).
        overdue = self.now - timedelta(seconds=django_settings.CASINO_SWEEP_GRACE_SECONDS)
        assert not (self.table.phase == services.HAND and self.table.deadline and self.table.deadline < overdue)

    # -- the operator ----------------------------------------------------------------------------
    # Each is called only where it applies, so it must not be refused (a void refused
    # with poker_pot_mismatch would leave the players' chips stuck in the pot).

    @precondition(lambda self: self.table.phase == services.HAND)
    @rule()
    def pause(self) -> None:
        services.pause_hand(table_id=self.table.pk, actor=OPERATOR, reason="fuzz: pause", now=self._tick())
        self._refresh()

    @precondition(lambda self: self.table.phase == services.PAUSED)
    @rule()
    def resume(self) -> None:
        services.resume_hand(table_id=self.table.pk, actor=OPERATOR, now=self._tick())
        self._refresh()

    @precondition(lambda self: self.table.phase in (services.HAND, services.PAUSED))
    @rule()
    def void(self) -> None:
        services.void_hand(table_id=self.table.pk, actor=OPERATOR, reason="fuzz: void", now=self._tick())
        self._refresh()

    # -- invariants ------------------------------------------------------------------------------

    def _balances(self) -> dict[int, int]:
        """Every balance the invariants look at (wallets, seat accounts, pots, rake), in one read."""
        ids = [*self.wallets.values(), *self.seat_accounts.values(), *self.pots.values(), self.rake]
        return dict(Account.objects.filter(pk__in=ids).values_list("pk", "balance"))

    @invariant()
    def every_stack_equals_its_seat_account(self) -> None:
        stacks = dict(PokerSeat.objects.filter(table=self.table).values_list("player_id", "stack"))
        balances = self._balances()
        assert {p: balances[account] for p, account in self.seat_accounts.items()} == {
            p: stacks.get(p, 0) for p in self.players
        }
        assert check_seat_stacks() == []

    @invariant()
    def the_pot_account_holds_the_hand_in_play_s_pot(self) -> None:
        balances = self._balances()
        hands = PokerHand.objects.filter(table=self.table).values_list("hand_id", "status", "pot")
        assert {hand_id for hand_id, _, _ in hands} == self.pots.keys()  # every hand was dealt by deal_next_hand
        for hand_id, status, pot in hands:
            assert balances[self.pots[hand_id]] == (pot if status == "playing" else 0), (hand_id, status)

    @invariant()
    def the_ledger_sums_to_zero(self) -> None:
        assert ledger_sums() == {"EUR": 0}

    @invariant()
    def no_player_s_money_is_lost(self) -> None:
        rows = PokerHandPlayer.objects.filter(hand__table=self.table).select_related("hand")
        results = dict.fromkeys(self.players, 0)  # won or lost in finished hands
        in_pot = dict.fromkeys(self.players, 0)  # put into the hand in play
        state = None
        for row in rows:
            if row.hand.status in FINISHED:
                assert row.stack_after is not None
                results[row.player_id] += row.stack_after - row.stack_before
            else:
                state = state or services.load_hand(row.hand.hand_id)[0]
                assert state is not None
                in_pot[row.player_id] += row.stack_before - state.players[state.positions[row.seat_number]].stack
        balances = self._balances()
        for player in self.players:
            money = balances[self.wallets[player]] + balances[self.seat_accounts[player]] + in_pot[player]
            assert money == FUNDS + results[player], player
        raked = sum(PokerHand.objects.filter(table=self.table, status="complete").values_list("rake", flat=True))
        assert balances[self.rake] == raked
        assert sum(results.values()) == -raked


# transaction=True: each example is its own short transaction (rolled back), not the
# whole run one long one, which would hold back the ledger's safe global bound (and
# the seals) for the entire server while the fuzz runs.
@pytest.mark.django_db(transaction=True)
def test_poker_services_keep_every_seat_pot_and_wallet_equal_to_the_ledger() -> None:
    run_state_machine_as_test(
        PokerTableMachine,
        settings=settings(
            max_examples=EXAMPLES,
            stateful_step_count=STEPS,
            deadline=None,
            derandomize=not FUZZING,
            database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )
