"""Monthly expense report: read a bank export (CSV), total it by category, print a table."""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Sequence
from pathlib import Path

from utils import Expense, format_currency, group_totals, normalize_header, parse_amount, parse_date

REQUIRED = ("date", "description", "amount", "category")


def read_expenses(path: Path) -> list[Expense]:
    """Every row of the export; a bad row stops the report with its line number."""
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames is None:
            raise ValueError(f"{path} is empty")
        reader.fieldnames = [normalize_header(name) for name in reader.fieldnames]
        missing = [name for name in REQUIRED if name not in reader.fieldnames]
        if missing:
            raise ValueError(f"{path} lacks column(s): {', '.join(missing)}")
        expenses = []
        for line, row in enumerate(reader, start=2):
            try:
                expenses.append(
                    Expense(
                        day=parse_date(row["date"]),
                        description=row["description"].strip(),
                        amount=parse_amount(row["amount"]),
                        category=row["category"].strip() or "Uncategorized",
                    )
                )
            except ValueError as exc:
                raise ValueError(f"{path}:{line}: {exc}") from None
    return expenses


def filter_month(expenses: list[Expense], month: str | None) -> list[Expense]:
    """Only the expenses of `month` (YYYY-MM); all of them when no month is given."""
    if not month:
        return expenses
    return [e for e in expenses if e.day.strftime("%Y-%m") == month]


def render(expenses: list[Expense]) -> str:
    """Categories by total, largest first, then the grand total."""
    totals = group_totals(expenses)
    width = max((len(name) for name in totals), default=8)
    rule = "-" * (width + 14)
    lines = [f"{'Category':<{width}}  {'Total':>12}", rule]
    for category, total in sorted(totals.items(), key=lambda item: item[1], reverse=True):
        lines.append(f"{category:<{width}}  {format_currency(total):>12}")
    lines.append(rule)
    lines.append(f"{'All':<{width}}  {format_currency(sum(totals.values())):>12}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="expenses", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    report = commands.add_parser("report", help="totals by category")
    report.add_argument("csv", type=Path, help="the bank's CSV export")
    report.add_argument("--month", help="only this month, as YYYY-MM")
    args = parser.parse_args(argv)
    try:
        expenses = filter_month(read_expenses(args.csv), args.month)
    except (OSError, ValueError) as exc:
        print(f"expenses: {exc}", file=sys.stderr)
        return 1
    print(render(expenses))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
