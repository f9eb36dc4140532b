"""The ``--figure`` PNG: F1 per label, one bar per system, grouped (and micro F1), with bootstrap intervals.

matplotlib is imported here, inside the function, and only the object-oriented ``Figure`` with the Agg
canvas is used: no pyplot state, no display needed (servers, CI), nothing global changed.

What the figure is for is telling systems apart, and good systems differ in the second decimal: so the
axis starts a little below the lowest value shown (interval included) instead of at 0, each bar carries
its value, and each bar its bootstrap interval (per label, and on micro F1), so that a difference
within the intervals is seen as one.
"""

from __future__ import annotations

import math
from io import BytesIO
from pathlib import Path

import numpy as np

from deid_ds.io.files import atomic_path


def axis_floor(values) -> float:
    """The bottom of the F1 axis: 0.05 below the lowest value, rounded down to a tenth, within [0, 0.9].

    ``[0.63, 0.99]`` → 0.5; ``[0.97, 1.0]`` → 0.9; ``[0.02, 0.5]`` → 0.0: the differences stay visible, and
    the axis still starts on a round number so that a reader does not mistake the bar heights for ratios.
    """
    finite = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    lowest = min(finite, default=0.0)
    return max(0.0, min(0.9, math.floor((lowest - 0.05) * 10 + 1e-9) / 10))


def f1_figure(comparison, path: str | Path, *, title: str | None = None, png: bytes | None = None) -> Path:
    """Write :func:`f1_figure_png` to ``path`` atomically (``png``: the figure already drawn)."""
    path = Path(path)
    data = png if png is not None else f1_figure_png(comparison, title=title)
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
    return path


def f1_figure_png(comparison, *, title: str | None = None) -> bytes:
    """Grouped bars of exact F1 per label (then micro) for each system, as PNG bytes.

    Error bars are the bootstrap intervals (``comparison.label_ci`` per label, ``comparison.ci`` on micro).
    Labels absent from both gold and a system's predictions score 1.0 by :mod:`deid_ds.evaluation.scoring`'s
    convention: their bars are faded, and each tick shows the label's gold count, so a reader sees when a
    bar rests on no data.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    scores = comparison.scores
    names = list(scores)
    labels: list[str] = []
    for s in scores.values():
        labels += [label for label in s.exact if label not in labels]
    gold_counts = {
        label: max((s.exact[label].gold for s in scores.values() if label in s.exact), default=0) for label in labels
    }
    groups = [*labels, "micro"]
    x = np.arange(len(groups))
    width = 0.8 / max(1, len(names))
    bars: dict[str, tuple[list[float], list[float], list[float]]] = {}  # name -> values, lows, highs
    for name in names:
        s = scores[name]
        label_ci = getattr(comparison, "label_ci", {}).get(name, {})
        values, lows, highs = [], [], []
        for label in labels:
            value = s.exact[label].f1 if label in s.exact else 1.0
            low, high = label_ci.get(label, (value, value))
            values.append(value)
            lows.append(min(low, value))
            highs.append(max(high, value))
        low, high = comparison.ci[name]
        values.append(s.micro.f1)
        lows.append(min(low, s.micro.f1))
        highs.append(max(high, s.micro.f1))
        bars[name] = (values, lows, highs)
    floor = axis_floor([v for values, lows, _ in bars.values() for v in (*values, *lows)])
    headroom = (1.0 - floor) * 0.32  # above 1.0: the values written on the bars, then the legend
    figure = Figure(figsize=(max(7.0, (0.35 + 0.3 * len(names)) * len(groups) + 1.5), 4.6), dpi=120)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot(1, 1, 1)
    for i, name in enumerate(names):
        values, lows, highs = bars[name]
        offsets = x - 0.4 + width * (i + 0.5)
        bottoms = [floor] * len(values)
        heights = [max(0.0, v - floor) for v in values]
        container = axes.bar(offsets, heights, width, bottom=bottoms, label=name)
        for patch, label in zip(container.patches, labels):
            if label not in scores[name].exact or scores[name].exact[label].empty:
                patch.set_alpha(0.3)  # no gold and nothing predicted: the 1.0 of the convention, faded
        axes.errorbar(
            offsets,
            values,
            yerr=[np.subtract(values, lows), np.subtract(highs, values)],
            fmt="none",
            ecolor="black",
            capsize=2,
            linewidth=0.8,
        )
        for offset, value, high in zip(offsets, values, highs):
            axes.text(
                offset,
                max(high, floor) + (1.0 - floor) * 0.015,
                f"{value:.3f}",
                rotation=90,
                ha="center",
                va="bottom",
                fontsize=6.5,
            )
    axes.set_xticks(x)
    axes.set_xticklabels([f"{label}\n(n={gold_counts[label]:,})" for label in labels] + ["micro"], fontsize=8)
    axes.set_xlim(-0.6, len(groups) - 0.4)
    axes.set_ylabel("F1 (exact span)")
    axes.set_ylim(floor, 1.0 + headroom)
    ticks = list(np.arange(floor, 1.0 + 1e-9, 0.1 if 1.0 - floor > 0.3 else 0.05))
    axes.set_yticks(ticks)
    axes.set_yticklabels([f"{t:.2f}" for t in ticks])
    axes.axhline(1.0, color="grey", linewidth=0.6)
    axes.grid(axis="y", linewidth=0.5, alpha=0.5)
    axes.set_axisbelow(True)
    axes.legend(fontsize=8, loc="upper right", ncol=max(1, min(len(names), 4)), frameon=False)
    axes.set_title(
        title
        or (
            f"Exact F1 per label, {percent(comparison.confidence)} bootstrap intervals over documents "
            f"(axis from {floor:.1f})"
        ),
        fontsize=10,
    )
    figure.tight_layout()
    buffer = BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def percent(confidence: float) -> str:
    """``0.95`` → ``"95%"``."""
    return f"{confidence * 100:g}%"
