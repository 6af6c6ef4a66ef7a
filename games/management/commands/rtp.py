"""``manage.py rtp GAME WAGER [--paytable N]``: exact RTP of a side bet or bonus table;
``manage.py rtp GAME main [--paytable N] [--out DIR]``: exact main-game return under
perfect strategy (``games.house.math.exact_main``), with its strategy tables and
its casino.main_rtp/1 document (``--out``) and the shipped compact tables (``--data``)."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from casino.errors import DomainError
from games.house.math.exact_main import ExactMainError, exact_main_rtp, write_strategy
from games.house.math.exact_strategy import save_tables
from games.house.math.rtp import DEFAULT_CONTRIBUTION_RATE, DEFAULT_POOL_VALUES, wager_rtp
from games.house.rules.bonus_spin import EXAMPLE_WHEEL, Wheel, WheelSegment


class Command(BaseCommand):
    help = (
        "Exact RTP by enumeration of a side bet / bonus table; last line JSON with rtp and per-outcome "
        "probabilities and returns. Seven-card tables enumerate all 133,784,560 hands (seconds to minutes). "
        "WAGER 'main': the exact main-game return under perfect strategy (every player hand, board and dealer "
        "hand; minutes), last line JSON; --out DIR writes the strategy tables."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("game", help="uth, casino_holdem or xtreme")
        parser.add_argument(
            "wager", help="best_five, bonus, player_bonus, hole_card_bonus, stax, bonus_spin, or main (main game)"
        )
        parser.add_argument(
            "--paytable", type=int, default=1, help="pay table number (default 1; main: the main game's table)"
        )
        parser.add_argument("--out", type=Path, help="main: directory for the strategy tables and main_rtp.json")
        parser.add_argument(
            "--data",
            type=Path,
            help="main: also write the compact exact tables the uth_exact / ch_exact strategies read "
            "(games/house/math/data/uth_exact.npz, ch_exact.npz; a complete analysis only)",
        )
        parser.add_argument(
            "--flop-classes",
            help="main: a reduced exact analysis over these flop classes only (comma-separated indices "
            "0..1754 of the flops up to suits), for tests and quick looks",
        )
        parser.add_argument(
            "--pool",
            action="append",
            default=[],
            metavar="NAME=MULTIPLE",
            help="STAX pool value in stake multiples (defaults: "
            + ", ".join(f"{k}={v}" for k, v in DEFAULT_POOL_VALUES.items())
            + ")",
        )
        parser.add_argument(
            "--contribution-rate",
            default=str(DEFAULT_CONTRIBUTION_RATE),
            help="STAX share of each wager going to the pools (default 3/20)",
        )
        parser.add_argument("--units", type=int, default=1, help="Bonus Spin Xtreme wager size: 1, 2 or 5")
        parser.add_argument("--wheel", type=Path, help="Bonus Spin wheel JSON: {name, version, segments:[...]}")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["wager"] == "main":
            self._main(options)
            return
        pools = dict(DEFAULT_POOL_VALUES)
        for item in options["pool"]:
            name, sep, value = item.partition("=")
            if not sep or name not in pools:
                raise CommandError(f"--pool {item!r}: expected one of {', '.join(pools)}=MULTIPLE")
            pools[name] = Fraction(value)
        wheel = _load_wheel(options["wheel"]) if options["wheel"] else EXAMPLE_WHEEL
        if options["units"] not in (1, 2, 5):
            raise CommandError("--units must be 1, 2 or 5")
        try:
            report = wager_rtp(
                options["game"],
                options["wager"],
                options["paytable"],
                pool_values=pools,
                contribution_rate=Fraction(options["contribution_rate"]),
                wheel=wheel,
                bonus_spin_units=options["units"],
            )
        except DomainError as exc:
            raise CommandError(f"{exc.code}: {exc.message}") from exc
        body = report.as_dict()
        self.stdout.write(f"{report.game} {report.wager} pay table {report.table}: RTP {float(report.rtp):.6%}")
        self.stdout.write(f"{'outcome':24} {'pay':>20} {'count':>14} {'probability':>14} {'return':>12}")
        for line in report.lines:
            self.stdout.write(
                f"{line.outcome:24} {line.pay:>20} {line.count:>14,} {float(line.probability):>14.10f}"
                f" {float(line.probability * line.return_per_unit):>12.8f}"
            )
        for key in ("rtp_excluding_progressives", "rtp_including_progressives", "rtp_long_run_with_contributions"):
            if key in body:
                self.stdout.write(f"{key}: {body[key]:.6%}")
        self.stdout.write(json.dumps(body))

    def _main(self, options: dict[str, Any]) -> None:
        try:
            result = exact_main_rtp(
                options["game"],
                options["paytable"],
                progress=lambda message: self.stderr.write(message) if options["verbosity"] > 1 else None,
                flop_classes=[int(x) for x in options["flop_classes"].split(",")] if options["flop_classes"] else None,
            )
        except (DomainError, ExactMainError) as exc:
            raise CommandError(str(exc)) from exc
        body = result.as_dict()
        self.stdout.write(
            f"{result.game} main game, pay table {result.paytable}, perfect strategy: "
            f"RTP {float(result.rtp_per_ante):.6%} of the ante ({body['rtp_per_ante_exact']}), "
            f"{float(result.rtp_per_total):.6%} of the total wagered; house edge {float(result.house_edge):.6%}, "
            f"element of risk {float(result.element_of_risk):.6%}"
        )
        for wager, figures in body["per_wager_in_antes"].items():
            self.stdout.write(f"  {wager:12} staked {figures['staked']:.6f}  returned {figures['returned']:.6f} antes")
        for decision, share in body["decisions"].items():
            self.stdout.write(f"  {decision:14} {share:.4%} of rounds")
        for point in body["timeouts"].get("points", []):
            self.stdout.write(
                f"  timeout {point['street']} ({point['timeout']}): costs {point['per_situation']:.6f} antes per "
                f"decision reached ({point['reached']:.4%} of rounds), {point['per_round']:.6f} per round"
            )
        self.stdout.write(f"  {result.hands_enumerated:,} deals in {result.seconds:.1f} s")
        if options["out"] is not None:
            for path in write_strategy(result, options["out"]):
                self.stdout.write(f"  wrote {path}")
        if options["data"] is not None:
            if not result.complete:
                raise CommandError("--data needs a complete analysis (no --flop-classes)")
            self.stdout.write(f"  wrote {save_tables(result, options['data'])}")
        self.stdout.write(json.dumps(body))


def _load_wheel(path: Path) -> Wheel:
    data = json.loads(path.read_text())
    segments = tuple(WheelSegment(str(s["label"]), int(s["multiple"]), int(s["weight"])) for s in data["segments"])
    return Wheel(str(data.get("name", path.stem)), str(data.get("version", "1")), segments)
