"""Tiny server-side SVG charts: horizontal bars, a histogram and a line chart.

Everything is drawn here so the dashboard works offline with no JavaScript. Every
label is escaped: category, project and source names come from agents. Colours are
SVG presentation attributes, not ``style``, so the strict CSP needs no inline styles.
"""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup, escape

PALETTE = ("#3b6ea8", "#c0504d", "#4f9a5b", "#8064a2", "#d28b26")
TEXT = 'font-family="sans-serif" font-size="11" fill="#333"'


def _svg(kind: str, width: int, height: int, title: str, body: list[str]) -> Markup:
    head = (
        f'<svg class="chart chart-{kind}" xmlns="http://www.w3.org/2000/svg" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(title)}"><title>{escape(title)}</title>'
    )
    return Markup(head + "".join(body) + "</svg>")


def _num(value: float) -> str:
    return f"{value:g}" if value == int(value) else f"{value:.2f}"


def bars(
    items: Sequence[tuple[str, float]], *, title: str, width: int = 460, color: str = PALETTE[0]
) -> Markup:
    """One horizontal bar per (label, value), longest first as given."""
    row, label_w, value_w = 20, 150, 50
    height = max(1, len(items)) * row + 4
    top = max((v for _, v in items), default=0) or 1
    span = width - label_w - value_w
    body: list[str] = []
    if not items:
        body.append(f'<text x="4" y="14" {TEXT}>No data yet</text>')
    for i, (label, value) in enumerate(items):
        y = i * row + 2
        length = max(1.0, span * value / top) if value else 0.0
        name = label if len(label) <= 24 else label[:23] + "…"
        body.append(
            f'<text x="{label_w - 6}" y="{y + 13}" text-anchor="end" {TEXT}>'
            f"<title>{escape(label)}</title>{escape(name)}</text>"
            f'<rect class="bar" x="{label_w}" y="{y + 2}" width="{length:.1f}" height="{row - 6}" '
            f'fill="{color}"/>'
            f'<text x="{label_w + length + 4:.1f}" y="{y + 13}" {TEXT}>{_num(value)}</text>'
        )
    return _svg("bars", width, height, title, body)


def histogram(
    values: Sequence[float],
    *,
    title: str,
    bins: int = 10,
    low: float = -1.0,
    high: float = 1.0,
    width: int = 460,
    height: int = 170,
) -> Markup:
    """Counts of ``values`` in ``bins`` equal bins from ``low`` to ``high`` (inclusive)."""
    counts = [0] * bins
    step = (high - low) / bins
    for value in values:
        index = int((min(max(value, low), high) - low) / step)
        counts[min(index, bins - 1)] += 1
    top = max(counts) or 1
    left, bottom, plot_h = 30, 20, height - 36
    col = (width - left - 6) / bins
    body = [
        f'<line x1="{left}" y1="{height - bottom}" x2="{width - 4}" y2="{height - bottom}" '
        'stroke="#999"/>',
        f'<text x="{left - 4}" y="{height - bottom - plot_h + 4}" text-anchor="end" {TEXT}>'
        f"{top}</text>",
    ]
    for i, count in enumerate(counts):
        bar_h = plot_h * count / top
        x = left + i * col
        edge = low + i * step
        body.append(
            f'<rect class="bar" x="{x + 1:.1f}" y="{height - bottom - bar_h:.1f}" '
            f'width="{col - 2:.1f}" height="{bar_h:.1f}" fill="{PALETTE[0]}">'
            f"<title>{edge:+.1f} to {edge + step:+.1f}: {count}</title></rect>"
        )
        if i % 2 == 0:
            body.append(f'<text x="{x:.1f}" y="{height - 6}" {TEXT}>{edge:+.1f}</text>')
    body.append(
        f'<text x="{width - 4}" y="{height - 6}" text-anchor="end" {TEXT}>{high:+.1f}</text>'
    )
    return _svg("histogram", width, height, title, body)


def lines(
    labels: Sequence[str],
    series: dict[str, Sequence[float]],
    *,
    title: str,
    width: int = 460,
    height: int = 180,
    top: float | None = None,
) -> Markup:
    """One polyline per series over the shared x ``labels`` (e.g. days), with a legend."""
    left, right, bottom, legend = 34, 8, 20, 16
    plot_w, plot_h = width - left - right, height - bottom - legend - 6
    peak = top if top is not None else max((max(v, default=0) for v in series.values()), default=0)
    peak = peak or 1
    base_y = height - bottom
    n = len(labels)

    def xy(i: int, v: float) -> str:
        x = left + (plot_w * i / (n - 1) if n > 1 else plot_w / 2)
        return f"{x:.1f},{base_y - plot_h * v / peak:.1f}"

    body = [
        f'<line x1="{left}" y1="{base_y}" x2="{width - right}" y2="{base_y}" stroke="#999"/>',
        f'<text x="{left - 4}" y="{base_y - plot_h + 4}" text-anchor="end" {TEXT}>'
        f"{_num(peak)}</text>",
        f'<text x="{left - 4}" y="{base_y}" text-anchor="end" {TEXT}>0</text>',
    ]
    if n:
        body.append(f'<text x="{left}" y="{height - 6}" {TEXT}>{escape(labels[0])}</text>')
        body.append(
            f'<text x="{width - right}" y="{height - 6}" text-anchor="end" {TEXT}>'
            f"{escape(labels[-1])}</text>"
        )
    for k, (name, values) in enumerate(series.items()):
        color = PALETTE[k % len(PALETTE)]
        points = " ".join(xy(i, v) for i, v in enumerate(values))
        body.append(
            f'<polyline class="line" points="{points}" fill="none" stroke="{color}" '
            f'stroke-width="2"><title>{escape(name)}</title></polyline>'
        )
        lx = left + k * 130
        body.append(
            f'<rect x="{lx}" y="2" width="10" height="10" fill="{color}"/>'
            f'<text x="{lx + 14}" y="11" {TEXT}>{escape(name)}</text>'
        )
    return _svg("lines", width, height, title, body)
