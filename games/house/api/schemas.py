"""OpenAPI shapes of the play API's answers (documentation only: the views
render plain data; ``tests/house/live/test_openapi.py`` checks real answers against
these). Errors share one shape, ``casino.api.exception_handler``'s
(``games.tables.api.errors``)."""

from __future__ import annotations

from rest_framework import serializers

from games.house.rules.registry import games
from games.tables.api import DealtCardSchema


class JackpotPool(serializers.Serializer):
    pool = serializers.CharField(help_text="star, spade, heart, diamond or club.")
    name = serializers.CharField(help_text="As the seed prints it, e.g. Star Progressive.")
    amount = serializers.IntegerField(help_text="The pool's current amount, in minor units.")
    currency = serializers.CharField()


class WheelSegment(serializers.Serializer):
    label = serializers.CharField()  # type: ignore[assignment]  # a field named label (mypy: Field.label)
    multiple = serializers.IntegerField(help_text="The award is multiple x the Bonus Spin wager.")
    weight = serializers.IntegerField(help_text="Chance weight / total weight of the segments.")


class Wheel(serializers.Serializer):
    name = serializers.CharField()
    version = serializers.CharField()
    segments = WheelSegment(many=True)


class TableRow(serializers.Serializer):
    id = serializers.IntegerField()
    code = serializers.CharField(help_text="Short code used in game numbers, e.g. UTH1.")
    name = serializers.CharField()
    game = serializers.ChoiceField(choices=[g.code for g in games()])
    hand_mode = serializers.ChoiceField(choices=["shared", "per_seat"])
    currency = serializers.CharField()
    limits = serializers.DictField(help_text="Per betting spot: {min, max} in minor units.")
    chips = serializers.ListField(
        child=serializers.IntegerField(), help_text="Chip denominations, ascending, in minor units."
    )
    mandatory_wagers = serializers.ListField(
        child=serializers.CharField(), help_text="Side bets every player must make (bets without them are returned)."
    )
    multi_play = serializers.BooleanField(help_text="False: played alone (no other table at the same time).")
    pay_tables = serializers.DictField()
    is_open = serializers.BooleanField()
    phase = serializers.CharField(help_text="idle, betting, preflop, flop, river, between, paused.")
    phase_seq = serializers.IntegerField()
    deadline = serializers.DateTimeField(allow_null=True, help_text="When the current phase ends (server clock).")
    public_seq = serializers.IntegerField(help_text="The websocket sequence number of the table's last delta.")
    betting_seconds = serializers.IntegerField()
    warning_seconds = serializers.IntegerField()
    decision_seconds = serializers.IntegerField()
    jackpot = JackpotPool(many=True, help_text="The STAX pools' current amounts (the jackpot meter), in the game's "
                          "pool order; empty where STAX is not offered (docs/rounds.md).")  # fmt: skip
    wheel = Wheel(allow_null=True, help_text="The Bonus Spin Xtreme wheel of the next round; null where Bonus Spin "
                  "is not offered.")  # fmt: skip
    traffic_light = serializers.ChoiceField(choices=["green", "yellow", "red"], help_text="By the server's clock.")
    server_time = serializers.DateTimeField()
    players = serializers.IntegerField(help_text="Players seated at the table now (the lobby's count).")


class TableState(serializers.Serializer):
    table = serializers.DictField(help_text="The table row's fields (without the clock fields).")
    round = serializers.DictField(
        allow_null=True,
        help_text="The round in play: cards as revealed so far; commitment, its deal's commitment "
        "(docs/fairness.md; null for rounds dealt before commitments).",
    )
    me = serializers.DictField(
        allow_null=True,
        help_text="This player's bets, call, decisions, options offered now, balance, covered_chips (the chips "
        "the balance covers) and mandatory_missing (mandatory side wagers their bets lack).",
    )
    traffic_light = serializers.ChoiceField(choices=["green", "yellow", "red"])
    server_time = serializers.DateTimeField()


class Seat(serializers.Serializer):
    table_id = serializers.IntegerField()
    seat_number = serializers.IntegerField(allow_null=True, help_text="Per-seat tables only.")


class BetResult(serializers.Serializer):
    round_id = serializers.CharField()
    totals = serializers.DictField(child=serializers.IntegerField(), help_text="Amount on each spot now.")
    capped = serializers.BooleanField(help_text="The chip was cut to the spot's maximum.")
    balance = serializers.IntegerField(help_text="Wallet balance after the command.")
    doubled = serializers.ListField(child=serializers.CharField())


class Tick(serializers.Serializer):
    table_id = serializers.IntegerField()
    round_id = serializers.CharField()
    game_number = serializers.CharField()
    phase = serializers.CharField()
    phase_seq = serializers.IntegerField()
    deadline = serializers.DateTimeField(allow_null=True)


class DecisionResult(serializers.Serializer):
    round_id = serializers.CharField()
    street = serializers.CharField()
    option = serializers.CharField()
    amount = serializers.IntegerField(help_text="Wagered by this decision (0 for check or fold).")
    balance = serializers.IntegerField()
    all_decided = serializers.BooleanField(help_text="Nobody else has to decide: the dealer moves on at once.")
    tick = Tick(allow_null=True)


class Wallet(serializers.Serializer):
    currency = serializers.CharField()
    balance = serializers.IntegerField()
    in_play = serializers.IntegerField(help_text="Stakes held in rounds not yet settled.")


class HistoryRow(serializers.Serializer):
    date = serializers.DateTimeField()
    game = serializers.CharField()
    game_number = serializers.CharField()
    currency = serializers.CharField()
    bets = serializers.DictField(child=serializers.IntegerField())
    staked = serializers.IntegerField()
    payout = serializers.IntegerField()
    net = serializers.IntegerField()
    status = serializers.CharField()


class HistoryPage(serializers.Serializer):
    count = serializers.IntegerField()
    limit = serializers.IntegerField()
    offset = serializers.IntegerField()
    results = HistoryRow(many=True)


class StatementLine(serializers.Serializer):
    at = serializers.DateTimeField()
    kind = serializers.CharField(help_text="The transfer's kind: deposit, hold (a stake), release, payout, buy_in, ...")
    amount = serializers.IntegerField(help_text="Signed, minor units: money into the wallet is positive.")
    balance_after = serializers.IntegerField()
    event_type = serializers.CharField(help_text="The ledger event that moved the money.")
    game_number = serializers.CharField(allow_null=True, help_text="The house round it belongs to, if any.")


class StatementPage(serializers.Serializer):
    currency = serializers.CharField()
    count = serializers.IntegerField()
    limit = serializers.IntegerField()
    offset = serializers.IntegerField()
    results = StatementLine(many=True)


class GameRecall(serializers.Serializer):
    game_number = serializers.CharField()
    table = serializers.CharField()
    game = serializers.CharField()
    hand_mode = serializers.CharField()
    rules_version = serializers.CharField()
    rules = serializers.DictField()
    pay_tables = serializers.DictField()
    limits = serializers.DictField()
    currency = serializers.CharField()
    opened_at = serializers.DateTimeField()
    status = serializers.CharField()
    cards = serializers.DictField(help_text="Every card of the round (as revealed, for a round in play).")
    dealer = serializers.JSONField(allow_null=True, help_text="The dealer's hand and rank, once the round is over.")
    player = serializers.DictField(help_text="This player's wagers, decisions, results, balance before and after.")
    round_events = serializers.ListField(child=serializers.DictField())


class ChatLine(serializers.Serializer):
    id = serializers.IntegerField()
    table_id = serializers.IntegerField()
    player = serializers.CharField(help_text="The poster's username.")
    text = serializers.CharField()
    sent_at = serializers.DateTimeField()


class HouseDeckLeaf(serializers.Serializer):
    position = serializers.IntegerField(min_value=0, max_value=51, help_text="Deck position, 0 = the top card.")
    card = serializers.CharField(help_text="Two-character code, e.g. As, Td, 2c.")
    salt = serializers.CharField(help_text="This position's own salt (64 lowercase hex digits).")


class HouseFairnessAnswer(serializers.Serializer):
    """A house round's fairness answer (docs/fairness.md). ``merkle-sha256``
    (every round since issue 33): the commitment (the Merkle root of the 52
    leaves) and deck size always; once the round has ended (settled, closed
    without bets, voided) every leaf and the deal order. Legacy ``sha256``
    rounds: the commitment, and once ended the salt, the deck and the deal order."""

    game_number = serializers.CharField()
    algorithm = serializers.ChoiceField(choices=["merkle-sha256", "sha256"])
    commitment = serializers.CharField(
        help_text='merkle-sha256: the Merkle root (hex) of the leaves SHA-256("<salt_i>:<i>:<card>"); '
        'sha256: SHA-256 hex of "<salt>:<deck>".'
    )
    deck_size = serializers.IntegerField(required=False, help_text="52 (merkle-sha256).")
    leaves = HouseDeckLeaf(many=True, required=False, help_text="The 52 leaves, top first (merkle-sha256, once ended).")
    salt = serializers.CharField(required=False, help_text="sha256 only: 64 lowercase hex digits (once ended).")
    deck = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="sha256 only: the 52 cards, top first (once ended)."
    )
    deal_order = DealtCardSchema(many=True, required=False, help_text="Each deck position dealt (once ended).")
