"""The house-banked games (UTH, Casino Hold'em, Xtreme): rules as data, the round aggregate, services, faces."""
