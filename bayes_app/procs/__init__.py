"""The process model of `make run`: supervisord (the `supervisor` package) runs web, one
Dramatiq process per worker, the index and Redis, restarts whatever dies, and a small event
listener records exits and stops processes a dead program left behind.

`config` renders supervisord.conf, `listener` is the event listener, `status` reads the
live state (XML-RPC over the unix socket) and the recorded exits for health and the admin.
"""
