"""Error tracking with Sentry (docs/live.md, "Error tracking"): on only when
``SENTRY_DSN`` is set (``casino.settings`` calls ``init_sentry``), with the
Django and Celery integrations.

Nothing secret leaves the process, whatever an exception carries:

- no local variables of stack frames (``include_local_variables=False``: a
  frame may hold a deck, a card key, a password) and no personal data the SDK
  would add (``send_default_pii=False``: cookies, users, client addresses);
- every event and breadcrumb goes through ``scrub`` before it is sent: the
  value under any key naming a secret (``SENSITIVE_KEYS``: passwords, tokens,
  tickets, cookies, Authorization, cards, decks, seeds, keys...) is replaced by
  ``[Filtered]``, at any depth (request headers and bodies, extra data,
  contexts, breadcrumb data), and in every string left, card codes (``As``,
  ``10h``), long token-like words and ``name=value`` pairs of those keys are
  masked, so a card or token interpolated into an exception's message or a log
  line does not get through either.
"""

from __future__ import annotations

import re
from typing import Any

FILTERED = "[Filtered]"
#: Key fragments (lower case) whose values are never sent: a key containing one is filtered.
SENSITIVE_KEYS = (
    "password", "passwd", "secret", "token", "ticket", "authorization", "cookie", "session", "csrf",
    "api_key", "apikey", "signature", "card", "deck", "shoe", "hole", "seed", "key", "dsn", "credential",
)  # fmt: skip
#: A card as the game writes it (rank then suit: ``As``, ``Td``, ``10h``).
_CARD = re.compile(r"(?<![A-Za-z0-9])(?:10|[2-9TJQKA])[shdc](?![A-Za-z0-9])")
#: A word long enough to be a token, a ticket or a key: 20 characters with a digit, or any 32 (knox
#: tokens: 64 hex digits; tickets: 43 url-safe characters); a UUID (a round, a hand) is left as it is.
_TOKENISH = re.compile(
    r"(?<![A-Za-z0-9_\-])(?:(?=[A-Za-z_\-]*[0-9])[A-Za-z0-9_\-]{20,}|[A-Za-z0-9_\-]{32,})(?![A-Za-z0-9_\-])"
)
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
#: Where strings are code, not data: a stack trace's frames (file names, functions, source lines).
_CODE_KEYS = frozenset({"stacktrace", "frames", "raw_stacktrace"})
#: ``password=hunter2``, ``"token": "abc"``, ``Authorization: Bearer x``: the value after a sensitive name.
_PAIR = re.compile(
    r"(?i)((?:"
    + "|".join(SENSITIVE_KEYS)
    + r")[A-Za-z_]*['\"]?\s*[=:]\s*['\"]?)(?:Bearer\s+|Token\s+)?[^\s'\",;&)}\]]+"
)


def sensitive(key: object) -> bool:
    """Whether a mapping key names something never to send."""
    name = str(key).lower()
    return any(fragment in name for fragment in SENSITIVE_KEYS)


def scrub_text(text: str) -> str:
    """``text`` with the values of ``name=value`` pairs of sensitive names,
    card codes and token-like words masked."""
    text = _PAIR.sub(lambda match: match.group(1) + FILTERED, text)
    text = _TOKENISH.sub(lambda match: match.group(0) if _UUID.fullmatch(match.group(0)) else FILTERED, text)
    return _CARD.sub("[card]", text)


def scrub(value: Any, *, text: bool = True) -> Any:
    """``value`` (an event, a breadcrumb, or any part of one) with every secret
    masked (module docstring); ``text=False``: strings are code (a stack
    trace's), only the values of sensitive keys are masked."""
    if isinstance(value, dict):
        return {
            k: FILTERED if sensitive(k) and v not in (None, "") else scrub(v, text=text and k not in _CODE_KEYS)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        # Sentry writes headers as [name, value] pairs in some places.
        if len(value) == 2 and isinstance(value[0], str) and sensitive(value[0]):
            return [value[0], FILTERED]
        return [scrub(item, text=text) for item in value]
    if isinstance(value, str) and text:
        return scrub_text(value)
    return value


def before_send(event: dict[str, Any], hint: dict[str, Any]) -> dict[str, Any]:
    """Sentry's ``before_send``: the event, scrubbed."""
    scrubbed: dict[str, Any] = scrub(event)
    return scrubbed


def before_breadcrumb(crumb: dict[str, Any], hint: dict[str, Any]) -> dict[str, Any]:
    """Sentry's ``before_breadcrumb``: the breadcrumb, scrubbed."""
    scrubbed: dict[str, Any] = scrub(crumb)
    return scrubbed


def init_sentry(*, dsn: str, environment: str, release: str, traces_sample_rate: float = 0.0) -> None:
    """Start the Sentry SDK in this process (Django and Celery integrations), scrubbed as the module says."""
    import sentry_sdk
    from sentry_sdk.integrations.celery import CeleryIntegration
    from sentry_sdk.integrations.django import DjangoIntegration

    sentry_sdk.init(
        dsn=dsn,
        environment=environment,
        release=f"casino@{release}",
        integrations=[DjangoIntegration(), CeleryIntegration()],
        send_default_pii=False,
        include_local_variables=False,
        max_request_body_size="small",
        before_send=before_send,  # type: ignore[arg-type]
        before_breadcrumb=before_breadcrumb,
        traces_sample_rate=traces_sample_rate,
    )
