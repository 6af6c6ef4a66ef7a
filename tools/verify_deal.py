#!/usr/bin/env python3
"""Check a provably-fair deal offline: this one file, Python 3.11+, the standard library only.

Usage: ``python tools/verify_deal.py FAIRNESS.json [HISTORY.json]``

``FAIRNESS.json`` is a saved answer of ``GET /api/rounds/<game number>/fairness/``
(house rounds) or ``GET /api/poker/hands/<hand id>/fairness/`` (poker hands),
fetched once the round has ended. Three shapes (docs/fairness.md):

- **merkle-sha256, house round** (``leaves``): each of the 52 leaves is
  ``SHA-256("<salt_i>:<i>:<card>")``; the Merkle root over them (RFC 6962
  domain separation, an odd node promoted) must equal the commitment; the
  cards are the 52 cards, each once (a full permutation), positions 0 to 51
  once each; every ``deal_order`` entry names a position and its card is that
  leaf's card.
- **merkle-sha256, poker hand** (``revealed`` and, for a player of the hand,
  ``yours``): each entry's leaf, with its ``proof`` (the sibling hashes from
  the leaf up), leads to the commitment (``root_from_proof``, the sides taken
  from the position, never from the proof); positions and cards are distinct
  across all entries. Folded and mucked hands, burn cards and the undealt
  rest are never revealed: they are simply not in the answer.
- **sha256, legacy** (hands and rounds recorded before per-position
  commitments): the commitment is the SHA-256 (hex) of the UTF-8 text
  ``"<salt>:<deck>"``, the deck's 52 two-character codes top first, joined by
  single spaces; the salt is 64 lowercase hex digits and the deck is 52
  distinct cards; every entry of ``deal_order`` names a deck position (0 =
  top) once, and its card is the deck's card at that position.

``HISTORY.json`` (optional) is the same round as the player saw it: the game
history (``GET /api/history/games/<game number>/``) or the poker hand history
(``GET /api/poker/hands/<hand id>/``). Every card it shows must then be the card
the answer proves in that place (``deal_order``, ``revealed`` or ``yours``), so
each came from its committed position; a poker history's card that the answer
does not prove (another player's, never shown) is a problem too.

Exits 0 when everything checks, 1 naming what does not (every problem is printed).
The server computes commitments with ``commitment_of`` from this file (the
formula lives in one place); ``tests/house/services/test_fairness.py`` holds
it to the text of the rule with ``hashlib`` directly.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

ALGORITHM = "sha256"
RANKS = "23456789TJQKA"
SUITS = "shdc"
FULL_DECK = frozenset(rank + suit for rank in RANKS for suit in SUITS)
SALT = re.compile(r"[0-9a-f]{64}")


def deck_text(deck: Sequence[str]) -> str:
    """The deck as committed: its two-character codes, top first, joined by single spaces."""
    return " ".join(deck)


def commitment_of(salt: str, deck: Sequence[str]) -> str:
    """SHA-256 (lowercase hex) of the UTF-8 text ``"<salt>:<deck>"``."""
    return hashlib.sha256(f"{salt}:{deck_text(deck)}".encode()).hexdigest()


# --- per-position commitments (algorithm ``merkle-sha256``, docs/fairness.md) -----------------
#
# Each deck position i has its own salt ``salt_i`` and leaf ``SHA-256("<salt_i>:<i>:<card>")``;
# the commitment is the Merkle root over the 52 leaves in position order, RFC 6962 style:
# leaf node SHA-256(0x00 || leaf), inner node SHA-256(0x01 || left || right), an odd node
# promoted unchanged to the next level (the ledger's seals use the same tree). One leaf can be
# revealed with its proof (the sibling hashes from the leaf up) without giving away any other card.

MERKLE_ALGORITHM = "merkle-sha256"
DECK_SIZE = 52


def leaf_of(salt: str, position: int, card: str) -> str:
    """The leaf (lowercase hex) of ``card`` at deck ``position`` under its own ``salt``."""
    return hashlib.sha256(f"{salt}:{position}:{card}".encode()).hexdigest()


def _leaf_node(leaf: str) -> bytes:
    return hashlib.sha256(b"\x00" + bytes.fromhex(leaf)).digest()


def _inner_node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _levels(leaves: Sequence[str]) -> list[list[bytes]]:
    level = [_leaf_node(leaf) for leaf in leaves]
    levels = [level]
    while len(level) > 1:
        nxt = [_inner_node(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
        levels.append(level)
    return levels


def merkle_root_of(leaves: Sequence[str]) -> str:
    """The root (lowercase hex) over ``leaves`` in order (at least one)."""
    if not leaves:
        raise ValueError("a Merkle tree needs at least one leaf")
    return _levels(leaves)[-1][0].hex()


def proof_of(leaves: Sequence[str], index: int) -> list[str]:
    """The sibling hashes (hex) from leaf ``index`` up to the root; a level where
    the node is promoted has no sibling and adds nothing."""
    return proofs_of(leaves, [index])[index]


def proofs_of(leaves: Sequence[str], indices: Sequence[int]) -> dict[int, list[str]]:
    """``proof_of`` for each of ``indices``, the tree built once."""
    levels = _levels(leaves)[:-1]
    proofs: dict[int, list[str]] = {}
    for start in indices:
        index, proof = start, []
        for level in levels:
            sibling = index ^ 1
            if sibling < len(level):
                proof.append(level[sibling].hex())
            index //= 2
        proofs[start] = proof
    return proofs


def root_from_proof(leaf: str, index: int, size: int, proof: Sequence[str]) -> str | None:
    """The root that ``proof`` leads to from ``leaf`` at ``index`` of a tree of
    ``size`` leaves; ``None`` when the proof does not have the length that
    position's path needs. The sides come from the index, never from the proof,
    so a leaf can only be proven at its own position."""
    if not 0 <= index < size:
        return None
    node, steps = _leaf_node(leaf), list(proof)
    width = size
    while width > 1:
        sibling = index ^ 1
        if sibling < width:
            if not steps:
                return None
            try:
                other = bytes.fromhex(steps.pop(0))
            except (TypeError, ValueError):
                return None
            node = _inner_node(other, node) if index % 2 else _inner_node(node, other)
        index //= 2
        width = (width + 1) // 2
    return node.hex() if not steps else None


def check_answer(answer: Any) -> list[str]:
    """What is wrong with a fairness answer on its own (empty: nothing)."""
    if not isinstance(answer, Mapping):
        return ["the fairness answer is not a JSON object"]
    if answer.get("algorithm") == MERKLE_ALGORITHM:
        return _check_merkle(answer)
    if answer.get("algorithm") != ALGORITHM:
        return [f"unknown algorithm {answer.get('algorithm')!r} (expected {MERKLE_ALGORITHM!r} or {ALGORITHM!r})"]
    salt, deck, commitment = answer.get("salt"), answer.get("deck"), answer.get("commitment")
    if salt is None and deck is None:
        return ["the answer reveals no salt and deck: the round was still in play; fetch it again once it has ended"]
    problems = []
    if not isinstance(salt, str) or not SALT.fullmatch(salt):
        problems.append("the salt is not 64 lowercase hex digits")
    if not isinstance(deck, list) or not all(isinstance(card, str) for card in deck):
        return [*problems, "the deck is not a list of card codes"]
    unknown = [card for card in deck if card not in FULL_DECK]
    if unknown:
        problems.append(f"not cards: {', '.join(map(repr, unknown))}")
    if len(deck) != len(FULL_DECK) or len(set(deck)) != len(deck):
        problems.append(f"the deck has {len(deck)} cards, {len(set(deck))} of them distinct (expected 52 distinct)")
    if not isinstance(commitment, str) or commitment_of(str(salt), deck) != commitment:
        problems.append("the commitment is not SHA-256 of salt:deck: the deck or salt is not the one committed")
    return problems + _check_deal_order(answer.get("deal_order"), deck)


def _is_position(value: Any, size: int = DECK_SIZE) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < size


def _leaf_problems(entry: Any, where: str) -> tuple[list[str], str | None]:
    """An entry's own problems and its leaf (``None`` when it has none)."""
    if not isinstance(entry, Mapping):
        return [f"{where}: {entry!r} is not a leaf"], None
    position, card, salt = entry.get("position"), entry.get("card"), entry.get("salt")
    problems = []
    if not _is_position(position):
        problems.append(f"{where}: {position!r} is not a deck position (0 to {DECK_SIZE - 1})")
    if card not in FULL_DECK:
        problems.append(f"{where}: {card!r} is not a card")
    if not isinstance(salt, str) or not SALT.fullmatch(salt):
        problems.append(f"{where}: the salt is not 64 lowercase hex digits")
    if problems or not isinstance(position, int):
        return problems, None
    return [], leaf_of(str(salt), position, str(card))


def _check_merkle(answer: Mapping[str, Any]) -> list[str]:
    commitment = answer.get("commitment")
    if not isinstance(commitment, str) or not SALT.fullmatch(commitment):
        return ["the commitment is not a SHA-256 Merkle root (64 lowercase hex digits)"]
    if answer.get("deck_size", DECK_SIZE) != DECK_SIZE:
        return [f"the deck size is {answer.get('deck_size')!r}, not {DECK_SIZE}"]
    if "leaves" in answer:
        return _check_full_reveal(answer, commitment)
    if "revealed" in answer:
        return _check_poker_reveal(answer, commitment)
    return ["the answer reveals no leaves: the deal was still in play; fetch it again once it has ended"]


def _check_full_reveal(answer: Mapping[str, Any], commitment: str) -> list[str]:
    """A house round: all 52 leaves, top first, a full permutation whose root is the commitment."""
    entries = answer.get("leaves")
    if not isinstance(entries, list):
        return ["leaves is not a list"]
    problems: list[str] = []
    leaves: list[str] = []
    for index, entry in enumerate(entries):
        found, leaf = _leaf_problems(entry, f"leaf {index}")
        problems += found
        if leaf is not None and entry.get("position") != index:
            problems.append(f"leaf {index} names position {entry.get('position')!r}: the leaves go top first")
        if leaf is not None:
            leaves.append(leaf)
    if problems:
        return problems
    deck = [str(entry["card"]) for entry in entries]
    if len(deck) != DECK_SIZE or set(deck) != FULL_DECK:
        problems.append(f"the leaves hold {len(deck)} cards, {len(set(deck))} of them distinct "
                        f"(expected the 52 cards, each once)")  # fmt: skip
    if not leaves or merkle_root_of(leaves) != commitment:
        problems.append("the Merkle root of the leaves is not the commitment: the deck is not the one committed")
    return problems + _check_deal_order(answer.get("deal_order"), deck)


def _check_poker_reveal(answer: Mapping[str, Any], commitment: str) -> list[str]:
    """A poker hand: every revealed (and own) leaf proven against the commitment; distinct positions and cards."""
    problems: list[str] = []
    card_at: dict[int, str] = {}  # position -> card, across both lists (a shown own hand is in both)
    position_of: dict[str, int] = {}
    for field in ("revealed", "yours"):
        entries = answer.get(field, [])
        if not isinstance(entries, list):
            problems.append(f"{field} is not a list")
            continue
        in_field: set[int] = set()
        for index, entry in enumerate(entries):
            where = f"{field} {index}"
            found, leaf = _leaf_problems(entry, where)
            problems += found
            if leaf is None:
                continue
            position, card = int(entry["position"]), str(entry["card"])
            if root_from_proof(leaf, position, DECK_SIZE, entry.get("proof") or []) != commitment:
                problems.append(f"{where}: {card} at position {position} is not proven against the commitment")
            if position in in_field:
                problems.append(f"{where}: position {position} is in {field} twice")
            in_field.add(position)
            if card_at.setdefault(position, card) != card:
                problems.append(f"{where}: position {position} holds {card_at[position]} and {card}")
            if position_of.setdefault(card, position) != position:
                problems.append(f"{where}: {card} is at positions {position_of[card]} and {position}")
    return problems


def _check_deal_order(order: Any, deck: list[str]) -> list[str]:
    if not isinstance(order, list):
        return ["deal_order is not a list"]
    problems = []
    seen: set[int] = set()
    for entry in order:
        position = entry.get("position") if isinstance(entry, Mapping) else None
        if not isinstance(position, int) or isinstance(position, bool) or not 0 <= position < len(deck):
            problems.append(f"deal_order entry {entry!r} names no deck position")
            continue
        if position in seen:
            problems.append(f"deck position {position} is dealt twice")
        seen.add(position)
        if entry.get("card") != deck[position]:
            problems.append(
                f"deck position {position} holds {deck[position]}, but deal_order gives {entry.get('card')!r} "
                f"to {entry.get('to')} (slot {entry.get('slot')})"
            )
    return problems


def shown_cards(history: Mapping[str, Any]) -> Iterator[tuple[str, int, str]]:
    """Every card a history shows, as (to, slot, card), in ``deal_order``'s terms:
    a house game history's ``cards`` (``shared`` or ``player:<id>`` hands,
    ``dealer``, ``board``) or a poker hand history's ``final`` (``seat:<n>``,
    ``board``). Hidden cards (``null``) are skipped."""
    if "final" in history:
        final = history.get("final") or {}
        places: list[tuple[str, Any]] = [("board", final.get("board"))]
        places += [(f"seat:{p.get('seat')}", p.get("cards")) for p in final.get("players") or []]
    else:
        cards = history.get("cards") or {}
        places = [("dealer", cards.get("dealer")), ("board", cards.get("board"))]
        if "seats" in cards:  # per seat: every hand by player id (the viewer's own too)
            places += [(f"player:{pid}", hand) for pid, hand in (cards.get("seats") or {}).items()]
        else:  # shared: the one player hand everyone plays
            places.append(("shared", cards.get("player")))
    for to, hand in places:
        for slot, card in enumerate(hand or []):
            if card is not None:
                yield to, slot, card


def check_history(answer: Mapping[str, Any], history: Any) -> list[str]:
    """Each card ``history`` shows came from its committed deck position."""
    if not isinstance(history, Mapping):
        return ["the history is not a JSON object"]
    number = history.get("game_number") or history.get("hand_id")
    if number != answer.get("game_number"):
        return [f"the history is of game {number!r}, the answer of {answer.get('game_number')!r}"]
    proven = proven_places(answer)
    by_leaves = answer.get("algorithm") == MERKLE_ALGORITHM and "leaves" not in answer
    unproven = "a place the answer proves nothing of" if by_leaves else "a place deal_order never deals to"
    problems = []
    for to, slot, card in shown_cards(history):
        committed = proven.get((to, slot))
        if committed is None:
            problems.append(f"the history shows {card} at {to} slot {slot}, {unproven}")
        elif committed[1] != card:
            problems.append(
                f"the history shows {card} at {to} slot {slot}, but the committed deck dealt "
                f"{committed[1]} there (position {committed[0]})"
            )
    return problems


def proven_places(answer: Mapping[str, Any]) -> dict[tuple[Any, Any], tuple[int, str]]:
    """(to, slot) -> (deck position, card) for every place a checked answer
    proves: its ``deal_order`` (with the deck's or the leaves' cards), or a
    poker hand's ``revealed`` and ``yours`` leaves."""
    places: dict[tuple[Any, Any], tuple[int, str]] = {}
    if answer.get("algorithm") == MERKLE_ALGORITHM and "leaves" not in answer:
        for entry in [*(answer.get("revealed") or []), *(answer.get("yours") or [])]:
            places[(entry.get("to"), entry.get("slot"))] = (int(entry["position"]), str(entry["card"]))
        return places
    if answer.get("algorithm") == MERKLE_ALGORITHM:
        deck = [str(entry["card"]) for entry in answer.get("leaves") or []]
    else:
        deck = [str(card) for card in answer.get("deck") or []]
    for entry in answer.get("deal_order") or []:
        if isinstance(entry, Mapping):
            places[(entry.get("to"), entry.get("slot"))] = (int(entry["position"]), deck[int(entry["position"])])
    return places


def verify(answer: Any, history: Any = None) -> list[str]:
    """Every problem of a saved answer (and history, when given); empty: the deal checks."""
    problems = check_answer(answer)
    if not problems and history is not None:
        problems = check_history(answer, history)
    return problems


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Check a provably-fair deal (a saved fairness answer).")
    parser.add_argument("answer", type=Path, help="the saved fairness answer (JSON)")
    parser.add_argument("history", type=Path, nargs="?", help="the round's game or hand history (JSON)")
    args = parser.parse_args(argv)
    try:
        answer = _load(args.answer)
        history = _load(args.history) if args.history is not None else None
    except (OSError, ValueError) as exc:
        print(f"FAILED: cannot read {exc}")
        return 1
    problems = verify(answer, history)
    if problems:
        print(f"FAILED: {problems[0]}")
        for problem in problems[1:]:
            print(f"  also: {problem}")
        return 1
    checked = f" and the {sum(1 for _ in shown_cards(history))} cards the history shows" if history else ""
    if answer.get("algorithm") == MERKLE_ALGORITHM and "leaves" not in answer:
        what = (f"{len(answer.get('revealed') or [])} cards the table saw and {len(answer.get('yours') or [])} of "
                f"your own proven at their committed positions")  # fmt: skip
    else:
        what = f"{len(answer['deal_order'])} cards dealt from their committed positions"
    print(f"deal verified: game {answer.get('game_number')}, commitment {answer['commitment']}, {what}{checked}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
