"""Checks shared by the explorer tests (imported by ``test_widgets*.py``; not a test module).

Explorers are driven from Python on the Agg backend: controls are set the way a
slider sets them, and the figure's pixels and artists are read back.
"""

from __future__ import annotations

import numpy as np

from udk_notebooks.widgets import Explorer


def pixels(explorer: Explorer) -> np.ndarray:
    """The RGBA pixels in the explorer's canvas buffer, shape (height, width, 4)."""
    return np.asarray(explorer.figure.canvas.buffer_rgba()).copy()


def full_redraw(explorer: Explorer) -> np.ndarray:
    """The pixels of a fresh full draw of the figure in its current state."""
    explorer.figure.canvas.draw()
    return pixels(explorer)


def assert_same_pixels(shown: np.ndarray, reference: np.ndarray) -> None:
    """Equal images, up to 2 levels per channel (anti-aliasing of blitted edges)."""
    assert shown.shape == reference.shape
    off = np.abs(shown.astype(int) - reference.astype(int)).max(axis=-1) > 2
    assert np.count_nonzero(off) == 0, f"{np.count_nonzero(off)} pixels differ, e.g. at {np.argwhere(off)[:5].tolist()}"


def assert_data_visible(explorer: Explorer) -> None:
    """Every interval that ``data_limits`` asks for lies inside its view."""
    for ax, needs in explorer.data_limits(explorer.result).items():
        for need, view in zip(needs, (ax.get_xlim(), ax.get_ylim())):
            if need is not None:
                assert min(view) <= min(need) and max(need) <= max(view), (ax.get_title(loc="left"), need, view)


def random_settings(explorer: Explorer, names, count: int, seed: int, bounds_share: float = 0.1) -> np.ndarray:
    """``count`` settings of the named sliders, shape (count, len(names)), uniform over [min, max].

    The first four rows are every minimum, every maximum, a random mix of the two and the
    middle; after them, each value is a bound with probability ``bounds_share``.
    """
    rng = np.random.default_rng(seed)
    lo = np.array([explorer.controls[n].min for n in names])
    hi = np.array([explorer.controls[n].max for n in names])
    samples = rng.uniform(lo, hi, size=(count, len(names)))
    samples[:4] = [lo, hi, np.where(rng.random(len(names)) < 0.5, lo, hi), (lo + hi) / 2]
    extremes = rng.random(samples.shape) < bounds_share
    extremes[:4] = False
    samples[extremes] = np.where(rng.random(samples.shape) < 0.5, lo, hi)[extremes]
    return samples


def drive(explorer: Explorer, names, row, index: int, check=None) -> dict[str, float]:
    """Apply one setting: all but one control at once with ``set`` (and a frame), the last through its slider.

    The control moved through the slider callback and the frame both change with ``index``, so
    that a run of settings exercises every control's callback and every instant. ``check``, if
    given, is called after each of the two steps with the result from before that step.
    """
    values = dict(zip(names, (float(v) for v in row)))
    last = names[index % len(names)]
    before = explorer.result
    explorer.set(**{k: v for k, v in values.items() if k != last}, frame=(7 * index) % explorer.frames)
    if check is not None:
        check(before)
    before = explorer.result
    explorer.controls[last].value = values[last]
    if check is not None:
        check(before)
    return values
