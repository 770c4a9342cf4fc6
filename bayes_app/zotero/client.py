"""pyzotero clients for one connected library, all governed by one `Policy`."""

from __future__ import annotations

import threading
import warnings
from dataclasses import dataclass

import httpx2
from pyzotero import Zotero
from pyzotero import errors as ze

from bayes_app.zotero.http import Policy, PolicyTransport, make_client

warnings.filterwarnings("ignore", category=DeprecationWarning, module="pyzotero")


class ZoteroAccessError(Exception):
    """A user-facing problem with the connection (bad key, no access, local API off)."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message


@dataclass(frozen=True)
class Target:
    """Where a library lives: the Web API (with a key) or the local API (user 0)."""

    api: str  # "web" | "local"
    base_url: str
    library_type: str  # "user" | "group"
    library_key: str
    api_key: str | None = None


class Clients:
    """One pyzotero `Zotero` per thread (it keeps per-request state), one shared policy
    transport and connection pool (so the ≤ 4 requests in flight hold across threads)."""

    def __init__(self, target: Target, policy: Policy, transport: httpx2.BaseTransport | None = None):
        self.target, self.policy = target, policy
        self.transport = PolicyTransport(policy, transport)
        self._local = threading.local()

    def get(self) -> Zotero:
        z = getattr(self._local, "zot", None)
        if z is None:
            t = self.target
            http = make_client(self.transport)
            if t.api == "local":
                z = Zotero(0, "user", None, local=True, client=http)
            else:
                z = Zotero(t.library_key, t.library_type, t.api_key, client=http)
            z.endpoint = t.base_url
            self._local.zot = z
        return z

    def last_version(self) -> int:
        """The library version from the last response of this thread's client."""
        req = self.get().request
        return int(req.headers.get("Last-Modified-Version", 0)) if req is not None else 0

    def close(self) -> None:
        self.transport.shutdown()


KEY_REFUSED = (
    "Key refused: Zotero does not accept this API key (mistyped, revoked, or without access to this "
    "library). Check it, or make a new one."
)


def describe_error(err: Exception) -> ZoteroAccessError | None:
    """Map pyzotero's exceptions for a bad connection to a clear message (None: transient)."""
    if isinstance(err, ze.UserNotAuthorisedError):
        return ZoteroAccessError(
            "forbidden", "Zotero refused access: the API key is invalid or lacks read access to this library."
        )
    if isinstance(err, ze.ResourceNotFoundError):
        return ZoteroAccessError("not_found", "Zotero does not know this library or key.")
    return None


def key_info(
    base_url: str, api_key: str, policy: Policy | None = None, transport: httpx2.BaseTransport | None = None
) -> dict:
    """`GET /keys/current` with the key in a header (never in a URL, which servers and
    clients log): the key's user id, name and permissions."""
    shared = PolicyTransport(policy or Policy(max_attempts=3, max_wait_s=10), transport)
    try:
        with make_client(shared) as http:
            r = http.get(f"{base_url}/keys/current", headers={"Zotero-API-Key": api_key, "Zotero-API-Version": "3"})
    except httpx2.HTTPError:
        raise ZoteroAccessError(
            "unreachable",
            "Zotero could not be reached from this server, so the key was not checked; "
            "try again later (or ask the admin whether the server can reach zotero.org).",
        ) from None
    finally:
        shared.shutdown()
    if r.status_code in (403, 404):
        raise ZoteroAccessError("invalid_key", KEY_REFUSED)
    if r.status_code != 200:
        raise ZoteroAccessError(
            "unavailable", f"Zotero could not check the key (HTTP {r.status_code}); try again later."
        )
    try:
        info = r.json()
    except ValueError:
        info = None
    if not isinstance(info, dict) or "userID" not in info:
        raise ZoteroAccessError("invalid_key", KEY_REFUSED)
    return info
