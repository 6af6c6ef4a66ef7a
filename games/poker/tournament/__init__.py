"""Poker tournaments' pure domain (issue #23; no Django): payouts, eliminations,
levels, seating and table balancing. The services drive it; the engine plays the hands."""
