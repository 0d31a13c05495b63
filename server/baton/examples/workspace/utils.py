"""Parsing and formatting helpers for the expense report."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal, InvalidOperation

DATE_FORMATS = ("%Y-%m-%d", "%d/%m/%Y", "%d.%m.%Y")
# currency symbols and the spaces some banks put between the symbol and the digits
_NOISE = re.compile(r"[$€£\s]")


@dataclass(frozen=True)
class Expense:
    day: date
    description: str
    amount: Decimal
    category: str


def normalize_header(name: str) -> str:
    """'Category ', 'CATEGORY' and 'category' all name the same column."""
    return name.strip().lower().replace(" ", "_")


def parse_amount(text: str) -> Decimal:
    """'1,250.00', '$12.50', '-45' and '(45.00)' as Decimals; parentheses mean negative."""
    cleaned = _NOISE.sub("", text)
    negative = cleaned.startswith("(") and cleaned.endswith(")")
    if negative:
        cleaned = cleaned[1:-1]
    cleaned = cleaned.replace(",", "")
    try:
        value = Decimal(cleaned)
    except InvalidOperation:
        raise ValueError(f"not an amount: {text!r}") from None
    return -value if negative else value


def parse_date(text: str) -> date:
    """The date formats the bank has used so far."""
    for fmt in DATE_FORMATS:
        try:
            return datetime.strptime(text.strip(), fmt).date()
        except ValueError:
            continue
    raise ValueError(f"not a date: {text!r}")


def group_totals(expenses: Iterable[Expense]) -> dict[str, Decimal]:
    """The sum of the amounts in each category."""
    totals: dict[str, Decimal] = defaultdict(Decimal)
    for expense in expenses:
        totals[expense.category] += expense.amount
    return dict(totals)


def format_currency(amount: Decimal, symbol: str = "$") -> str:
    """-1234.5 -> '-$1,234.50'."""
    sign = "-" if amount < 0 else ""
    return f"{sign}{symbol}{abs(amount):,.2f}"
