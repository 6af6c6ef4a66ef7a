"""Player REST API for play: tables, bets, decisions, histories."""
