"""The AsyncAPI 3.0 document of the two table websockets (served at
``GET /api/asyncapi.json``; the prose is docs/websocket.md). The one source:
``tests/house/live/test_asyncapi.py`` validates every frame a real server sends
against the payload schema of its message, so a frame this document does not
describe fails a test.

Operations are the server's: ``send`` lists what the server sends to a client,
``receive`` what it accepts from one. Every payload is a JSON Schema (draft 7,
AsyncAPI's default schema format) that names its ``type`` with ``const``.
The close codes, the resume parameter and the limits (with this deployment's
values, from the settings) are in the channels' descriptions and in the
``x-close-codes`` and ``x-limits`` extensions.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from games.tables.realtime import (
    CLOSE_MESSAGE_TOO_BIG,
    CLOSE_MOVED,
    CLOSE_POLICY_VIOLATION,
    CLOSE_REPLACED,
    CLOSE_TABLE_NOT_FOUND,
    CLOSE_TOO_MANY_CONNECTIONS,
    CLOSE_TOO_SLOW,
    CLOSE_UNAUTHENTICATED,
)

Schema = dict[str, Any]

STRING: Schema = {"type": "string"}
INTEGER: Schema = {"type": "integer"}
OBJECT: Schema = {"type": "object"}
TIME: Schema = {"type": "string", "format": "date-time"}
MAYBE_TIME: Schema = {"type": ["string", "null"]}
CLIENT_ID: Schema = {
    "type": "string",
    "minLength": 1,
    "maxLength": 100,
    "description": "The client's id of the command, echoed in its answer; also its idempotency key, namespaced "
    "per player exactly as REST's Idempotency-Key header (a REST retry with this key is the same command).",
}


def message_schema(kind: str, properties: dict[str, Schema] | None = None, required: tuple[str, ...] = ()) -> Schema:
    """An object whose ``type`` is ``kind``; more properties may come (clients ignore them)."""
    return {
        "type": "object",
        "properties": {"type": {"const": kind}, **(properties or {})},
        "required": ["type", *required],
    }


def ref(path: str) -> Schema:
    return {"$ref": path}


def schemas() -> dict[str, Schema]:
    return {
        "Error": message_schema(
            "error",
            {
                "code": {
                    **STRING,
                    "description": "Specific code (e.g. malformed_message, too_deep, invalid_text, unknown_message, "
                    "rate_limited, bad_resume_seq, chat_rate_limited, not_seated, or a REST error code).",
                },
                "message": STRING,
                "id": {**STRING, "description": "The command's client id, when the refused message had one."},
                "request": {**STRING, "description": "The type of the refused client message."},
                "details": {**OBJECT, "description": "rate_limited: retry_after (seconds); else the REST details."},
            },
            ("code", "message"),
        ),
        "Ack": message_schema(
            "ack",
            {
                "id": CLIENT_ID,
                "request": STRING,
                "result": {
                    "type": ["object", "null"],
                    "description": "Exactly the REST answer body (null where REST answers 204 No Content: leave).",
                },
            },
            ("id", "request", "result"),
        ),
        "Pong": message_schema("pong", {"nonce": {"description": "The ping's nonce, echoed (any JSON value)."}}),
        "ChatLine": {
            "type": "object",
            "properties": {"id": INTEGER, "table_id": INTEGER, "player": STRING, "text": STRING, "sent_at": TIME},
            "required": ["id", "table_id", "player", "text", "sent_at"],
        },
        "HouseTableView": {
            "type": "object",
            "description": "Exactly GET /api/tables/{table_id}/ (see the OpenAPI schema).",
            "properties": {
                "table": {
                    "type": "object",
                    "properties": {
                        "id": INTEGER,
                        "phase": STRING,
                        "public_seq": INTEGER,
                        "currency": STRING,
                        "jackpot": ref("#/components/schemas/Jackpot"),
                        "wheel": {"oneOf": [ref("#/components/schemas/Wheel"), {"type": "null"}]},
                        "chips": {
                            "type": "array",
                            "items": INTEGER,
                            "description": "Chip denominations, ascending, in minor units.",
                        },
                        "mandatory_wagers": {"type": "array", "items": STRING},
                        "multi_play": {"type": "boolean"},
                    },
                    "required": ["id", "phase", "public_seq"],
                },
                "round": {"type": ["object", "null"]},
                "me": {
                    "type": ["object", "null"],
                    "properties": {
                        "balance": INTEGER,
                        "bets": OBJECT,
                        "covered_chips": {
                            "type": "array",
                            "items": INTEGER,
                            "description": "The chips the balance covers (only those are enabled).",
                        },
                    },
                },
                "traffic_light": STRING,
                "server_time": TIME,
            },
            "required": ["table", "round", "me"],
        },
        "Jackpot": {
            "type": "array",
            "description": "The jackpot meter: each STAX pool's current amount (minor units), in the game's pool "
            "order (star, spade, heart, diamond, club); empty at a table not offering STAX.",
            "items": {
                "type": "object",
                "properties": {"pool": STRING, "name": STRING, "amount": INTEGER, "currency": STRING},
                "required": ["pool", "name", "amount", "currency"],
            },
        },
        "Wheel": {
            "type": "object",
            "description": "The Bonus Spin Xtreme wheel: every segment with its award (multiple x the wager) and "
            "its weight (chance: weight / total weight).",
            "properties": {
                "name": STRING,
                "version": STRING,
                "segments": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"label": STRING, "multiple": INTEGER, "weight": INTEGER},
                        "required": ["label", "multiple", "weight"],
                    },
                },
            },
            "required": ["name", "version", "segments"],
        },
        "PokerTableView": {
            "type": "object",
            "description": "Exactly GET /api/poker/tables/{table_id}/ (see the OpenAPI schema).",
            "properties": {
                "table": {
                    "type": "object",
                    "properties": {"id": INTEGER, "phase": STRING, "current_hand_id": {"type": ["string", "null"]}},
                    "required": ["id", "phase"],
                },
                "seats": {"type": "array", "items": OBJECT},
                "hand": {"type": ["object", "null"]},
                "server_time": TIME,
            },
            "required": ["table", "seats", "hand"],
        },
        "TournamentState": {
            "type": "object",
            "description": "GET /api/poker/tournaments/{id}/state/ (docs/poker.md, 'Tournaments: state'); "
            "me: the caller's own part (absent from the state frames of events that do not concern them).",
            "properties": {
                "id": INTEGER,
                "state": STRING,
                "level": {"type": ["object", "null"]},
                "next_level_in": {"type": ["integer", "null"]},
                "players_left": INTEGER,
                "entrants": INTEGER,
                "average_stack": {"type": ["integer", "null"]},
                "payouts": {"type": "array", "items": OBJECT},
                "prize_pool": OBJECT,
                "hand_for_hand": {"type": "boolean"},
                "final_table_id": {"type": ["integer", "null"]},
                "tables": {"type": "array", "items": OBJECT},
                "me": {"type": ["object", "null"]},
            },
            "required": [
                "id",
                "state",
                "level",
                "next_level_in",
                "players_left",
                "entrants",
                "average_stack",
                "payouts",
                "prize_pool",
                "hand_for_hand",
                "final_table_id",
                "tables",
            ],
        },
        "PokerEvent": {
            "type": "object",
            "description": "A stored event, redacted for the viewer: its type and data (docs/events.md).",
            "properties": {"type": STRING},
            "required": ["type"],
        },
    }


def _messages() -> dict[str, Schema]:
    """components.messages: name -> Message Object."""
    command = {"id": CLIENT_ID}

    def message(name: str, summary: str, payload: Schema) -> Schema:
        return {"name": name, "title": name, "summary": summary, "contentType": "application/json", "payload": payload}

    house_delta = {
        "event": {**STRING, "description": "The event type, e.g. house_round.opened."},
        "seq": {**INTEGER, "description": "The table's gap-free public sequence number."},
        "table_id": INTEGER,
        "round_id": STRING,
        "stream_version": INTEGER,
        "data": {**OBJECT, "description": "Redacted: face-down cards are null."},
    }
    private = {
        "event": STRING,
        "table_id": INTEGER,
        "round_id": STRING,
        "player_id": INTEGER,
        "stream_version": {"type": ["integer", "null"]},
        "data": OBJECT,
        "currency": STRING,
        "balance": {**INTEGER, "description": "The wallet's balance when the relay sent the message."},
        "covered_chips": {
            "type": "array",
            "items": INTEGER,
            "description": "The round's chip denominations that balance covers.",
        },
    }
    poker_hand = {"hand_id": STRING, "version": INTEGER, "event": ref("#/components/schemas/PokerEvent")}
    return {
        # --- server to client, both families
        "error": message("error", "A client message was refused; it changed nothing.",
                         ref("#/components/schemas/Error")),
        "ack": message("ack", "A command was carried out (or replayed: same id, same result).",
                       ref("#/components/schemas/Ack")),
        "pong": message("pong", "The answer to ping.", ref("#/components/schemas/Pong")),
        # --- server to client, house tables
        "houseSnapshot": message(
            "snapshot", "The table as the REST view shows it, at seq; first, and on request.",
            message_schema("snapshot", {"seq": INTEGER, "table": ref("#/components/schemas/HouseTableView"),
                                        "chat": {"type": "array", "items": ref("#/components/schemas/ChatLine")}},
                           ("seq", "table", "chat")),
        ),
        "houseDelta": message(
            "delta", "A public round event, in seq order (seq <= the snapshot's never follows it). "
            "house_round.jackpot: data.jackpot, the pools after the change (replaces table.jackpot); "
            "house_round.opened: data.wheel (null without Bonus Spin); house_round.wheel_spun: the segment, "
            "the board's hand and each wager size's award.",
            {**message_schema("delta", house_delta, ("event", "seq", "table_id", "round_id", "data")),
             "if": {"properties": {"event": {"const": "house_round.jackpot"}}},
             "then": {"properties": {"data": {"type": "object",
                                              "properties": {"jackpot": ref("#/components/schemas/Jackpot")},
                                              "required": ["jackpot"]}}}},
        ),
        "housePrivate": message(
            "private", "One of this player's own events, or a derived decision.offered.",
            message_schema("private", private, ("event", "table_id", "round_id", "player_id", "data")),
        ),
        "chat": message("chat", "A chat line was posted at the table.",
                        {"allOf": [ref("#/components/schemas/ChatLine"), message_schema("chat")]}),
        "notice": message("notice", "A notice to this player (e.g. a responsible-gaming reality check).",
                          message_schema("notice")),
        # --- server to client, poker tables
        "pokerSnapshot": message(
            "snapshot", "The table as the REST view shows it; first, and on request.",
            message_schema("snapshot", {"table": ref("#/components/schemas/PokerTableView"), "table_version": INTEGER,
                                        "hand_id": {"type": ["string", "null"]}, "hand_version": INTEGER},
                           ("table", "table_version", "hand_id", "hand_version")),
        ),
        "pokerDelta": message("delta", "An event of the current hand (others' hole cards null).",
                              message_schema("delta", poker_hand, ("hand_id", "version", "event"))),
        "pokerPrivate": message("private", "The viewer's own poker.hole_cards_dealt, with the cards.",
                                message_schema("private", poker_hand, ("hand_id", "version", "event"))),
        "pokerTable": message("table", "A seat event (poker_table.*: sat down, topped up, stood up, sat out, in).",
                              message_schema("table", {"version": INTEGER,
                                                       "event": ref("#/components/schemas/PokerEvent")},
                                             ("version", "event"))),
        "pokerMoved": message(
            "moved", "Tournament: the viewer was moved to another table; this socket now follows them there (the "
            "new table's snapshot comes next; close 4410 if it could not).",
            message_schema("moved", {"tournament_id": INTEGER, "from_table": INTEGER, "to_table": INTEGER,
                                     "seat": INTEGER, "chips": INTEGER, "reason": {"type": ["string", "null"]}},
                           ("tournament_id", "from_table", "to_table", "seat")),
        ),
        # --- server to client, poker tournaments
        "tournamentSnapshot": message(
            "snapshot", "The tournament's state, exactly GET /api/poker/tournaments/{id}/state/; first, and on "
            "request.",
            message_schema("snapshot", {"version": INTEGER, "state": ref("#/components/schemas/TournamentState")},
                           ("version", "state")),
        ),
        "tournamentState": message(
            "state", "An event of the tournament's stream (version: gap-free) and the public state after it; "
            "state.me only to a player the event concerns.",
            message_schema("state", {"version": INTEGER, "event": ref("#/components/schemas/PokerEvent"),
                                     "state": ref("#/components/schemas/TournamentState")},
                           ("version", "event", "state")),
        ),
        "pokerActed": message(
            "acted", "Deprecated answer to act (ack replaces it).",
            message_schema("acted", {"hand_id": STRING, "action": STRING, "amount": {"type": ["integer", "null"]},
                                     "stack": INTEGER}, ("hand_id", "action", "stack")),
        ),
        # --- client to server, both families
        "requestSnapshot": message("snapshot", "Ask for a fresh snapshot.", message_schema("snapshot")),
        "ping": message("ping", "Answered by pong with the same nonce.", message_schema("ping", {"nonce": {}})),
        # --- client to server, house tables
        "sendChat": message("chat", "Post a chat line (seated players; CASINO_CHAT_RATE lines a window).",
                            message_schema("chat", {"text": {**STRING, "minLength": 1, "maxLength": 280}},
                                           ("text",))),
        "bet": message("bet", "Place a chip (REST POST /api/tables/{id}/bets/chip/).",
                       message_schema("bet", {**command, "spot": STRING, "amount": INTEGER},
                                      ("id", "spot", "amount"))),
        **{
            name: message(name, f"{summary} (REST POST /api/tables/{{id}}/{path}/).",
                          message_schema(name, command, ("id",)))
            for name, summary, path in (
                ("undo", "Take back the last chip", "bets/undo"),
                ("clear", "Take back every bet of the round", "bets/clear"),
                ("repeat", "Repeat the last round's bets", "bets/repeat"),
                ("double", "Double the bets in place", "bets/double"),
                ("join", "Take a seat", "join"),
                ("leave", "Leave the seat", "leave"),
            )
        },
        "decision": message("decision", "Decide (REST POST /api/tables/{id}/decision/).",
                            message_schema("decision", {**command, "option": STRING}, ("id", "option"))),
        # --- client to server, poker tables
        "act": message(
            "act", "Act in the hand (REST POST /api/poker/tables/{id}/act/); the old idempotency_key field is "
            "accepted in place of id.",
            {**message_schema("act", {**command, "idempotency_key": {**STRING, "deprecated": True},
                                      "action": {"enum": ["fold", "check", "call", "bet", "raise", "all_in"]},
                                      "amount": {**INTEGER, "description": "Raise to (bet, raise)."}},
                              ("action",)),
             "anyOf": [{"required": ["id"]}, {"required": ["idempotency_key"]}]},
        ),
    }  # fmt: skip


HOUSE_SENDS = ("houseSnapshot", "houseDelta", "housePrivate", "chat", "notice", "pong", "error", "ack")
HOUSE_RECEIVES = ("requestSnapshot", "sendChat", "ping", "bet", "undo", "clear", "repeat", "double", "decision",
                  "join", "leave")  # fmt: skip
POKER_SENDS = ("pokerSnapshot", "pokerDelta", "pokerPrivate", "pokerTable", "pokerMoved", "pong", "error", "ack",
               "pokerActed")  # fmt: skip
POKER_RECEIVES = ("act", "requestSnapshot", "ping")
TOURNAMENT_SENDS = ("tournamentSnapshot", "tournamentState", "pong", "error")
TOURNAMENT_RECEIVES = ("requestSnapshot", "ping")


def close_codes() -> dict[str, str]:
    return {
        str(CLOSE_UNAUTHENTICATED): "unauthenticated: no valid ?ticket= (unknown, expired or used) nor session",
        str(CLOSE_TABLE_NOT_FOUND): "table (or tournament) not found",
        str(CLOSE_TOO_SLOW): "too slow: the outbound queue overflowed or a send did not complete in time; "
        "reconnect with ?since=<last seq> and take the snapshot",
        str(CLOSE_TOO_MANY_CONNECTIONS): "too many connections for this player (the newest is refused)",
        str(CLOSE_REPLACED): "replaced: the same player opened another connection to this table "
        "(another device or browser); this one is closed, the newest stays",
        str(CLOSE_MESSAGE_TOO_BIG): "message too big: a frame over the maximum frame size",
        str(CLOSE_POLICY_VIOLATION): "policy violation: the client kept sending while rate_limited",
        str(CLOSE_MOVED): "moved (poker tournaments): the socket could not follow its player to their new table; "
        "connect to the moved frame's to_table",
    }


def limits() -> dict[str, Any]:
    return {
        "max_frame_bytes": settings.CASINO_WS_MAX_FRAME_BYTES,
        "messages_per_second": settings.CASINO_WS_RATE,
        "burst": settings.CASINO_WS_BURST,
        "refusals_before_close": settings.CASINO_WS_FLOOD_CLOSE,
        "connections_per_player": settings.CASINO_WS_MAX_CONNECTIONS_PER_PLAYER,
    }


def _channel(address: str, title: str, names: tuple[str, ...], resume: bool, parameter: str = "table_id") -> Schema:
    codes = "; ".join(f"{code} {meaning}" for code, meaning in close_codes().items())
    query: Schema = {
        "type": "object",
        "properties": {
            "ticket": {
                **STRING,
                "description": "A single-use websocket ticket (POST /api/auth/ws-ticket/, valid for its expires_in "
                "seconds; one per connection); else the session cookie. API tokens are not accepted in the URL.",
            }
        },
    }
    if resume:
        query["properties"]["since"] = {
            **INTEGER,
            "minimum": 0,
            "description": "Resume: the last seq the client applied. It gets a snapshot (seq S), then the deltas "
            "after S with no gap and no duplicate; a since greater than the table's seq is answered by an error "
            "bad_resume_seq before the snapshot.",
        }
    lim = limits()
    return {
        "address": address,
        "title": title,
        "description": (
            f"JSON text frames only (docs/websocket.md). Close codes: {codes}. Limits: frames up to "
            f"{lim['max_frame_bytes']} bytes; {lim['messages_per_second']} messages a second after a burst of "
            f"{lim['burst']} (else error rate_limited); {lim['connections_per_player']} connections per player."
        ),
        "parameters": {parameter: {"description": f"The {parameter.removesuffix('_id')}'s id."}},
        "messages": {name: ref(f"#/components/messages/{name}") for name in names},
        "bindings": {"ws": {"method": "GET", "query": query, "bindingVersion": "0.1.0"}},
    }


def document(*, host: str = "127.0.0.1:8000", secure: bool = False) -> dict[str, Any]:
    """The AsyncAPI 3.0.0 document, ``host`` the server clients connect to."""
    channels = {
        "houseTable": _channel("/ws/tables/{table_id}/", "House-banked table", HOUSE_SENDS + HOUSE_RECEIVES, True),
        "pokerTable": _channel("/ws/poker/{table_id}/", "Poker ring-game table", POKER_SENDS + POKER_RECEIVES, False),
        "pokerTournament": _channel(
            "/ws/poker/tournaments/{tournament_id}/",
            "Poker tournament state",
            TOURNAMENT_SENDS + TOURNAMENT_RECEIVES,
            False,
            "tournament_id",
        ),
    }

    def operation(action: str, channel: str, names: tuple[str, ...], summary: str) -> Schema:
        return {
            "action": action,
            "channel": ref(f"#/channels/{channel}"),
            "summary": summary,
            "messages": [ref(f"#/channels/{channel}/messages/{name}") for name in names],
        }

    return {
        "asyncapi": "3.0.0",
        "info": {
            "title": "Casino hold'em backend: table websockets",
            "version": settings.CASINO_VERSION,
            "description": "The realtime feeds of the house-banked and poker tables, and the commands a player "
            "may send over them. Prose: docs/websocket.md; REST: /api/schema/.",
        },
        "defaultContentType": "application/json",
        "servers": {
            "this": {
                "host": host,
                "protocol": "wss" if secure else "ws",
                "description": "The server that served this document.",
            }
        },
        "channels": channels,
        "operations": {
            "houseSend": operation("send", "houseTable", HOUSE_SENDS, "What the server sends a house-table client."),
            "houseReceive": operation("receive", "houseTable", HOUSE_RECEIVES, "What a house-table client may send."),
            "pokerSend": operation("send", "pokerTable", POKER_SENDS, "What the server sends a poker-table client."),
            "pokerReceive": operation("receive", "pokerTable", POKER_RECEIVES, "What a poker-table client may send."),
            "tournamentSend": operation(
                "send", "pokerTournament", TOURNAMENT_SENDS, "What the server sends a tournament client."
            ),
            "tournamentReceive": operation(
                "receive", "pokerTournament", TOURNAMENT_RECEIVES, "What a tournament client may send."
            ),
        },
        "components": {"schemas": schemas(), "messages": _messages()},
        "x-close-codes": close_codes(),
        "x-limits": limits(),
    }


class AsyncAPIView(APIView):
    """The AsyncAPI 3.0 document of the table websockets (documentation: anyone may read it)."""

    authentication_classes: list[Any] = []
    permission_classes = [AllowAny]

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request) -> Response:
        return Response(document(host=request.get_host(), secure=request.is_secure()))
