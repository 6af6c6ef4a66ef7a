"""The pure hold'em poker engine: rules, events, the hand aggregate, button, PHH (no Django)."""
