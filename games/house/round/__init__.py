"""A house-banked round as a pure event-sourced aggregate (RULES.md, "Live
house-banked tables"; docs/rounds.md). No Django, no clock, no randomness.

By concern:

- ``events``: event type names, schema versions, one typed event class per type
  with its (de)serialiser, and the ``Event`` envelope the store appends;
- ``errors``: the refusals, one class per meaning, each with its public code;
- ``state``: ``RoundConfig``, ``RoundState``, ``PlayerState`` and their folds
  (``apply_round``, ``apply_player``, ``replay_*``);
- ``dealer``: the dealer's steps (open, close betting, advance, showdown, pause,
  resume, void);
- ``commands``: the player's commands (chips, undo, clear, repeat, double,
  decisions) and ``offered_options``.

Callers import from the module that defines a name
(``from games.house.round.dealer import decide_open``): one home per name.
"""
