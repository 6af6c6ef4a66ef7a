from django.apps import AppConfig


class GamesConfig(AppConfig):
    name = "games"
    verbose_name = "Games and tables"

    def ready(self) -> None:
        from casino.responsible_gaming import register_in_play
        from games.house import event_types  # noqa: F401  (registers the round event types)
        from games.house.models import HouseRound, TableSeat
        from games.house.projectors import HOUSE_PROJECTORS
        from games.house.realtime import staff_view as house_staff_view
        from games.house.services.verify import check_round_holds
        from games.house.store.reads import pending_forced_decisions
        from games.poker.models import PokerHand, PokerSeat
        from games.poker.projectors import POKER_PROJECTORS
        from games.poker.realtime import staff_view as poker_staff_view
        from games.poker.services.verify import check_seat_stacks
        from games.tables import pacing, presence, staff_view
        from ledger.services.projectors import register_projector
        from ledger.services.verify import register_check

        # verify_ledger checks the games' money projections too; the ledger imports no game.
        register_check("poker_seat", check_seat_stacks)
        register_check("house_hold", check_round_holds)
        # Responsible gaming checks a wager against what the player has in play at every table;
        # casino imports no game. A poker stack adds nothing: it counts in full from its buy-in.
        register_in_play("house", pending_forced_decisions)
        # What staff see of a round or hand in play (ledger.confidential): the players' presenters.
        staff_view.register()
        house_staff_view.register()
        poker_staff_view.register()
        # The shared table wing (games.tables) knows the families only through what they register here.
        pacing.register_game_numbers(HouseRound, "game_number")
        pacing.register_game_numbers(PokerHand, "hand_id")
        presence.register_seats(presence.HOUSE, TableSeat)
        presence.register_seats(presence.POKER, PokerSeat)
        # The read models written from events (rebuild_projections, verify_ledger), in dependency order.
        for projector in POKER_PROJECTORS:
            register_projector(projector)
        for projector in HOUSE_PROJECTORS:  # rounds before their players' rows (which refer to them)
            register_projector(projector)
