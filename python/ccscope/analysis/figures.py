"""Paper-standard figures: the Pantheon throughput-delay plot, delay CDFs, series over time.

Every figure is drawn at its printed size (inches) with fonts of at least 9 pt, a colour-blind-safe
palette (Okabe and Ito 2008) doubled by marker and line style, axis labels with units, and the bin width
in the label of any binned quantity. SVGs are reproducible (fixed hash salt, no date) and keep text as
text, so an HTML page can inline them.
"""

from __future__ import annotations

import io
import math
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Optional, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker as mticker  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Polygon  # noqa: E402

from ccscope.analysis.files import write_atomic  # noqa: E402

# Okabe & Ito (2008), "Color Universal Design": distinguishable under every common colour-vision deficiency;
# yellow last (weak on white).
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
MARKERS = ("o", "s", "D", "^", "v", "P", "X", "*")
LINESTYLES = ("-", "--", "-.", ":")
# The smallest font on any figure, in points at the printed size.
MIN_FONT_PT = 9.0
STYLE = {
    "font.size": 10,
    "axes.titlesize": 10,
    "axes.labelsize": 10,
    "xtick.labelsize": MIN_FONT_PT,
    "ytick.labelsize": MIN_FONT_PT,
    "legend.fontsize": MIN_FONT_PT,
    "legend.title_fontsize": MIN_FONT_PT,
    "figure.titlesize": 10,
    "font.family": "DejaVu Sans",
    "axes.grid": True,
    "grid.alpha": 0.3,
    "lines.linewidth": 1.3,
    "svg.fonttype": "none",
    "svg.hashsalt": "ccscope",
}
# Points drawn per curve at most: longer series are reduced to their per-column envelope (min and max).
MAX_POINTS = 3000


@contextmanager
def paper_style() -> Iterator[None]:
    """The house style for drawing and saving (fonts are fixed when an artist is made, SVG text at save)."""
    with matplotlib.rc_context(STYLE):
        yield


def look(i: int) -> tuple[str, str, str]:
    """(colour, marker, line style) of the i-th series: 8 colours, then the line style changes."""
    return PALETTE[i % len(PALETTE)], MARKERS[i % len(MARKERS)], LINESTYLES[(i // len(PALETTE)) % len(LINESTYLES)]


# ------------------------------------------------------------------------------------------ saving


# The producer a figure written as a file of its own carries (`ccscope markov inspect --heatmap`; a results
# folder's figures are listed in its manifest instead): only a figure bearing it is one ccscope may replace.
MARK = "ccscope figure"
# Where each format keeps it: a PNG tEXt chunk, the PDF Info dictionary, the SVG's Dublin Core creator.
_MARK_METADATA = {"png": "Software", "pdf": "Creator", "svg": "Creator"}
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_SVG_CREATOR = re.compile(rb"<dc:creator>\s*<cc:Agent>\s*<dc:title>" + re.escape(MARK.encode()) + rb"</dc:title>")
# matplotlib writes a PDF's Info dictionary after the pages, and a PNG's text chunks before its image data.
_PDF_TAIL_BYTES = 1 << 16
_PNG_MAX_CHUNKS = 64


def save_figure(fig: Figure, stem: Path, formats: Sequence[str] = ("svg", "png"), dpi: int = 200,
                mark: bool = False) -> list[Path]:
    """Write `stem.FMT` for each format, each atomically; closes the figure. PNG at `dpi`; with `mark`, each
    file carries :data:`MARK` (:func:`is_marked_figure`)."""
    try:
        return [write_atomic(stem.with_name(f"{stem.name}.{fmt}"), figure_bytes(fig, fmt, dpi, mark))
                for fmt in formats]
    finally:
        plt.close(fig)


def _png_text(f, key: bytes) -> Optional[bytes]:
    """The value of the PNG tEXt chunk `key` before the image data, or None (`f` is just past the signature)."""
    for _ in range(_PNG_MAX_CHUNKS):
        head = f.read(8)
        if len(head) < 8:
            return None
        size, kind = int.from_bytes(head[:4], "big"), head[4:]
        if kind in (b"IDAT", b"IEND"):
            return None
        data = f.read(size)
        f.seek(4, io.SEEK_CUR)  # the chunk's CRC
        if kind == b"tEXt" and data.partition(b"\0")[0] == key:
            return data.partition(b"\0")[2]
    return None


def is_marked_figure(path: Path) -> bool:
    """True when `path` is a PNG, PDF or SVG figure that bears :data:`MARK` (written by ``figure_bytes(...,
    mark=True)``): a figure ccscope wrote, which a rerun may replace. Any other file, figures included, is not."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
            if head.startswith(_PNG_SIGNATURE):
                f.seek(len(_PNG_SIGNATURE))
                return _png_text(f, _MARK_METADATA["png"].encode()) == MARK.encode()
            if head.startswith(b"%PDF-"):
                f.seek(max(0, f.seek(0, io.SEEK_END) - _PDF_TAIL_BYTES))
                return f"/Creator ({MARK})".encode() in f.read()
    except OSError:
        return False
    return b"<svg" in head and _SVG_CREATOR.search(head) is not None


def figure_bytes(fig: Figure, fmt: str, dpi: int = 200, mark: bool = False) -> bytes:
    """The figure as a file of format `fmt`, without the date or producer (same figure => same bytes); with
    `mark`, its producer is :data:`MARK`."""
    buf = io.BytesIO()
    meta = {"Date": None} if fmt == "svg" else ({"Software": None} if fmt == "png" else {})
    if mark:
        meta[_MARK_METADATA[fmt]] = MARK
    with paper_style():
        fig.savefig(buf, format=fmt, dpi=dpi, metadata=meta, bbox_inches="tight", pad_inches=0.05)
    return buf.getvalue()


def figure_svg(fig: Figure) -> str:
    """The figure as an SVG element to inline in HTML (no XML prolog); closes the figure."""
    buf = io.BytesIO()
    with paper_style():
        fig.savefig(buf, format="svg", metadata={"Date": None}, bbox_inches="tight", pad_inches=0.05)
    plt.close(fig)
    return inline_svg(buf.getvalue().decode())


def inline_svg(text: str, prefix: str = "") -> str:
    """An SVG document as an element for an HTML page: prolog dropped, ids prefixed so several figures on
    one page never share an id."""
    start = text.find("<svg")
    svg = text[start:] if start >= 0 else text
    # The RDF block names the producer by URL; a self-contained page carries no URL but namespaces.
    svg = re.sub(r"\s*<metadata>.*?</metadata>", "", svg, flags=re.S)
    svg = svg.replace(' xmlns:xlink="http://www.w3.org/1999/xlink"', "") if "xlink:" not in svg.split(">", 1)[1] else svg
    if prefix:
        svg = re.sub(r'id="([^"]+)"', lambda m: f'id="{prefix}{m.group(1)}"', svg)
        svg = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{prefix}{m.group(1)})", svg)
        svg = re.sub(r'href="#([^"]+)"', lambda m: f'href="#{prefix}{m.group(1)}"', svg)
    return svg


# ---------------------------------------------------------------------------- throughput and delay


@dataclass
class Scheme:
    """One point of the throughput-delay figure: a scheme and its runs (seeds, traces, sweep rows)."""

    label: str
    delay_ms: Sequence[float]
    throughput_mbps: Sequence[float]
    color: Optional[str] = None
    marker: Optional[str] = None

    def finite(self) -> tuple[np.ndarray, np.ndarray]:
        """Runs with a finite, positive delay and a finite throughput (Pantheon leaves out runs without)."""
        d = np.asarray(self.delay_ms, dtype=float)
        t = np.asarray(self.throughput_mbps, dtype=float)
        ok = np.isfinite(d) & np.isfinite(t) & (d > 0)
        return d[ok], t[ok]

    def mean(self) -> tuple[float, float]:
        """(delay, throughput) of the scheme: the mean over runs, as Pantheon's `pantheon_summary_mean`."""
        d, t = self.finite()
        return (float(d.mean()), float(t.mean())) if len(d) else (math.nan, math.nan)


@dataclass
class SweepLine:
    """A parameter sweep drawn as one grey line through its points, each labelled (e.g. by window)."""

    label: str
    delay_ms: Sequence[float]
    throughput_mbps: Sequence[float]
    point_labels: Sequence[str]


@dataclass
class Reference:
    """A published number drawn as an open circle (a paper's result beside ours)."""

    label: str
    delay_ms: float
    throughput_mbps: float


def sigma_ellipse(delay_ms: np.ndarray, throughput_mbps: np.ndarray, points: int = 180) -> Optional[np.ndarray]:
    """The 1-sigma contour of the maximum-likelihood 2-D Gaussian of the runs (Remy, Winstein and
    Balakrishnan, SIGCOMM 2013, Fig. 4; Pantheon's published summaries), in (ms, Mbit/s): centred on the
    runs' mean, the scheme's marker. Drawn on the log axis it is egg-shaped; delays at or below zero
    are clipped to half the smallest run's delay. None for fewer than two runs."""
    if len(delay_ms) < 2:
        return None
    xy = np.column_stack([delay_ms, throughput_mbps]).astype(float)
    mu = xy.mean(axis=0)
    cov = np.cov(xy, rowvar=False, bias=True)  # maximum likelihood: divide by n
    vals, vecs = np.linalg.eigh(cov)
    radii = np.sqrt(np.clip(vals, 0.0, None))
    angle = np.linspace(0.0, 2.0 * math.pi, points)
    unit = np.column_stack([np.cos(angle), np.sin(angle)])
    # Mahalanobis distance 1: mu + V diag(sqrt(lambda)) u for unit vectors u.
    curve = mu + (unit * radii) @ vecs.T
    curve[:, 0] = np.maximum(curve[:, 0], 0.5 * float(np.min(delay_ms)))
    return curve


def throughput_delay_figure(
    schemes: Sequence[Scheme],
    *,
    delay_label: str = "95th percentile one-way delay (ms)",
    title: Optional[str] = None,
    capacity_mbps: Optional[float] = None,
    size: tuple[float, float] = (6.4, 4.6),
    show_runs: bool = True,
    connect: Optional[str] = None,
    sweep: Optional[SweepLine] = None,
    references: Sequence[Reference] = (),
    legend_columns: int = 0,
) -> Figure:
    """Pantheon's summary plot: mean throughput against mean 95th-percentile delay per scheme, the delay
    axis logarithmic and inverted so better is up and to the right (Pantheon `analysis/plot.py`), each
    run a small dot and, with two runs or more, the 1-sigma ellipse over runs.

    `connect` names what orders the schemes when a line joins their means (e.g. a swept window)."""
    with paper_style():
        fig, ax = plt.subplots(figsize=size)
        xs_all: list[float] = []
        ymax = 0.0
        means = []
        for i, s in enumerate(schemes):
            color, marker, _ = look(i)
            color, marker = s.color or color, s.marker or marker
            d, t = s.finite()
            if not len(d):
                continue
            mx, my = s.mean()
            means.append((mx, my))
            xs_all += list(d)
            ymax = max(ymax, float(t.max()))
            ell = sigma_ellipse(d, t)
            if ell is not None:
                ax.add_patch(Polygon(ell, closed=True, facecolor=color, alpha=0.15, edgecolor=color, lw=1.0, zorder=1))
                xs_all += list(ell[:, 0])
                ymax = max(ymax, float(ell[:, 1].max()))
            if show_runs and len(d) > 1:
                ax.scatter(d, t, s=9, color=color, marker=marker, alpha=0.5, edgecolor="none", zorder=2)
            runs = f" ({len(d)} runs)" if len(d) > 1 else ""
            ax.scatter([mx], [my], s=60, color=color, marker=marker, edgecolor="black", linewidth=0.6, zorder=3,
                       label=f"{s.label}{runs}: {my:.2f} Mbit/s, {mx:.0f} ms")
        if sweep is not None:
            ax.plot(sweep.delay_ms, sweep.throughput_mbps, "-o", color="#707070", ms=4, lw=1, zorder=1, label=sweep.label)
            for i, (x, y, text) in enumerate(zip(sweep.delay_ms, sweep.throughput_mbps, sweep.point_labels)):
                # Above the point, or below where the line turns back (higher delay for the next point).
                back = i + 1 < len(sweep.delay_ms) and sweep.delay_ms[i + 1] < x
                ax.annotate(text, (x, y), textcoords="offset points", xytext=(4, -11) if back else (-3, 5),
                            ha="left" if back else "right", fontsize=MIN_FONT_PT, color="#404040")
            xs_all += list(sweep.delay_ms)
            ymax = max([ymax, *sweep.throughput_mbps])
        for ref in references:
            ax.scatter([ref.delay_ms], [ref.throughput_mbps], marker="o", s=90, facecolor="none", edgecolor="black",
                       linewidth=1.2, zorder=4, label=ref.label)
            xs_all.append(ref.delay_ms)
            ymax = max(ymax, ref.throughput_mbps)
        if connect and len(means) > 1:
            ax.plot([m[0] for m in means], [m[1] for m in means], color="#707070", lw=0.8, zorder=0,
                    label=f"line: schemes in order of {connect}")
        if capacity_mbps is not None and math.isfinite(capacity_mbps):
            ax.axhline(capacity_mbps, color="#707070", ls="--", lw=1.0, label=f"mean capacity {capacity_mbps:.2f} Mbit/s")
            ymax = max(ymax, capacity_mbps)
        log_delay_axis(ax, xs_all)
        ax.set_xlabel(f"{delay_label}, log scale; better \u2192")
        ax.set_ylabel("average throughput (Mbit/s)")
        ax.set_ylim(0, (ymax or 1.0) * 1.1)
        if title:
            ax.set_title(title)
        if ax.get_legend_handles_labels()[0]:
            ncol = legend_columns or (1 if len(schemes) < 6 else 2)
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=ncol, frameon=False)
        fig.tight_layout()
    return fig


def log_delay_axis(ax, xs: Sequence[float]) -> None:  # type: ignore[no-untyped-def]
    """A logarithmic delay axis, inverted (Pantheon: lower delay to the right), labelled in plain ms."""
    ax.set_xscale("log")
    xs = [x for x in xs if x > 0 and math.isfinite(x)]
    if xs:
        lo, hi = min(xs), max(xs)
        pad = max((hi / lo) ** 0.08, 1.15)
        ax.set_xlim(hi * pad, lo / pad)  # inverted
    else:
        ax.invert_xaxis()
    plain = mticker.FuncFormatter(lambda v, _: f"{v:g}")
    ax.xaxis.set_major_formatter(plain)
    ax.xaxis.set_minor_locator(mticker.LogLocator(subs=(2.0, 3.0, 5.0)))
    # Decades alone label too few ticks: label the minor ones too (only 2 and 5 over a wide range).
    span = max(xs) / min(xs) if xs else math.inf
    if span < 30:
        ax.xaxis.set_minor_formatter(plain)
    elif span < 1000:
        ax.xaxis.set_minor_formatter(mticker.FuncFormatter(lambda v, _: f"{v:g}" if f"{v:g}"[0] in "25" else ""))
    ax.tick_params(axis="x", which="minor", labelsize=MIN_FONT_PT)


# ---------------------------------------------------------------------------------------- CDFs


@dataclass
class Distribution:
    """Samples (and optional weights) of one curve of a CDF."""

    label: str
    values: np.ndarray
    weights: Optional[np.ndarray] = None


def ecdf(values: np.ndarray, weights: Optional[np.ndarray] = None, points: int = 2001) -> tuple[np.ndarray, np.ndarray]:
    """The (weighted) empirical CDF: sorted values and the fraction at or below each, thinned to at most
    `points` steps taken at evenly spaced fractions (each kept step is exact)."""
    v = np.asarray(values, dtype=float)
    w = np.ones_like(v) if weights is None else np.asarray(weights, dtype=float)
    ok = np.isfinite(v) & np.isfinite(w) & (w > 0)
    v, w = v[ok], w[ok]
    if not len(v):
        return v, v
    order = np.argsort(v, kind="stable")
    v, c = v[order], np.cumsum(w[order])
    c = c / c[-1]
    # The last sample of each distinct value carries the CDF's value there.
    last = np.r_[v[1:] != v[:-1], True]
    v, c = v[last], c[last]
    if len(v) > points:
        idx = np.unique(np.searchsorted(c, np.linspace(0.0, 1.0, points), side="left").clip(0, len(v) - 1))
        v, c = v[idx], c[idx]
    return v, c


def cdf_figure(dists: Sequence[Distribution], *, xlabel: str, ylabel: str, title: Optional[str] = None,
               size: tuple[float, float] = (6.4, 4.2)) -> Figure:
    """One step curve per distribution, colour and line style paired with its label in the legend."""
    with paper_style():
        fig, ax = plt.subplots(figsize=size)
        for i, dist in enumerate(dists):
            color, _, ls = look(i)
            x, y = ecdf(dist.values, dist.weights)
            if not len(x):
                continue
            ax.step(np.r_[x[0], x], np.r_[0.0, y], where="post", color=color, ls=ls, label=dist.label)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_ylim(0, 1.0)
        ax.set_xlim(left=0)
        if title:
            ax.set_title(title)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="lower right")
        fig.tight_layout()
    return fig


# ------------------------------------------------------------------------------------ over time


@dataclass
class Series:
    """One line over time: x in seconds."""

    label: str
    t_s: np.ndarray
    y: np.ndarray


@dataclass
class Panel:
    """One axes of a stacked time figure: its series and an optional shaded capacity."""

    title: str
    series: list[Series] = field(default_factory=list)
    capacity: Optional[Series] = None


def envelope(t: np.ndarray, y: np.ndarray, columns: int = MAX_POINTS // 2) -> tuple[np.ndarray, np.ndarray]:
    """A long series reduced to its first, minimum, maximum and last point per time column: what a
    figure's pixels show, at a bounded size."""
    if len(t) <= MAX_POINTS:
        return t, y
    edges = np.linspace(t[0], t[-1], columns + 1)
    col = np.clip(np.searchsorted(edges, t, side="right") - 1, 0, columns - 1)
    starts = np.r_[0, np.flatnonzero(np.diff(col)) + 1]
    keep = set(starts.tolist()) | set((np.r_[starts[1:], len(t)] - 1).tolist())
    for a, b in zip(starts, np.r_[starts[1:], len(t)]):
        seg = y[a:b]
        keep.add(a + int(np.argmin(seg)))
        keep.add(a + int(np.argmax(seg)))
    idx = np.array(sorted(keep))
    return t[idx], y[idx]


def time_figure(panels: Sequence[Panel], *, ylabel: str, step: bool = True, size_per_panel: float = 2.3,
                width: float = 7.5) -> Figure:
    """Stacked panels sharing the time axis; each panel's legend pairs colours with its series."""
    with paper_style():
        fig, axes = plt.subplots(len(panels), 1, figsize=(width, 0.9 + size_per_panel * len(panels)), sharex=True,
                                 squeeze=False)
        for ax, panel in zip(axes[:, 0], panels):
            if panel.capacity is not None:
                ax.fill_between(panel.capacity.t_s, panel.capacity.y, step="post" if step else None, color="#bbbbbb",
                                alpha=0.45, lw=0, label=panel.capacity.label)
            for i, s in enumerate(panel.series):
                color, _, ls = look(i)
                t, y = envelope(np.asarray(s.t_s, float), np.asarray(s.y, float))
                if step:
                    ax.step(t, y, where="post", color=color, ls=ls, label=s.label)
                else:
                    ax.plot(t, y, color=color, ls=ls, label=s.label)
            ax.set_ylabel(ylabel)
            ax.set_ylim(bottom=0)
            if panel.title:
                ax.set_title(panel.title, loc="left")
            if ax.get_legend_handles_labels()[0]:
                ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        axes[-1, 0].set_xlabel("time (s)")
        fig.tight_layout()
    return fig
