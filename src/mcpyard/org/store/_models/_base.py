"""What every model of the organization's storage shares: the base, ids, UTC times, fixed constraint names."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Any, ClassVar, get_args

from sqlalchemy import JSON, CheckConstraint, DateTime, Dialect, ForeignKey, MetaData, String, TypeDecorator
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

__all__ = [
    "NAMING_CONVENTION",
    "Base",
    "UTCDateTime",
    "id_column",
    "literal_check",
    "new_id",
    "org_column",
    "time_column",
    "utcnow",
]


def new_id() -> str:
    """A random id (128 bits, URL-safe): guessing another organization's ids is hopeless.

    Never one starting with `-`, which a command line would read as an option (`mcpyard org token revoke ID`).
    """
    while (drawn := secrets.token_urlsafe(16)).startswith("-"):
        pass
    return drawn


def utcnow() -> datetime:
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC time on both engines.

    SQLite keeps no time zone: a plain `DateTime(timezone=True)` comes back naive there and
    cannot be compared with `utcnow()`. Times are stored in UTC and always read back aware.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("a naive datetime cannot be stored: use an aware UTC time (utcnow())")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


# Constraint names are fixed, the same on both engines: a later migration can name what it
# alters (SQLite's batch mode cannot drop an unnamed constraint).
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    """The models' common base; `Base.metadata` is what the migrations must match."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map: ClassVar[dict[Any, Any]] = {dict[str, Any]: JSON, list[Any]: JSON, datetime: UTCDateTime}


def literal_check(column: str, values: Any) -> CheckConstraint:
    """A CHECK that `column` holds one of the `Literal` type `values`' strings: named `ck_<table>_<column>`."""
    allowed = ", ".join(f"'{value}'" for value in get_args(values))
    return CheckConstraint(f"{column} IN ({allowed})", name=column)


def id_column() -> Mapped[str]:
    """A primary key: a random id (`new_id`)."""
    return mapped_column(String(32), primary_key=True, default=new_id)


def time_column() -> Mapped[datetime]:
    """A time, set to now when the row is made."""
    return mapped_column(UTCDateTime, default=utcnow)


def org_column() -> Mapped[str]:
    """The organization a row belongs to (deleted with it)."""
    return mapped_column(String(32), ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
