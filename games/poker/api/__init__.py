"""The poker REST API: tables, seats, actions, tournaments (mounted by ``games.urls``)."""
