"""The operator's table form: one field per setting of the table's game instead of
raw JSON (limits per betting spot, the pay table of each wager, durations, STAX
progressives, the Bonus Spin wheel), validated by the domain's
``validate_config`` with each problem shown on its field.

``table_form(game)`` builds the form class for one game: only that game's betting
spots and only its pay tables are offered. The form only validates and assembles
``table_config``; saving goes through ``games.house.services.tables`` (a new version and
an ``operator.action`` event), never ``form.save()``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from django import forms

from games.house.models import HouseTable
from games.house.round.state import PER_SEAT_MAX
from games.house.rules.definitions import WagerKind
from games.house.rules.registry import GAMES, game
from games.house.rules.table_config import (
    CONFIG_FIELDS,
    DURATION_FIELDS,
    Problem,
    betting_spots,
    default_chips,
    pay_table_choices,
    priced_wagers,
    validate_config,
)
from ledger.currencies import MINOR_UNITS

WHEEL_HELP = (
    "One segment per line: label, award multiple of the wager, weight. "
    "E.g. <code>10x, 10, 10</code>. A spin picks a segment with probability weight / total weight."
)


CHIPS_HELP = "Chip denominations in minor units (cents), ascending, separated by commas: e.g. 100, 500, 1000."


def format_chips(chips: list[int]) -> str:
    return ", ".join(str(chip) for chip in chips)


def parse_chips(text: str) -> list[Any]:
    """``"100, 500"`` -> ``[100, 500]``; an entry that is not a whole number is kept
    as text, for ``validate_config`` to name the problem."""
    chips: list[Any] = []
    for part in (p.strip() for p in text.split(",")):
        if part:
            chips.append(int(part) if part.lstrip("-").isdigit() else part)
    return chips


def limit_fields(spot: str) -> tuple[str, str]:
    return f"{spot}_min", f"{spot}_max"


def pay_table_field(wager: str) -> str:
    return f"paytable_{wager}"


def pool_fields(pool: str) -> tuple[str, str]:
    return f"{pool}_reset", f"{pool}_contribution_bp"


def format_wheel(wheel: Mapping[str, Any]) -> str:
    return "\n".join(f"{s['label']}, {s['multiple']}, {s['weight']}" for s in wheel.get("segments", []))


def parse_wheel(text: str) -> list[dict[str, Any]]:
    """``label, multiple, weight`` per line -> segments; ``ValidationError`` naming the line."""
    segments = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 3 or not parts[0]:
            raise forms.ValidationError(f"line {number}: expected 'label, multiple, weight'")
        try:
            multiple, weight = int(parts[1]), int(parts[2])
        except ValueError:
            raise forms.ValidationError(f"line {number}: multiple and weight must be whole numbers") from None
        segments.append({"label": parts[0], "multiple": multiple, "weight": weight})
    return segments


class TableForm(forms.ModelForm):
    """Base of the per-game forms (see ``table_form``)."""

    game_code: ClassVar[str] = ""
    spots: ClassVar[list[str]] = []
    optional_spots: ClassVar[list[str]] = []
    priced: ClassVar[list[str]] = []
    progressive_wager: ClassVar[str | None] = None
    pools: ClassVar[tuple[str, ...]] = ()  # the progressive pools a table of this game has

    reason = forms.CharField(
        max_length=200, required=False, help_text="Why (kept with the version in the configuration history)."
    )
    base_version = forms.IntegerField(widget=forms.HiddenInput, required=False)
    chips = forms.CharField(required=False, help_text=CHIPS_HELP + " Empty: the currency's default set.", label="Chips")
    multi_play = forms.BooleanField(
        required=False, initial=True, help_text="Unticked: a player at this table plays no other table (seed 000)."
    )

    class Meta:
        model = HouseTable
        fields = ["code", "name", "game", "hand_mode", "currency", "max_seats", *DURATION_FIELDS]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if "game" in self.fields:
            self.fields["game"].widget = forms.HiddenInput()
            self.fields["game"].initial = self.game_code
        if "currency" in self.fields:
            self.fields["currency"] = forms.ChoiceField(
                choices=[(c, c) for c in sorted(MINOR_UNITS)], initial=self.initial.get("currency", "EUR")
            )
        if "max_seats" in self.fields:
            self.fields["max_seats"].help_text = f"Per-seat tables: 1 to {PER_SEAT_MAX} (the deck's limit)."
        self.table_config: dict[str, Any] = {}
        table = self.instance
        if table.pk:
            self.initial["base_version"] = table.config_version
            self._initial_from(table)
        else:
            self.initial.setdefault("offer_ante", True)

    def _initial_from(self, table: HouseTable) -> None:
        self.initial["chips"] = format_chips(table.chips)
        self.initial["multi_play"] = table.multi_play
        self.initial["mandatory_wagers"] = list(table.mandatory_wagers)
        for spot in self.spots:
            limit = table.limits.get(spot)
            if spot in self.optional_spots:
                self.initial[f"offer_{spot}"] = limit is not None
            if limit:
                low, high = limit_fields(spot)
                self.initial[low], self.initial[high] = limit.get("min"), limit.get("max")
        for wager in self.priced:
            if wager in table.pay_tables:
                self.initial[pay_table_field(wager)] = table.pay_tables[wager]
        if "wheel_segments" in self.fields:
            self.initial["wheel_name"] = table.wheel.get("name", "")
            self.initial["wheel_segments"] = format_wheel(table.wheel)
        for pool in self.pools:
            reset, rate = pool_fields(pool)
            self.initial[reset] = table.progressives.get("reset", {}).get(pool)
            self.initial[rate] = table.progressives.get("contribution_bp", {}).get(pool)

    def _offered(self, data: Mapping[str, Any]) -> list[str]:
        return [s for s in self.spots if s not in self.optional_spots or data.get(f"offer_{s}")]

    def _wheel(self, data: Mapping[str, Any]) -> dict[str, Any]:
        try:
            segments = parse_wheel(data.get("wheel_segments") or "")
        except forms.ValidationError as exc:
            self.add_error("wheel_segments", exc)
            return {}
        name = (data.get("wheel_name") or "").strip()
        previous = self.instance.wheel if self.instance.pk else {}
        if previous.get("segments") == segments and previous.get("name", "") == name:
            return dict(previous)
        # A changed wheel is named by the configuration version it comes in with.
        version = str(self.instance.config_version + 1) if self.instance.pk else "1"
        return {"name": name, "version": version, "segments": segments}

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        offered = self._offered(data)
        limits = {}
        for spot in offered:
            low, high = limit_fields(spot)
            limits[spot] = {"min": data.get(low), "max": data.get(high)}
        priced = priced_wagers(self.game_code, frozenset(offered))
        pay_tables = {w: data.get(pay_table_field(w)) for w in priced if data.get(pay_table_field(w)) is not None}
        config: dict[str, Any] = {
            "name": data.get("name", self.instance.name),
            "hand_mode": data.get("hand_mode", self.instance.hand_mode),
            "max_seats": data.get("max_seats"),
            "limits": limits,
            "pay_tables": pay_tables,
            "wheel": self._wheel(data) if "bonus_spin" in offered else {},
            "progressives": {},
        }
        if self.progressive_wager in offered:
            config["progressives"] = {
                "reset": {p: data.get(pool_fields(p)[0]) for p in self.pools},
                "contribution_bp": {p: data.get(pool_fields(p)[1]) for p in self.pools},
            }
        for name in DURATION_FIELDS:
            config[name] = data.get(name)
        currency = data.get("currency") or self.instance.currency
        unit = 10 ** MINOR_UNITS.get(currency, 2)
        config["chips"] = parse_chips(data.get("chips") or "") or default_chips(currency)
        config["mandatory_wagers"] = [spot for spot in data.get("mandatory_wagers") or [] if spot]
        config["multi_play"] = bool(data.get("multi_play"))
        for problem in validate_config(
            game_code=self.game_code, config=config, currency_unit=unit, per_seat_max=PER_SEAT_MAX
        ):
            self._show(problem)
        if self.instance.pk and data.get("base_version") not in (None, self.instance.config_version):
            raise forms.ValidationError(
                "Another change to this table was saved since you opened this page; reload it and redo yours.",
                code="config_changed_meanwhile",
            )
        self.table_config = {name: config[name] for name in CONFIG_FIELDS}
        return data

    def _show(self, problem: Problem) -> None:
        """Put a domain problem on the field it is about (or on the form)."""
        head, _, key = problem.field.partition(".")
        target: str | None = head
        if head == "limits":
            target = limit_fields(key)[0] if key in self.spots else None
        elif head == "pay_tables":
            target = pay_table_field(key) if pay_table_field(key) in self.fields else None
        elif head == "progressives":
            target = pool_fields(key)[0] if key in self.pools else None
        elif head == "wheel":
            target = "wheel_segments"
        elif head == "mandatory_wagers":
            target = "mandatory_wagers"
        if target not in self.fields:
            target = None
        elif self.has_error(target):
            return  # the field already says what is wrong with it
        self.add_error(target, forms.ValidationError(problem.message, code=problem.code))

    @classmethod
    def fieldsets(cls, *, adding: bool) -> list[tuple[str | None, dict[str, Any]]]:
        identity = ["code", "game", "currency"] if adding else []
        sets: list[tuple[str | None, dict[str, Any]]] = [
            (None, {"fields": [*identity, "name", "hand_mode", "max_seats", "multi_play", "base_version"]}),
            (
                "Chips and mandatory side bets",
                {"fields": ["chips", *(["mandatory_wagers"] if cls.optional_spots else [])]},
            ),
        ]
        for spot in cls.spots:
            offer = [f"offer_{spot}"] if spot in cls.optional_spots else []
            sets.append((f"Spot: {spot}", {"fields": [*offer, *limit_fields(spot)]}))
        sets.append(("Pay tables", {"fields": [pay_table_field(w) for w in cls.priced]}))
        sets.append(("Phase durations (seconds)", {"fields": list(DURATION_FIELDS)}))
        if cls.pools:
            pools = [name for pool in cls.pools for name in pool_fields(pool)]
            sets.append(("STAX progressives (with STAX offered)", {"fields": pools}))
        if "wheel_segments" in cls.base_fields:
            sets.append(("Bonus Spin Xtreme wheel (with Bonus Spin offered)",
                         {"fields": ["wheel_name", "wheel_segments"]}))  # fmt: skip
        sets.append(("Change", {"fields": ["reason"]}))
        return sets


def _extra_fields(game_code: str) -> dict[str, forms.Field]:
    definition = game(game_code)
    fields: dict[str, forms.Field] = {}
    for spot in betting_spots(game_code):
        if definition.wager(spot).kind is WagerKind.OPTIONAL:
            fields[f"offer_{spot}"] = forms.BooleanField(required=False, label=f"Offer {spot}")
        low, high = limit_fields(spot)
        unit_help = "Minor units (cents)." + (" Exactly 1, 2 or 5 currency units." if spot == "bonus_spin" else "")
        fields[low] = forms.IntegerField(required=False, label=f"{spot} minimum", help_text=unit_help)
        fields[high] = forms.IntegerField(required=False, label=f"{spot} maximum", help_text=unit_help)
    optional = [w.name for w in definition.wagers if w.kind is WagerKind.OPTIONAL]
    if optional:
        fields["mandatory_wagers"] = forms.MultipleChoiceField(
            required=False, choices=[(spot, spot) for spot in optional], widget=forms.CheckboxSelectMultiple,
            help_text="Offered side bets every player must make (seed 002); bets without them are returned.",
        )  # fmt: skip
    for wager, choices in pay_table_choices(game_code).items():
        fields[pay_table_field(wager)] = forms.TypedChoiceField(
            coerce=int, required=False, empty_value=None, label=f"{wager} pay table",
            choices=[("", "---------"), *choices],
            help_text="Required when the wager is offered (automatic wagers always).",
        )  # fmt: skip
    for pool in definition.progressive_pools:
        reset, rate = pool_fields(pool)
        fields[reset] = forms.IntegerField(required=False, label=f"{pool} reset", help_text="Minor units.")
        fields[rate] = forms.IntegerField(
            required=False, label=f"{pool} contribution", help_text="Basis points of each STAX wager (100 = 1 %)."
        )
    if any(w.name == "bonus_spin" for w in definition.wagers):
        fields["wheel_name"] = forms.CharField(required=False, max_length=60)
        fields["wheel_segments"] = forms.CharField(
            required=False, widget=forms.Textarea(attrs={"rows": 6}), help_text=WHEEL_HELP
        )
    return fields


_FORMS: dict[str, type[TableForm]] = {}


def table_form(game_code: str) -> type[TableForm]:
    """The form class for tables of ``game_code`` (one of ``GAMES``)."""
    if game_code not in _FORMS:
        definition = GAMES[game_code]
        attrs: dict[str, Any] = {
            **_extra_fields(game_code),
            "__module__": __name__,
            "game_code": game_code,
            "spots": betting_spots(game_code),
            "optional_spots": [w.name for w in definition.wagers if w.kind is WagerKind.OPTIONAL],
            "priced": [w.name for w in definition.wagers if w.needs_pay_table],
            "progressive_wager": definition.progressive_wager,
            "pools": definition.progressive_pools,
        }
        _FORMS[game_code] = type(f"{game_code.title().replace('_', '')}TableForm", (TableForm,), attrs)
    return _FORMS[game_code]
