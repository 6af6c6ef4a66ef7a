"""The floor of ``bench commands``: a house chip and a house decision as raw
psycopg 3 transactions doing the reads and writes the services do for one
command, on tables shaped like theirs (``CREATE TABLE raw_x (LIKE x INCLUDING
ALL)``, as ``ledger.benchmarks``'s raw peer does).

One command, one transaction, three round trips:

1. ``BEGIN`` with one prepared statement: the idempotency row claimed, the
   current round share-locked through its table, the player's projection row
   locked ``FOR UPDATE``, the seat, the wallet (id and balance), held and house
   accounts by key, the player stream's head hash, the responsible-gaming row;
   for a decision also the table's tick and whether anyone else is still to
   decide on the street (the service's ``tick_and_waiting``);
2. Python: the event's data, its hash chained on the head (``hashlib``) and its
   MAC (``hmac``), the projection row's state document, the result; then one
   prepared statement: the event, the two balance updates (refused below
   zero), the hold, its transfer and two statement lines, the projection row
   upserted and the result stored under the key;
3. ``COMMIT``.

The round, table, seat and responsible-gaming rows are only read, so the floor
reads the real ones (the share lock included); everything written goes to the
``raw_`` copies, so the ledger the services write stays exactly theirs
(``verify_ledger`` checks it).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import uuid
from datetime import datetime
from typing import Any

import psycopg

from casino.responsible_gaming import ROW_TABLE as RG_TABLE

# The ledger tables the floor writes, and the house projection.
RAW_TABLES = {
    "raw_idempotency": "ledger_idempotency",
    "raw_event": "ledger_event",
    "raw_account": "ledger_account",
    "raw_hold": "ledger_hold",
    "raw_transfer": "ledger_transfer",
    "raw_statement_line": "ledger_statement_line",
    "raw_playerround": "games_playerround",
}

_READ = f"""
WITH idem AS (
    INSERT INTO raw_idempotency (key, command, request_hash, result, created_at)
    VALUES (%(key)s, %(command)s, %(digest)s, NULL, %(at)s)
    ON CONFLICT (key) DO NOTHING RETURNING 1
)
SELECT (SELECT count(*) FROM idem), r.id, r.round_id, r.stream_version,
       EXISTS (SELECT 1 FROM games_tableseat s WHERE s.table_id = t.id AND s.player_id = %(player)s),
       p.id, p.state, p.stream_version, w.id, w.balance, h.id, hs.id, e.hash, rg.user_id{{tick}}
FROM games_housetable t
JOIN games_houseround r ON r.table_id = t.id AND r.round_id = t.current_round_id
LEFT JOIN LATERAL (
    SELECT id, state, stream_version FROM raw_playerround
    WHERE round_id = r.id AND player_id = %(player)s FOR UPDATE
) p ON true
LEFT JOIN raw_account w ON w.key = 'wallet:player:' || %(player)s::text || ':' || r.currency
LEFT JOIN raw_account h ON h.key = 'held:player:' || %(player)s::text || ':' || r.currency
LEFT JOIN raw_account hs ON hs.key = 'house:table:' || t.id::text || ':' || r.currency
LEFT JOIN raw_event e ON e.stream_id = 'round-' || r.round_id || '-player-' || %(player)s::text
                     AND e.version = p.stream_version
LEFT JOIN {RG_TABLE} rg ON rg.user_id = %(player)s
WHERE t.id = %(table)s
FOR SHARE OF r
"""
_CHIP_READ = _READ.format(tick="")
_DECISION_READ = _READ.format(
    tick=""",
       t.current_round_id, t.phase, t.phase_seq, t.deadline,
       EXISTS (SELECT 1 FROM raw_playerround o WHERE o.round_id = r.id AND o.staked > 0 AND NOT o.done_deciding
               AND o.last_street < %(street)s AND o.player_id <> %(player)s)
       OR EXISTS (SELECT 1 FROM raw_playerround o WHERE o.round_id = r.id AND o.staked > 0 AND NOT o.done_deciding
               AND o.last_street > %(street)s AND o.player_id <> %(player)s)"""
)

_WRITE = """
WITH ev AS (
    INSERT INTO raw_event (stream_id, version, type, schema_version, data, metadata, recorded_at, prev_hash, hash, mac)
    VALUES (%(stream)s, %(version)s, %(type)s, 1, %(data)s::json, %(meta)s::json, %(at)s, %(prev)s, %(hash)s, %(mac)s)
    RETURNING id
), bal AS (
    UPDATE raw_account a SET balance = a.balance + v.delta
    FROM (VALUES (%(wallet)s::bigint, -%(amount)s::bigint), (%(held)s::bigint, %(amount)s::bigint)) v(id, delta)
    WHERE a.id = v.id AND (a.may_go_negative OR a.balance + v.delta >= 0)
    RETURNING a.id, a.balance
), hold AS (
    INSERT INTO raw_hold (id, source_id, escrow_id, destination_id, amount, currency, status, opened_event_id)
    SELECT %(hold)s::uuid, %(wallet)s, %(held)s, %(house)s, %(amount)s, 'EUR', 'pending', ev.id FROM ev
    WHERE (SELECT count(*) FROM bal) = 2
    RETURNING opened_event_id
), tr AS (
    INSERT INTO raw_transfer (debit_account_id, credit_account_id, amount, currency, kind, hold_id, event_id,
                              created_at)
    SELECT %(wallet)s, %(held)s, %(amount)s, 'EUR', 'hold', %(hold)s::uuid, opened_event_id, %(at)s FROM hold
    RETURNING id, event_id
), sl AS (
    INSERT INTO raw_statement_line (account_id, transfer_id, event_id, amount, balance_after, created_at)
    SELECT b.id, tr.id, tr.event_id, CASE WHEN b.id = %(wallet)s THEN -%(amount)s ELSE %(amount)s END, b.balance,
           %(at)s
    FROM tr, bal b RETURNING 1
), pr AS (
    INSERT INTO raw_playerround (round_id, table_id, player_id, game_number, game, currency, stream_version, state,
                                 totals, staked, returned, net, status, last_street, done_deciding, created_at)
    VALUES (%(round)s, %(table)s, %(player)s, %(round_id)s, 'uth', 'EUR', %(version)s, %(state)s::jsonb,
            %(totals)s::jsonb, %(staked)s, 0, 0, 'betting', %(street)s, %(done)s, %(at)s)
    ON CONFLICT (round_id, player_id) DO UPDATE SET
        stream_version = EXCLUDED.stream_version, state = EXCLUDED.state, totals = EXCLUDED.totals,
        staked = EXCLUDED.staked, last_street = EXCLUDED.last_street, done_deciding = EXCLUDED.done_deciding
    RETURNING 1
), res AS (
    UPDATE raw_idempotency SET result = %(result)s::jsonb WHERE key = %(key)s RETURNING 1
)
SELECT (SELECT count(*) FROM sl), (SELECT count(*) FROM pr), (SELECT count(*) FROM res)
"""

GENESIS = "0" * 64


def setup_floor(dsn: str) -> None:
    """Create the ``raw_`` tables (empty, but ``raw_account``: a copy of every account, balances included)."""
    with psycopg.connect(dsn) as conn:
        for raw, real in RAW_TABLES.items():
            conn.execute(f"CREATE TABLE {raw} (LIKE {real} INCLUDING ALL)")
        conn.execute("INSERT INTO raw_account SELECT * FROM ledger_account")


class Floor:
    """One psycopg connection running floor commands (statements prepared on first use)."""

    def __init__(self, dsn: str, mac_key: bytes) -> None:
        self.conn = psycopg.connect(dsn, prepare_threshold=0)
        self.mac_key = mac_key

    def close(self) -> None:
        self.conn.close()

    def copy_accounts(self) -> None:
        """Accounts opened since ``setup_floor`` (a table's house account: by the first bet), copied."""
        self.conn.execute(
            "INSERT INTO raw_account SELECT * FROM ledger_account a WHERE NOT EXISTS "
            "(SELECT 1 FROM raw_account r WHERE r.id = a.id)"
        )
        self.conn.commit()

    def chip(self, *, table_id: int, player_id: int, spot: str, amount: int, key: str, at: datetime) -> None:
        """A chip on ``spot`` (an Ante holds the automatic Ante Plus beside it: twice ``amount``)."""
        self._command(
            sql=_CHIP_READ, command="house.place_chip", table_id=table_id, player_id=player_id, key=key, at=at,
            request={"spot": spot, "amount": amount}, street=None, option=spot, amount=amount,
        )  # fmt: skip

    def decision(self, *, table_id: int, player_id: int, option: str, amount: int, street: str, key: str,
                 at: datetime) -> bool:  # fmt: skip
        """A staking decision (``amount`` held); whether anyone else is still to decide on ``street``."""
        return self._command(
            sql=_DECISION_READ, command="house.make_decision", table_id=table_id, player_id=player_id, key=key,
            at=at, request={"option": option}, street=street, option=option, amount=amount,
        )  # fmt: skip

    def _command(self, *, sql: str, command: str, table_id: int, player_id: int, key: str, at: datetime,
                 request: dict[str, Any], street: str | None, option: str, amount: int) -> bool:  # fmt: skip
        conn = self.conn
        digest = hashlib.sha256(
            json.dumps({"command": command, "request": {"table": table_id, "player": player_id, **request}},
                       sort_keys=True, separators=(",", ":")).encode()
        ).hexdigest()  # fmt: skip
        params: dict[str, Any] = {"key": key, "command": command, "digest": digest, "at": at, "player": player_id,
                                  "table": table_id, "street": street}  # fmt: skip
        found = conn.execute(sql, params, prepare=True).fetchone()
        assert found is not None, "the table has a round"
        assert found[0] == 1, "the floor's key is claimed once"
        rid, round_id, _, _seated, _row_id, state, version, wallet, balance, held, house, head = found[1:13]
        version = version or 0
        state = state or {"chips": [], "decisions": [], "version": 0}
        chip = street is None
        held_amount = 2 * amount if chip and option == "ante" else amount
        hold = str(uuid.uuid4())
        at_text = at.isoformat()
        stream = f"round-{round_id}-player-{player_id}"
        leg = ["hold", wallet, held, held_amount, "EUR", hold, house]
        if chip:
            automatic = {"ante_plus": amount} if option == "ante" else {}
            data = {"amount": amount, "automatic": automatic, "capped": False, "hold_id": hold, "legs": [leg],
                    "source": "chip", "spot": option}  # fmt: skip
            state["chips"].append([option, amount, hold, automatic])
        else:
            data = {"amount": amount, "at": at_text, "auto": False, "folds": False, "hold_id": hold, "legs": [leg],
                    "option": option, "street": street}  # fmt: skip
            state["decisions"].append([street, option, False])
            state["call_amount"], state["call_hold_id"] = amount, hold
        state["version"] = version + 1
        meta = {"actor": f"user:{player_id}", "at": at_text, "correlation_id": round_id, "idempotency_key": key}
        data_json = json.dumps(data, sort_keys=True, separators=(",", ":"))
        meta_json = json.dumps(meta, sort_keys=True, separators=(",", ":"))
        prev = head or GENESIS
        body = f"{stream}|{version + 1}|{data_json}|{meta_json}|{at_text}".encode()
        raw = hashlib.sha256(bytes.fromhex(prev) + body).digest()
        totals: dict[str, int] = {}
        for spot, chip_amount, _, auto in state["chips"]:
            totals[spot] = totals.get(spot, 0) + chip_amount
            for extra, extra_amount in auto.items():
                totals[extra] = totals.get(extra, 0) + extra_amount
        if state.get("call_amount"):
            totals["call"] = state["call_amount"]
        staked = sum(totals.values())
        waiting = bool(found[-1]) if not chip else False
        if chip:
            result: dict[str, Any] = {"capped": False, "totals": totals, "balance": balance - held_amount,
                                      "doubled": [], "round_id": round_id}  # fmt: skip
        else:
            current, phase, phase_seq, deadline = found[14:18]
            tick = {"phase": phase, "deadline": deadline.isoformat() if deadline else None, "round_id": current,
                    "table_id": table_id, "phase_seq": phase_seq, "game_number": current}  # fmt: skip
            result = {"tick": tick, "amount": amount, "option": option, "street": street,
                      "balance": balance - amount, "round_id": round_id, "all_decided": not waiting}  # fmt: skip
        written = conn.execute(
            _WRITE,
            {"stream": stream, "version": version + 1, "type": "house_bet.placed" if chip else "house_decision.made",
             "data": data_json, "meta": meta_json, "at": at, "prev": prev, "hash": raw.hex(),
             "mac": hmac.digest(self.mac_key, raw, "sha256").hex(), "wallet": wallet, "held": held, "house": house,
             "amount": held_amount, "hold": hold, "round": rid, "table": table_id, "player": player_id,
             "round_id": round_id, "state": json.dumps(state), "totals": json.dumps(totals), "staked": staked,
             "street": street or "", "done": not chip, "result": json.dumps(result), "key": key},
            prepare=True,
        ).fetchone()  # fmt: skip
        if written != (2, 1, 1):
            conn.rollback()
            raise RuntimeError(f"the floor's command wrote {written}: refused (funds?)")
        conn.commit()
        return waiting
