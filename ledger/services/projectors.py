"""Read models as projections of the event log: one projector per read table,
a rebuild from the log and a row-by-row comparison with the live rows
(docs/ledger.md, "Projections"; issue #24).

A projector owns one model's rows (or, ``owns_rows = False``, some columns of
rows another part of the code creates, e.g. a table's configuration row). It
consumes the events of some streams (``stream_prefixes``, ``event_types``),
and ``apply_many`` applies them in log order, idempotently: applying an event
again changes nothing. The live services append their events, then apply them
with the same projector in the same transaction; ``rebuild`` replays the log.

The ledger imports no app: the apps register their projectors
(``register_projector``) in their ``AppConfig.ready``, in dependency order (a
projector whose rows refer to another's comes after it).

``rebuild(check=True)`` replays the log into fresh tables and compares them
with the live ones: on PostgreSQL the fresh tables are temporary tables of the
same name, which shadow the live ones for this session only (the temporary
schema is searched first), so the live rows are neither written nor locked;
elsewhere the live rows are replaced inside a savepoint that is rolled back.
``rebuild(check=False)`` replaces the live rows in the caller's transaction:
on PostgreSQL other sessions keep reading the old rows until it commits.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar

from django.db import connection, models, transaction

from ledger.services.events import _SELECT, RecordedEvent, read_cursor, rows_to_events

Key = tuple[Any, ...]


class Projector:
    """One read model written only from events (subclass per model).

    ``key``: the ``values()`` lookups naming a row (a natural key: stable across
    a rebuild, unlike the ``id``); ``columns``: the lookups compared. Columns
    not listed are pacing state or configuration, not projections (say why in
    the subclass)."""

    name: ClassVar[str]
    model: ClassVar[type[models.Model]]
    stream_prefixes: ClassVar[tuple[str, ...]]
    event_types: ClassVar[frozenset[str] | None] = None  # None: every event of the streams
    key: ClassVar[tuple[str, ...]]
    columns: ClassVar[tuple[str, ...]]
    owns_rows: ClassVar[bool] = True
    # ``owns_rows = False``: the projected columns and the value a rebuild starts them from.
    column_defaults: ClassVar[Mapping[str, Any]] = {}

    def wants(self, event: RecordedEvent) -> bool:
        return event.stream_id.startswith(self.stream_prefixes) and (
            self.event_types is None or event.type in self.event_types
        )

    def apply_many(self, events: Sequence[RecordedEvent]) -> None:
        """Apply ``events`` (in log order, already filtered by ``wants``)."""
        for event in events:
            self.apply(event)

    def apply(self, event: RecordedEvent) -> None:
        raise NotImplementedError

    def queryset(self) -> models.QuerySet[Any]:
        return self.model._default_manager.all()

    def reset(self) -> None:
        """Empty the projection before a replay: delete the rows it owns (no
        cascade: the projectors that refer to them are reset first), or set
        its columns back to where the first event finds them."""
        if self.owns_rows:
            with connection.cursor() as cursor:
                cursor.execute(f"DELETE FROM {connection.ops.quote_name(self.model._meta.db_table)}")
        else:
            self.queryset().update(**self.column_defaults)

    def rows(self) -> dict[Key, dict[str, Any]]:
        """The projection's rows: key -> {column: value}."""
        found: dict[Key, dict[str, Any]] = {}
        for row in self.queryset().values(*self.key, *self.columns):
            found[tuple(row[k] for k in self.key)] = {c: row[c] for c in self.columns}
        return found


_projectors: dict[str, type[Projector]] = {}


def register_projector(projector: type[Projector]) -> None:
    """Register ``projector`` (by its ``name``; again: replaced, keeping its place)."""
    _projectors[projector.name] = projector


def registered_projectors() -> dict[str, type[Projector]]:
    return dict(_projectors)


def apply_events(
    events: Iterable[RecordedEvent], projectors: Sequence[Projector] | None = None, *, using: Sequence[Projector] = ()
) -> None:
    """Apply ``events`` (log order) with ``projectors`` (default: every registered
    projector, in registration order, a fresh instance of each except those
    given in ``using``: a service passes the rows it holds, to keep them current)."""
    batch = list(events)
    if projectors is None:
        given = {projector.name: projector for projector in using}
        projectors = [given.get(name) or cls() for name, cls in _projectors.items()]
    for projector in projectors:
        wanted = [event for event in batch if projector.wants(event)]
        if wanted:
            projector.apply_many(wanted)


def events_of(
    *, stream_id: str, first_version: int, events: Sequence[Any], metadata: Mapping[str, Any], at: datetime
) -> list[RecordedEvent]:
    """``RecordedEvent``s of ``NewEvent``s just appended (``first_version`` the
    first's), for a service to apply without reading them back; position,
    txid and hashes are not known here (no projector reads them)."""
    return [
        RecordedEvent(0, 0, stream_id, first_version + i, e.type, e.schema_version, e.data, metadata, at, "", "")
        for i, e in enumerate(events)
    ]


@dataclass(frozen=True)
class Difference:
    """A live row that differs from its rebuild: ``column`` None for a row
    only on one side (``live`` or ``rebuilt`` None)."""

    projector: str
    table: str
    key: Mapping[str, Any]
    column: str | None
    live: Any
    rebuilt: Any

    def __str__(self) -> str:
        where = ", ".join(f"{k}={v!r}" for k, v in self.key.items())
        if self.column is None:
            state = "missing (the log has it)" if self.live is None else "extra (the log does not have it)"
            return f"{self.table} [{self.projector}] row {where}: {state}"
        return (
            f"{self.table} [{self.projector}] row {where}: {self.column} live {self.live!r}, rebuilt {self.rebuilt!r}"
        )


def compare(projector: Projector, live: Mapping[Key, Mapping[str, Any]],
            rebuilt: Mapping[Key, Mapping[str, Any]]) -> list[Difference]:  # fmt: skip
    """Every difference between the live and the rebuilt rows, in key order."""
    table = projector.model._meta.db_table
    out: list[Difference] = []
    for key in sorted(set(live) | set(rebuilt), key=lambda k: tuple((v is None, str(v)) for v in k)):
        named = dict(zip(projector.key, key, strict=True))
        if key not in rebuilt:
            out.append(Difference(projector.name, table, named, None, dict(live[key]), None))
        elif key not in live:
            out.append(Difference(projector.name, table, named, None, None, dict(rebuilt[key])))
        else:
            out += [
                Difference(projector.name, table, named, column, live[key][column], rebuilt[key][column])
                for column in projector.columns
                if live[key][column] != rebuilt[key][column]
            ]
    return out


def iter_log(prefixes: Sequence[str], batch: int = 5000) -> Iterator[RecordedEvent]:
    """Every event of the streams named by ``prefixes``, in ``(txid, id)``
    order, including the current transaction's (no safe bound: a rebuild
    runs in one transaction and sees what it sees)."""
    where = " OR ".join(["stream_id LIKE %s"] * len(prefixes))
    likes = [prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%" for prefix in prefixes]
    after = (-1, 0)
    while True:
        with read_cursor() as cursor:
            cursor.execute(
                _SELECT + f"WHERE ({where}) AND (txid, id) > (%s, %s) ORDER BY txid, id LIMIT %s",
                [*likes, after[0], after[1], batch],
            )
            events = rows_to_events(cursor.fetchall())
        yield from events
        if len(events) < batch:
            return
        after = (events[-1].txid, events[-1].position)


def _replay(projectors: Sequence[Projector]) -> int:
    """Reset the projections and replay the log through them; returns the events read."""
    for projector in reversed(projectors):
        projector.reset()
    prefixes = sorted({p for projector in projectors for p in projector.stream_prefixes})
    count, chunk = 0, []
    for event in iter_log(prefixes):
        count += 1
        chunk.append(event)
        if len(chunk) >= 2000:
            apply_events(chunk, projectors)
            chunk = []
    apply_events(chunk, projectors)
    return count


def _shadow(projectors: Sequence[Projector]) -> None:
    """PostgreSQL: a temporary table of the same name for each projection, which
    this session reads and writes instead of the live one until it is dropped."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_schema()")
        schema = connection.ops.quote_name(cursor.fetchone()[0])
        for projector in projectors:
            table = connection.ops.quote_name(projector.model._meta.db_table)
            cursor.execute(f"CREATE TEMPORARY TABLE {table} (LIKE {schema}.{table} INCLUDING ALL)")
            if not projector.owns_rows:  # its rows are made elsewhere: copied, the columns reset
                cursor.execute(f"INSERT INTO {table} SELECT * FROM {schema}.{table}")


def selected(only: Sequence[str] | None = None) -> list[Projector]:
    """A fresh instance of the registered projectors named in ``only`` (all by default)."""
    unknown = set(only or ()) - set(_projectors)
    if unknown:
        raise ValueError(f"no such projection: {', '.join(sorted(unknown))} (known: {', '.join(_projectors)})")
    return [cls() for name, cls in _projectors.items() if not only or name in only]


@dataclass(frozen=True)
class RebuildResult:
    events: int
    rows: dict[str, int]  # projector name -> rows rebuilt
    differences: list[Difference]


def rebuild(*, check: bool, only: Sequence[str] | None = None) -> RebuildResult:
    """Replay the log through the projectors (``only``: those named) and compare
    the result with the live rows. ``check``: the live rows stay as they are
    (nothing is written); otherwise they are replaced, in one transaction, and
    the differences are what the rebuild repaired."""
    projectors = selected(only)
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if check and outermost and connection.vendor == "postgresql":
            # One snapshot for the live rows and the log: a step committing meanwhile is in both or in neither.
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        live = {p.name: p.rows() for p in projectors}
        point = transaction.savepoint() if check else None
        try:
            if check and connection.vendor == "postgresql":
                _shadow(projectors)
            events = _replay(projectors)
            rebuilt = {p.name: p.rows() for p in projectors}
        finally:
            if point is not None:
                transaction.savepoint_rollback(point)  # drops the shadow tables too
    differences = [d for p in projectors for d in compare(p, live[p.name], rebuilt[p.name])]
    return RebuildResult(events, {name: len(rows) for name, rows in rebuilt.items()}, differences)


def check_projections(only: Sequence[str] | None = None) -> list[Difference]:
    """The differences between the live projections and their rebuild (nothing written)."""
    return rebuild(check=True, only=only).differences
