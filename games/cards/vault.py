"""Face-down cards at rest: AES-GCM sealing under keys the database never holds (pure).

docs/fairness.md ("Face-down cards at rest") is the contract. Three kinds of key:

- the **card key** (``CASINO_CARD_KEY``, 32 bytes as 64 hex digits, from the
  environment; retired keys stay readable through ``CASINO_CARD_KEYS_RETIRED``):
  it only wraps other keys and derives the players' keys, and is never stored;
- a **deal key** per house round or poker hand: 32 random bytes, stored only
  wrapped by the card key (``wrap_key``), destroyed when the deal is over
  (crypto-shredding: whatever it sealed can no longer be read by anyone);
- a **player key** per player, derived from the card key (HKDF-SHA256,
  ``player_key``): it seals a player's own hole cards for that player's history.

Every sealed value is a JSON object ``{"scheme", "kid", "nonce", "ct"}``:
``kid`` names the card key (``key_id``) that wrapped or derived the key, ``nonce``
the 12-byte AES-GCM nonce and ``ct`` the ciphertext with its tag (both base64).
The associated data binds a ciphertext to its place (a deal id, a player and a
hand), so one cannot be moved to another deal or another player unseen.

Nothing here reads settings or the database: the keys are passed in
(``games.tables.dealkeys`` builds the key ring from the settings).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

SCHEME = "aes-256-gcm"
KEY_BYTES = 32
NONCE_BYTES = 12


class CardKeyError(ValueError):
    """A sealed value that cannot be opened: an unknown key id, a wrong key, a
    tampered ciphertext or associated data that does not match."""


def key_id(card_key: bytes) -> str:
    """A card key's public name: the first 16 hex digits of SHA-256 over a label and the key."""
    return hashlib.sha256(b"casino-card-key-id:" + card_key).hexdigest()[:16]


def parse_card_key(text: str) -> bytes:
    """A card key from its configured form, 64 hexadecimal digits (``ValueError`` otherwise)."""
    try:
        key = bytes.fromhex(text.strip())
    except ValueError as exc:
        raise ValueError("a card key is 64 hexadecimal digits") from exc
    if len(key) != KEY_BYTES:
        raise ValueError("a card key is 64 hexadecimal digits")
    return key


@dataclass(frozen=True)
class CardKeyring:
    """The current card key (new seals) and the retired ones (still opened)."""

    current: bytes
    retired: tuple[bytes, ...] = ()

    def __post_init__(self) -> None:
        for key in (self.current, *self.retired):
            if len(key) != KEY_BYTES:
                raise ValueError("a card key is 32 bytes")

    @property
    def current_id(self) -> str:
        return key_id(self.current)

    def by_id(self, kid: str) -> bytes:
        for key in (self.current, *self.retired):
            if key_id(key) == kid:
                return key
        raise CardKeyError(f"no card key with id {kid!r} (retired too early?)")


def new_data_key() -> bytes:
    """32 bytes from the operating system's secure generator."""
    return os.urandom(KEY_BYTES)


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _unb64(text: Any) -> bytes:
    if not isinstance(text, str):
        raise CardKeyError("a sealed value's nonce and ciphertext are base64 text")
    try:
        return base64.b64decode(text, validate=True)
    except ValueError as exc:
        raise CardKeyError("a sealed value's nonce or ciphertext is not base64") from exc


def _encrypt(key: bytes, kid: str, plaintext: bytes, aad: str) -> dict[str, str]:
    nonce = os.urandom(NONCE_BYTES)
    return {
        "scheme": SCHEME,
        "kid": kid,
        "nonce": _b64(nonce),
        "ct": _b64(AESGCM(key).encrypt(nonce, plaintext, aad.encode())),
    }


def _decrypt(key: bytes, sealed: Mapping[str, Any], aad: str) -> bytes:
    if sealed.get("scheme") != SCHEME:
        raise CardKeyError(f"unknown sealing scheme {sealed.get('scheme')!r}")
    try:
        return AESGCM(key).decrypt(_unb64(sealed.get("nonce")), _unb64(sealed.get("ct")), aad.encode())
    except InvalidTag as exc:
        raise CardKeyError("the sealed value does not open with this key and associated data") from exc


def wrap_key(ring: CardKeyring, data_key: bytes, *, aad: str) -> dict[str, str]:
    """``data_key`` sealed under the current card key, bound to ``aad`` (the deal id)."""
    return _encrypt(ring.current, ring.current_id, data_key, "wrap:" + aad)


def unwrap_key(ring: CardKeyring, wrapped: Mapping[str, Any], *, aad: str) -> bytes:
    """The data key ``wrap_key`` sealed (any key of the ring that it names)."""
    return _decrypt(ring.by_id(str(wrapped.get("kid"))), wrapped, "wrap:" + aad)


def seal_json(key: bytes, value: Any, *, aad: str, kid: str = "deal") -> dict[str, str]:
    """``value`` (JSON) sealed under ``key`` (a deal key: ``kid`` ``"deal"``; a player key: its card key's id)."""
    return _encrypt(key, kid, json.dumps(value, separators=(",", ":"), sort_keys=True).encode(), aad)


def open_json(key: bytes, sealed: Mapping[str, Any], *, aad: str) -> Any:
    """The value ``seal_json`` sealed; ``CardKeyError`` if it does not open."""
    return json.loads(_decrypt(key, sealed, aad))


def player_key(card_key: bytes, player_id: int | str) -> bytes:
    """The key sealing ``player_id``'s own cards: HKDF-SHA256 of the card key (no salt),
    info ``casino-player-cards:v1:<player id>``."""
    info = f"casino-player-cards:v1:{player_id}".encode()
    return HKDF(algorithm=hashes.SHA256(), length=KEY_BYTES, salt=None, info=info).derive(card_key)


def seal_for_player(ring: CardKeyring, player_id: int | str, value: Any, *, aad: str) -> dict[str, str]:
    """``value`` sealed under the player's key from the current card key."""
    return seal_json(player_key(ring.current, player_id), value, aad=f"player:{player_id}:{aad}", kid=ring.current_id)


def open_for_player(ring: CardKeyring, player_id: int | str, sealed: Mapping[str, Any], *, aad: str) -> Any:
    """What ``seal_for_player`` sealed for ``player_id`` (``CardKeyError`` for anyone else's)."""
    key = player_key(ring.by_id(str(sealed.get("kid"))), player_id)
    return open_json(key, sealed, aad=f"player:{player_id}:{aad}")


def is_sealed(value: Any) -> bool:
    """Whether ``value`` has the shape of a sealed value."""
    return isinstance(value, Mapping) and value.get("scheme") == SCHEME and "ct" in value


def position_salts(master_salt: str, size: int) -> list[str]:
    """Each deck position's own salt: HMAC-SHA256(master salt, position) in hex. Revealing
    one position's salt reveals nothing of the others' (nor of the master salt)."""
    master = bytes.fromhex(master_salt)
    return [hmac.new(master, str(position).encode(), hashlib.sha256).hexdigest() for position in range(size)]


def keyring_from_config(current: str, retired: Sequence[str] = ()) -> CardKeyring:
    """The key ring from the configured hex keys (``ValueError`` naming what is wrong:
    no current key, not 64 hex digits, a retired key equal to the current one)."""
    if not current:
        raise ValueError("the card key is not set")
    ring = CardKeyring(parse_card_key(current), tuple(parse_card_key(key) for key in retired))
    if ring.current in ring.retired:
        raise ValueError("the current card key is also listed as retired")
    return ring
