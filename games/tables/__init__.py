"""Live-table machinery both game families share: the table clock, the event feed,
presence, the websocket pieces and commands, the REST pieces and the operator
controls' common part, the AsyncAPI document, provably-fair deals and their keys,
the staff view of a deal in play, and the table chat.

It imports neither family (``tests/test_architecture.py``): a family registers
what this code needs of it (its seats, its game-numbered rows, its staff view,
its feed translators) at start-up, in ``games.apps``."""
