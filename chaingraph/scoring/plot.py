"""A picture of a score report: macro metrics as bars, and how the visual metrics move with
each threshold (``chaingraph score --plot FILE``; the format follows the file's suffix)."""

from __future__ import annotations

from pathlib import Path

from chaingraph.scoring.batch import ScoreReport

__all__ = ["RATIOS", "plot_report"]

#: the ratio metrics shown as bars, in the paper's order
RATIOS = ("nc", "rc", "va_p", "va_r", "nvrc", "ea", "aeba", "gea", "dri_ratio", "revisit")


def plot_report(report: ScoreReport, path: str | Path) -> Path:
    """Write the plot to ``path`` (``.png``, ``.svg``, ``.pdf``) and return it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    params = sorted({r.parameter for r in report.sensitivity})
    fig, axes = plt.subplots(1, 1 + len(params), figsize=(4 + 3.2 * len(params), 3.6), squeeze=False)
    ax = axes[0][0]
    vals = [report.macro.get(k) or 0.0 for k in RATIOS]
    ax.bar(range(len(RATIOS)), vals, color="#4c72b0")
    ax.set_xticks(range(len(RATIOS)), [k.upper().replace("_", "-") for k in RATIOS], rotation=60, fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_title(f"macro over {len(report.items)} item(s)", fontsize=9)
    for j, name in enumerate(params, start=1):
        ax = axes[0][j]
        rows = [r for r in report.sensitivity if r.parameter == name]
        for metric in rows[0].metrics if rows else ():
            ax.plot([r.value for r in rows], [r.metrics[metric] for r in rows], marker="o", label=metric)
        ax.set_ylim(0, 1)
        ax.set_xlabel(name, fontsize=8)
        ax.set_title(f"sensitivity: {name}", fontsize=9)
        if j == 1:
            ax.legend(fontsize=7)
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out)
    plt.close(fig)
    return out
