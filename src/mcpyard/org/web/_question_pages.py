"""Answering a server's question from a page: the inbox's or the conversation's form, posted and redirected (ORG-5).

The form posts its fields as text (`field-<name>`, several for a multiple choice) and the action
chosen; the service reads them against the question's form and answers once. A refused answer
goes back to the page it came from, naming the fields that do not fit (never a value: the form is
empty again, and a secret typed into it is not sent back).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from mcpyard.errors import ServiceError
from mcpyard.org import services
from mcpyard.org.web._pages import Notice, PageRoutes, Pages, Visit, field

__all__ = ["PAGES"]

FIELD_PREFIX = "field-"
DONE = {
    "accepted": "Answered: the call goes on with your answer.",
    "declined": "Declined: the server was told you declined.",
    "cancelled": "Cancelled: the server was told you did not answer.",
}


def _back(target: str) -> str:
    return target if target.startswith("/conversations/") else "/inbox"


PAGES = PageRoutes()


@PAGES.page("/questions/{question_id}/answer", "POST", back="/inbox")
async def answer(pages: Pages, request: Request, visit: Visit) -> Response:
    form = await pages.form(request, visit)
    back = _back(field(form, "back"))
    values = {
        key.removeprefix(FIELD_PREFIX): [value for value in form.getlist(key) if isinstance(value, str)]
        for key in form
        if key.startswith(FIELD_PREFIX)
    }
    try:
        answered = await services.answer_from_page(
            pages.svc, visit.caller, request.path_params["question_id"], field(form, "action"), values
        )
    except ServiceError as exc:
        return pages.redirect(request, back, Notice("error", exc.message))
    return pages.redirect(request, back, Notice("done", DONE.get(answered["status"], "Answered.")))
