"""Plain-text summary tables printed at the end of long commands."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def add_counts(total: dict[str, int], counts: Mapping[str, int]) -> None:
    """Add ``counts`` into ``total`` key by key (the counters reports merge from batches)."""
    for key, n in counts.items():
        total[key] = total.get(key, 0) + n


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]], title: str | None = None) -> str:
    """Render an aligned table; numbers are right-aligned, thousands separated, floats with 3 digits."""
    cells = [[_cell(value) for value in row] for row in rows]
    numeric = [all(isinstance(row[i], (int, float)) for row in rows) if rows else False for i in range(len(headers))]
    widths = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        return "  ".join(
            v.rjust(w) if numeric[i] else v.ljust(w) for i, (v, w) in enumerate(zip(values, widths))
        ).rstrip()

    out = []
    if title:
        out.append(title)
    out.append(line(list(headers)))
    out.append("  ".join("-" * w for w in widths))
    out.extend(line(row) for row in cells)
    return "\n".join(out)


def _cell(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.3f}"
    return "" if value is None else str(value)
