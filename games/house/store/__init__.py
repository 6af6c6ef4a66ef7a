"""The house rounds' store: the only SQL and ``connection.vendor`` branches for
house rounds, one module per concern.

The lean command path (a bet, a decision; hot, prepared statements):

- ``commands``: one player command's read side (``read_command``: key claimed,
  round share-locked, the player's row locked, one round trip) and last write
  (``save_player``; a decision's ``save_decision`` reads its tick too), sent in
  one pipeline with the ledger's statement (``commit.stage``), the per-seat
  checks and ``lock_leaving_player``;
- ``batches``: the same for a batch of commands at one table
  (``read_commands``, ``saving_commands``, ``ticks_and_waiting``,
  ``seats_and_bettors``);
- ``cache``: this process's round and player states, so a command neither
  replays the round nor parses its row again.

The rest:

- ``commit``: a round step's events, money and projections in the caller's
  transaction (dealer steps and player commands alike);
- ``rows``: the player-projection rows: their state document
  (``state_to_json``/``state_from_json``), ``project_player``, and their bulk
  reads and writes (``load_players``, ``load_player_rows``, ``save_rows``);
- ``reads``: the settlement's wallets and stream heads, and the wagers in play
  with their pending holds (``verify_ledger``);
- ``streams``: the streams' names, ``iso`` and ``load_round``.

Imports point one way: ``games.house.projectors`` uses ``rows``; ``commit``
uses the projectors. This package's own namespace names the streams only, for
the apps that read a round's streams by name; everything else is imported
from its module.
"""

from games.house.store.streams import player_stream, player_stream_prefix, round_stream

__all__ = ["player_stream", "player_stream_prefix", "round_stream"]
