"""The page-state reset on logout / user switch (state/session_guard.py) covers shared maps:
every var that holds a shared map's data lives in a state the guard resets."""

from __future__ import annotations

from state.admin import AdminState
from state.maps import MapsState
from state.mindmap import MapState
from state.session_guard import user_states

SHARED_VARS = {
    MapState: ("my_role", "gone_message", "viewing", "share_open", "share_email", "share_members", "map_id"),
    MapsState: ("shared",),
    AdminState: ("shares",),  # the admin dashboard's "who shares what with whom"
}


def test_the_session_guard_resets_every_sharing_var():
    reset = user_states()
    for cls, names in SHARED_VARS.items():
        assert cls in reset, cls
        for name in names:
            assert name in cls.get_fields(), (cls.__name__, name)
            field = cls.get_fields()[name]
            default = field.default_factory() if field.default_factory else field.default
            assert default in ("", [], False), (cls.__name__, name)
