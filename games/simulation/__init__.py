"""A deterministic fault simulator of the table loops (issue #24, part 2;
docs/simulation.md). A development tool: nothing in production imports it,
``manage.py simulate_faults`` refuses production settings and ``check --deploy``
refuses ``CASINO_ALLOW_SIMULATOR``.

It runs the real services of the house and poker tables in one process and replaces only what
is around them: the clock (``SimClock``), the task queue (``SimQueue``, fed by
``games.tables.pacing.redirect_scheduling``), the clients and the operator (a
family's ``actions``), and it injects faults (``FaultInjector``). After every
step it checks the invariants (``games.simulation.invariants``).

- ``core``: the clock, the queue, the fault injector, the trace, the run loop,
  its report and the minimiser (ddmin over the steps); family-agnostic;
- ``house``: the house family (UTH, Casino Hold'em and Xtreme Hold'em tables);
- ``poker``: the poker family (ring tables);
- ``families``: both in one run (``--family all``) and the families by name;
- ``invariants``: the ledger-wide checks.

A family plugs in with ``setup``, ``client_step``, ``operator_step``,
``run_task``, ``drain``, ``check`` and ``counts`` (``core.Family``).
"""
