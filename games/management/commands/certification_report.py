"""``manage.py certification_report --out DIR``: the certification pack (index.html + report.json).

Thin: the figures come from ``games.house.math.certification``, the page from
``games.house.math.certification_html``. ``--main-results DIR`` reads the main
games' exact perfect-strategy results (every ``*.json`` there or one directory down, in the
``casino.main_rtp/1`` format, one game per file); without it the page says they
were not supplied.
"""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from casino.errors import DomainError
from games.cards.shuffle import RandomSource, SecureRandomSource, SeededRandomSource
from games.house.math.certification import (
    DEFAULT_SHUFFLES,
    SHUFFLE_LEVEL,
    MainResults,
    certification_report,
    parse_main_results,
    shuffle_section,
)
from games.house.math.certification_html import render_html


class Command(BaseCommand):
    help = (
        "Write the certification pack to DIR: index.html (self-contained, readable offline) and report.json "
        "(the same figures): every game and pay table's exact RTP, hit frequencies and variance, the main "
        "games' perfect-strategy results when --main-results is given, the shuffle's chi-square test, the RNG, "
        "the rules and pay-table versions."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--out", type=Path, required=True, help="directory to write (created if needed)")
        parser.add_argument(
            "--main-results", type=Path, help="directory of casino.main_rtp/1 JSON files (one per game)"
        )
        parser.add_argument(
            "--shuffles",
            type=int,
            default=DEFAULT_SHUFFLES,
            help=f"shuffles for the chi-square test (default {DEFAULT_SHUFFLES:,}, a few seconds)",
        )
        parser.add_argument("--level", type=float, default=SHUFFLE_LEVEL, help="significance level (default 0.99)")
        parser.add_argument(
            "--shuffle-seed",
            type=int,
            default=None,
            help="repeatable Mersenne Twister source for the shuffle test (default: the production secure source)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        out: Path = options["out"]
        try:
            main_results = _load_main_results(options["main_results"]) if options["main_results"] else None
            seed = options["shuffle_seed"]
            rng: RandomSource = SecureRandomSource() if seed is None else SeededRandomSource(seed)
            source = "secure (SecureRandomSource)" if seed is None else f"seeded Mersenne Twister ({seed})"
            shuffle = shuffle_section(rng, source, options["shuffles"], options["level"])
            report = certification_report(
                shuffle=shuffle,
                main_results=main_results,
                generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
                code_version=_git_commit(),
            )
        except (DomainError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        out.mkdir(parents=True, exist_ok=True)
        (out / "report.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
        (out / "index.html").write_text(render_html(report), encoding="utf-8")
        supplied = sorted(main_results or {})
        self.stdout.write(
            f"wrote {out / 'index.html'} and {out / 'report.json'}; main-game results: "
            f"{', '.join(supplied) if supplied else 'not supplied'}; shuffle test "
            f"{'passes' if shuffle['passes'] else 'FAILS'}"
        )


def _load_main_results(directory: Path) -> dict[str, MainResults]:
    if not directory.is_dir():
        raise CommandError(f"--main-results {directory}: not a directory")
    results: dict[str, MainResults] = {}
    # DIR/*.json, and DIR/*/*.json: ``rtp GAME main --out DIR/GAME`` writes DIR/GAME/main_rtp.json.
    for path in [*sorted(directory.glob("*.json")), *sorted(directory.glob("*/*.json"))]:
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise CommandError(f"{path}: not JSON ({exc})") from exc
        if not isinstance(document, dict):
            raise CommandError(f"{path}: expected a JSON object")
        parsed = parse_main_results(document, path.name)
        if parsed.game in results:
            raise CommandError(f"{path}: a second results file for {parsed.game}")
        results[parsed.game] = parsed
    return results


def _git_commit() -> str:
    """The checked-out commit, when the code runs from a git work tree ('' otherwise)."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).resolve().parent,
            timeout=5,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip()
