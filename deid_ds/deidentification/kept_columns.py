"""The input's columns written back into ``notes.parquet``: the ids with their own types, and the dates of
``--keep-column`` shifted like the notes' dates.

* **Ids.** The notes reader turns every id into a string (``12`` → ``"12"``) to match spans tables; the
  output's ``id_document``, ``id_patient`` and ``doc_type`` take back the input's types
  (:func:`id_fields`, :func:`typed_array`), so that ``notes.parquet`` joins with the rest of the warehouse
  as the input did. A value that does not read back (the ``FILE#rowN`` name of a note without an id) is
  null there, as it was in the input; ``documents.parquet`` and ``audit.parquet`` keep the string ids,
  every note's name included.
* **Dates.** A kept column of dates — typed ``date``/``timestamp``, or strings most of which read as full
  dates (``12/03/2021``, ``2021-03-12``, ``12 mars 2021``, an ISO date with a time) — copied unchanged
  would give back every date the notes shift, and the patient's offset with them. In ``surrogate`` mode
  each value is shifted by its patient's offset (:func:`shift_value`, the offset of
  :mod:`.dates_shift`, the string's format kept; a string that does not read as a date is written null,
  never as it was); with ``--privacy dp``, each value takes the ε·d-private surrogate of its day, the very one
  the notes write for that date (:func:`~.dates_shift.move_date`); in ``mask`` mode, where nothing is shifted,
  such a column is refused.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable, Sequence

import pyarrow as pa

from deid_ds.errors import InputError

#: The id columns written back with the input's types (when the input has them).
ID_COLUMNS = ("id_document", "id_patient", "doc_type")
#: Values read to decide whether a string column holds dates, and the share of full dates that says so.
DATE_SAMPLE, DATE_SHARE = 200, 0.5
_DATETIME = re.compile(r"^(?P<date>\d{4}-\d{2}-\d{2})(?P<time>[T ]\d{1,2}:\d{2}.*)$")


def id_fields(source, column_map: dict[str, str]) -> dict[str, pa.Field]:
    """The input's Arrow fields of the id columns it has, under our names (either engine's opened notes:
    the local one knows the input's names, Spark's frame already ours)."""
    present = [name for name in ID_COLUMNS if name in source.note_columns]
    if hasattr(source, "spark"):
        fields = source.fields(present)
    else:
        fields = source.fields([column_map.get(name, name) for name in present])
    return {name: f.with_name(name) for name, f in zip(present, fields)}


def typed_array(values: list, type_: pa.DataType) -> pa.Array:
    """String ids as ``type_``: cast whole, else value by value (one that does not read back is null)."""
    strings = pa.array(values, type=pa.string())
    if pa.types.is_string(type_):
        return strings
    try:
        return strings.cast(type_)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        cast = []
        for value in values:
            try:
                cast.append(pa.array([value], type=pa.string()).cast(type_)[0].as_py())
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                cast.append(None)
        return pa.array(cast, type=type_)


def _is_temporal(type_: pa.DataType) -> bool:
    return pa.types.is_date(type_) or pa.types.is_timestamp(type_)


def reads_as_date(value: str) -> bool:
    """A full date (day, month and year) in a form the date shift reads, or an ISO date with a time."""
    from deid_ds.deidentification.dates_shift import parse_date

    text = value.strip()
    match = _DATETIME.match(text)
    parsed = parse_date(match["date"] if match else text)
    return parsed is not None and parsed.kind == "full"


def date_columns(fields: Sequence[pa.Field], sample: Callable[[str], Iterable]) -> tuple[str, ...]:
    """The kept columns holding dates: typed so, or strings of which more than :data:`DATE_SHARE` of the first
    :data:`DATE_SAMPLE` non-null values (``sample(name)``) read as full dates."""
    found = []
    for f in fields:
        if _is_temporal(f.type):
            found.append(f.name)
        elif pa.types.is_string(f.type) or pa.types.is_large_string(f.type):
            values = [v for v in sample(f.name) if isinstance(v, str) and v.strip()][:DATE_SAMPLE]
            if values and sum(map(reads_as_date, values)) > DATE_SHARE * len(values):
                found.append(f.name)
    return tuple(found)


def check_date_columns(columns: Sequence[str], mode: str) -> None:
    """In ``mask`` mode nothing is shifted: a kept column of dates is refused (one line, naming it)."""
    if columns and mode == "mask":
        raise InputError(
            f"--keep-column {columns[0]}: it holds dates, which would be written unshifted beside notes whose "
            "dates are masked; drop it, or use --mode surrogate, where it is shifted by each patient's offset"
        )


def shift_value(value, shift_text: Callable[[str], str | None], move: Callable[[dt.date], dt.date]):
    """``value`` moved as ``move`` moves its day (a date, or a timestamp keeping its time), or re-rendered by
    ``shift_text`` (a string; its time kept after an ISO date); ``None`` for a string that does not read as a
    date, or a date ``move`` cannot place in the calendar."""
    if value is None:
        return None
    if isinstance(value, (dt.date, dt.datetime)):
        day = value.date() if isinstance(value, dt.datetime) else value
        try:
            return value + (move(day) - day)
        except OverflowError:
            return None
    if not isinstance(value, str):
        return None
    match = _DATETIME.match(value.strip())
    if match:
        shifted = shift_text(match["date"])
        return shifted + match["time"] if shifted is not None else None
    return shift_text(value)


def sample_values(source) -> Callable[[str], list]:
    """``sample(name)``: the first non-null values of the input's column ``name``, read alone (no HTML)."""

    def sample(name: str) -> list:
        if hasattr(source, "spark"):
            from pyspark.sql import functions as F

            frame = source.notes.frame.select(F.col(f"`{name}`")).where(F.col(f"`{name}`").isNotNull())
            return [row[0] for row in frame.limit(DATE_SAMPLE).collect()]
        import pyarrow.parquet as pq

        values: list = []
        for file in source.source.files:
            for batch in pq.ParquetFile(file).iter_batches(batch_size=4 * DATE_SAMPLE, columns=[name]):
                values += [v for v in batch.column(0).to_pylist() if v is not None]
                if len(values) >= DATE_SAMPLE:
                    return values
        return values

    return sample
