"""Game math of the house-banked games: strategy, training, simulation, exact RTP (pure, no Django)."""
