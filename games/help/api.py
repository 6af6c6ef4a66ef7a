"""Help pages over REST (thin: parse ``?lang=``, call ``games.help.services``, render):

- ``GET /api/games/<code>/help/?lang=en|fr``: a game's page (house games
  ``uth``, ``casino_holdem``, ``xtreme``; poker ``holdem_no_limit``,
  ``holdem_pot_limit``, ``holdem_fixed_limit``);
- ``GET /api/tables/<id>/help/?lang=``: a house table's page;
- ``GET /api/poker/tables/<id>/help/?lang=``: a poker table's page.

docs/help.md describes the page."""

from __future__ import annotations

from typing import Any

from django.urls import path
from drf_spectacular.utils import OpenApiParameter, PolymorphicProxySerializer, extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

import casino.converters  # noqa: F401 (registers the <text:...> route converter)
from casino.api import errors, request_user
from casino.i18n import player_language
from games.help import services
from games.help.i18n import LANGUAGES

LANG = OpenApiParameter(
    "lang",
    str,
    enum=list(LANGUAGES),
    required=False,
    description="The page's language; without it the request's language (Accept-Language, the player's "
    "profile), else English. Any other value: unsupported_language (400).",
)
_LANG_400 = "unsupported_language (lang is not en or fr)"


class SectionSchema(serializers.Serializer):
    id = serializers.CharField(help_text="objective, how_to_play, dealer_qualification, settlement, side_bets, ...")
    title = serializers.CharField()
    paragraphs = serializers.ListField(child=serializers.CharField())


class RankingSchema(serializers.Serializer):
    category = serializers.CharField()
    name = serializers.CharField()
    description = serializers.CharField()


class WagerSchema(serializers.Serializer):
    wager = serializers.CharField()
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=["required", "automatic", "optional", "decision"])
    equals = serializers.CharField(allow_null=True, help_text="automatic wagers: the wager they equal")


class OptionSchema(serializers.Serializer):
    option = serializers.CharField()
    name = serializers.CharField()
    multiplier = serializers.IntegerField(help_text="the call/play as a multiple of the ante; 0: check or fold")
    folds = serializers.BooleanField()


class DecisionSchema(serializers.Serializer):
    street = serializers.CharField()
    title = serializers.CharField()
    options = OptionSchema(many=True)
    timeout_default = serializers.CharField()
    timeout_text = serializers.CharField()


class ResultSchema(serializers.Serializer):
    situation = serializers.CharField()
    situation_text = serializers.CharField()
    action = serializers.ChoiceField(choices=["even", "table", "push", "lose"])
    text = serializers.CharField()


class SettlementSchema(serializers.Serializer):
    wager = serializers.CharField()
    name = serializers.CharField()
    results = ResultSchema(many=True)


class PayLineSchema(serializers.Serializer):
    outcome = serializers.CharField()
    hand = serializers.CharField()
    kind = serializers.ChoiceField(choices=["to_one", "for_one", "push", "lose", "progressive"])
    ratio = serializers.CharField(help_text="n of 'n to 1' / 'n for 1', exact ('3/2')")
    pool = serializers.CharField(allow_null=True, help_text="progressive lines: the STAX pool")
    pay = serializers.CharField()


class FigureSchema(serializers.Serializer):
    rtp = serializers.FloatField()
    rtp_exact = serializers.CharField()
    text = serializers.CharField()


class PayTableSchema(serializers.Serializer):
    wager = serializers.CharField()
    number = serializers.IntegerField()
    name = serializers.CharField(help_text="game.wager.number")
    wager_name = serializers.CharField()
    cards = serializers.CharField(help_text="which cards the table pays on")
    lines = PayLineSchema(many=True)
    rtp = FigureSchema(allow_null=True, help_text="side bets: the exact return (null for a main wager)")


class MainReturnSchema(serializers.Serializer):
    rtp_per_ante = serializers.FloatField()
    rtp_per_ante_exact = serializers.CharField()
    rtp_per_total = serializers.FloatField()
    rtp_per_total_exact = serializers.CharField()
    house_edge = serializers.FloatField()
    element_of_risk = serializers.FloatField()
    text = serializers.ListField(child=serializers.CharField())


class TriggerSchema(serializers.Serializer):
    outcome = serializers.CharField()
    hand = serializers.CharField()
    fixed_award_units = serializers.DictField(child=serializers.IntegerField(), help_text="per wager size")


class SpinReturnSchema(serializers.Serializer):
    wager_units = serializers.IntegerField()
    rtp = serializers.FloatField()
    rtp_exact = serializers.CharField()
    text = serializers.CharField()


class BonusSpinSchema(serializers.Serializer):
    wager_units = serializers.ListField(child=serializers.IntegerField())
    triggers = TriggerSchema(many=True)
    wheel = serializers.DictField(
        allow_null=True, help_text="the table's wheel (segments, weights); null on a game page"
    )
    rtp = SpinReturnSchema(many=True)
    note = serializers.CharField(required=False)


class LimitSchema(serializers.Serializer):
    wager = serializers.CharField()
    name = serializers.CharField()
    min = serializers.IntegerField()
    max = serializers.IntegerField()


class MandatorySchema(serializers.Serializer):
    wager = serializers.CharField()
    name = serializers.CharField()


class HouseTableSchema(serializers.Serializer):
    code = serializers.CharField()
    name = serializers.CharField()
    currency = serializers.CharField()
    limits = LimitSchema(many=True)
    chips = serializers.ListField(child=serializers.IntegerField(), help_text="chip denominations, minor units")
    mandatory_wagers = MandatorySchema(many=True)
    multi_play = serializers.BooleanField(allow_null=True)
    pay_tables = serializers.DictField(child=serializers.IntegerField(), help_text="wager -> table number in force")
    betting_seconds = serializers.IntegerField()
    decision_seconds = serializers.IntegerField()
    paragraphs = serializers.ListField(child=serializers.CharField())
    stax_contribution = serializers.FloatField(required=False)
    stax_long_run_rtp = serializers.FloatField(required=False)


class HousePageSchema(serializers.Serializer):
    language = serializers.ChoiceField(choices=list(LANGUAGES))
    kind = serializers.ChoiceField(choices=["house"])
    game = serializers.CharField()
    title = serializers.CharField()
    rules_version = serializers.CharField()
    sections = SectionSchema(many=True)
    hand_rankings = RankingSchema(many=True)
    ranking_notes = serializers.ListField(child=serializers.CharField())
    wagers = WagerSchema(many=True)
    decisions = DecisionSchema(many=True)
    settlement = SettlementSchema(many=True)
    pay_tables = PayTableSchema(many=True)
    main_game_return = MainReturnSchema(allow_null=True)
    bonus_spin = BonusSpinSchema(allow_null=True)
    table = HouseTableSchema(required=False, help_text="table pages only")


class RakeRowSchema(serializers.Serializer):
    currency = serializers.CharField(allow_null=True, help_text="null: any other currency")
    variant = serializers.CharField(allow_null=True)
    players_min = serializers.IntegerField(allow_null=True)
    players_max = serializers.IntegerField(allow_null=True)
    small_blind_min = serializers.IntegerField(allow_null=True)
    small_blind_max = serializers.IntegerField(allow_null=True)
    percent = serializers.FloatField()
    minimum = serializers.IntegerField()
    cap = serializers.IntegerField()


class TableRakeSchema(serializers.Serializer):
    players = serializers.IntegerField()
    percent = serializers.FloatField()
    minimum = serializers.IntegerField()
    cap = serializers.IntegerField()
    no_flop_no_drop = serializers.BooleanField(allow_null=True)


class PokerTableSchema(serializers.Serializer):
    code = serializers.CharField()
    name = serializers.CharField()
    variant = serializers.CharField()
    currency = serializers.CharField()
    small_blind = serializers.IntegerField()
    big_blind = serializers.IntegerField()
    ante = serializers.IntegerField()
    buy_in_min = serializers.IntegerField()
    buy_in_max = serializers.IntegerField()
    max_seats = serializers.IntegerField()
    turn_seconds = serializers.IntegerField()
    time_bank_seconds = serializers.IntegerField()
    disconnection_bank_seconds = serializers.IntegerField()
    reservation_seconds = serializers.IntegerField()
    rake = TableRakeSchema(many=True, help_text="per number of players dealt in")
    paragraphs = serializers.ListField(child=serializers.CharField())


class PokerPageSchema(serializers.Serializer):
    language = serializers.ChoiceField(choices=list(LANGUAGES))
    kind = serializers.ChoiceField(choices=["poker"])
    game = serializers.CharField()
    title = serializers.CharField()
    sections = SectionSchema(many=True)
    hand_rankings = RankingSchema(many=True)
    ranking_notes = serializers.ListField(child=serializers.CharField())
    rake_table = RakeRowSchema(many=True, help_text="seed 001's rake table (EUR rows in cents, then the default)")
    table = PokerTableSchema(required=False, help_text="table pages only")


GamePage = PolymorphicProxySerializer(
    component_name="GameHelpPage",
    serializers={"house": HousePageSchema, "poker": PokerPageSchema},
    resource_type_field_name="kind",
)


def _lang(request: Request) -> str | None:
    """``?lang=`` as given (``help_language`` checks it), else the player's profile language,
    else ``Accept-Language``'s (``casino.i18n.player_language``, as the settings panel)."""
    value: Any = request.query_params.get("lang")
    if value is not None:
        return str(value)
    user = request_user(request)  # IsAuthenticated has run
    return player_language(user_id=int(user.pk), accept_language=request.headers.get("Accept-Language", ""))


def help_schema(page: Any, not_found: str) -> Any:
    """The OpenAPI schema of a help page: ``?lang=``, the ``page`` answered, its refusals."""
    return extend_schema(parameters=[LANG], responses={200: page, **errors(r400=_LANG_400, r404=not_found)})


class HelpView(APIView):
    permission_classes = [IsAuthenticated]


class GameHelpView(HelpView):
    """A game's help page: rules, hand rankings, every pay table and the return figures."""

    @help_schema(GamePage, "unknown_game")
    def get(self, request: Request, game_code: str) -> Response:
        return Response(services.game_help(game_code=game_code, language=_lang(request)))


class TableHelpView(HelpView):
    """A house table's help page: its game's rules, the pay tables in force, limits, chips, mandatory wagers."""

    @help_schema(HousePageSchema, "table_not_found")
    def get(self, request: Request, table_id: int) -> Response:
        return Response(services.table_help(table_id=table_id, language=_lang(request)))


class PokerTableHelpView(HelpView):
    """A poker table's help page: seed 001's rules for its structure, its stakes and rake."""

    @help_schema(PokerPageSchema, "poker_table_not_found")
    def get(self, request: Request, table_id: int) -> Response:
        return Response(services.poker_table_help(table_id=table_id, language=_lang(request)))


urlpatterns: list[Any] = [
    path("games/<text:game_code>/help/", GameHelpView.as_view(), name="game-help"),
    path("tables/<id:table_id>/help/", TableHelpView.as_view(), name="table-help"),
    path("poker/tables/<id:table_id>/help/", PokerTableHelpView.as_view(), name="poker-table-help"),
]
