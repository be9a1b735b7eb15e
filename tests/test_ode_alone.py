"""scipy's ``ode`` loaded without ``scipy.integrate`` (udk_notebooks._ode, cold start of issue 23).

The class loaded alone must be scipy's own code: the same numbers as
``scipy.integrate.ode``, bit for bit, and both right against a closed form; and it
must leave nothing behind that would spoil a later ``import scipy.integrate``.
"""

from __future__ import annotations


import numpy as np

from udk_notebooks import _ode
from scipy_alone import hidden_until_its_package, run_fresh


# An undamped oscillator x'' = -x from (1, 0): x = cos t, x' = -sin t. Its angle at t = 3 after DOP853 at
# rtol 1e-10, as printed by the code below for one route and then the other, in a fresh interpreter.
OSCILLATOR = (
    "def oscillator(ode):\n"
    "    solver = ode(lambda t, y: [y[1], -y[0]]).set_integrator('dop853', rtol=1e-10, atol=1e-12)\n"
    "    solver.set_initial_value([1.0, 0.0], 0.0)\n"
    "    y = solver.integrate(3.0)\n"
    "    assert solver.successful()\n"
    "    return [float(v).hex() for v in y]\n"
)


def test_alone_it_loads_no_scipy_integrate_and_leaves_no_trace():
    code = (
        "import sys, scipy\n"
        "from udk_notebooks._ode import ode\n"
        "left = sorted(m for m in sys.modules if m.startswith(('scipy.integrate', 'scipy.optimize')))\n"
        "print(ode.__module__, left, 'integrate' in vars(scipy))"
    )
    assert run_fresh(code) == "scipy.integrate._ode [] False"


def test_alone_and_public_give_the_same_numbers_bit_for_bit():
    code = (
        OSCILLATOR
        + "import sys\n"
        "from udk_notebooks._ode import ode\n"
        "assert 'scipy.integrate' not in sys.modules\n"
        "alone = oscillator(ode)\n"
        "import scipy.integrate\n"  # the ordinary import after the one alone: every name of the package is there
        "assert callable(scipy.integrate.solve_ivp) and scipy.integrate.ode is not ode\n"
        "print(alone == oscillator(scipy.integrate.ode), alone)"
    )
    same, alone = run_fresh(code).split(" ", 1)
    assert same == "True"
    x, v = (float.fromhex(h) for h in eval(alone))  # noqa: S307 (a list of hex strings printed above)
    assert abs(x - np.cos(3.0)) < 1e-9 and abs(v + np.sin(3.0)) < 1e-9


def test_with_scipy_integrate_imported_first_it_is_scipys_class():
    import scipy.integrate

    assert _ode._load_ode() is scipy.integrate.ode


def test_where_the_module_cannot_be_found_scipy_integrate_is_imported():
    code = (
        hidden_until_its_package("scipy.integrate._ode")  # no scipy.integrate._ode, until scipy.integrate asks
        + "from udk_notebooks._ode import ode\n"
        "import scipy.integrate\n"
        "print(ode is scipy.integrate.ode)"
    )
    assert run_fresh(code) == "True"


def test_a_failure_inside_the_stand_in_leaves_no_trace_and_falls_back():
    # scipy.integrate._ode found, but one of its imports fails while the stand-in is registered
    code = (
        "import builtins, sys\n"
        "real = builtins.__import__\n"
        "def failing(name, globals=None, locals=None, fromlist=(), level=0):  # only under the stand-in (no file)\n"
        "    stand_in = 'scipy.integrate' in sys.modules and not hasattr(sys.modules['scipy.integrate'], '__file__')\n"
        "    if stand_in and level and '_dop' in (fromlist or ()):\n"
        "        raise ImportError('no _dop here')\n"
        "    return real(name, globals, locals, fromlist, level)\n"
        "builtins.__import__ = failing\n"
        "from udk_notebooks import _ode\n"
        "builtins.__import__ = real\n"
        "import scipy.integrate\n"
        "print(_ode.ode is scipy.integrate.ode, callable(scipy.integrate.solve_ivp))"
    )
    assert run_fresh(code) == "True True"


def test_another_thread_importing_scipy_integrate_meanwhile_gets_the_real_package():
    # While the stand-in is registered (at its first relative import), a second thread imports scipy.integrate
    # and is given time to find it: it must wait for the import lock and then import the real package.
    code = (
        "import builtins, sys, threading, time\n"
        "real = builtins.__import__\n"
        "got, threads = [], []\n"
        "def other():\n"
        "    import scipy.integrate\n"
        "    got.append(hasattr(scipy.integrate, 'solve_ivp'))\n"
        "def hooked(name, globals=None, locals=None, fromlist=(), level=0):\n"
        "    stand_in = 'scipy.integrate' in sys.modules and not hasattr(sys.modules['scipy.integrate'], '__file__')\n"
        "    if stand_in and not threads and threading.current_thread() is threading.main_thread():\n"
        "        threads.append(threading.Thread(target=other))\n"
        "        threads[0].start()\n"
        "        time.sleep(0.3)  # the other thread reaches its import while the stand-in is there\n"
        "    return real(name, globals, locals, fromlist, level)\n"
        "builtins.__import__ = hooked\n"
        "from udk_notebooks._ode import ode\n"
        "builtins.__import__ = real\n"
        "threads[0].join()\n"
        "print(ode.__module__, got)"
    )
    assert run_fresh(code) == "scipy.integrate._ode [True]"
