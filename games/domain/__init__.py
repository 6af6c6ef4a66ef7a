"""Pure domain code: no Django imports, deterministic, no clock or randomness of its own."""
