"""Cards, shuffle, hand evaluation, the games' rules and rounds, tables and play API."""
