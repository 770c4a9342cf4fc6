"""Dramatiq actors. `dramatiq jobs` imports this package: the worker process's composition
root (the web process imports it too, to send messages). In one place and in this order: the
broker with its middleware (`build_broker`, before any actor is declared on it), the actor
modules, then the run kinds and domain hooks, the periodic jobs and the use cases' queue."""

from jobs.broker import build_broker

broker = build_broker()

from bayes_app import registry  # noqa: E402
from bayes_app.usecases import queue as app_queue  # noqa: E402  (jobs.queue would shadow `queue`)
from jobs import library, living, maintenance, runs, system, zotero  # noqa: E402
from jobs.periodic import periodic  # noqa: E402
from jobs.queue import DramatiqQueue  # noqa: E402

registry.register()
periodic.every(runs.REAP_EVERY_S, "reap_runs", at_boot={"follow_leases": True})
periodic.every(zotero.PERIODIC_CHECK_S, "sync_zotero_due")
periodic.every(maintenance.REAP_INGESTION_EVERY_S, "reap_ingestion")
periodic.every(maintenance.RESTRUCTURE_EVERY_S, "restructure_outdated")
periodic.every(maintenance.SWEEP_FILES_EVERY_S, "sweep_files")
periodic.every(maintenance.RELINK_CITATIONS_EVERY_S, "relink_citations")
app_queue.use(DramatiqQueue())
