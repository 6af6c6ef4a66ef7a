"""Play one scripted round through the real services, events and ledger (test laboratories).

Only with ``CASINO_ALLOW_SCRIPTED_SHOE=true``. Example::

    manage.py certify_round --game uth --player "As Kd" --dealer "2c 3c" \\
        --board "Ah 7d 9s Jc 4h" --wager ante=100 --wager best_five=50 \\
        --decision preflop=check --decision flop=call2x

The last line of output is the JSON result (docs/rounds.md, "certify_round").
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from casino.errors import DomainError
from games.cards.cards import Card, parse_cards
from games.house.models import HouseTable, PlayerRound, TableSeat
from games.house.rules.definitions import WagerKind, resolve_decisions
from games.house.rules.registry import game, games, table_numbers
from games.house.services import advance_table, assign_seat, make_decision, place_chip, start_table
from games.house.services.seats import leave_table
from ledger.services import balance_of, deposit, player_accounts

ALIASES = {name: g.code for g in games() for name in (g.code, *g.aliases)}
CERT_FUNDS = 10**12
CERT_WHEEL = {
    "name": "certification-wheel",
    "version": "1",
    "segments": [{"label": "10x", "multiple": 10, "weight": 1}],
}


def _pairs(values: list[str], what: str) -> dict[str, str]:
    result = {}
    for value in values:
        name, sep, rest = value.partition("=")
        if not sep or not name or not rest:
            raise CommandError(f"--{what} expects NAME=VALUE, got {value!r}")
        result[name.strip()] = rest.strip().strip('"')
    return result


class Command(BaseCommand):
    help = "Play one scripted round (certification builds only: CASINO_ALLOW_SCRIPTED_SHOE=true)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--game", required=True, choices=sorted(ALIASES))
        parser.add_argument("--player", help='shared-mode player hand, e.g. "As Kd"')
        parser.add_argument("--seat", action="append", default=[], help='per-seat mode: N="As Kd" (repeatable)')
        parser.add_argument("--dealer", required=True)
        parser.add_argument("--board", required=True)
        parser.add_argument("--wager", action="append", default=[], help="NAME=minor units (repeatable)")
        parser.add_argument("--decision", action="append", default=[], help="STREET=OPTION (repeatable)")
        parser.add_argument("--paytable", action="append", default=[], help="WAGER=N (default 1)")
        parser.add_argument(
            "--wheel-segment", default=None, help="label of the wheel segment a triggered spin lands on"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if not settings.CASINO_ALLOW_SCRIPTED_SHOE:
            raise CommandError(
                "certify_round is refused: scripted shoes are allowed only in certification builds "
                "(set CASINO_ALLOW_SCRIPTED_SHOE=true; never in production)"
            )
        try:
            result = self._run(options)
        except DomainError as exc:
            raise CommandError(f"{exc.code}: {exc}") from exc
        self.stdout.write(json.dumps(result, sort_keys=False))

    def _run(self, options: dict[str, Any]) -> dict[str, Any]:
        code = ALIASES[options["game"]]
        definition = game(code)
        if bool(options["player"]) == bool(options["seat"]):
            raise CommandError("give exactly one of --player (shared mode) or --seat N=... (per-seat mode)")
        seats = {int(n): cards for n, cards in _pairs(options["seat"], "seat").items()} if options["seat"] else {}
        wagers = {name: int(amount) for name, amount in _pairs(options["wager"], "wager").items()}
        decisions = _pairs(options["decision"], "decision")
        chosen = {name: int(n) for name, n in _pairs(options["paytable"], "paytable").items()}
        for name in wagers:
            wager = definition.wager(name)
            if wager.kind not in (WagerKind.REQUIRED, WagerKind.OPTIONAL):
                raise CommandError(f"{name} is not placed by hand ({wager.kind.value})")
        resolve_decisions(definition, decisions)  # refuses unknown options and decisions after a call, up front
        pay_tables = {w.name: chosen.get(w.name, 1) for w in definition.wagers if w.needs_pay_table}
        for name, number in pay_tables.items():
            if number not in table_numbers(code, name):
                raise CommandError(f"{name} has no pay table {number}; tables: {table_numbers(code, name)}")
        hand_mode = "per_seat" if seats else "shared"
        table = self._table(code, hand_mode, wagers, pay_tables)
        players = self._players(table, sorted(seats) if seats else [1])
        hands = [seats[n] for n in sorted(seats)] if seats else [options["player"]]
        # Per-seat hands are dealt in player-id order; players are created seat by seat.
        order = sorted(range(len(players)), key=lambda i: players[i])
        head = [c for i in order for c in parse_cards(hands[i])]
        head += [*parse_cards(options["dealer"]), *parse_cards(options["board"])]
        if len(head) != len({c.index for c in head}):
            raise CommandError("a card appears twice")
        deck = head + [Card.from_index(i) for i in range(52) if i not in {c.index for c in head}]
        now = datetime.now(UTC)
        tick = start_table(table_id=table.pk, now=now, shoe=deck)  # the deck is committed as the round opens
        stamp = f"{tick.round_id}"
        for player in players:
            for name in [w.name for w in definition.wagers if w.name in wagers]:
                place_chip(table_id=table.pk, player_id=player, spot=name, amount=wagers[name],
                           idempotency_key=f"cert:{stamp}:{player}:{name}", now=now)  # fmt: skip
        assert tick.deadline is not None
        at = tick.deadline
        next_tick = advance_table(table_id=table.pk, expected_seq=tick.phase_seq, now=at)
        while next_tick is not None and next_tick.phase not in ("between", "idle"):
            street = next_tick.phase
            if street in decisions:
                for player in players:
                    make_decision(table_id=table.pk, player_id=player, option=decisions[street],
                                  idempotency_key=f"cert:{stamp}:{player}:{street}", now=at)  # fmt: skip
            assert next_tick.deadline is not None
            at = next_tick.deadline
            next_tick = advance_table(table_id=table.pk, expected_seq=next_tick.phase_seq, now=at)
        table.refresh_from_db()
        table.is_open = False
        table.phase = "idle"
        table.save(update_fields=["is_open", "phase"])
        rows = {r.player_id: r for r in PlayerRound.objects.filter(round__round_id=tick.round_id)}
        results = [self._seat_result(tick.round_id, rows[p], definition.decision_wager) for p in players]
        if not seats:
            return {"game_number": tick.game_number, **results[0]}
        return {
            "game_number": tick.game_number,
            "seats": [{"seat": n, **r} for n, r in zip(sorted(seats), results, strict=True)],
            "net": sum(r["net"] for r in results),
        }

    def _seat_result(self, round_id: str, row: PlayerRound, decision_wager: str) -> dict[str, Any]:
        from games.house.realtime.presenters import game_history

        history = game_history(game_number=row.game_number, player_id=row.player_id)
        settled = [e for e in history["player"]["events"] if e["type"] == "house_player.settled"]
        player = settled[0]["data"]["player"] if settled else None
        wagers = [
            {"wager": w["wager"], "stake": w["stake"], "outcome": w["outcome"], "returned": w["returned"]}
            for w in history["player"]["wagers"]
        ]
        return {
            "player": player,
            "dealer": history["dealer"],
            "decisions": history["player"]["decisions"],
            "wagers": wagers,
            "net": sum(w["returned"] for w in wagers) - sum(w["stake"] for w in wagers),
        }

    def _table(self, code: str, hand_mode: str, wagers: dict[str, int], pay_tables: dict[str, int]) -> HouseTable:
        table_code = f"CERT-{code[:3].upper()}-{'S' if hand_mode == 'shared' else 'P'}"
        unit = 100
        limits = {name: {"min": 1, "max": 10**9} for name in wagers}
        if "bonus_spin" in limits:
            limits["bonus_spin"] = {"min": unit, "max": 5 * unit}
        table, _ = HouseTable.objects.get_or_create(code=table_code, defaults={"name": f"certification {code}"})
        table.game = code
        table.hand_mode = hand_mode
        table.currency = "EUR"
        table.limits = limits
        table.pay_tables = pay_tables
        table.wheel = CERT_WHEEL
        table.progressives = {
            "reset": dict.fromkeys(("star", "spade", "heart", "diamond", "club"), 1000000),
            "contribution_bp": {"star": 100},
        }
        table.is_open = True
        table.phase = "idle"
        table.save()
        return table

    def _players(self, table: HouseTable, seat_numbers: list[int]) -> list[int]:
        users = get_user_model().objects
        players = []
        for n in seat_numbers:
            user, _ = users.get_or_create(username=f"certification-seat-{n}")
            accounts = player_accounts(player_id=user.pk, currency="EUR")
            if balance_of(account_id=accounts.wallet) < CERT_FUNDS // 2:
                stamp = datetime.now(UTC).timestamp()
                deposit(
                    wallet=accounts.wallet,
                    amount=CERT_FUNDS,
                    currency="EUR",
                    external_reference=f"certification-{user.pk}-{stamp}",
                    idempotency_key=f"cert-fund:{user.pk}:{stamp}",
                    actor="certify_round",
                )
            for other in TableSeat.objects.filter(player=user).exclude(table=table).values_list("table_id", flat=True):
                leave_table(table_id=other, player_id=user.pk, now=datetime.now(UTC))
            assign_seat(table_id=table.pk, player_id=user.pk)
            players.append(int(user.pk))
        return players
