"""Cards, the secure shuffle, hand evaluation (scalar and batch) and shuffle statistics: pure, no Django."""
