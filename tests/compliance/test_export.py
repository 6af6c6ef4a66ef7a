"""Audit exports and the offline verifier: an export verifies; tampering with
any file or the manifest fails naming the problem (issue 8)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from compliance.exports import ExportFilters, export_audit, public_key_hex
from ledger.services import NewEvent, StreamAppend, deposit, house_account, open_hold, player_accounts, post_hold
from tests.conftest import ROOT
from tools.verify_export import decode_rows, verify_export

pytestmark = pytest.mark.django_db(transaction=True)
CURRENCY = "EUR"


def play(player: int, table: int, stake: int, payout: int, n: int) -> None:
    """A deposit, a bet hold posted to the table, and the house paying the player."""
    accounts = player_accounts(player_id=player, currency=CURRENCY)
    house = house_account(table_id=table, currency=CURRENCY)
    deposit(
        wallet=accounts.wallet, amount=10_000, currency=CURRENCY, external_reference=f"psp-{player}-{n}",
        idempotency_key=f"dep-{player}-{n}", actor="psp:test",
    )  # fmt: skip
    stream = f"round-{table}-{n}-player-{player}"
    hold = open_hold(
        source=accounts.wallet, escrow=accounts.held, destination=house, amount=stake, currency=CURRENCY,
        idempotency_key=f"bet-{player}-{n}",
        cause=StreamAppend(stream, 0, [NewEvent("test.bet", {"amount": stake, "table_id": table})], {}),
    )  # fmt: skip
    post_hold(
        hold_id=__import__("uuid").UUID(hold.hold_id), amount=stake, idempotency_key=f"post-{player}-{n}",
        cause=StreamAppend(stream, 1, [NewEvent("test.settled", {"payout": payout, "table_id": table})], {}),
    )  # fmt: skip


@pytest.fixture
def exported(tmp_path: Path) -> Path:
    start = timezone.now() - timedelta(minutes=1)
    play(1, 7, 500, 0, 1)
    play(2, 8, 300, 0, 2)
    play(1, 8, 200, 0, 3)
    out = tmp_path / "export"
    export_audit(
        start=start, end=timezone.now() + timedelta(seconds=1), filters=ExportFilters(), file_format="jsonl", out=out
    )
    return out


def problems(directory: Path) -> list[str]:
    return verify_export(directory, public_key=public_key_hex()).problems


def test_an_export_verifies_with_the_standalone_script(exported: Path):
    manifest = json.loads((exported / "manifest.json").read_text())
    assert manifest["counts"]["events_in_period"] == 9  # 3 deposits, 3 bets, 3 settlements
    assert manifest["totals"]["EUR"]["by_kind"] == {"deposit": 30_000, "hold": 1_000, "post": 1_000}
    assert manifest["software_version"]
    # A regulator's run: a fresh interpreter, no Django settings, only tools/ and ledger/canonical.py.
    run = subprocess.run(
        [sys.executable, "-I", str(ROOT / "tools" / "verify_export.py"), str(exported), "--public-key",
         public_key_hex()],
        capture_output=True, text=True, cwd="/", env={},
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert "export verified" in run.stdout


def test_the_manage_command_verifies_and_fails(exported: Path):
    call_command("verify_export", str(exported))
    events = exported / "events.jsonl"
    events.write_text(events.read_text().replace('"amount":500', '"amount":5000', 1))
    with pytest.raises(CommandError, match="hash does not match its content"):
        call_command("verify_export", str(exported))


def _rewrite(path: Path, change) -> None:
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(change(lines)))


def test_a_changed_amount_in_an_event_is_named(exported: Path):
    events = exported / "events.jsonl"
    events.write_text(events.read_text().replace('"amount":300', '"amount":30', 1))
    found = problems(exported)
    assert "hash does not match its content (altered event)" in found[0]
    assert any("events.jsonl: SHA-256 differs" in p for p in found)


def test_a_changed_amount_in_an_entry_is_named(exported: Path):
    entries = exported / "entries.jsonl"
    entries.write_text(entries.read_text().replace('"amount":300', '"amount":3000', 1))
    found = problems(exported)
    assert found[0] == "entries.jsonl: SHA-256 differs from the manifest (file altered)"
    assert "manifest: totals differ from the entries in the export" in found


def test_a_deleted_event_line_is_named(exported: Path):
    _rewrite(exported / "events.jsonl", lambda lines: lines[:3] + lines[4:])
    found = problems(exported)
    assert any("missing from the export" in p for p in found), found
    assert any("events.jsonl: 8 rows, the manifest says 9" in p for p in found)


def test_reordered_lines_are_named(exported: Path):
    _rewrite(exported / "events.jsonl", lambda lines: [lines[1], lines[0], *lines[2:]])
    assert "is out of (txid, position) order" in problems(exported)[0]


def test_a_deleted_seal_leaf_is_named(exported: Path):
    _rewrite(exported / "seal_leaves.jsonl", lambda lines: lines[:-1])
    assert "seal" in problems(exported)[0]


def test_an_altered_manifest_fails_its_signature(exported: Path):
    path = exported / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["period"]["to"] = "2099-01-01T00:00:00.000000Z"
    path.write_text(json.dumps(manifest))
    found = problems(exported)
    assert "manifest: signature is invalid (manifest altered or signed with another key)" in found


def test_a_manifest_resigned_with_another_key_fails_the_pinned_key(exported: Path):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    from tools.verify_export import manifest_message

    path = exported / "manifest.json"
    manifest = json.loads(path.read_text())
    forger = Ed25519PrivateKey.generate()
    manifest["signature"]["public_key"] = forger.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw).hex()
    manifest["signature"]["value"] = forger.sign(manifest_message(manifest)).hex()
    path.write_text(json.dumps(manifest))
    assert problems(exported) == ["manifest: signed with a key other than the pinned public key"]


def test_csv_export_of_a_player_verifies_and_is_filtered(tmp_path: Path):
    start = timezone.now() - timedelta(minutes=1)
    play(1, 7, 500, 0, 1)
    play(2, 8, 300, 0, 2)
    out = tmp_path / "csv"
    call_command(
        "export_audit", "--from", start.isoformat(), "--to", (timezone.now() + timedelta(seconds=1)).isoformat(),
        "--player", "2", "--format", "csv", "--out", str(out),
    )  # fmt: skip
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["filtered"] is True
    assert manifest["counts"]["events"] == 3  # player 2's deposit, bet and settlement only
    assert manifest["totals"]["EUR"]["by_kind"] == {"deposit": 10_000, "hold": 300, "post": 300}
    assert problems(out) == []
    lines = (out / "entries.csv").read_text().splitlines()
    (out / "entries.csv").write_text("\r\n".join([lines[0], *lines[2:]]) + "\r\n")
    assert problems(out)[0] == "entries.csv: SHA-256 differs from the manifest (file altered)"


def test_an_empty_period_exports_and_verifies(tmp_path: Path):
    out = tmp_path / "empty"
    start = timezone.now() - timedelta(days=400)
    export_audit(start=start, end=start + timedelta(days=1), filters=ExportFilters(), file_format="jsonl", out=out)
    assert problems(out) == []


def test_the_export_api_is_for_the_compliance_role_and_its_zip_verifies(tmp_path: Path):
    import io
    import zipfile

    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from rest_framework.test import APIClient

    from compliance.roles import COMPLIANCE, OPERATOR, setup_roles

    setup_roles()
    start = timezone.now() - timedelta(minutes=1)
    play(3, 9, 400, 0, 1)
    clients = {}
    for name in (COMPLIANCE, OPERATOR):
        user = get_user_model().objects.create_user(f"{name}-user", password="pw-123-abc", is_staff=True)
        user.groups.add(Group.objects.get(name=name))
        clients[name] = APIClient()
        clients[name].force_authenticate(user)
    body = {"start": start.isoformat(), "end": (timezone.now() + timedelta(seconds=1)).isoformat(), "format": "csv"}
    assert clients[OPERATOR].post("/api/compliance/exports/", body, format="json").status_code == 403
    response = clients[COMPLIANCE].post("/api/compliance/exports/", body, format="json")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    out = tmp_path / "unzipped"
    zipfile.ZipFile(io.BytesIO(response.content)).extractall(out)
    key = clients[COMPLIANCE].get("/api/compliance/export-key/").json()["public_key"]
    assert verify_export(out, public_key=key).problems == []
    assert json.loads((out / "manifest.json").read_text())["file_format"] == "csv"


def test_a_seals_file_written_before_the_epochs_column_still_reads():
    """Exports made before event MACs have no ``epochs`` column in their seals
    file (their seals signed none): the verifier reads them as ``None``, in both
    formats, and still refuses a file with other columns."""
    seal = {"id": 1, "from_txid": 0, "to_txid": 9, "event_count": 2, "last_event_id": 2, "merkle_root": "ab" * 32,
            "prev_root": "0" * 64, "algorithm": "HMAC-SHA256", "signature": "cd" * 32,
            "created_at": "2026-11-01T00:00:00.000000Z"}  # fmt: skip
    jsonl = (json.dumps(seal) + "\n").encode()
    assert decode_rows("seals", jsonl, "jsonl") == [seal | {"epochs": None}]
    csv_text = ",".join(seal) + "\r\n" + ",".join(str(v) for v in seal.values()) + "\r\n"
    assert decode_rows("seals", csv_text.encode(), "csv")[0]["epochs"] is None
    with pytest.raises(ValueError, match="expected the columns"):
        decode_rows("seals", (json.dumps(seal | {"extra": 1}) + "\n").encode(), "jsonl")
    with pytest.raises(ValueError, match="CSV header"):
        decode_rows("seals", ("id," + csv_text).encode(), "csv")
