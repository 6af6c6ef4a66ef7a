"""The commitment as issue 20 defines it, the shuffle that makes it, and
``tools/verify_deal.py`` as a player runs it: a standalone script (standard
library only) that passes a sound answer and fails a forged one, whatever is
forged (docs/fairness.md)."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from games.cards.shuffle import SeededRandomSource
from games.cards.vault import new_data_key, position_salts
from games.tables.fairness import new_salt, open_committed_deck, shuffle_and_commit
from tests.conftest import ROOT
from tools.verify_deal import FULL_DECK, commitment_of, leaf_of, merkle_root_of, proof_of, verify

VERIFY = ROOT / "tools" / "verify_deal.py"
DECK = [rank + suit for suit in "shdc" for rank in "AKQJT98765432"]


def answer_of(deck: list[str], deal_order: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """An answer committing to ``deck`` (a fresh salt), dealing its top two cards to seat 1 unless told."""
    salt = new_salt()
    order = deal_order if deal_order is not None else [
        {"position": 0, "card": deck[0], "to": "seat:1", "slot": 0},
        {"position": 1, "card": deck[1], "to": "seat:1", "slot": 1},
    ]  # fmt: skip
    return {"game_number": "NL1-20261122-134501", "algorithm": "sha256", "commitment": commitment_of(salt, deck),
            "salt": salt, "deck": deck, "deal_order": order}  # fmt: skip


def test_the_commitment_is_sha256_hex_of_the_utf8_text_salt_colon_deck() -> None:
    salt = "0123456789abcdef" * 4
    text = salt + ":" + "As Ks Qs Js Ts 9s 8s 7s 6s 5s 4s 3s 2s Ah Kh Qh Jh Th 9h 8h 7h 6h 5h 4h 3h 2h " \
        "Ad Kd Qd Jd Td 9d 8d 7d 6d 5d 4d 3d 2d Ac Kc Qc Jc Tc 9c 8c 7c 6c 5c 4c 3c 2c"  # fmt: skip
    assert commitment_of(salt, DECK) == hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_every_shuffle_gets_a_fresh_secure_salt_and_its_commitment() -> None:
    key = new_data_key()
    first = shuffle_and_commit(rng=SeededRandomSource(7), key=key, deal_id="t:1")
    second = shuffle_and_commit(rng=SeededRandomSource(7), key=key, deal_id="t:1")  # the same order of cards ...
    opened = [
        open_committed_deck(commitment=c.commitment, sealed_deck=c.sealed_deck, key=key, deal_id="t:1")
        for c in (first, second)
    ]
    assert opened[0].deck == opened[1].deck
    for committed, deck in zip((first, second), opened, strict=True):
        assert re.fullmatch(r"[0-9a-f]{64}", str(deck.salt))
        assert sorted(deck.deck) == sorted(FULL_DECK)
        assert committed.commitment == merkle_root_of(deck.leaves())
    # ... but not the same salt, so no commitment says which order it is.
    assert first.commitment != second.commitment
    with pytest.raises(ValueError, match="52 cards"):
        shuffle_and_commit(rng=SeededRandomSource(7), key=key, deal_id="t:1", deck=DECK[:51] + DECK[:1])


def test_a_sound_answer_passes_and_each_forgery_fails_with_what_is_wrong() -> None:
    sound = answer_of(DECK)
    assert verify(sound) == []
    one_card = dict(sound, deck=["2c", *DECK[1:51], "As"])  # As and 2c traded places
    assert verify(one_card) == [
        "the commitment is not SHA-256 of salt:deck: the deck or salt is not the one committed",
        "deck position 0 holds 2c, but deal_order gives 'As' to seat:1 (slot 0)",
    ]
    assert verify(dict(sound, salt="0" * 64))[0].startswith("the commitment is not SHA-256")
    assert verify(dict(sound, salt=sound["salt"].upper()))[0] == "the salt is not 64 lowercase hex digits"
    twice = answer_of([*DECK[:51], "As"])
    assert "the deck has 52 cards, 51 of them distinct (expected 52 distinct)" in verify(twice)
    assert "not cards: '1s'" in verify(dict(sound, deck=["1s", *DECK[1:]]))
    dealt_twice = answer_of(DECK, [{"position": 0, "card": "As", "to": "seat:1", "slot": 0},
                                   {"position": 0, "card": "As", "to": "seat:2", "slot": 0}])  # fmt: skip
    assert verify(dealt_twice) == ["deck position 0 is dealt twice"]
    assert verify(dict(sound, algorithm="md5")) == ["unknown algorithm 'md5' (expected 'merkle-sha256' or 'sha256')"]
    in_play = {k: sound[k] for k in ("game_number", "algorithm", "commitment")}
    assert verify(in_play) == [
        "the answer reveals no salt and deck: the round was still in play; fetch it again once it has ended"
    ]


def test_shown_cards_are_checked_against_their_committed_positions() -> None:
    sound = answer_of(DECK)
    hand = {"hand_id": sound["game_number"], "final": {"board": [], "players": [{"seat": 1, "cards": ["As", "Ks"]}]}}
    assert verify(sound, hand) == []
    hand["final"]["players"][0]["cards"] = ["As", "Qs"]
    assert verify(sound, hand) == [
        "the history shows Qs at seat:1 slot 1, but the committed deck dealt Ks there (position 1)"
    ]
    hand["final"]["players"][0]["seat"] = 2
    assert verify(sound, hand)[0] == "the history shows As at seat:2 slot 0, a place deal_order never deals to"
    other = {"game_number": "UTH1-20261122-134501", "cards": {"dealer": [], "board": [], "player": ["As", "Ks"]}}
    assert verify(sound, other) == [
        "the history is of game 'UTH1-20261122-134501', the answer of 'NL1-20261122-134501'"
    ]


def merkle_deal(deck: list[str]) -> tuple[str, list[dict[str, Any]], list[str]]:
    """(commitment, the 52 leaves' entries, the leaves) of ``deck`` under fresh per-position salts."""
    salts = position_salts(new_salt(), len(deck))
    leaves = [leaf_of(salt, i, card) for i, (salt, card) in enumerate(zip(salts, deck, strict=True))]
    entries = [{"position": i, "card": card, "salt": salts[i]} for i, card in enumerate(deck)]
    return merkle_root_of(leaves), entries, leaves


def test_a_house_round_shows_all_52_leaves_a_full_permutation_under_the_root() -> None:
    commitment, entries, _ = merkle_deal(DECK)
    order = [{"position": 0, "card": "As", "to": "dealer", "slot": 0}, {"position": 1, "card": "Ks", "to": "board",
                                                                         "slot": 0}]  # fmt: skip
    sound = {"game_number": "UTH1-20261122-134501", "algorithm": "merkle-sha256", "commitment": commitment,
             "deck_size": 52, "leaves": entries, "deal_order": order}  # fmt: skip
    assert verify(sound) == []
    history = {"game_number": sound["game_number"], "cards": {"dealer": ["As"], "board": ["Ks"], "player": []}}
    assert verify(sound, history) == []
    assert verify(sound, {**history, "cards": {"dealer": ["Qs"], "board": [], "player": []}}) == [
        "the history shows Qs at dealer slot 0, but the committed deck dealt As there (position 0)"
    ]
    swapped = json.loads(json.dumps(sound))  # two cards traded: the root no longer matches
    swapped["leaves"][0]["card"], swapped["leaves"][1]["card"] = "Ks", "As"
    assert "the Merkle root of the leaves is not the commitment: the deck is not the one committed" in verify(swapped)
    twice = json.loads(json.dumps(sound))  # not a permutation (and not the root)
    twice["leaves"][1]["card"] = "As"
    assert "the leaves hold 52 cards, 51 of them distinct (expected the 52 cards, each once)" in verify(twice)
    assert verify({**sound, "leaves": entries[:51]})[0].startswith("the leaves hold 51 cards")
    assert verify({**sound, "deal_order": [{**order[0], "card": "Qs"}]}) == [
        "deck position 0 holds As, but deal_order gives 'Qs' to dealer (slot 0)"
    ]
    in_play = {key: sound[key] for key in ("game_number", "algorithm", "commitment", "deck_size")}
    assert verify(in_play)[0].startswith("the answer reveals no leaves")


def test_a_poker_hand_proves_each_revealed_leaf_and_nothing_else_is_needed() -> None:
    commitment, entries, leaves = merkle_deal(DECK)

    def leaf(position: int, to: str, slot: int) -> dict[str, Any]:
        return {**entries[position], "proof": proof_of(leaves, position), "to": to, "slot": slot}

    revealed = [leaf(7, "board", 0), leaf(8, "board", 1), leaf(9, "board", 2), leaf(1, "seat:3", 0)]
    yours = [leaf(0, "seat:2", 0), leaf(3, "seat:2", 1)]
    sound = {"game_number": "NL1-20261122-134501", "algorithm": "merkle-sha256", "commitment": commitment,
             "deck_size": 52, "revealed": revealed, "yours": yours}  # fmt: skip
    assert verify(sound) == []
    assert verify({**sound, "yours": [*yours, revealed[3]]}) == []  # a shown own hand is in both lists
    history = {
        "hand_id": sound["game_number"],
        "final": {
            "board": [DECK[7], DECK[8], DECK[9]],
            "players": [
                {"seat": 2, "cards": [DECK[0], DECK[3]]},
                {"seat": 3, "cards": [DECK[1], None]},
                {"seat": 1, "cards": None},
            ],
        },
    }
    assert verify(sound, history) == []
    hidden = {**sound, "yours": []}  # without the player's own leaves, their hole cards are unproven
    assert verify(hidden, history) == [
        f"the history shows {DECK[0]} at seat:2 slot 0, a place the answer proves nothing of",
        f"the history shows {DECK[3]} at seat:2 slot 1, a place the answer proves nothing of",
    ]
    forged = json.loads(json.dumps(sound))  # another card at a revealed position
    forged["revealed"][0]["card"] = DECK[40]
    assert verify(forged) == [f"revealed 0: {DECK[40]} at position 7 is not proven against the commitment"]
    moved = json.loads(json.dumps(sound))  # a true leaf claimed at another position
    moved["revealed"][0]["position"] = 6
    assert verify(moved)[0] == f"revealed 0: {DECK[7]} at position 6 is not proven against the commitment"
    short = json.loads(json.dumps(sound))
    short["yours"][0]["proof"] = short["yours"][0]["proof"][:-1]
    assert verify(short) == [f"yours 0: {DECK[0]} at position 0 is not proven against the commitment"]
    again = {**sound, "revealed": [*revealed, revealed[0]]}
    assert verify(again) == ["revealed 4: position 7 is in revealed twice"]
    clash = json.loads(json.dumps(sound))  # the same card claimed at two positions (proofs fail too)
    clash["yours"][0]["card"] = DECK[7]
    assert f"yours 0: {DECK[7]} is at positions 7 and 0" in verify(clash)
    assert verify({**sound, "revealed": "x"}) == ["revealed is not a list"]
    assert verify({**sound, "commitment": "zz"}) == [
        "the commitment is not a SHA-256 Merkle root (64 lowercase hex digits)"
    ]
    assert verify({**sound, "deck_size": 32}) == ["the deck size is 32, not 52"]


def run(*files: Path) -> subprocess.CompletedProcess[str]:
    """The script as a player runs it: isolated (-I: no project on the path), from elsewhere."""
    return subprocess.run([sys.executable, "-I", str(VERIFY), *map(str, files)], capture_output=True, text=True,
                          cwd=files[0].parent, timeout=60, check=False)  # fmt: skip


def test_the_script_runs_standalone_and_exits_0_or_1(tmp_path: Path) -> None:
    sound = tmp_path / "answer.json"
    sound.write_text(json.dumps(answer_of(DECK)))
    passed = run(sound)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert passed.stdout.startswith("deal verified: game NL1-20261122-134501")
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(dict(answer_of(DECK), deck=["Ks", "As", *DECK[2:]])))
    failed = run(forged)
    assert failed.returncode == 1
    assert failed.stdout.startswith("FAILED: the commitment is not SHA-256 of salt:deck")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    assert run(broken).returncode == 1
