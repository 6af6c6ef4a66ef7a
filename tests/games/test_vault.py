"""Face-down cards at rest (games.cards.vault, games.tables.dealkeys) and the per-position
deck commitment (tools.verify_deal), from issue #33 and docs/fairness.md."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets

import pytest
from django.test import override_settings

from games.cards.shuffle import SecureRandomSource
from games.cards.vault import (
    CardKeyError,
    CardKeyring,
    key_id,
    keyring_from_config,
    new_data_key,
    open_for_player,
    open_json,
    position_salts,
    seal_for_player,
    seal_json,
    unwrap_key,
    wrap_key,
)
from games.tables.dealkeys import DealKey, DealKeyMissing, card_keyring, deal_key, new_deal_key, shred_deal_key
from games.tables.fairness import DeckMismatch, open_committed_deck, opened_from_reveal, reveal, shuffle_and_commit
from ledger.canonical import merkle_root
from tools.verify_deal import DECK_SIZE, leaf_of, merkle_root_of, proof_of, root_from_proof


def _ring() -> CardKeyring:
    return CardKeyring(secrets.token_bytes(32))


def test_a_wrapped_data_key_opens_only_with_its_card_key_and_deal():
    ring, data_key = _ring(), new_data_key()
    wrapped = wrap_key(ring, data_key, aad="poker-hand:7")
    assert wrapped["kid"] == key_id(ring.current)
    assert data_key.hex() not in str(wrapped)
    assert unwrap_key(ring, wrapped, aad="poker-hand:7") == data_key
    with pytest.raises(CardKeyError):
        unwrap_key(ring, wrapped, aad="poker-hand:8")  # moved to another deal
    with pytest.raises(CardKeyError):
        unwrap_key(_ring(), wrapped, aad="poker-hand:7")  # another card key: unknown kid


def test_a_retired_card_key_still_opens_what_it_wrapped_and_never_wraps_anew():
    old = _ring()
    wrapped = wrap_key(old, b"k" * 32, aad="house-round:1")
    rotated = CardKeyring(secrets.token_bytes(32), retired=(old.current,))
    assert unwrap_key(rotated, wrapped, aad="house-round:1") == b"k" * 32
    assert wrap_key(rotated, b"k" * 32, aad="house-round:1")["kid"] == rotated.current_id


def test_a_tampered_ciphertext_or_nonce_does_not_open():
    key = new_data_key()
    sealed = seal_json(key, {"deck": ["As", "Kd"]}, aad="deck:x")
    assert open_json(key, sealed, aad="deck:x") == {"deck": ["As", "Kd"]}
    assert '"As"' not in json.dumps(sealed)
    ct = bytearray(base64.b64decode(sealed["ct"]))
    ct[0] ^= 1
    forged = dict(sealed, ct=base64.b64encode(bytes(ct)).decode())
    with pytest.raises(CardKeyError):
        open_json(key, forged, aad="deck:x")
    with pytest.raises(CardKeyError):
        open_json(key, dict(sealed, nonce="not base64!"), aad="deck:x")
    with pytest.raises(CardKeyError):
        open_json(key, dict(sealed, scheme="plain"), aad="deck:x")


def test_a_players_cards_open_for_that_player_only():
    ring = _ring()
    sealed = seal_for_player(ring, 41, {"cards": ["Ah", "Ad"]}, aad="hand:3:seat:2")
    assert open_for_player(ring, 41, sealed, aad="hand:3:seat:2") == {"cards": ["Ah", "Ad"]}
    with pytest.raises(CardKeyError):
        open_for_player(ring, 42, sealed, aad="hand:3:seat:2")
    with pytest.raises(CardKeyError):
        open_for_player(ring, 41, sealed, aad="hand:4:seat:2")


@pytest.mark.parametrize(
    ("current", "retired", "message"),
    [("", (), "not set"), ("ab", (), "64 hexadecimal"), ("00" * 32, ("00" * 32,), "also listed as retired")],
)
def test_a_misconfigured_card_key_ring_is_refused(current, retired, message):
    with pytest.raises(ValueError, match=message):
        keyring_from_config(current, retired)


def test_position_salts_are_distinct_and_derived_from_the_master_salt():
    master = secrets.token_hex(32)
    salts = position_salts(master, DECK_SIZE)
    assert len(set(salts)) == DECK_SIZE
    assert all(len(s) == 64 for s in salts)
    assert salts == position_salts(master, DECK_SIZE)
    assert salts != position_salts(secrets.token_hex(32), DECK_SIZE)


def test_the_commitment_is_the_merkle_root_of_the_position_leaves_as_the_rule_says():
    """docs/fairness.md: leaf_i = SHA-256("<salt_i>:<i>:<card>"), root over the 52 in order;
    the seals' tree (ledger.canonical.merkle_root) is the same tree."""
    key = new_data_key()
    committed = shuffle_and_commit(rng=SecureRandomSource(), key=key, deal_id="t:1")
    opened = open_committed_deck(
        commitment=committed.commitment, sealed_deck=committed.sealed_deck, key=key, deal_id="t:1"
    )
    salts = opened.salts()
    leaves = [hashlib.sha256(f"{salts[i]}:{i}:{card}".encode()).hexdigest() for i, card in enumerate(opened.deck)]
    assert leaves == [leaf_of(salts[i], i, c) for i, c in enumerate(opened.deck)]
    assert committed.commitment == merkle_root(leaves) == merkle_root_of(leaves)
    assert len(set(opened.deck)) == len(opened.deck) == DECK_SIZE
    stored = json.dumps(committed.sealed_deck)
    assert not [card for card in opened.deck if f'"{card}"' in stored]


def test_a_revealed_position_proves_its_card_and_no_other():
    key = new_data_key()
    committed = shuffle_and_commit(rng=SecureRandomSource(), key=key, deal_id="t:2")
    opened = open_committed_deck(
        commitment=committed.commitment, sealed_deck=committed.sealed_deck, key=key, deal_id="t:2"
    )
    for entry in reveal(opened, [0, 5, 51]):
        leaf = leaf_of(entry["salt"], entry["position"], entry["card"])
        assert root_from_proof(leaf, entry["position"], DECK_SIZE, entry["proof"]) == committed.commitment
        other = next(c for c in opened.deck if c != entry["card"])
        forged = leaf_of(entry["salt"], entry["position"], other)
        assert root_from_proof(forged, entry["position"], DECK_SIZE, entry["proof"]) != committed.commitment
        moved = (entry["position"] + 1) % DECK_SIZE
        assert root_from_proof(leaf, moved, DECK_SIZE, entry["proof"]) != committed.commitment
        assert root_from_proof(leaf, entry["position"], DECK_SIZE, entry["proof"][:-1]) is None


def test_a_proof_is_checked_for_every_tree_size_and_position():
    for size in (1, 2, 3, 7, 52):
        leaves = [secrets.token_hex(32) for _ in range(size)]
        root = merkle_root_of(leaves)
        for index in range(size):
            assert root_from_proof(leaves[index], index, size, proof_of(leaves, index)) == root


def test_the_wrong_key_or_deal_or_a_swapped_commitment_deals_nothing():
    key = new_data_key()
    committed = shuffle_and_commit(rng=SecureRandomSource(), key=key, deal_id="t:3")
    other = shuffle_and_commit(rng=SecureRandomSource(), key=key, deal_id="t:3")
    with pytest.raises(CardKeyError):
        open_committed_deck(
            commitment=committed.commitment, sealed_deck=committed.sealed_deck, key=new_data_key(), deal_id="t:3"
        )
    with pytest.raises(CardKeyError):
        open_committed_deck(commitment=committed.commitment, sealed_deck=committed.sealed_deck, key=key, deal_id="t:4")
    with pytest.raises(DeckMismatch):
        open_committed_deck(commitment=other.commitment, sealed_deck=committed.sealed_deck, key=key, deal_id="t:3")
    with pytest.raises(DeckMismatch):
        open_committed_deck(commitment=committed.commitment, sealed_deck=committed.sealed_deck, key=None, deal_id="t:3")


def test_a_deck_revealed_at_the_end_is_checked_against_the_commitment():
    key = new_data_key()
    committed = shuffle_and_commit(rng=SecureRandomSource(), key=key, deal_id="t:5")
    opened = open_committed_deck(
        commitment=committed.commitment, sealed_deck=committed.sealed_deck, key=key, deal_id="t:5"
    )
    assert opened_from_reveal(commitment=committed.commitment, salt=opened.salt or "", deck=opened.deck) == opened
    swapped = [opened.deck[1], opened.deck[0], *opened.deck[2:]]
    with pytest.raises(DeckMismatch):
        opened_from_reveal(commitment=committed.commitment, salt=opened.salt or "", deck=swapped)


@pytest.mark.django_db
def test_a_deal_key_is_stored_wrapped_and_is_gone_once_shredded():
    key = new_deal_key(deal_id="poker-hand:99")
    row = DealKey.objects.get(deal_id="poker-hand:99")
    assert key.hex() not in str(row.wrapped)
    assert row.wrapped["kid"] == card_keyring().current_id
    assert deal_key(deal_id="poker-hand:99") == key
    assert shred_deal_key(deal_id="poker-hand:99") is True
    assert shred_deal_key(deal_id="poker-hand:99") is False
    with pytest.raises(DealKeyMissing):
        deal_key(deal_id="poker-hand:99")


@pytest.mark.django_db
def test_a_deal_key_wrapped_before_a_rotation_opens_while_its_old_card_key_is_retired():
    old, new = secrets.token_hex(32), secrets.token_hex(32)
    with override_settings(CASINO_CARD_KEY=old, CASINO_CARD_KEYS_RETIRED=[]):
        key = new_deal_key(deal_id="house-round:5")
    with override_settings(CASINO_CARD_KEY=new, CASINO_CARD_KEYS_RETIRED=[old]):
        assert deal_key(deal_id="house-round:5") == key
    with override_settings(CASINO_CARD_KEY=new, CASINO_CARD_KEYS_RETIRED=[]), pytest.raises(CardKeyError):
        deal_key(deal_id="house-round:5")
