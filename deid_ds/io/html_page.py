"""Self-contained HTML pages for people to look at: the evaluation report and the review page.

Both pages may hold note text, so they are built to stay where they are written:

* **nothing is fetched**: styles are inline, images are ``data:`` URIs, there is no script and no web
  font, and a Content-Security-Policy forbids any other source, so opening the page sends no request
  (no tracking pixel or remote stylesheet can slip in through a note, either);
* **every text is escaped** (:func:`esc`): note text is shown as text, never as markup, so a note's own
  HTML (a ``<script>``, an ``<img src=...>``) cannot run or load anything;
* **a banner** says what the page holds (:func:`page`), for whoever opens it later.

Entities are highlighted with a colour per label (:func:`highlighted`, :func:`legend`), the same in
both pages.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from pathlib import Path

from deid_ds.errors import InputError
from deid_ds.io.output_dir import Inputs, OutputRefused, forbidden_file_reason
from deid_ds.model import LABELS

#: Marks a page as deid-ds's: such a file may be replaced by the next run, any other is left alone.
GENERATOR = '<meta name="generator" content="deid-ds">'

#: What a browser may load for the page: nothing but its own inline styles and data: images.
CONTENT_SECURITY_POLICY = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; form-action 'none'"

#: A background colour per label (light, so that black text stays readable; distinct in print too).
LABEL_COLOURS: dict[str, str] = {
    "PATIENT": "#ffb3b3",
    "DOCTOR": "#b3d9ff",
    "DATE": "#c6f0c2",
    "EMAIL": "#f5d0f5",
    "PHONE": "#ffe0a3",
    "STR": "#d9c7f0",
    "ZIP": "#c2ece8",
    "VILLE": "#f0e68c",
}
OTHER_COLOUR = "#dddddd"

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif; margin: 1.5em auto;
  max-width: 1400px; padding: 0 1em; color: #1a1a1a; line-height: 1.4; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.05em; }
.banner { background: #fff3cd; border: 2px solid #e0a800; padding: 0.6em 1em; border-radius: 4px; }
.banner strong { color: #8a5300; }
.info { background: #eef4fb; border: 1px solid #9cbbe0; padding: 0.5em 1em; border-radius: 4px; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; vertical-align: top; }
th { background: #f2f2f2; } td.name, th.name { text-align: left; }
table.examples td, table.examples th { text-align: left; } table.examples td:nth-child(4) { white-space: nowrap; }
.ci { color: #666; font-size: 0.85em; white-space: nowrap; }
img.figure { max-width: 100%; border: 1px solid #ddd; }
mark { padding: 0 0.1em; border-radius: 2px; color: inherit; }
mark .tag { font-size: 0.7em; font-weight: bold; vertical-align: super; margin-left: 0.15em; color: #333; }
mark.missed { outline: 2px dashed #c00; }
.legend span { display: inline-block; margin: 0 0.6em 0.3em 0; padding: 0 0.4em; border-radius: 2px; }
.context { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, monospace; font-size: 0.85em; text-align: left;
  white-space: pre-wrap; word-break: break-word; }
.note { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, monospace; font-size: 0.85em; white-space: pre-wrap;
  word-break: break-word; border: 1px solid #ccc; padding: 0.6em; background: #fcfcfc; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 1em; }
.pair h3 { margin: 0.3em 0; }
.meta { color: #555; font-size: 0.9em; }
details { margin: 0.4em 0; } summary { cursor: pointer; font-weight: bold; }
"""


def esc(value: object) -> str:
    """``value`` as HTML text (``<``, ``>``, ``&`` and quotes escaped): safe in text and in attributes."""
    return html.escape("" if value is None else str(value), quote=True)


def label_colour(label: str) -> str:
    return LABEL_COLOURS.get(label, OTHER_COLOUR)


def label_class(label: str) -> str:
    """A CSS class name for ``label`` (letters, digits and dashes only, whatever the label)."""
    return "label-" + "".join(c if c.isalnum() else "-" for c in label)


def label_styles(labels: Iterable[str] = ()) -> str:
    """CSS rules giving each label (the eight, then ``labels``) its colour."""
    names = list(dict.fromkeys([*LABELS, *labels]))
    return "\n".join(
        f"mark.{label_class(n)}, .legend .{label_class(n)} {{ background: {label_colour(n)}; }}" for n in names
    )


def legend(labels: Iterable[str]) -> str:
    """One coloured chip per label."""
    chips = "".join(f'<span class="{label_class(label)}">{esc(label)}</span>' for label in labels)
    return f'<div class="legend">{chips}</div>'


def highlighted(text: str, spans: Sequence[tuple[int, int, str]], *, extra_class: str = "", tags: bool = True) -> str:
    """``text`` escaped, with each ``(start, end, label)`` range (offsets into ``text``) in a coloured ``<mark>``.

    Overlapping ranges are not nested: a range starting inside the previous one is shown from where
    that one ends (the text is never repeated or lost). With ``tags``, the label follows the entity in
    small letters, for readers who do not tell the colours apart.
    """
    out: list[str] = []
    position = 0
    for start, end, label in sorted(spans, key=lambda s: (s[0], -s[1])):
        start, end = max(start, position), min(end, len(text))
        if end <= start:
            continue
        out.append(esc(text[position:start]))
        classes = " ".join(c for c in (label_class(label), extra_class) if c)
        tag = f'<span class="tag">{esc(label)}</span>' if tags else ""
        out.append(f'<mark class="{classes}" title="{esc(label)}">{esc(text[start:end])}{tag}</mark>')
        position = end
    out.append(esc(text[position:]))
    return "".join(out)


def page(title: str, body: str, *, banner: str | None = None, labels: Iterable[str] = ()) -> str:
    """A whole HTML document: the CSP, the styles, ``banner`` (a warning, shown first) and ``body``."""
    warning = f'<div class="banner" role="alert">{banner}</div>' if banner else ""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CONTENT_SECURITY_POLICY}">\n'
        f"{GENERATOR}\n"
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="robots" content="noindex, nofollow">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(title)}</title>\n<style>{_CSS}\n{label_styles(labels)}\n</style>\n</head>\n<body>\n"
        f"<h1>{esc(title)}</h1>\n{warning}\n{body}\n</body>\n</html>\n"
    )


def check_replaceable(path: str | Path, overwrite: bool | None = False, inputs: Inputs = ()) -> None:
    """Refuse to write a page over a file that deid-ds did not write, unless ``overwrite`` (``None``: the
    caller has no such option, and the message does not offer one).

    A page of a previous run (it carries :data:`GENERATOR`) is replaced, so that a command can be run
    again; anything else at ``path`` (a directory, someone's file) is refused with a one-line error.
    An input of the run (``inputs``: files or directories, ``None`` for an option not given) or a file
    inside one is refused even with ``overwrite`` (:func:`deid_ds.io.output_dir.forbidden_file_reason`).
    """
    path = Path(path)
    if path.is_symlink():
        raise OutputRefused(f"{path}: is a symbolic link; give the file it points to, or another path")
    reason = forbidden_file_reason(path, inputs)
    if reason is not None:
        raise OutputRefused(f"{path}: refused, {reason} (never replaced, even with --overwrite); choose another path")
    if path.is_dir():
        raise InputError(f"{path} is a directory: give the path of the page to write")
    if not path.exists() or overwrite:
        return
    try:
        with path.open("rb") as file:
            head = file.read(2048)
    except OSError:
        head = b""
    if GENERATOR.encode() not in head:
        offer = "" if overwrite is None else " (or --overwrite)"
        raise InputError(f"{path} exists and was not written by deid-ds: choose another path{offer}")
