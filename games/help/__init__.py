"""In-game help pages: the rules, pay tables and return figures a player reads, in their language.

``content`` builds each page as data from the rule definitions, pay tables and the
project's math (pure); ``i18n`` translates it; ``services`` reads a table and picks
the language; ``api`` serves it (docs/help.md)."""
