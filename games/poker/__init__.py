"""The poker ring game: the pure engine, its services, faces (API, consumers, admin, tasks) and PokerKit tooling."""
