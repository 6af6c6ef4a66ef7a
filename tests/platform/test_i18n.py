"""English and French (issue 37, part 5; RULES.md: "error codes are the same in every language").

- Every refusal code the code base can raise is either in the player catalog
  (``casino.i18n.PLAYER_MESSAGES``) or declared staff-only; every catalog
  sentence and settings label has a French translation that is neither empty
  nor fuzzy, and the committed ``.mo`` is the ``.po`` compiled.
- A player is answered in their profile's language, else ``Accept-Language``'s;
  the code and details never change, the English message is the one raised.
"""

from __future__ import annotations

import ast
import gettext
import pathlib
import re
from typing import Any

import pytest
from babel.messages.pofile import read_po
from django.contrib.auth import get_user_model
from django.utils import translation
from rest_framework import exceptions as drf_exceptions
from rest_framework.test import APIClient

from casino.auth import issue_token
from casino.i18n import (
    NOTICE_MESSAGES,
    PLAYER_MESSAGES,
    STAFF_CODES,
    header_language,
    localized_frame,
    localized_message,
    player_language,
)
from casino.models import PlayerProfile
from casino.players import SETTINGS, TAB_LABELS, setting_field

ROOT = pathlib.Path(__file__).resolve().parents[2]
PO = ROOT / "casino" / "locale" / "fr" / "LC_MESSAGES" / "django.po"
MO = PO.with_suffix(".mo")
SOURCE_PACKAGES = ("casino", "games", "ledger", "compliance")
CODE = re.compile(r"^[a-z][a-z0-9_]*$")


def raised_codes() -> dict[str, str]:
    """Every refusal code written in the code base, with a file that writes it: a
    ``DomainError`` subclass's ``code=``, a ``code="..."`` keyword of a call (a
    refusal raised with its code), and an error frame or body literal with its
    ``"code"`` and ``"message"``."""
    found: dict[str, str] = {}
    for package in SOURCE_PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                literals: list[Any] = []
                if isinstance(node, ast.ClassDef | ast.Call):
                    literals = [kw.value for kw in node.keywords if kw.arg == "code"]
                elif isinstance(node, ast.Dict):
                    keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
                    if {"code", "message"} <= keys:
                        literals = [v for k, v in zip(node.keys, node.values, strict=True)
                                    if isinstance(k, ast.Constant) and k.value == "code"]  # fmt: skip
                for value in literals:
                    if isinstance(value, ast.Constant) and isinstance(value.value, str) and CODE.match(value.value):
                        found.setdefault(value.value, str(path.relative_to(ROOT)))
    return found


def drf_codes() -> set[str]:
    """The codes DRF's own refusals carry (a validation error is rendered ``invalid_request``)."""
    classes = [drf_exceptions.APIException]
    codes: set[str] = set()
    while classes:
        cls = classes.pop()
        classes.extend(cls.__subclasses__())
        if cls.__module__ == "rest_framework.exceptions" and cls not in (
            drf_exceptions.APIException,
            drf_exceptions.ValidationError,
        ):
            codes.add(str(cls.default_code))
    return codes


def french_catalog() -> dict[str, Any]:
    """The French ``.po``'s messages by msgid (a plural message by its singular)."""
    with PO.open("rb") as po:
        return {msgid(message.id): message for message in read_po(po) if message.id}


def msgid(message_id: str | tuple[str, ...] | list[str]) -> str:
    return str(message_id[0]) if isinstance(message_id, tuple | list) else str(message_id)


def translated_forms(message: Any) -> dict[Any, str]:
    """A message's translations as a ``.mo`` holds them: ``msgid: msgstr``, or ``(msgid, n): msgstr[n]``."""
    if isinstance(message.string, tuple | list):
        return {(msgid(message.id), n): form for n, form in enumerate(message.string) if form}
    return {message.id: message.string} if message.string else {}


def settings_labels() -> list[str]:
    """The English settings labels a panel shows: names, help, choices (languages are named in their own)."""
    labels = [str(label) for label in TAB_LABELS.values()]
    for setting in SETTINGS:
        field = setting_field(setting.name)
        labels += [str(field.verbose_name), str(field.help_text)]
        if setting.name != "language":
            labels += [str(label) for _value, label in field.choices or ()]
    return labels


# --- the catalog is complete -----------------------------------------------------------------------


def test_every_refusal_code_is_in_the_player_catalog_or_staff_only():
    codes = raised_codes()
    assert len(codes) > 150  # the scan sees the code base's refusals
    unlisted = {code: path for code, path in codes.items() if code not in PLAYER_MESSAGES and code not in STAFF_CODES}
    assert unlisted == {}, "add each to casino/i18n.py (PLAYER_MESSAGES or STAFF_CODES): docs/players.md"
    assert set(PLAYER_MESSAGES) & STAFF_CODES == set()


def test_drf_refusal_codes_are_in_the_player_catalog():
    assert drf_codes() - set(PLAYER_MESSAGES) == set()
    assert "invalid_request" in PLAYER_MESSAGES


def test_every_player_facing_string_has_a_french_translation_neither_empty_nor_fuzzy():
    catalog = french_catalog()
    refusals = [str(sentence) for sentence in PLAYER_MESSAGES.values()]
    wanted = refusals + settings_labels()
    assert [text for text in wanted if text not in catalog] == [], "run `make messages`"
    # Every message of the .po (the notices' plural ones too), each form translated, none fuzzy.
    plural_forms = 2
    untranslated = [
        text
        for text, message in catalog.items()
        if len(translated_forms(message)) != (plural_forms if message.pluralizable else 1)
    ]
    assert untranslated == [], "translate them in casino/locale/fr/LC_MESSAGES/django.po, then `make messages`"
    assert [text for text, message in catalog.items() if message.fuzzy] == []
    # No refusal sentence carries a value: the values are in the refusal's details, the same in every language.
    assert [text for text in refusals if "%" in text or "{" in text] == []


def test_the_committed_mo_is_the_po_compiled():
    with MO.open("rb") as mo:
        compiled = {key: value for key, value in gettext.GNUTranslations(mo)._catalog.items() if key}  # type: ignore[attr-defined]
    catalog = french_catalog()
    assert not [text for text, message in catalog.items() if message.fuzzy]
    translated = {key: form for message in catalog.values() for key, form in translated_forms(message).items()}
    assert compiled == translated, "run `make messages` to compile casino/locale"


def test_each_catalog_sentence_renders_in_french_through_django_and_english_is_as_raised():
    catalog = french_catalog()
    for code, sentence in PLAYER_MESSAGES.items():
        french = localized_message(code, "as raised", "fr")
        assert french == catalog[str(sentence)].string, code
        assert french != "as raised"
        assert localized_message(code, "as raised", "en") == "as raised"
        assert localized_message(code, "as raised", "fr-CA") == french
    # A staff-only code stays as raised, in every language.
    assert localized_message("seal_refused", "as raised", "fr") == "as raised"


def test_a_reality_check_notice_is_translated_with_its_minutes():
    assert set(NOTICE_MESSAGES) == {"reality_check"}  # the one kind of notice (casino.responsible_gaming)
    for minutes, french in ((1, "Vous jouez depuis 1 minute."), (90, "Vous jouez depuis 90 minutes.")):
        notice = {"kind": "reality_check", "elapsed_minutes": minutes, "net_loss": 500, "currency": "EUR",
                  "message": f"You have been playing for {minutes} minutes."}  # fmt: skip
        frame = {"type": "notice", "notice": notice}
        assert localized_frame(frame, "fr") == {"type": "notice", "notice": {**notice, "message": french}}
        assert localized_frame(frame, "en") is frame
    other = {"type": "notice", "notice": {"kind": "something_new", "message": "as sent"}}
    assert localized_frame(other, "fr") == other


def test_an_error_frame_is_translated_and_every_other_frame_left_alone():
    error = {"type": "error", "id": "k1", "code": "betting_closed", "message": "Bets are accepted only ...",
             "details": {"deadline": "x"}}  # fmt: skip
    french = localized_frame(error, "fr")
    assert french == {**error, "message": "Les mises sont fermées."}
    assert localized_frame(error, "en") is error
    assert localized_frame(error, None) is error
    snapshot = {"type": "snapshot", "message": "not an error"}
    assert localized_frame(snapshot, "fr") is snapshot
    # A docstring's markup never reaches a player over the websocket either (as over REST).
    engineers = {"type": "error", "code": "invalid_amount", "message": "``amount`` must be ...", "details": {}}
    assert localized_frame(engineers, "en")["message"] == str(PLAYER_MESSAGES["invalid_amount"])


# --- the language of an answer ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "language"),
    [("fr", "fr"), ("fr-CA", "fr"), ("de-DE,fr;q=0.5,en;q=0.4", "fr"), ("en-GB,fr;q=0.9", "en"), ("de", "en"),
     ("*", "en"), ("", "en"), ("xx-" + "y" * 500, "en")],
)  # fmt: skip
def test_accept_language_picks_english_or_french(header, language):
    assert header_language(header) == language


@pytest.mark.django_db
def test_a_websocket_is_answered_in_the_profiles_language_else_the_handshakes(player):
    """What ``JSONFrames.admit`` reads for the connection (the frames: tests/house/live/test_ws_commands.py)."""
    assert player_language(user_id=player.pk, accept_language="fr") == "fr"
    PlayerProfile.objects.create(user=player, language="en")
    assert player_language(user_id=player.pk, accept_language="fr") == "en"
    PlayerProfile.objects.filter(user=player).update(language="")
    assert player_language(user_id=player.pk, accept_language="fr-FR") == "fr"
    assert player_language(user_id=None, accept_language="") == "en"


@pytest.fixture
def player():
    return get_user_model().objects.create_user("amelie", password="correct horse battery")


def client_of(user: Any, **headers: str) -> APIClient:
    client = APIClient(headers=headers)
    client.credentials(HTTP_AUTHORIZATION=f"Token {issue_token(user=user)}")
    return client


@pytest.mark.django_db
@pytest.mark.parametrize("accept", ["fr", "fr-FR,fr;q=0.9,en;q=0.8", "de-DE,fr;q=0.5"])
def test_an_anonymous_french_caller_gets_the_login_refusal_in_french_with_the_same_code(player, accept):
    body = {"username": "amelie", "password": "wrong"}
    english = APIClient().post("/api/auth/token/", body, format="json")
    french = APIClient(headers={"Accept-Language": accept}).post("/api/auth/token/", body, format="json")
    assert english.status_code == french.status_code == 401
    assert english.json()["error"] == {"code": "invalid_credentials", "message": "Unknown username or wrong password."}
    assert french.json()["error"] == {
        "code": "invalid_credentials",
        "message": "Nom d'utilisateur inconnu ou mot de passe erroné.",
    }
    assert french["Content-Language"] == "fr"


@pytest.mark.django_db
def test_drf_refusals_and_unknown_api_paths_are_in_french_too():
    french = APIClient(headers={"Accept-Language": "fr"})
    assert french.get("/api/me/").json()["error"] == {
        "code": "not_authenticated",
        "message": "Connectez-vous d'abord : la requête ne porte pas d'identifiants valides.",
    }
    missing = french.get("/api/no-such-path/")
    assert missing.status_code == 404
    assert missing.json()["error"] == {"code": "not_found", "message": "Cet objet n'existe pas."}
    assert APIClient().get("/api/no-such-path/").json()["error"]["message"] == "No such API path or object."


@pytest.mark.django_db
def test_a_french_players_refusals_are_french_whatever_their_device_sends(player):
    PlayerProfile.objects.create(user=player, language="fr")
    for headers in ({}, {"Accept-Language": "en"}):
        refused = client_of(player, **headers).patch("/api/me/settings/", {"volume": 3}, format="json")
        assert refused.status_code == 400
        assert refused.json()["error"] == {
            "code": "unknown_setting",
            "message": "Ce réglage n'existe pas.",
            "details": {"settings": ["volume"]},
        }


@pytest.mark.django_db
def test_an_english_player_on_a_french_device_is_answered_in_english_as_raised(player):
    PlayerProfile.objects.create(user=player, language="en")
    refused = client_of(player, **{"Accept-Language": "fr"}).patch("/api/me/settings/", {"volume": 3}, format="json")
    assert refused.json()["error"]["message"] == "unknown settings: volume"  # the raise site's own f-string


@pytest.mark.django_db
def test_the_staff_admin_stays_english_on_a_french_browser():
    page = APIClient(headers={"Accept-Language": "fr"}).get("/admin/login/")
    assert page.status_code == 200
    assert "Log in" in page.content.decode()
    assert "Connexion" not in page.content.decode()
    assert translation.get_language() == "en"


def test_no_english_refusal_shows_a_docstrings_markup():
    """A refusal raised without a message reads its class docstring, written for engineers
    (``too_many_tables``: "at most ``CASINO_MAX_TABLES_PER_PLAYER`` tables"): a player reads
    the catalog's English sentence instead, with the same code and details."""
    from games.house.services.seats import TooManyTables

    refusal = TooManyTables(limit=4)
    assert "``" in refusal.message
    english = localized_message(refusal.code, refusal.message, "en")
    assert english == str(PLAYER_MESSAGES["too_many_tables"])
    assert "``" not in english
    # An explicit message of the raise site is kept as raised.
    assert localized_message("unknown_setting", "unknown settings: volume", "en") == "unknown settings: volume"
