"""The explorers' cheaper drawing routes give what the plain routes give.

- The PNG of the PNG route, written with zlib directly, decodes (by Pillow, an independent reader) to
  the canvas's pixels, transparent ones included.
- A joint's path over a run, computed in one call of its position function where the function takes
  stacks, equals the sample-by-sample calls; a function that cannot take stacks, or answers a stack
  differently, is called sample by sample.
"""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
from PIL import Image

from udk_notebooks.drawing import Joint, _joint_track
from udk_notebooks.widgets.base import _encode_png


@pytest.mark.parametrize("shape", [(1, 1), (37, 53), (120, 7)])
def test_the_png_decodes_to_the_pixels_given(shape):
    pixels = np.random.default_rng(sum(shape)).integers(0, 256, (*shape, 4), dtype=np.uint8)
    pixels[: shape[0] // 2, :, 3] = 255  # opaque and translucent rows
    decoded = Image.open(io.BytesIO(_encode_png(pixels)))
    assert decoded.mode == "RGBA" and decoded.size == (shape[1], shape[0])
    np.testing.assert_array_equal(np.asarray(decoded), pixels)


@pytest.mark.parametrize("bad", [np.zeros((4, 4, 3), np.uint8), np.zeros((4, 4, 4), float), np.zeros((0, 4, 4), np.uint8)])
def test_the_png_encoder_refuses_what_is_not_an_rgba_image(bad):
    with pytest.raises(ValueError, match="`rgba`"):
        _encode_png(bad)


def _run(samples: int = 57):
    t = np.linspace(0.0, 2.0, samples)
    q = np.column_stack([np.sin(3 * t), np.cos(2 * t), t**2])
    return q, t


def _one_by_one(joint: Joint, q, t) -> np.ndarray:
    return np.array([np.asarray(joint.at(qk, float(tk)), dtype=float) for qk, tk in zip(q, t)])


@pytest.mark.parametrize("at", [
    lambda q, t: 0.7 * np.array([np.sin(q[0]), -np.cos(q[0])]),  # a pendulum's bob: numpy, stacks fine
    lambda q, t: (q[2] + 0.5 * t, q[1]),  # coordinates and time
    lambda q, t: (0.0, 0.0),  # a fixed support
    lambda q, t: (math.sin(q[0]), q[1]),  # math.sin takes no array: sample by sample
    lambda q, t: (q[0], 1.0) if q[0] > 0 else (q[1], -1.0),  # an `if` on a coordinate: sample by sample
    lambda q, t: (q[0], q[1]) if np.ndim(q) == 1 else (q[1], q[0]),  # answers a stack differently: caught
])
def test_a_joints_path_equals_its_positions_one_sample_at_a_time(at):
    q, t = _run()
    joint = Joint("P", at)
    np.testing.assert_allclose(_joint_track(joint, q, t), _one_by_one(joint, q, t), rtol=1e-12, atol=1e-14)


def test_a_joints_path_needs_one_time_per_sample():
    q, t = _run()
    with pytest.raises(ValueError, match="`q` must have shape"):
        _joint_track(Joint("P", lambda q, t: (q[0], q[1])), q, t[:-1])


def test_neighbouring_cells_grow_apart_each_side_on_its_own():
    """An axes' cell takes up to CELL_PAD pixels of room on each side, but two cells never share a pixel."""
    from matplotlib.transforms import Bbox

    from udk_notebooks.widgets.base import CELL_PAD, _meet, _padded_box

    left = Bbox.from_extents(20.0, 100.0, 200.0, 300.0)
    right = Bbox.from_extents(210.0, 100.0, 400.0, 300.0)  # 10 px to the right of `left`
    below = Bbox.from_extents(60.0, 40.0, 160.0, 97.0)  # 3 px under `left`, clear of its sides
    cells = [_padded_box(box, [other for other in (left, right, below) if other is not box], 500, 400)
             for box in (left, right, below)]
    for i, a in enumerate(cells):
        for b in cells[i + 1:]:
            assert not _meet(a, b)
    grown_left = cells[0]
    assert grown_left.x0 == 20.0 - CELL_PAD  # a free side: all the room
    assert 200.0 < grown_left.x1 <= 205.0 and 98.5 < grown_left.y0 <= 100.0  # toward neighbours: half the gap
    assert _padded_box(Bbox.from_extents(3.2, 2.5, 497.5, 398.9), [], 500, 400).extents.tolist() == [0, 0, 500, 400]
