"""The poker websocket: the table consumer and the presenters of what each viewer sees."""
