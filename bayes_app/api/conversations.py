"""Conversation routes: list, read (with messages), rename / pin, delete.

Questions are asked through `POST /runs` (`conversation_id`, `edit_message_id`)."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from bayes_app.api import schemas
from bayes_app.api.deps import read_model, require_user
from bayes_app.api import responses as R
from bayes_app.api.routing import op
from bayes_app.api.errors import ApiError, not_found
from bayes_app.app import conversations as app_conversations
from bayes_app.chat import conversations as chat
from bayes_app.db import session_scope
from bayes_app.llm.factory import is_offline


def _list(user_id: str) -> dict[str, Any]:
    with session_scope() as db:
        return {"conversations": [chat.view(c) for c in chat.list_for(db, user_id)],
                "offline_mode": is_offline()}


def _get(user_id: str, conv_id: str) -> dict[str, Any]:
    with session_scope() as db:
        conv = chat.get_owned(db, user_id, conv_id)
        if conv is None:
            raise not_found("conversation")
        return {**chat.view(conv), "messages": chat.message_views(db, conv.id),
                "active_run_ids": chat.active_runs(db, conv.id), "offline_mode": is_offline()}


def _patch(user_id: str, conv_id: str, body: dict[str, Any]) -> dict[str, Any]:
    with session_scope() as db:
        conv = chat.get_owned(db, user_id, conv_id)
        if conv is None:
            raise not_found("conversation")
        if "title" in body:
            title = body["title"]
            if not isinstance(title, str) or not title.strip():
                raise ApiError(400, "bad_request", "title must be a non-empty string.")
            conv.title = chat.title_for(title)
        if "scope" in body:
            conv.scope = chat.normalize_scope(db, user_id, body["scope"])
        db.add(conv)
        db.commit()
        return chat.view(conv)


async def list_conversations(request: Request) -> Response:
    user = await require_user(request)
    return JSONResponse(await run_in_threadpool(_list, user.id))


async def get_conversation(request: Request) -> Response:
    user = await require_user(request)
    return JSONResponse(await run_in_threadpool(_get, user.id, request.path_params["conversation_id"]))


async def patch_conversation(request: Request) -> Response:
    user = await require_user(request)
    body = (await read_model(request, schemas.ConversationPatch)).given()
    return JSONResponse(await run_in_threadpool(_patch, user.id, request.path_params["conversation_id"], body))


async def delete_conversation(request: Request) -> Response:
    user = await require_user(request)
    if not await run_in_threadpool(app_conversations.delete_conversation, user.id, request.path_params["conversation_id"]):
        raise not_found("conversation")
    return Response(status_code=204)


routes = [
    op("GET", "/conversations", list_conversations, "List conversations, newest first", R.ConversationList),
    op("GET", "/conversations/{conversation_id}", get_conversation, "A conversation with its messages and active runs", R.ConversationDetail),
    op("PATCH", "/conversations/{conversation_id}", patch_conversation, "Rename a conversation or pin it to documents/collections (scope)", R.ConversationOut, body=schemas.ConversationPatch),
    op("DELETE", "/conversations/{conversation_id}", delete_conversation, "Delete a conversation (its running answers are stopped)", status=204),
]
