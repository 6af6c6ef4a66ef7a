"""The Texas Hold'em ring-game engine (pure domain)."""
