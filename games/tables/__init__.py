"""Live-table machinery both game families share: the table clock, the event feed,
presence, the websocket pieces and commands, the AsyncAPI document, provably-fair
deals and their keys, the staff view of a deal in play, and the table chat."""
