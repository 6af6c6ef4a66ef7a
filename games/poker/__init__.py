"""Poker tooling around the pure engine (pokerkit bridge, differential play)."""
