"""Serve the already-built Reflex app (frontend bundle + backend), without rebuilding, on
another address: `python -m tests.support.reflex_twin HOST PORT` from the project root.

Used for a second web process next to one started by `reflex run --env prod`: the built
frontend keeps the first process's port in its WebSocket URL but takes the hostname from the
page, so a twin on 127.0.0.2:<same port> gets the WebSocket of tabs opened on 127.0.0.2."""

from __future__ import annotations

import os
import sys


def main() -> None:
    host, port = sys.argv[1], int(sys.argv[2])
    os.environ["REFLEX_SKIP_COMPILE"] = "true"
    os.environ.setdefault("REFLEX_ENV_MODE", "prod")
    from reflex import constants
    from reflex.utils import exec as rx_exec

    rx_exec.run_backend_prod(host, port, constants.LogLevel.ERROR, mount_frontend_compiled_app=True)


if __name__ == "__main__":
    main()
