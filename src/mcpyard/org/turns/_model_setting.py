"""The organization's model: one OpenAI-compatible endpoint, a model name and its key (ORG-4, NET-1).

Owners and admins set it with `PUT /api/v1/model`. The base URL passes the outbound guard like a
server's URL; the key is sealed like a server's token and never shown again (the answer only says
whether there is one). A `PUT` replaces the setting whole: a key is given with the base URL it is
for, and a `PUT` without one leaves no key, so a key never reaches an address it was not given with.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from mcpyard.errors import Invalid
from mcpyard.org._caller import ADMINS, Caller, require
from mcpyard.org.keys import model_key_context
from mcpyard.org.services import OrgService, audit
from mcpyard.org.store import ModelSetting, utcnow
from mcpyard.org.turns._views import ModelView

__all__ = ["get_model", "put_model"]

MAX_MODEL_NAME = 200
MAX_KEY = 4096


def _json(setting: ModelSetting | None) -> ModelView:
    if setting is None:
        return {"base_url": None, "model": None, "has_key": False}
    return {"base_url": setting.base_url, "model": setting.model, "has_key": setting.sealed_key is not None}


async def get_model(svc: OrgService, caller: Caller) -> ModelView:
    async with svc.db.begin() as session:
        return _json(await session.scalar(select(ModelSetting).where(ModelSetting.org_id == caller.org_id)))


async def put_model(svc: OrgService, caller: Caller, body: dict[str, Any]) -> ModelView:
    require(caller, *ADMINS)
    base_url, model, api_key = body.get("base_url"), body.get("model"), body.get("api_key")
    if not isinstance(base_url, str) or not base_url:
        raise Invalid("url_refused", "give the endpoint's base URL, like https://api.example.com/v1")
    if not isinstance(model, str) or not model.strip() or len(model) > MAX_MODEL_NAME:
        raise Invalid("invalid_request", f"`model` must be a model name of at most {MAX_MODEL_NAME} characters")
    if api_key is not None and (
        not isinstance(api_key, str) or not api_key or len(api_key) > MAX_KEY or any(c in api_key for c in "\r\n")
    ):
        raise Invalid("invalid_request", "`api_key` must be a non-empty string on one line, or left out")
    url = await svc.check_url(base_url)
    async with svc.db.begin() as session:
        setting = await session.scalar(select(ModelSetting).where(ModelSetting.org_id == caller.org_id))
        old = _json(setting)
        if setting is None:
            setting = ModelSetting(org_id=caller.org_id, base_url=url, model=model)
            session.add(setting)
            await session.flush()
        setting.base_url, setting.model, setting.updated_at = url, model, utcnow()
        if api_key is not None:
            setting.key_id, setting.sealed_key = svc.sealer.seal(api_key, context=model_key_context(setting))
        else:
            setting.key_id, setting.sealed_key = None, None
        new = _json(setting)
        audit(session, caller.org_id, caller.email, "model.set", "model", old=old, new=new)
    return new
