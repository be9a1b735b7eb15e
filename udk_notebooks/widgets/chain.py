r"""Explorer for the chain of N point masses on rigid links, in Cartesian coordinates.

Sliders: the number of links ``N`` (1 to 32), the mass ``m`` of each point, the
link length ``l``, gravity ``g``, the ``spread`` of the release angles, the
``method`` with its ``step``, and the ``horizon``. Each link is a holonomic
constraint ``(x_i - x_{i-1})^2 + (y_i - y_{i-1})^2 - l^2 = 0``
(:func:`~udk_notebooks.examples.chain.n_link_chain`): ``2N`` coordinates, ``N``
constraints, mass matrix ``m I``. Panels:

(a) the chain at the animated instant with the weight (``F^N``) and the
    links' pull (``F^L``, 2005 paper Eq. 10) on every mass; the corner gives
    the measured cost of one evaluation of the Udwadia-Kalaba equation;
(b) the energy change ``h(t) - h(0)`` (zero for the exact motion);
(c) the largest constraint drift ``max_i |phi_i|`` on a log scale: a fixed
    step without stabilization lets it grow (see lesson 2).

The model of each ``N`` is compiled once per session, and both its symbolic
derivation (:func:`derived_chain`) and the numeric code generated from it
(:func:`compiled_model`) are kept on disk between sessions, in
``$UDK_NOTEBOOKS_CACHE`` or the user's cache folder: a number of links seen
once on this machine loads without sympy's derivation or code generation. The
fixed-step methods step as before but sample the output at most ``frames``
times, on steps of their own grid (:func:`output_times`): the panels and the
animation draw no more, and a small step no longer means thousands of samples
to evaluate and draw.
"""

from __future__ import annotations

import os
import re
import time
from functools import lru_cache, partial
from pathlib import Path

from typing import TYPE_CHECKING

import numpy as np

from .._kept_code import CACHE_ENV, cache_directory, compile_kept, source_key, trusted_file, write_changed
from ..examples import chain
from ..plotting import OKABE_ITO
from ..simulation import simulate
from .system import Panel, SystemExplorer, SystemRun, time_curve

if TYPE_CHECKING:
    from ..compiled import CompiledModel
    from ..model import Model

__all__ = ["ChainExplorer"]

MAX_LINKS = 32


ADAPTIVE_TOLERANCES = {"rtol": 1e-9, "atol": 1e-11}
"""Tolerances of the explorer's adaptive (DOP853) runs; :func:`warm_cache` runs with the same."""


@lru_cache(maxsize=MAX_LINKS)
def compiled_model(N: int) -> CompiledModel:
    """The N-link chain, compiled once per session and N, its derivation and its generated code kept on disk.

    Compiling lambdifies the derived model (about 0.2 s at 12 links, 0.5 s at
    28 under load, and as much again for the sampled forces of the first run):
    the bulk of a jump to a number of links not seen in this session. The
    generated code and the model's facts are kept in the store ``chain-N``
    (:func:`udk_notebooks._kept_code.compile_kept`), and later sessions on
    this machine build the compiled model from it without sympy; the
    derivation (:func:`derived_chain`) is read only if something not kept is
    needed. Functions built on demand during a run (the batch entries of the
    forces) are added by the explorer after each run.

    ``N`` (1 to :data:`MAX_LINKS`) is checked as by :func:`derived_chain`; returns a
    :class:`~udk_notebooks.compiled.CompiledModel`.
    """
    N = _check_links(N)
    return compile_kept(f"chain-{N}", partial(derived_chain, N))


def _check_links(N) -> int:
    if isinstance(N, bool) or not isinstance(N, (int, np.integer)) or not 1 <= N <= MAX_LINKS:
        raise ValueError(f"`N` must be a whole number of links from 1 to {MAX_LINKS}; got {N!r}")
    return int(N)


def derived_chain(N: int) -> Model:
    """The symbolic N-link chain (:func:`~udk_notebooks.examples.chain.n_link_chain`), kept on disk by source key.

    The derivation costs about 30 ms per link (1 s at ``N = 32``) and reading
    it back a few ms, so a student's later sessions skip it; the code compiled
    from it is kept beside it (:func:`compiled_model`).
    The file is read only when its name carries the current
    :func:`source_key` and it holds a model of ``2 N`` coordinates; a missing,
    unreadable or foreign file is derived again and rewritten, and a cache
    that cannot be written is skipped. Only files this function wrote are read
    (pickles run code when loaded: the folder is the user's own).

    Parameters
    ----------
    N : int
        Number of links, 1 to :data:`MAX_LINKS`.

    Returns
    -------
    Model
    """
    N = _check_links(N)
    folder = cache_directory()
    if folder is None:
        return chain.n_link_chain(N)
    key = source_key()
    path = folder / f"chain-{N}-{key}.pickle"
    model = _read(path, N)
    if model is None:
        model = chain.n_link_chain(N)
        _write(folder, path, model, key)
    return model


def _read(path: Path, N: int) -> Model | None:
    """The model kept at ``path`` if it is a chain of ``N`` links, else None (missing, unreadable or foreign)."""
    import pickle

    from ..model import Model

    try:
        with open(path, "rb") as handle:
            if not trusted_file(handle):  # a pickle is code too: only the user's own, unwritable by others
                return None
            model = pickle.load(handle)
    except Exception:  # missing, truncated, written by another version: derive again
        return None
    if not isinstance(model, Model) or len(model.coordinates) != 2 * N or len(model.holonomic) != N:
        return None
    return model


def _write(folder: Path, path: Path, model: Model, key: str) -> None:
    """Keep ``model`` at ``path`` (written whole, then renamed), and drop files of older source keys."""
    import pickle
    import tempfile

    unfinished = None  # a temporary file not yet renamed into place
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".chain-", delete=False) as handle:
            unfinished = handle.name
            pickle.dump(model, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(unfinished, path)  # readers see no file or the whole file, never a part
        unfinished = None
        for old in folder.glob("chain-*-*.pickle"):  # chains of other keys; never a file we did not name
            if re.fullmatch(r"chain-\d+-[0-9a-f]{20}\.pickle", old.name) and not old.name.endswith(f"-{key}.pickle"):
                old.unlink(missing_ok=True)
    except (OSError, pickle.PicklingError, TypeError, AttributeError):  # read-only or full disk, or an
        # object that does not pickle: the session's own cache still serves
        pass
    finally:
        if unfinished is not None:
            Path(unfinished).unlink(missing_ok=True)


def warm_cache(links=None) -> list[int]:
    """Derive, compile and run each chain once, so that its derivation and all the code a run needs are on disk.

    For an image built for a course (``binder/postBuild``): every session
    started from it finds each number of links kept, as a student's second
    session on their own machine does. Both integrator routes of the explorer
    are run briefly (the fixed-step and the adaptive one), so that the
    functions they build on demand are kept too.

    Parameters
    ----------
    links : iterable of int, optional
        Numbers of links (default: 1 to :data:`MAX_LINKS`).

    Returns
    -------
    list of int
        The numbers of links kept; empty when the disk cache is off (``UDK_NOTEBOOKS_CACHE=``).
    """
    links = range(1, MAX_LINKS + 1) if links is None else list(links)
    if cache_directory() is None:
        return []
    done = []
    for N in links:
        cm = compiled_model(N)  # checks N
        q0, qd0 = chain.chain_initial_state(N)
        times = np.linspace(0.0, 0.05, 3)
        simulate(cm, (0.0, 0.05), q0, qd0, method="rk4", step=0.01, t_eval=times)
        simulate(cm, (0.0, 0.05), q0, qd0, method="DOP853", t_eval=times, **ADAPTIVE_TOLERANCES)
        write_changed()
        done.append(int(N))
    return done


def evaluation_cost(cm, q, qd, p, repeats: int = 20) -> float:
    """Median wall time of one evaluation of the equation of motion at this state, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        cm.solve_modes(0.0, q, qd, p)  # what the integrators call at every stage
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def output_times(horizon: float, step: float, samples: int) -> np.ndarray:
    """At most ``samples`` times of the fixed-step grid of ``simulate``, from 0 to ``horizon``, evenly spread.

    ``simulate`` steps ``count = round(horizon / step)`` equal steps and keeps
    only the ``t_eval`` times when given; times taken from that same grid
    (``horizon * k / count``) add no step of their own, so the run is the
    every-step run, sampled.

    Parameters
    ----------
    horizon, step : float
        End of the run and the nominal step, in s (positive).
    samples : int
        Largest number of output times (at least 2).

    Returns
    -------
    ndarray, shape (k,)
        Increasing, starting at 0 and ending at ``horizon``; ``k <= samples``.
    """
    if not (horizon > 0 and step > 0):
        raise ValueError(f"`horizon` and `step` must be positive; got {horizon!r} and {step!r}")
    if samples < 2:
        raise ValueError(f"`samples` must be at least 2; got {samples!r}")
    count = max(1, int(round(horizon / step)))  # as simulate's fixed-step loop counts them
    k = np.unique(np.round(np.linspace(0, count, min(samples, count + 1))).astype(int))
    return horizon * k / count


class ChainExplorer(SystemExplorer):
    """Number of links, masses and integrator of the N-link chain; energy, drift and cost per evaluation.

    Parameters
    ----------
    **kwargs
        Passed to :class:`~udk_notebooks.widgets.system.SystemExplorer`.
    """

    # One fixed-step run per update (~20 ms at the defaults): the sliders follow a drag (live canvas), except
    # those whose cost grows with their value or that compile a model (ON_RELEASE).
    updates_on_release = False
    ON_RELEASE = ("N", "step", "horizon")
    """Sliders that update on release: a new ``N`` compiles a model (0.1-1.5 s the first time on this
    machine, about a third of that once its code is kept on disk), and the run's cost grows as ``horizon / step``
    (a second or more at ``step = 0.001``)."""
    control_units = {"N": "1"}  # a count: no unit
    heading = "Chain of N point masses on rigid links, Cartesian coordinates: N constraints, 2N coordinates"
    ENERGY_POWERS = (-2, 3)
    """Orders of magnitude outside which the energy panel's tick labels go to scientific notation
    (a common factor such as ``1e-5`` above the axis; matplotlib's default is ``(-5, 6)``). The
    energy change spans many orders of magnitude from run to run (1e-9 J for DOP853, kJ for a fixed
    step that diverges). With matplotlib's default labels such as "-0.00075" a jump widens the labels
    past the panel's laid-out cell, which costs a full draw of the figure (about 90 ms) instead of
    redrawing the one panel; labels of at most four digits with a common factor keep to the cell."""
    panels = (
        Panel("energy change", "time t (s)", "h(t) - h(0) (J)", zero=True, power_limits=ENERGY_POWERS, curves=(
            time_curve("", lambda run: run.trajectory.energy - run.trajectory.energy[0],
                       color=OKABE_ITO["blue"], ls="-"),
        )),
        Panel("constraint drift", "time t (s)", r"max$_i\,|\phi_i|$ (m$^2$)", yscale="log", curves=(
            time_curve("", lambda run: np.abs(run.trajectory.position_residual).max(axis=1),
                       color=OKABE_ITO["vermillion"], ls="-"),
        )),
    )

    def __init__(self, **kwargs):
        table = {
            "N": (4.0, (1.0, float(MAX_LINKS)), "number of links (and point masses)"),
            "m": (1.0, (0.1, 5.0), "mass of each point, in kg"),
            "l": (1.0, (0.1, 3.0), "length of each link, in m"),
            "g": (9.81, (0.0, 20.0), "gravitational acceleration, along -y, in m/s^2"),
            "spread": (0.4, (0.0, 1.5), "release angles 0.3 + spread k / N of links k = 0..N-1, in rad"),
            "method": ("rk4", ("rk4", "euler", "DOP853"), "integrator: fixed-step RK4 or Euler, or adaptive DOP853"),
            "step": (0.01, (0.001, 0.05), "fixed step of RK4 and Euler (DOP853 chooses its own), in s"),
        }
        extra = {"horizon": (3.0, (0.5, 10.0), "simulated time span, in s")}
        kwargs.setdefault("frames", 151)
        super().__init__(table, extra=extra, **kwargs)
        self.controls["N"].step = 1.0
        self.controls["N"].readout_format = ".0f"
        for name in self.ON_RELEASE:
            self.controls[name].continuous_update = False

    def default_mechanism(self):
        return chain.mechanism(4)

    def run(self, N, m, l, g, spread, method, step, horizon) -> SystemRun:
        N = int(round(N))
        params = dict(m=m, l=l, g=g)
        cm = compiled_model(N)
        angles = 0.3 + spread * np.arange(N) / N
        q0, qd0 = chain.chain_initial_state(N, angles, **params)
        times = np.linspace(0.0, horizon, self.frames)
        if method == "DOP853":
            traj = simulate(cm, (0.0, horizon), q0, qd0, method=method, t_eval=times, params=params,
                            **ADAPTIVE_TOLERANCES)
        else:
            traj = simulate(cm, (0.0, horizon), q0, qd0, method=method, step=step, params=params,
                            t_eval=output_times(horizon, step, self.frames))
        cost = evaluation_cost(cm, q0, qd0, cm.parameters(params))
        return SystemRun(traj, chain.mechanism(N), info=f"{2 * N} coordinates\n{cost * 1e6:.0f} \u00b5s per evaluation",
                         model=cm)
