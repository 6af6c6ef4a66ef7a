"""The help pages' content (games/help/content, rendered by games.help.i18n), without the API:

- every pay table of every game is on its page, line for line as the registry has it,
  and the seed-printed pays RULES.md names are there;
- every return figure is the project's math: side bets ``wager_rtp`` (called here),
  the main game the complete exact analysis shipped with the strategy tables
  (``exact_strategy.exact_tables``), at the published figures of RULES.md;
- the French Ultimate Texas Hold'em page says what seed 004 says, as the product
  implements it (RULES.md over the seed where they differ: docs/help.md);
- every msgid a page can use has a French translation in games/locale, and the
  committed .mo is the compiled .po.
"""

from __future__ import annotations

import gettext
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from babel.messages.pofile import read_po

from games.help.content import house, poker
from games.help.content.text import msgids
from games.help.i18n import render
from games.house.math.exact_strategy import exact_tables
from games.house.math.rtp import wager_rtp
from games.house.rules.bonus_spin import EXAMPLE_WHEEL
from games.house.rules.paytables import PayKind
from games.house.rules.registry import games
from games.poker.engine.rules import RakeRule, Variant

LOCALE = Path(__file__).resolve().parents[2] / "games" / "locale" / "fr" / "LC_MESSAGES"
HOUSE_GAMES = ("uth", "casino_holdem", "xtreme")


def page(code: str, language: str = "en", terms: house.TableTerms | None = None) -> dict[str, Any]:
    result: dict[str, Any] = render(house.game_page(code, terms), language)
    return result


def test_the_house_games_are_the_registrys() -> None:
    assert tuple(d.code for d in games()) == HOUSE_GAMES


@pytest.mark.parametrize("code", HOUSE_GAMES)
def test_every_pay_table_is_on_the_page_line_for_line(code: str) -> None:
    definition = next(d for d in games() if d.code == code)
    shown = {t["name"]: t for t in page(code)["pay_tables"]}
    assert set(shown) == {t.name for t in definition.pay_tables}
    for table in definition.pay_tables:
        lines = [
            (line["outcome"], line["kind"], Fraction(line["ratio"]), line["pool"])
            for line in shown[table.name]["lines"]
        ]
        assert lines == [(o, p.kind.value, p.ratio, p.pool) for o, p in table.lines], table.name


def pays(table: dict[str, Any]) -> dict[str, str]:
    return {line["outcome"]: line["pay"] for line in table["lines"]}


def test_the_pays_rules_md_prints_are_shown_as_players_read_them() -> None:
    uth = {t["wager"]: t for t in page("uth")["pay_tables"]}
    assert pays(uth["ante_plus"]) == {
        "royal_flush": "500 to 1", "straight_flush": "50 to 1", "four_of_a_kind": "10 to 1", "full_house": "3 to 1",
        "flush": "3 to 2", "straight": "1 to 1", "three_of_a_kind": "Push (the wager is returned)",
        "two_pair": "Push (the wager is returned)", "pair": "Push (the wager is returned)",
        "high_card": "Push (the wager is returned)",
    }  # fmt: skip
    assert list(pays(uth["best_five"]).values()) == [f"{n} to 1" for n in (50, 40, 30, 8, 7, 4, 3)]
    ch = {t["wager"]: t for t in page("casino_holdem")["pay_tables"]}
    assert list(pays(ch["ante"]).values()) == [f"{n} to 1" for n in (100, 20, 10, 3, 2, 1, 1, 1, 1, 1)]
    assert pays(ch["bonus"]) == {
        "royal_flush": "100 to 1", "straight_flush": "50 to 1", "four_of_a_kind": "40 to 1", "full_house": "30 to 1",
        "flush": "20 to 1", "straight": "7 to 1", "three_of_a_kind": "7 to 1", "two_pair": "7 to 1",
        "pair_of_aces": "7 to 1",
    }  # fmt: skip
    stax = {t["number"]: t for t in page("xtreme")["pay_tables"] if t["wager"] == "stax"}
    assert sorted(stax) == [1, 2, 3, 6, 7, 8, 9]  # RULES.md: the seed's seven STAX tables
    assert pays(stax[1])["royal_flush_diamonds"] == "Star Progressive"
    assert pays(stax[1])["full_house"] == "100 for 1"


@pytest.mark.parametrize("code", HOUSE_GAMES)
def test_side_bet_returns_are_the_math_modules(code: str) -> None:
    for table in page(code)["pay_tables"]:
        definition = next(d for d in games() if d.code == code)
        if definition.wager(table["wager"]).main_rule is not None:
            assert table["rtp"] is None
            continue
        report = wager_rtp(code, table["wager"], table["number"])
        assert table["rtp"]["rtp_exact"] == f"{report.rtp.numerator}/{report.rtp.denominator}"
        assert table["rtp"]["rtp"] == float(report.rtp)


def test_published_side_bet_returns() -> None:
    uth = {t["wager"]: t for t in page("uth")["pay_tables"]}
    assert round(uth["best_five"]["rtp"]["rtp"] * 100, 2) == 96.50  # seeds 000, 004; RULES.md
    assert "96.50%" in uth["best_five"]["rtp"]["text"]
    ch = {t["wager"]: t for t in page("casino_holdem")["pay_tables"]}
    assert round(ch["bonus"]["rtp"]["rtp"] * 100, 2) == 93.74  # seed 003


@pytest.mark.parametrize(("code", "analysis", "per_ante", "per_total"), [
    ("uth", "uth", 97.82, 99.47),  # seeds 000/004, RULES.md
    ("xtreme", "uth", 97.82, 99.47),  # the same main game as UTH
    ("casino_holdem", "casino_holdem", 97.84, None),  # seed 003 publishes the Ante's only
])  # fmt: skip
def test_main_game_return_is_the_shipped_exact_analysis(
    code: str, analysis: str, per_ante: float, per_total: float | None
) -> None:
    shown = page(code)["main_game_return"]
    shipped = exact_tables(analysis)
    assert shown["rtp_per_ante_exact"] == shipped.rtp_per_ante
    assert round(shown["rtp_per_ante"] * 100, 2) == per_ante
    if per_total is not None:
        assert round(shown["rtp_per_total"] * 100, 2) == per_total
    assert Fraction(shown["rtp_per_ante_exact"]) == Fraction(shipped.rtp_per_ante)
    assert shown["house_edge"] == pytest.approx(1 - shown["rtp_per_ante"])


def test_bonus_spin_return_uses_the_tables_wheel() -> None:
    terms = house.TableTerms(
        code="X1", name="x", currency="EUR", pay_tables={"xtra_bonus": 1}, wheel=EXAMPLE_WHEEL,
        limits={"ante": {"min": 100, "max": 500}, "bonus_spin": {"min": 100, "max": 500}},
    )  # fmt: skip
    spin = page("xtreme", terms=terms)["bonus_spin"]
    assert [r["rtp"] for r in spin["rtp"]] == [
        float(wager_rtp("xtreme", "bonus_spin", wheel=EXAMPLE_WHEEL, bonus_spin_units=u).rtp) for u in (1, 2, 5)
    ]
    assert spin["wheel"]["segments"][0]["label"] == "10x"
    assert page("xtreme")["bonus_spin"]["wheel"] is None  # the game page: no table, no wheel


def test_settlement_follows_the_main_rules_not_seed_004s_exceptions() -> None:
    """RULES.md: seed 004's "blind returned if the dealer has less than a pair" is not implemented."""
    rows = {row["wager"]: {r["situation"]: r["action"] for r in row["results"]} for row in page("uth")["settlement"]}
    assert rows["ante_plus"]["lose_unqualified"] == "lose"
    assert rows["ante"]["lose_unqualified"] == "push"
    assert rows["ante"]["win_unqualified"] == "push"
    assert rows["ante_plus"]["win_unqualified"] == "table"
    assert rows["call"]["tie_qualified"] == "push"
    assert "fold" not in rows["call"]


# The French UTH page against seed 004 (/work/shared/seeds/004_5ef88f503c50a2e8.txt), as the product
# implements it: (seed line, what the page must say).
SEED_004_POINTS = [
    (9, "La Mise à l'aveuglette (Blind), égale à la Mise initiale (Ante), est placée automatiquement"),
    (13, "paquet de 52 cartes"),
    (15, "celles du donneur sont distribuées face cachée"),
    (18, "Relance (Call) égale à 4x ou 3x la Mise initiale (Ante), ou passer"),
    (21, "Relance (Call) égale à 2x la Mise initiale (Ante), ou passer de nouveau"),
    (24, "Relance (Call) égale à 1x la Mise initiale (Ante), ou abandonner"),
    (23, "renoncer à la Mise initiale (Ante) et à la Mise à l'aveuglette (Blind)"),
    (25, "Le donneur se qualifie avec une paire ou mieux."),
    (28, "la Mise initiale (Ante) perd si le donneur se qualifie, et elle vous est retournée s'il a moins d'une paire"),
    (26, "la Relance (Call) et la Mise à l'aveuglette (Blind) perdent"),
    (30, "la Mise initiale (Ante) paie 1 contre 1 si le donneur se qualifie"),
    (31, "la Relance (Call) paie 1 contre 1"),
    (32, "la Mise à l'aveuglette (Blind) est payée selon sa table de paiement"),
    (
        37,
        "à égalité, la Mise initiale (Ante), la Mise à l'aveuglette (Blind) et la Relance (Call) vous sont retournées",
    ),
    (38, "Mise Trips (Best Five) : Facultative"),
    (38, "votre main finale de cinq cartes"),
    (38, "elle paie même si vous abandonnez"),
    (74, "l'As est haut (A-R-D-V-10) ou bas (5-4-3-2-A)"),
    (74, "elle compte seulement comme quinte"),
    (76, "Taux de retour théorique du joueur"),
    (82, "Toute défectuosité annule jeux et paiements."),
]
SEED_004_HANDS = [  # lines 44-62, best first
    "Quinte royale", "Quinte", "Carré", "Main pleine", "Couleur", "Séquence", "Brelan", "Double paire", "Paire",
    "Carte haute",
]  # fmt: skip


def all_text(node: Any) -> str:
    if isinstance(node, dict):
        return "\n".join(all_text(v) for v in node.values())
    if isinstance(node, list):
        return "\n".join(all_text(v) for v in node)
    return str(node)


@pytest.mark.parametrize(("line", "expected"), SEED_004_POINTS)
def test_the_french_uth_page_says_what_seed_004_says(line: int, expected: str) -> None:
    assert expected in all_text(page("uth", "fr")), f"seed 004 line {line}"


def test_the_french_uth_page_has_seed_004s_hands_blind_table_and_trips() -> None:
    fr = page("uth", "fr")
    assert [h["name"] for h in fr["hand_rankings"]] == SEED_004_HANDS
    blind = next(t for t in fr["pay_tables"] if t["wager"] == "ante_plus")
    assert blind["wager_name"] == "Mise à l'aveuglette (Blind)"
    assert [(line["hand"], line["pay"]) for line in blind["lines"][:6]] == [
        ("Quinte royale", "500 contre 1"), ("Quinte", "50 contre 1"), ("Carré", "10 contre 1"),
        ("Main pleine", "3 contre 1"), ("Couleur", "3 contre 2"), ("Séquence", "1 contre 1"),
    ]  # fmt: skip
    assert {line["pay"] for line in blind["lines"][6:]} == {"Égalité (mise retournée)"}
    trips = next(t for t in fr["pay_tables"] if t["wager"] == "best_five")
    assert trips["rtp"]["text"] == "Mise Trips (Best Five) : taux de retour théorique du joueur de 96,50\u00a0%."
    main = fr["main_game_return"]["text"][0]
    assert "99,47\u00a0% du total misé" in main
    assert "97,82\u00a0% de la Mise initiale (Ante)" in main
    options = [o["name"] for point in fr["decisions"] for o in point["options"]]
    assert options == ["Relancer 4x", "Relancer 3x", "Passer", "Relancer 2x", "Passer", "Relancer 1x",
                       "Abandonner (se coucher)"]  # fmt: skip


def every_page() -> list[Any]:
    """Every page the builders make, with every optional part a table can add."""
    pages: list[Any] = [house.game_page(code) for code in HOUSE_GAMES]
    pages += [poker.game_page(code) for code in poker.POKER_GAMES]
    xtreme = next(d for d in games() if d.code == "xtreme")
    spots = [w.name for w in xtreme.wagers if w.kind.value in ("required", "optional")]
    terms = house.TableTerms(
        code="X1", name="x", currency="EUR", limits={s: {"min": 100, "max": 500} for s in spots},
        pay_tables=dict.fromkeys(("xtra_bonus", "player_bonus", "hole_card_bonus", "stax"), 1), wheel=EXAMPLE_WHEEL,
        stax_contribution=Fraction(15, 100), chips=[100, 500], mandatory_wagers=["stax"], multi_play=False,
    )  # fmt: skip
    pages.append(house.game_page("xtreme", terms))
    pages.append(
        poker.game_page(
            "holdem_no_limit",
            poker.PokerTerms(
                code="P", name="p", variant=Variant.NO_LIMIT, currency="EUR", small_blind=5, big_blind=10, ante=0,
                buy_in_min=200, buy_in_max=2000, max_seats=6, turn_seconds=20, time_bank_seconds=30,
                disconnection_bank_seconds=30, reservation_seconds=300, rake=[(2, RakeRule()), (3, None)],
            ),
        )
    )  # fmt: skip
    return pages


def french_help_catalog() -> dict[str, Any]:
    """The help ``.po``'s messages by msgid (Babel's reader: no GNU gettext needed)."""
    with (LOCALE / "django.po").open("rb") as po:
        return {str(message.id): message for message in read_po(po) if message.id}


def test_every_help_msgid_has_a_french_translation() -> None:
    catalog = french_help_catalog()
    needed = msgids(every_page()) | {"%(number)s%%"}
    untranslated = sorted(m for m in needed if m not in catalog or not catalog[m].string or catalog[m].fuzzy)
    assert not untranslated, untranslated
    # A "translation" that is the English msgid again is no translation.
    assert not sorted(m for m in needed if catalog[m].string == m)


def test_the_committed_mo_is_the_compiled_po() -> None:
    po = {key: message.string for key, message in french_help_catalog().items() if message.string}
    with (LOCALE / "django.mo").open("rb") as mo:
        compiled = {key: value for key, value in gettext.GNUTranslations(mo)._catalog.items() if key}  # type: ignore[attr-defined]
    assert compiled == po, "run `make messages` to compile games/locale"


def test_poker_pages_per_betting_structure_and_the_seed_rake_table() -> None:
    assert sorted(poker.POKER_GAMES) == ["holdem_fixed_limit", "holdem_no_limit", "holdem_pot_limit"]
    fixed = render(poker.game_page("holdem_fixed_limit"), "en")
    text = all_text(fixed)
    assert "Fixed limit: bets and raises are one small bet" in text
    assert "No limit:" not in text
    rows = fixed["rake_table"]
    # Seed 001's table: 2.5 %; fixed limit with a small blind of 0.51-10 euros: minimum 0.02, cap 3.
    assert {"currency": "EUR", "variant": "fixed_limit", "players_min": 2, "players_max": 10, "small_blind_min": 51,
            "small_blind_max": 1000, "percent": 2.5, "minimum": 2, "cap": 300} in rows  # fmt: skip
    assert {(r["variant"], r["players_min"], r["cap"]) for r in rows if r["variant"] == "no_limit"} == {
        ("no_limit", 2, 100),
        ("no_limit", 4, 200),
        ("no_limit", 6, 300),
    }
    assert rows[-1]["currency"] is None
    assert rows[-1]["cap"] == 300
    assert "2.5%" in text


def test_a_progressive_line_is_the_pool_not_a_fixed_pay() -> None:
    stax = next(t for t in house.game_page("xtreme")["pay_tables"] if t["wager"] == "stax" and t["number"] == 9)
    kinds = {line["outcome"]: (line["kind"], line["pool"]) for line in stax["lines"]}
    assert kinds["full_house"] == (PayKind.PROGRESSIVE.value, "club")
