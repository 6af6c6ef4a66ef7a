"""The ``make run`` demo's Sit & Go, filled and played by bots (issue #23).

``seed_demo_tournament`` (a demo seeder) creates the "Demo Sit & Go" template.
``demo_bots_tick`` runs from beat every few seconds while
``CASINO_DEMO_BOTS`` is on (``manage.py serve`` turns it on with the demo
data): it keeps one demo Sit & Go registering (made from the template by the
demo operator) while fewer than ``MAX_RUNNING`` are being played, registers
one bot into it whenever nobody has registered for
``CASINO_DEMO_BOT_JOIN_SECONDS`` (a person who registers takes a seat; bots
fill the rest), and makes the bot to act at a demo table act. Everything
goes through the services, like a player's commands; the dealer (Celery)
runs the tables and the tournament's steps. Bots are demo users
(``demo-bot-N``) funded by a cashier deposit.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import Max

from casino.demo import DemoLogins
from casino.errors import DomainError
from games.poker import services
from games.poker.engine.hand import legal_actions
from games.poker.models import PokerHand, PokerTable
from games.poker.tournament import services as tournament_services
from games.poker.tournament.driver import bot_action
from games.poker.tournament.models import Tournament, TournamentEntry, TournamentState, TournamentTemplate
from ledger.services import deposit, player_accounts

DEMO_TEMPLATE = "Demo Sit & Go"
BOT_PREFIX = "demo-bot-"
BOT_DEPOSIT = 1_000_000
MAX_RUNNING = 2  # demo Sit & Gos played at once; the next one opens when one ends
DEMO_LEVELS = [
    {"small_blind": sb, "big_blind": 2 * sb, "ante": 0, "duration_seconds": 120}
    for sb in (10, 15, 25, 50, 75, 100, 150, 200, 300, 400, 600, 800, 1000)
]


def seed_demo_tournament(logins: DemoLogins) -> list[str]:
    """The demo Sit & Go template (six players, one table); created once."""
    template, _ = TournamentTemplate.objects.get_or_create(
        name=DEMO_TEMPLATE,
        defaults={
            "kind": "sit_and_go", "currency": settings.CASINO_DEFAULT_CURRENCY, "buy_in": 500, "fee": 50,
            "starting_chips": 1_500, "max_players": 6, "table_seats": 6, "levels": DEMO_LEVELS,
            "payouts": [{"max_entrants": None, "shares_bp": [6500, 3500]}], "turn_seconds": 15,
            "time_bank_seconds": 15, "between_hands_seconds": 3,
        },
    )  # fmt: skip
    return [f"demo Sit & Go template  {template.name} (id {template.pk}): bots fill it under make run"]


def _operator() -> object:
    from casino.demo import OPERATOR_USERNAME

    return get_user_model().objects.get(username=OPERATOR_USERNAME)


def _bot(tournament: Tournament) -> int:
    """A demo bot not registered in ``tournament`` (a new one when all are), funded."""
    taken = set(TournamentEntry.objects.filter(tournament=tournament).values_list("player__username", flat=True))
    number = 1
    while f"{BOT_PREFIX}{number}" in taken:
        number += 1
    user, created = get_user_model().objects.get_or_create(username=f"{BOT_PREFIX}{number}")
    if created:
        user.set_unusable_password()
        user.save()
    currency = tournament.currency
    deposit(wallet=player_accounts(player_id=user.pk, currency=currency).wallet, amount=BOT_DEPOSIT,
            currency=currency, external_reference=f"demo-bot-{user.pk}-{tournament.pk}",
            idempotency_key=f"demo:bot:{user.pk}:{tournament.pk}", actor="system")  # fmt: skip
    return int(user.pk)


def _bots_act(tournament: Tournament, now: datetime, roll: random.Random) -> int:
    acted = 0
    for table in PokerTable.objects.filter(tournament=tournament, is_open=True, phase=services.HAND):
        hand = PokerHand.objects.filter(hand_id=table.current_hand_id).first()
        if hand is None:
            continue
        state, _ = services.hand_state(hand)
        legal = legal_actions(state) if state is not None else None
        if state is None or legal is None:
            continue
        player = int(state.players[state.positions[legal.seat]].player_id)
        if not get_user_model().objects.filter(pk=player, username__startswith=BOT_PREFIX).exists():
            continue  # a person's turn: their clock runs
        try:
            services.act(table_id=table.pk, player_id=player, action=bot_action(state, legal, roll.random(), 0.3),
                         idempotency_key=f"demo-bot:{hand.hand_id}:{hand.stream_version}", now=now)  # fmt: skip
            acted += 1
        except DomainError:
            continue  # the hand moved on meanwhile
    return acted


def demo_bots_tick(*, now: datetime, join_seconds: float | None = None) -> dict[str, int]:
    """One beat of the demo bots (see the module docstring)."""
    join = timedelta(seconds=settings.CASINO_DEMO_BOT_JOIN_SECONDS if join_seconds is None else join_seconds)
    template = TournamentTemplate.objects.filter(name=DEMO_TEMPLATE).first()
    done = {"created": 0, "registered": 0, "acted": 0}
    if template is None:
        return done
    demo = Tournament.objects.filter(template=template)
    registering = demo.filter(state=TournamentState.REGISTERING).order_by("pk").first()
    if registering is None and demo.filter(state=TournamentState.RUNNING).count() < MAX_RUNNING:
        registering = tournament_services.create_from_template(template_id=template.pk, operator=_operator(), now=now)
        done["created"] = 1
    last = None
    if registering is not None:
        last = TournamentEntry.objects.filter(tournament=registering).aggregate(last=Max("registered_at"))["last"]
    if registering is not None and (last is None or now - last >= join):
        bot = _bot(registering)
        tournament_services.register(tournament_id=registering.pk, player_id=bot,
                          idempotency_key=f"demo-bot:{registering.pk}:{bot}", now=now)  # fmt: skip
        done["registered"] = 1
    roll = random.Random(now.timestamp())
    for tournament in demo.filter(state=TournamentState.RUNNING):
        done["acted"] += _bots_act(tournament, now, roll)
    return done
