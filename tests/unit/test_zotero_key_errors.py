"""Connecting a Zotero key says whether Zotero refused the key or could not be reached (#40), in
words a person reads, never an exception class."""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from bayes_app.zotero.client import ZoteroAccessError, key_info
from bayes_app.zotero.http import Policy


class _Refuses(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"Invalid key"
        self.send_response(403)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_refused_key_is_told_apart_from_an_unreachable_zotero():
    server = HTTPServer(("127.0.0.1", 0), _Refuses)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with pytest.raises(ZoteroAccessError) as refused:
            key_info(f"http://127.0.0.1:{server.server_port}", "wrongkey999", Policy(max_attempts=1, max_wait_s=1))
    finally:
        server.shutdown()
    assert refused.value.code == "invalid_key"
    assert refused.value.message.startswith("Key refused: Zotero does not accept this API key")

    with pytest.raises(ZoteroAccessError) as away:
        key_info(f"http://127.0.0.1:{_closed_port()}", "anykey", Policy(max_attempts=1, max_wait_s=1))
    assert away.value.code == "unreachable"
    assert away.value.message.startswith("Zotero could not be reached")
    assert "Error" not in away.value.message  # no ConnectError & co.
