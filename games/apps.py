from django.apps import AppConfig


class GamesConfig(AppConfig):
    name = "games"
    verbose_name = "Games and tables"

    def ready(self) -> None:
        from games.house import event_types  # noqa: F401  (registers the round event types)
        from games.house.projectors import HOUSE_PROJECTORS
        from games.house.services.verify import check_round_holds
        from games.poker.projectors import POKER_PROJECTORS
        from games.poker.services.verify import check_seat_stacks
        from games.tables import staff_view
        from ledger.services.projectors import register_projector
        from ledger.services.verify import register_check

        # verify_ledger checks the games' money projections too; the ledger imports no game.
        register_check("poker_seat", check_seat_stacks)
        register_check("house_hold", check_round_holds)
        # What staff see of a round or hand in play (ledger.confidential): the players' presenters.
        staff_view.register()
        # The read models written from events (rebuild_projections, verify_ledger), in dependency order.
        for projector in POKER_PROJECTORS:
            register_projector(projector)
        for projector in HOUSE_PROJECTORS:  # rounds before their players' rows (which refer to them)
            register_projector(projector)
