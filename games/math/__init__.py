"""Game math: exact RTP by enumeration and main-game simulation (pure, NumPy)."""
