"""Precision and recall against the threshold, as a PNG a user calibrating their server can read."""

from __future__ import annotations

from pathlib import Path

from marlin_agent.errors import MissingDependency
from marlin_agent.evaluation.presence import PresenceReport

_W, _H, _M = 720, 440, 60


def plot_presence(report: PresenceReport, target: Path) -> Path:
    """Draw the run's precision and recall curves, the configured and the F1-best thresholds."""
    try:
        from PIL import Image, ImageDraw
    except ImportError as exc:
        raise MissingDependency("Plotting the presence curve", "sheet") from exc
    image = Image.new("RGB", (_W, _H), "white")
    draw = ImageDraw.Draw(image)
    left, top, right, bottom = _M, 40, _W - 30, _H - _M

    def at(threshold: float, value: float) -> tuple[float, float]:
        return left + threshold * (right - left), bottom - value * (bottom - top)

    for tick in range(0, 11, 2):
        x, y = at(tick / 10, 0)[0], at(0, tick / 10)[1]
        draw.line([(x, bottom), (x, top)], fill=(232, 232, 232))
        draw.line([(left, y), (right, y)], fill=(232, 232, 232))
        draw.text((x - 8, bottom + 6), f"{tick / 10:.1f}", fill="black")
        draw.text((left - 30, y - 6), f"{tick / 10:.1f}", fill="black")
    draw.rectangle([left, top, right, bottom], outline="black")
    for name, colour in (("precision", (31, 119, 180)), ("recall", (214, 39, 40)), ("f1", (120, 120, 120))):
        points = [at(p.threshold, getattr(p, name)) for p in report.curve]
        draw.line(points, fill=colour, width=3 if name != "f1" else 1)
    for threshold, label, colour in ((report.threshold, "configured", (0, 0, 0)),
                                     (report.best.threshold, "F1-best", (44, 160, 44))):
        x = at(threshold, 0)[0]
        draw.line([(x, top), (x, bottom)], fill=colour, width=1)
        draw.text((x + 4, top + (4 if label == "configured" else 18)), f"{label} {threshold:.2f}", fill=colour)
    draw.text((left, 12), f"{report.suite}: precision (blue), recall (red), F1 (grey) against the threshold; "
              f"{report.positives} present, {report.negatives} absent", fill="black")
    draw.text(((left + right) // 2 - 30, _H - 26), "threshold", fill="black")
    target.parent.mkdir(parents=True, exist_ok=True)
    image.save(target)
    return target
