"""The one redaction layer for house-banked rounds, used by REST and websockets alike.

- ``table_view(table_id=, viewer_id=)``: public table/round state plus the
  viewer's own private state (bets, decisions, options, balance).
- ``public_delta(event)`` / ``private_delta(event)``: what one stored event may
  tell everyone / its own player, for the realtime relay.
- ``game_history(game_number=, player_id=)``: the full recall of a finished round.
- ``account_history(player_id=)``: the per-player-round rows (``account_history_page``: a page and
  its ``count``, from the one queryset ``account_history_rounds``).
- ``round_fairness(game_number=)``: the deal's commitment, and once the round
  is over every leaf (card and salt) and the deal order (docs/fairness.md).
- ``deal_in_log(events)``: the deal with each card as the events hold it in
  the clear so far (for staff readers such as game recall).

Face-down cards (the dealer's hole cards, board cards not yet revealed) are
never in any output before their ``house_round.cards_revealed`` event: since
``cards_dealt`` schema 2 the round's events do not hold them before then, and
everything here is built from the events alone (no deal key is opened). The
round's deck (sealed in ``house_round.shuffled``, revealed in clear by
``house_round.deck_revealed`` at the round's end) is shown only by
``round_fairness``: everything else shows its commitment alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db.models import Q, QuerySet

from casino.responsible_gaming import wager_allowance
from games.cards.cards import parse_card
from games.house.math.exact_strategy import optimal_choice
from games.house.models import HouseRound, HouseTable, PlayerRound, TableConfigVersion
from games.house.round.commands import missing_mandatory, offered_options
from games.house.round.dealer import deal_order
from games.house.round.errors import RoundNotFound
from games.house.round.events import (
    CARDS_DEALT,
    CARDS_REVEALED,
    DECISION_MADE,
    DECK_REVEALED,
    JACKPOT,
    OPENED,
    PLAYER_EVENT_TYPES,
    PLAYER_SETTLED,
    ROUND_EVENT_TYPES,
    SHUFFLED,
    WAGER_SETTLED,
    CardsDealt,
    DealtAt,
)
from games.house.round.state import BETTING, RoundState, replay_round
from games.house.rules.paytables import pool_name
from games.house.rules.table_config import covered_chips
from games.house.store.reads import pool_balances
from games.house.store.rows import state_from_json
from games.house.store.streams import load_round, player_stream, round_stream
from games.tables.fairness import OpenedDeck, fairness_answer, opened_from_reveal
from ledger.legs import LEGS_KEY, without_legs
from ledger.services import player_balances, read_stream
from ledger.services.money import wallet_statement


def _visible_cards(state: RoundState, viewer_id: int | None) -> dict[str, Any]:
    if state.config is None:
        return {"player": None, "dealer": [], "board": []}
    hands: dict[str, list[str]] = {}
    for owner, cards in state.hands.items():
        hands[owner] = list(cards)  # player hands are dealt face up
    finished = state.closed and not state.voided
    dealer = list(state.dealer) if state.dealer_revealed or finished else [None] * len(state.dealer)
    board_shown = len(state.board) if finished else state.board_revealed
    board = [*state.board[:board_shown], *([None] * (len(state.board) - board_shown))]
    view: dict[str, Any] = {"dealer": dealer, "board": board}
    if state.config.hand_mode == "shared":
        view["player"] = hands.get("shared")
    else:
        # Other seats' cards stay private until the round is over.
        view["seats"] = {
            owner.split(":")[1]: cards if finished or owner == f"player:{viewer_id}" else [None, None]
            for owner, cards in hands.items()
        }
        view["player"] = hands.get(f"player:{viewer_id}") if viewer_id is not None else None
        view["seat_numbers"] = {str(pid): number for pid, number in state.seats.items()}
    return view


def jackpot(table: HouseTable, pools: Mapping[int, Mapping[str, int]] | None = None) -> list[dict[str, Any]]:
    """The table's jackpot meter: each STAX pool ``{pool, name, amount, currency}``
    (minor units), in the game's pool order; ``[]`` for a table not offering
    STAX. ``pools``: the balances of several tables read at once
    (``pool_balances``: the lobby's one query); default: this table's, read now."""
    amounts = (pools if pools is not None else pool_balances([table])).get(table.pk, {})
    return jackpot_entries(amounts.items(), table.currency)


def jackpot_entries(amounts: Iterable[tuple[str, int]], currency: str) -> list[dict[str, Any]]:
    return [{"pool": p, "name": pool_name(p), "amount": int(a), "currency": currency} for p, a in amounts]


def public_wheel(limits: Mapping[str, Any], wheel: Mapping[str, Any]) -> dict[str, Any] | None:
    """The Bonus Spin Xtreme wheel as players see it (name, version, every
    segment's label, multiple and weight: docs/rounds.md, "Jackpot meter and
    wheel"), or ``None`` where Bonus Spin is not offered."""
    if "bonus_spin" not in limits or not wheel.get("segments"):
        return None
    segments = [{"label": s["label"], "multiple": int(s["multiple"]), "weight": int(s["weight"])}
                for s in wheel["segments"]]  # fmt: skip
    return {"name": wheel.get("name", ""), "version": str(wheel.get("version", "")), "segments": segments}


def table_summary(table: HouseTable, pools: Mapping[int, Mapping[str, int]] | None = None) -> dict[str, Any]:
    """The table's public configuration and phase (lobby rows and the table view);
    ``pools``: as ``jackpot``'s."""
    return {
        "id": table.pk,
        "code": table.code,
        "name": table.name,
        "game": table.game,
        "hand_mode": table.hand_mode,
        "currency": table.currency,
        "limits": table.limits,
        "chips": table.chips,
        "mandatory_wagers": table.mandatory_wagers,
        "multi_play": table.multi_play,
        "pay_tables": table.pay_tables,
        "is_open": table.is_open,
        "phase": table.phase,
        "phase_seq": table.phase_seq,
        "deadline": table.deadline.isoformat() if table.deadline else None,
        "public_seq": table.public_seq,
        "betting_seconds": table.betting_seconds,
        "warning_seconds": table.warning_seconds,
        "decision_seconds": table.decision_seconds,
        "jackpot": jackpot(table, pools),
        "wheel": public_wheel(table.limits, table.wheel),
    }


def table_view(
    *,
    table_id: int,
    viewer_id: int | None,
    now: datetime | None = None,
    round_state: Callable[[HouseTable], RoundState] | None = None,
) -> dict[str, Any]:
    """Public state of the table and its current round, plus ``viewer_id``'s own
    state; with ``now``, the traffic light and server time at ``now`` from the
    same read of the table (``clock_fields``). ``round_state(table)``: the
    current round's state (default: replayed from its stream; the websocket
    feed passes a cache keyed by the table's ``public_seq``)."""
    table = HouseTable.objects.get(pk=table_id)
    view: dict[str, Any] = {
        "table": table_summary(table),
        "round": None,
        "me": None,
    }
    if now is not None:
        view |= clock_fields(table, now, round_warning_seconds([table]).get(table.pk))
    if not table.current_round_id:
        if viewer_id is not None:
            balance, _ = player_balances(player_id=viewer_id, currency=table.currency)
            view["me"] = {
                "player_id": viewer_id,
                "balance": balance,
                "covered_chips": covered_chips(table.chips, balance),
            }
        return view
    state = round_state(table) if round_state is not None else load_round(table.current_round_id)
    assert state.config is not None
    # The chips the round in play takes (a configuration change applies from the next round).
    chips = list(state.config.chips) if state.config.chips else table.chips
    view["round"] = {
        "round_id": state.config.round_id,
        "game_number": state.config.game_number,
        "rules_version": state.config.definition.rules_version,
        "phase": state.phase,
        "paused": state.paused,
        "deadline": state.deadline,
        # Betting light: green until ``warning_at``, yellow until ``deadline``, then red (closed).
        "warning_at": _warning_at(state),
        "participants": len(state.participants),
        # Public from the round's opening (None: opened before deals were committed).
        "commitment": state.commitment,
        "cards": _visible_cards(state, viewer_id),
        "wheel": public_wheel(state.config.limits, state.config.wheel),
        "wheel_spin": state.wheel_spin,
        "chips": chips,
        "mandatory_wagers": list(state.config.mandatory_wagers),
    }
    if viewer_id is not None:
        row = PlayerRound.objects.filter(round__round_id=state.config.round_id, player_id=viewer_id).first()
        player = state_from_json(viewer_id, row.state if row else {})
        balance, _ = player_balances(player_id=viewer_id, currency=table.currency)  # creates nothing
        moment = now or datetime.now(UTC)
        # Responsible gaming hides the options the bet services would refuse (docs/cashier-and-responsible-gaming.md).
        allowance = wager_allowance(player_id=viewer_id, currency=table.currency, now=moment,
                                    excluding=state.config.round_id)  # fmt: skip
        view["me"] = {
            "player_id": viewer_id,
            "balance": balance,
            # Seed 000:179: only the chips the balance covers are enabled.
            "covered_chips": covered_chips(chips, balance),
            "bets": player.totals(),
            # Bets without these are returned when betting closes (seed 002:13).
            "mandatory_missing": missing_mandatory(state.config, player.totals()),
            "call": player.call_amount,
            "folded": player.folded,
            "doubled": player.doubled,
            "decisions": [{"street": d.street, "option": d.option, "auto": d.auto} for d in player.decisions],
            "options": offered_options(state, player, balance=balance, now=moment.isoformat(), allowance=allowance),
            "returned": player.returned if (player.settled or player.voided) else None,
        }
    return view


def decision_hint(*, table_id: int, viewer_id: int, now: datetime) -> dict[str, Any]:
    """The perfect-strategy hint for the viewer's pending decision (issue #25;
    docs/game-math.md, "Exact strategies"): the street, the options offered now,
    ``optimal`` (the option the exact analysis takes with these cards) and
    ``hint`` (that option if it is offered now, else ``None``: e.g. responsible
    gaming hides a call it would refuse). No decision pending: street ``None``.
    Only the viewer's own cards and the board already shown are read."""
    table = HouseTable.objects.get(pk=table_id)
    answer: dict[str, Any] = {"table_id": table.pk, "game": table.game, "street": None, "options": [],
                              "optimal": None, "hint": None}  # fmt: skip
    if not table.current_round_id:
        return answer
    state = load_round(table.current_round_id)
    if state.config is None:
        return answer
    row = PlayerRound.objects.filter(round__round_id=state.config.round_id, player_id=viewer_id).first()
    player = state_from_json(viewer_id, row.state if row else {})
    balance, _ = player_balances(player_id=viewer_id, currency=table.currency)
    allowance = wager_allowance(player_id=viewer_id, currency=table.currency, now=now, excluding=state.config.round_id)
    offered = offered_options(state, player, balance=balance, now=now.isoformat(), allowance=allowance)
    points = {p.street: p for p in state.config.definition.decision_points}
    point = points.get(state.phase)
    if not offered or point is None:
        return answer
    owner = "shared" if state.config.hand_mode == "shared" else f"player:{viewer_id}"
    hole = [parse_card(card).index for card in state.hands.get(owner, ())]
    board = [parse_card(card).index for card in state.board[: state.board_revealed] if card is not None]
    multiplier, folds = optimal_choice(table.game, point.street, hole, board)
    optimal = next(o.name for o in point.options if o.multiplier == multiplier and o.folds == folds)
    return answer | {"street": point.street, "options": offered, "optimal": optimal,
                     "hint": optimal if optimal in offered else None}  # fmt: skip


def _warning_at(state: RoundState) -> str | None:
    if state.config is None or state.phase != BETTING or state.deadline is None:
        return None
    return (datetime.fromisoformat(state.deadline) - timedelta(seconds=state.config.warning_seconds)).isoformat()


def _redact_dealt(data: Mapping[str, Any], viewer_id: int | None, shared: bool) -> dict[str, Any]:
    """Each dealt card as players have always seen it (``to``, ``position``,
    ``card`` or ``None``, ``face_up``): a face-down card has no card in the
    event (schema 2) and an upcast schema 1 one is hidden here as before."""
    cards = []
    for card in data["cards"]:
        own = card["to"] == "shared" or (viewer_id is not None and card["to"] == f"player:{viewer_id}")
        visible = card["face_up"] and (own or (shared and card["to"] != "dealer" and card["to"] != "board"))
        shown = card.get("card") if visible else None
        cards.append({"to": card["to"], "position": card["position"], "card": shown, "face_up": card["face_up"]})
    return {"cards": cards}


def public_delta(event: Any, viewer_id: int | None = None) -> dict[str, Any] | None:
    """What a round-stream event tells every watcher (None: nothing public).
    Player-stream events are private (``private_delta``). ``viewer_id``: in
    per-seat mode a player's own hole cards in ``cards_dealt`` are shown to them."""
    kind, data = event.type, event.data
    if kind not in ROUND_EVENT_TYPES:
        return None
    if kind == OPENED:
        keep = ("round_id", "game_number", "game", "rules_version", "hand_mode", "currency", "limits", "pay_tables")
        payload = {k: data[k] for k in keep} | {"opened_at": data["opened_at"], "deadline": data["betting_deadline"]}
        payload["warning_at"] = data["warning_at"]
        payload["wheel"] = public_wheel(data["limits"], data.get("wheel") or {})
        # The round's chips and mandatory side wagers (absent in rounds opened before them).
        payload |= {name: data[name] for name in ("chips", "mandatory_wagers") if name in data}
    elif kind == JACKPOT:
        payload = {"jackpot": jackpot_entries(((p["pool"], p["amount"]) for p in data["pools"]), data["currency"])}
    elif kind == CARDS_DEALT:
        shared = any(card["to"] == "shared" for card in data["cards"])
        payload = _redact_dealt(data, viewer_id, shared)
    elif kind == SHUFFLED:
        payload = {"commitment": data["commitment"]}  # the sealed salt and deck: round_fairness, once it is over
    elif kind == DECK_REVEALED:
        payload = {}  # the round is over and its deck verifiable: round_fairness shows it
    else:
        payload = dict(without_legs(data))  # the money legs are the ledger's record, not the table's news
    return {"type": kind, "stream_version": getattr(event, "version", None), "data": payload}


def private_delta(event: Any) -> dict[str, Any] | None:
    """What a player-stream event tells its own player (None for round events)."""
    if event.type not in PLAYER_EVENT_TYPES:
        return None
    data = {k: v for k, v in event.data.items() if k not in ("hold_id", "hold_ids", LEGS_KEY)}
    return {"type": event.type, "stream_version": getattr(event, "version", None), "data": data}


def game_history(*, game_number: str, player_id: int | None) -> dict[str, Any]:
    """Full recall of a round: every card, wager, decision and result, the pay tables
    and rules in force, and (for ``player_id``) the balance before and after.
    A round still in play shows only what has been revealed."""
    round_row = HouseRound.objects.get(game_number=game_number)
    events = read_stream(stream_id=round_stream(round_row.round_id))
    state = replay_round(events)
    opened = events[0].data
    history: dict[str, Any] = {
        "game_number": game_number,
        "table": opened["table_code"],
        "game": opened["game"],
        "hand_mode": opened["hand_mode"],
        "rules_version": opened["rules_version"],
        "rules": opened["rules"],
        "pay_tables": opened["pay_tables"],
        "limits": opened["limits"],
        "currency": opened["currency"],
        "opened_at": opened["opened_at"],
        "status": round_row.status,
        "cards": _visible_cards(state, player_id),
        "round_events": [public_delta(e, player_id) for e in events],
        "dealer": round_row.summary.get("dealer"),
    }
    if player_id is not None:
        row = PlayerRound.objects.filter(round=round_row, player_id=player_id).first()
        player_events = read_stream(stream_id=player_stream(round_row.round_id, player_id)) if row else []
        history["player"] = {
            "player_id": player_id,
            "events": [private_delta(e) for e in player_events],
            "wagers": settled_wagers(player_events),
            "decisions": [
                {"street": e.data["street"], "option": e.data["option"], "auto": e.data["auto"]}
                for e in player_events
                if e.type == DECISION_MADE
            ],
            "staked": row.staked if row else 0,
            "returned": row.returned if row else 0,
            "net": row.net if row else 0,
            "balance_before": row.balance_before if row else None,
            "balance_after": row.balance_after if row else None,
        }
    return history


def round_fairness(*, game_number: str) -> dict[str, Any]:
    """The round's deal as anyone may know it (``games.tables.fairness.fairness_answer``),
    from its events alone: the commitment; once the round is closed (settled,
    voided, or no bets) every leaf of the deck its ``house_round.deck_revealed``
    revealed (checked against the commitment, ``deck_mismatch`` otherwise) and
    the deal order. A legacy ``plain`` round answers its old shape (salt, deck).
    ``round_not_found``, ``deal_not_committed``."""
    round_id = HouseRound.objects.filter(game_number=game_number).values_list("round_id", flat=True).first()
    if round_id is None:
        raise RoundNotFound(game_number=game_number)
    events = read_stream(stream_id=round_stream(round_id))
    state = replay_round(events)
    dealt = next((CardsDealt.from_data(e.data) for e in events if e.type == CARDS_DEALT), None)
    revealed: OpenedDeck | None = None
    shown = next((e.data for e in events if e.type == DECK_REVEALED), None)
    if shown is not None and state.commitment is not None and state.closed:
        revealed = opened_from_reveal(commitment=state.commitment, salt=shown["salt"], deck=shown["deck"])
    return fairness_answer(
        game_number=game_number,
        commitment=state.commitment,
        sealed_deck=state.sealed_deck,
        ended=state.closed,
        deal_order=lambda deck: deal_order(dealt, deck) if dealt is not None else [],
        revealed_deck=revealed,
    )


def deal_in_log(events: Sequence[Any]) -> list[dict[str, Any]]:
    """Each card of the round's deal (``{position, card, to, slot}``, deck order,
    as ``deal_order``) with the card as the round's events hold it in the clear
    so far, from the events alone: the players' face-up cards; a dealer or board
    card once its ``cards_revealed`` showed it; every card once the round's end
    revealed the deck (``deck_revealed``); else ``None``. (A schema 1 deal's
    face-down cards, stored in the clear then, count as shown only once
    revealed.) No redaction per viewer: a per-seat round's hands are all here;
    for staff readers that show the deal (game recall)."""
    dealt = next((CardsDealt.from_data(e.data) for e in events if e.type == CARDS_DEALT), None)
    if dealt is None:
        return []
    shown = {(c["to"], c["position"]): c["card"] for e in events if e.type == CARDS_REVEALED for c in e.data["cards"]}
    deck = next((e.data["deck"] for e in events if e.type == DECK_REVEALED), None)

    def card(c: DealtAt) -> str | None:
        if deck is not None:
            return str(deck[c.deck_position])
        return c.card if c.face_up else shown.get((c.to, c.position))

    return [{"position": c.deck_position, "card": card(c), "to": c.to, "slot": c.position} for c in dealt.cards]


WAGER_FIELDS = ("wager", "stake", "outcome", "returned", "rounding_kept", "hand")


def settled_wagers(player_events: Sequence[Any]) -> list[dict[str, Any]]:
    """Each wager's settlement from a player's stream: inside ``house_player.settled``
    (schema 2), or, for rounds stored with schema 1 (upcast with ``"wagers": None``),
    from the ``house_wager.settled`` events before it."""
    for event in player_events:
        if event.type == PLAYER_SETTLED and event.data.get("wagers") is not None:
            return [{k: w[k] for k in WAGER_FIELDS} for w in event.data["wagers"]]
    return [{k: e.data[k] for k in WAGER_FIELDS} for e in player_events if e.type == WAGER_SETTLED]


def account_history_rounds(*, player_id: int) -> QuerySet[PlayerRound]:
    """The player's rounds in their account history, newest first: the one
    list both a page and its ``count`` read (``account_history_page``)."""
    # A round whose bets were declined (seed 003: not present at "No More Bets") stakes nothing, and is shown.
    played = Q(staked__gt=0) | Q(status="declined")
    return PlayerRound.objects.filter(played, player_id=player_id).order_by("-created_at", "-id")


def account_history_page(*, player_id: int, limit: int, offset: int) -> dict[str, Any]:
    """``GET /api/history/``: ``count`` (every row of ``account_history_rounds``),
    ``limit``, ``offset`` and ``results`` (that page of it: ``account_history``)."""
    return {
        "count": account_history_rounds(player_id=player_id).count(),
        "limit": limit,
        "offset": offset,
        "results": account_history(player_id=player_id, limit=limit, offset=offset),
    }


def statement_page(*, player_id: int, currency: str, limit: int, offset: int) -> dict[str, Any]:
    """``GET /api/wallet/statement/``: the player's wallet movements in ``currency``,
    newest first (``ledger.services.money.wallet_statement``), each with the house
    round's ``game_number`` when it belongs to one (else ``None``); ``count``,
    ``limit``, ``offset`` and ``results`` as the account history."""
    count, lines = wallet_statement(player_id=player_id, currency=currency, limit=limit, offset=offset)
    own_suffix = f"-player-{player_id}"
    round_ids = {
        line["stream_id"][len("round-") : -len(own_suffix)]
        for line in lines
        if line["stream_id"].startswith("round-") and line["stream_id"].endswith(own_suffix)
    }
    numbers = dict(HouseRound.objects.filter(round_id__in=round_ids).values_list("round_id", "game_number"))
    results = [
        {
            "at": line["at"],
            "kind": line["kind"],
            "amount": line["amount"],
            "balance_after": line["balance_after"],
            "event_type": line["event_type"],
            "game_number": numbers.get(line["stream_id"][len("round-") : -len(own_suffix)])
            if line["stream_id"].endswith(own_suffix)
            else None,
        }
        for line in lines
    ]
    return {"currency": currency, "count": count, "limit": limit, "offset": offset, "results": results}


def account_history(*, player_id: int, limit: int = 100, offset: int = 0) -> list[dict[str, Any]]:
    """Account-history rows, newest first: date, game, game number, bet amounts,
    payouts; one page (``OFFSET offset LIMIT limit`` in the query)."""
    rows = account_history_rounds(player_id=player_id)[offset : offset + limit]
    return [
        {
            "date": row.created_at.isoformat(),
            "game": row.game,
            "game_number": row.game_number,
            "currency": row.currency,
            "bets": row.totals,
            "staked": row.staked,
            "payout": row.returned,
            "net": row.net,
            "status": row.status,
        }
        for row in rows
    ]


def traffic_light(table: HouseTable, now: datetime, warning_seconds: int | None = None) -> str:
    """green while betting is open, yellow in its last ``warning_seconds``, red otherwise
    (RULES.md: the server's clock decides). ``warning_seconds``: the running round's,
    when a configuration change since it opened made the table's differ."""
    if table.phase != "betting" or table.deadline is None or now >= table.deadline:
        return "red"
    remaining = (table.deadline - now).total_seconds()
    warning = table.warning_seconds if warning_seconds is None else warning_seconds
    return "yellow" if remaining <= warning else "green"


def clock_fields(table: HouseTable, now: datetime, warning_seconds: int | None = None) -> dict[str, str]:
    """``traffic_light`` and ``server_time`` at ``now`` (REST views and the websocket snapshot)."""
    return {"traffic_light": traffic_light(table, now, warning_seconds), "server_time": now.isoformat()}


def round_warning_seconds(tables: Sequence[HouseTable]) -> dict[int, int]:
    """Table id -> the yellow-light seconds of its round in betting, for the tables
    whose configuration changed after that round opened (a change is in force from
    the next round, so the running round keeps the version it opened with). Tables
    not listed use their own ``warning_seconds``. One query, plus one per changed table."""
    betting = {t.current_round_id: t for t in tables if t.phase == "betting" and t.current_round_id}
    if not betting:
        return {}
    found: dict[int, int] = {}
    opened = HouseRound.objects.filter(round_id__in=list(betting)).values_list("round_id", "config_version")
    for round_id, version in opened:
        table = betting[round_id]
        if version == table.config_version:
            continue
        config = TableConfigVersion.objects.filter(table=table, version=version).values_list("config", flat=True)
        warning = (config.first() or {}).get("warning_seconds")
        if warning is not None:
            found[table.pk] = int(warning)
    return found
