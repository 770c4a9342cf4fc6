"""Conversation routes: list, read (with messages), rename / pin, delete.

Questions are asked through `POST /runs` (`conversation_id`, `edit_message_id`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.responses import Response

from bayes_app.api import schemas
from bayes_app.api.deps import CurrentUser, StrictJSONRoute
from bayes_app.api.errors import not_found
from bayes_app.usecases import conversations as app_conversations
from bayes_app.usecases import schemas as R

router = APIRouter(route_class=StrictJSONRoute)
P = "/conversations/{conversation_id}"


@router.get("/conversations", response_model=R.ConversationList, summary="List conversations, newest first")
def list_conversations(user: CurrentUser) -> Any:
    return app_conversations.listing(user.id)


@router.get(P, response_model=R.ConversationDetail, summary="A conversation with its messages and active runs")
def get_conversation(user: CurrentUser, conversation_id: str) -> Any:
    return app_conversations.detail(user.id, conversation_id)


@router.patch(
    P, response_model=R.ConversationOut, summary="Rename a conversation or pin it to documents/collections (scope)"
)
def patch_conversation(user: CurrentUser, conversation_id: str, body: schemas.ConversationPatch) -> Any:
    return app_conversations.patch(user.id, conversation_id, body.given())


@router.post(
    P + "/switch-version",
    response_model=R.ConversationDetail,
    summary="Show the exchanges the last edit of a question put aside instead of the ones since (again: back)",
)
def switch_version(user: CurrentUser, conversation_id: str) -> Any:
    return app_conversations.switch_version(user.id, conversation_id)


@router.delete(
    P, status_code=204, response_class=Response, summary="Delete a conversation (its running answers are stopped)"
)
def delete_conversation(user: CurrentUser, conversation_id: str) -> Response:
    if not app_conversations.delete_conversation(user.id, conversation_id):
        raise not_found("conversation")
    return Response(status_code=204)
