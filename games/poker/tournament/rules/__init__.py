"""Pure tournament rules: levels, payouts, seating, balancing, eliminations (no framework)."""
