"""The singular mass explorer's panel (b): smallest eigenvalues, which cannot be negative, in a view that starts at zero."""

import numpy as np

from udk_notebooks.widgets.singular_mass import SingularMassExplorer


def test_eigenvalue_panel_starts_at_zero_and_its_values_are_never_negative():
    explorer = SingularMassExplorer(samples=41)
    ax = explorer.figure.axes[1]
    for name, value in [(None, None), ("mA", 2.0), ("mB", 0.5)]:
        if name is not None:
            explorer.controls[name].value = value
        assert explorer.error == ""
        data = explorer.result.data
        masses = [explorer.values[key] for key in ("mA", "mB", "m")]
        np.testing.assert_array_equal(data["eig_M"], min(masses))  # the smallest mass of the diagonal M, exactly
        assert data["eig_augmented"].min() > 0.0  # M + A^+ A is positive definite ([M; A] of full column rank)
        assert ax.get_ylim()[0] == 0.0  # before the fix the view ran to -0.075 kg at the defaults
