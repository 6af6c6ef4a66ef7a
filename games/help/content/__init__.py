"""The help pages as data (pure: no Django). Every player-facing sentence is a
``Msg`` (``text._``): an English msgid that ``makemessages`` extracts, and its
named parameters; ``games.help.i18n`` translates and fills it."""
