"""The ``--figure`` PNG: F1 per label, one bar per system, grouped (and micro F1 with its interval).

matplotlib is imported here, inside the function, and only the object-oriented ``Figure`` with the Agg
canvas is used: no pyplot state, no display needed (servers, CI), nothing global changed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from deid_ds.io.files import atomic_path


def f1_figure(comparison, path: str | Path, *, title: str | None = None) -> Path:
    """Grouped bars of exact F1 per label (then micro, with its bootstrap interval) for each system.

    Labels absent from both gold and a system's predictions score 1.0 by :mod:`deid_ds.evaluation.scoring`'s
    convention: each tick shows the label's gold count, so a reader sees when a bar rests on no data.
    Written atomically.
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
    figure = Figure(figsize=(max(6.0, 0.9 * len(groups) + 1.5), 4.2), dpi=120)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot(1, 1, 1)
    for i, name in enumerate(names):
        s = scores[name]
        values = [s.exact[label].f1 if label in s.exact else 1.0 for label in labels] + [s.micro.f1]
        offsets = x - 0.4 + width * (i + 0.5)
        axes.bar(offsets, values, width, label=name)
        low, high = comparison.ci[name]
        micro = s.micro.f1
        axes.errorbar(
            [offsets[-1]],
            [micro],
            yerr=[[max(0.0, micro - low)], [max(0.0, high - micro)]],
            fmt="none",
            ecolor="black",
            capsize=3,
            linewidth=1,
        )
    axes.set_xticks(x)
    axes.set_xticklabels([f"{label}\n(n={gold_counts[label]:,})" for label in labels] + ["micro"], fontsize=8)
    axes.set_ylabel("F1 (exact span)")
    axes.set_yticks([0.0, 0.2, 0.4, 0.6, 0.8, 1.0])
    axes.set_ylim(0.0, 1.18)  # headroom for the legend above the bars
    axes.grid(axis="y", linewidth=0.5, alpha=0.5)
    axes.set_axisbelow(True)
    axes.legend(fontsize=8, loc="upper center", ncol=max(1, min(len(names), 4)), frameon=False)
    axes.set_title(
        title or f"F1 per label ({percent(comparison.confidence)} bootstrap interval on micro F1)", fontsize=10
    )
    figure.tight_layout()
    path = Path(path)
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png")
    return path


def percent(confidence: float) -> str:
    """``0.95`` → ``"95%"``."""
    return f"{confidence * 100:g}%"
