"""A deterministic fault simulator of the table loops (issue #24, part 2;
docs/simulation.md). A development tool: nothing in production imports it,
``manage.py simulate_faults`` refuses production settings and ``check --deploy``
refuses ``CASINO_ALLOW_SIMULATOR``.

It runs the real services of the tables in one process and replaces only what
is around them: the clock (``SimClock``), the task queue (``SimQueue``, fed by
``games.pacing.redirect_scheduling``), the clients and the operator (a
family's ``actions``), and it injects faults (``FaultInjector``). After every
step it checks the invariants (``games.simulation.invariants``).

- ``core``: the clock, the queue, the fault injector, the trace, the run loop
  and its report; family-agnostic;
- ``poker``: the poker family (ring tables);
- ``invariants``: the checks.

A family plugs in with ``setup``, ``client_step``, ``operator_step``,
``run_task``, ``drain`` and ``counts`` (``core.Family``): the house family is next.
"""
