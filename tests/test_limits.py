"""docs/limits.md is true: every row's value is the one mcpyard's code holds under the name the row gives.

The table's last column names a module-level constant (`module:NAME`) or the default of a class's field
or a function's parameter (`module:Owner.field`: a dataclass field, else a parameter of the class or the
function). Values are read strictly: a number (thousands written `1,024`, a fraction `0.5`) and a unit
mcpyard's docs use; anything else fails its row. A constant whose name ends in `_MS` holds milliseconds.
"""

from __future__ import annotations

import dataclasses
import datetime
import importlib
import inspect
import re
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LIMITS = ROOT / "docs" / "limits.md"
HEADER = ("What", "Value", "Where to change it", "Constant")

SIZES = {"bytes": Decimal(1), "KiB": Decimal(1024), "MiB": Decimal(1024**2), "GiB": Decimal(1024**3)}
TIMES = {"ms": Decimal("0.001"), "s": Decimal(1), "minutes": Decimal(60), "hours": Decimal(3600)}
COUNTS = frozenset(
    {
        "addresses",
        "calls",
        "characters",
        "choices",
        "connections",
        "entries",
        "errors",
        "failures",
        "fields",
        "items",
        "levels",
        "lines",
        "messages",
        "pages",
        "parts",
        "questions",
        "references",
        "results",
        "scopes",
        "servers",
        "steps",
        "streams",
        "subscriptions",
        "threads",
        "tools",
        "topics",
        "turns",
        "values",
    }
)
"""Things counted; a value with no unit at all (a port) is a plain number."""

_VALUE = re.compile(r"(?P<number>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<fraction>\d+))?(?: (?P<unit>[A-Za-z]+))?")
_NAME = re.compile(
    r"`(?P<module>[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)*):(?P<attribute>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)`"
)


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the table, as written: its cells, stripped."""

    line: int
    cells: tuple[str, ...]

    def __str__(self) -> str:
        return f"docs/limits.md:{self.line} ({self.cells[0] if self.cells else 'an empty row'})"


@dataclass(frozen=True, slots=True)
class Quantity:
    """A value as the table writes it: a number in its unit's base (bytes, seconds or a count), and the kind."""

    amount: Decimal
    kind: str
    """`size`, `time` or `count`."""


def table(text: str) -> tuple[list[Row], list[int]]:
    """Every row of the text's table (header and rule included), and the lines of the text that are table lines."""
    rows: list[Row] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("|"):
            inner = line.strip()
            cells = inner[1:-1] if inner.endswith("|") and len(inner) > 1 else inner[1:]
            rows.append(Row(number, tuple(cell.strip() for cell in cells.split("|"))))
    return rows, [row.line for row in rows]


def limit_rows() -> list[Row]:
    """The table's rows of limits: every row after the header and its rule."""
    return table(LIMITS.read_text(encoding="utf-8"))[0][2:]


def quantity(written: str) -> Quantity:
    """The value a cell writes, read strictly.

    Raises:
        ValueError: the cell is not a number and one known unit.
    """
    match = _VALUE.fullmatch(written)
    if match is None:
        raise ValueError(f"{written!r} is not a number and a unit (such as `64 KiB`, `30 s`, `1,000 characters`)")
    number = Decimal(match["number"].replace(",", "") + (f".{match['fraction']}" if match["fraction"] else ""))
    unit = match["unit"]
    if unit is None:
        return Quantity(number, "count")
    if unit in SIZES:
        return Quantity(number * SIZES[unit], "size")
    if unit in TIMES:
        return Quantity(number * TIMES[unit], "time")
    if unit in COUNTS:
        return Quantity(number, "count")
    raise ValueError(f"{written!r} has a unit this table does not use: {unit!r}")


def held(name: str) -> object:
    """What the code holds under `module:NAME` or `module:Owner.field`.

    Raises:
        LookupError: the module has no such name, or the owner no such field or parameter with a default.
    """
    match = _NAME.fullmatch(name)
    if match is None:
        raise LookupError(f"{name!r} is not `module:NAME` or `module:Owner.field`, in backticks")
    module = importlib.import_module(match["module"])
    owner_name, _, field_name = match["attribute"].partition(".")
    if not hasattr(module, owner_name):
        raise LookupError(f"{match['module']} has no {owner_name}")
    owner = getattr(module, owner_name)
    if not field_name:
        return owner
    if isinstance(owner, type) and dataclasses.is_dataclass(owner):
        for field in dataclasses.fields(owner):
            if field.name == field_name:
                if field.default is dataclasses.MISSING:
                    raise LookupError(f"{owner_name}.{field_name} has no plain default")
                return field.default
        raise LookupError(f"the dataclass {owner_name} has no field {field_name}")
    parameter = inspect.signature(owner).parameters.get(field_name)
    if parameter is None or parameter.default is inspect.Parameter.empty:
        raise LookupError(f"{owner_name} has no parameter {field_name} with a default")
    return parameter.default


def in_base_units(value: object, kind: str, name: str) -> Decimal:
    """A value the code holds, in its kind's base unit (bytes, seconds, a count), to compare with the table's.

    Raises:
        TypeError: the value is not a number of that kind (a size or a count is a whole number).
    """
    if isinstance(value, bool) or value is None:
        raise TypeError(f"{name} is {value!r}, not a number")
    if isinstance(value, datetime.timedelta) and kind == "time":
        return Decimal(str(value.total_seconds()))
    if isinstance(value, int):
        amount = Decimal(value)
    elif isinstance(value, float) and kind == "time":
        amount = Decimal(repr(value))
    else:
        raise TypeError(f"{name} is {value!r}, not a {'whole number' if kind != 'time' else 'time'}")
    if kind == "time" and name.strip("`").upper().endswith("_MS"):
        amount *= TIMES["ms"]
    return amount


def test_the_limits_page_holds_one_table_of_four_columns() -> None:
    rows, lines = table(LIMITS.read_text(encoding="utf-8"))
    assert lines == list(range(lines[0], lines[0] + len(lines))), "the table's lines must follow one another"
    assert rows[0].cells == HEADER
    assert len(rows[1].cells) == len(HEADER)
    assert all(re.fullmatch(r"-+", cell) for cell in rows[1].cells)
    for row in rows[2:]:
        assert len(row.cells) == len(HEADER), f"{row}: {len(row.cells)} cells, not {len(HEADER)}"
        assert all(row.cells), f"{row}: an empty cell (write — where nothing can be changed)"


def test_the_limits_table_lists_at_least_25_limits() -> None:
    assert len(limit_rows()) >= 25


def test_each_limit_is_named_once() -> None:
    names = [row.cells[-1] for row in limit_rows()]
    twice = sorted({name for name in names if names.count(name) > 1})
    assert not twice, f"named more than once: {twice}"


@pytest.mark.parametrize("row", limit_rows(), ids=lambda row: row.cells[-1].strip("`"))
def test_each_limit_is_the_value_the_code_holds(row: Row) -> None:
    assert len(row.cells) == len(HEADER), f"{row}: {len(row.cells)} cells, not {len(HEADER)}"
    try:
        written = quantity(row.cells[1])
    except ValueError as exc:
        pytest.fail(f"{row}: {exc}")
    try:
        value = held(row.cells[-1])
    except (LookupError, ImportError) as exc:
        pytest.fail(f"{row}: {exc}")
    try:
        actual = in_base_units(value, written.kind, row.cells[-1])
    except TypeError as exc:
        pytest.fail(f"{row}: {exc}")
    assert actual == written.amount, f"{row}: the table says {row.cells[1]}, the code holds {value!r}"


@pytest.mark.parametrize("written", ["64 KB", "30s", "sixty s", "1,00 s", "64 KiB or so", "", "-5 s", "5 Ms"])
def test_a_value_the_table_cannot_read_is_refused(written: str) -> None:
    with pytest.raises(ValueError, match=r"not a number and a unit|a unit this table does not use"):
        quantity(written)


def test_a_value_is_read_in_its_units_base() -> None:
    assert quantity("64 KiB") == Quantity(Decimal(65_536), "size")
    assert quantity("5 ms") == Quantity(Decimal("0.005"), "time")
    assert quantity("10 minutes") == Quantity(Decimal(600), "time")
    assert quantity("20,000 characters") == Quantity(Decimal(20_000), "count")
    assert quantity("8750") == Quantity(Decimal(8750), "count")
    assert in_base_units(10_000, "time", "BUSY_TIMEOUT_MS") == Decimal(10)
    assert in_base_units(datetime.timedelta(minutes=15), "time", "MAX_LOCKOUT") == Decimal(900)
