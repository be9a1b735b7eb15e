"""Normal and friction forces of contacts for one state: the part of :class:`CompiledModel` that splits the reaction.

:meth:`CompiledModel.solve_contacts` solves the Udwadia-Kalaba equation with
the contacts in given modes; where a friction force depends on a normal force
that is not simply ``|F^L|`` (a :class:`~udk_notebooks.contacts.Contact`, whose
normal force is its gap row's multiplier, or a ``CoulombFriction`` with its own
``normal`` rows), the methods here split the constraint reaction
``A^T lambda = F^L + F^C - C`` (Udwadia, Kalaba & Fan 2005, Eqs. 7-11) into
the contacts' normal forces, solve for the sliding contacts' normal forces
together with their friction, refuse a Painleve-type inconsistency, and give
the holding ratio of each sticking contact. :class:`ContactForces` holds them;
:class:`~udk_notebooks.compiled.CompiledModel` is built on it.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .core import Motion, solve
from .errors import PainleveParadoxError

__all__ = ["OPEN", "ContactForces"]

SMALL_MAX_N = 8
"""Most coordinates for which :meth:`ContactForces._fast_contacts` solves in Python floats."""

SMALL_MAX_ROWS = 6
"""Most constraint rows (stick rows included) for which it does."""

_NO_NORMALS = np.full(0, np.nan)  # the normal forces of a model without Contact entries (none to report)

OPEN = 2
"""The mode of a :class:`~udk_notebooks.contacts.Contact` whose point has left its surface (its gap row is dropped)."""


class ContactForces:
    """Contact-force methods of :class:`~udk_notebooks.compiled.CompiledModel` (see the module docstring).

    They read the compiled model's ``n``, ``facts`` (and the properties over
    them: ``n_contacts``, ``unilateral``, ``contact_names``, ``contact_rows``,
    ``friction_normals``), ``reaction_free`` and its symbolic cache; they are
    not used on their own.
    """

    def _check_reaction_free(self, i, unit, reaction, t) -> None:
        """Refuse ``N = |F^L|`` for friction entry ``i`` where its force changes the constraint reaction.

        ``|F^L|`` is the normal force only when the multipliers do not depend on
        the friction force, ``A M^-1 C = 0`` (a particle pressed on one
        surface); then the reaction to ``C`` is nil. Proven once
        symbolically where sympy can (:attr:`reaction_free`), else checked here.
        """
        if self.reaction_free[i]:
            return
        size = math.sqrt(unit @ unit)
        if size == 0.0:
            return
        response = reaction(unit)
        if math.sqrt(response @ response) > 1e-9 * size:
            raise ValueError(
                f"friction contact {i} at t = {t:g}: CoulombFriction(normal=None) takes N = |F^L|, but here its "
                "friction force changes the constraint reaction (A M^-1 C != 0: a rotating body, or a body "
                "held by joints), so |F^L| is not the normal force. Declare the contact with "
                "udk_notebooks.Contact(point, surface, mu) (its N is the gap row's multiplier, in newtons)")

    def _check_translational_normals(self) -> None:
        """Refuse ``CoulombFriction(normal=rows)`` whose rows depend on the configuration (issue 18).

        ``N = || sum_k A_k^T lambda_k ||`` is a force when the named rows are
        linear in the coordinates (a floor ``y1 = 0`` or a fixed line, in
        Cartesian coordinates). A row whose coefficients change with ``q``
        (a rod's end on the floor, ``y - (L/2) sin(theta)``, with the row
        ``(0, 1, -(L/2) cos(theta))``) makes it a generalized force that mixes
        newtons with newton-metres.
        """
        bad = self.facts["translational_normals"]  # found when the model was compiled (compiled._model_facts)
        if bad:
            i, rows = bad[0]
            raise ValueError(
                f"friction contact {i}: its `normal` rows {list(rows)} have coefficients that change with the "
                "configuration (an angle), so N = |sum_k A_k^T lambda_k| would be a generalized force, not a "
                "force in newtons. Declare the contact with udk_notebooks.Contact(point, surface, mu), whose N is "
                "the gap row's multiplier in newtons")

    def _contact_friction(self, M, Q, A, b, factor, ideal, fixed, data, modes, normal_rows, m_now, ratios, normals,
                          where, holding, unit) -> np.ndarray:
        """The nonideal vector ``C`` of :class:`~udk_notebooks.contacts.Contact` entries; fills ratios and normals.

        The reaction of the constraints is ``A^T lambda = F^L + F^C - C``
        (``M q'' = Q + A^T lambda + C``, Udwadia, Kalaba & Fan 2005, Eqs. 7-11),
        and ``F^C`` is linear in ``C``: so ``lambda = lambda_0 + Lambda C``
        (one solve per sliding contact, minimum-norm by least squares). A
        contact's gap row has unit normal, so its multiplier IS its normal
        force, and a stick row ``t^T J_c`` has a unit tangent, so its
        multiplier is the holding force (appended to ``holding`` as a
        generalized force, to move from the ideal to the nonideal term); a sliding contact adds ``N_j e_j`` to ``C`` with
        ``e_j = -mu_j sgn(s_j) ds_j/dq'`` (``|N_j| e_j`` when bilateral). With
        ``a`` and ``B`` the rows of ``lambda_0`` and ``Lambda`` at the sliding
        contacts' gap rows, their normal forces solve ``(I - B) N = a``
        (:meth:`_sliding_normals`). ``A`` comes with its rows scaled by
        powers of two (:func:`~udk_notebooks.core.scale_rows`); ``unit[i]`` is
        the factor row ``i`` was multiplied by, and multiplying its multiplier
        by the same factor gives it back in the row's own units (newtons).
        """
        base = np.zeros(self.n) if fixed is None else fixed.copy()

        def reaction(force):
            return solve(M, Q, A, b, force, factor=factor).nonideal - force

        first = len(modes) - self.n_contacts
        rough = [i for i, mode in enumerate(modes) if mode in (1, -1) and data[i, 2] != 0.0]
        units = [-data[i, 2] * modes[i] * data[i, 4:] for i in rough]
        columns = np.column_stack([ideal + (reaction(base) if np.any(base) else 0.0)] + [reaction(e) for e in units])
        lam, _, rank, _ = np.linalg.lstsq(A.T, columns, rcond=None)
        lam = lam * unit[:, None]  # multipliers of the rows in their own units: N in newtons
        if rank < A.shape[0]:
            try:
                self._check_normals_determined(A, normal_rows, rank)
            except ValueError:
                if rough:
                    raise
                return self._held_indeterminate(A / unit[:, None], columns[:, 0], base, data, modes, normal_rows,
                                                m_now, ratios)
        rows = [normal_rows[i][0] for i in rough]
        bilateral = [not self.unilateral[i - first] for i in rough]
        N = self._sliding_normals(lam[rows, 0], lam[rows, 1:], bilateral, [i - first for i in rough], where)
        weights = np.where(bilateral, np.abs(N), N) if rough else np.zeros(0)
        total = base
        for w, e in zip(weights, units):
            total = total + w * e
        multipliers = lam[:, 0] + lam[:, 1:] @ weights
        for i in range(first, len(modes)):
            if modes[i] != OPEN:
                normals[i - first] = multipliers[normal_rows[i][0]]
        stuck = [i for i, mode in enumerate(modes) if mode == 0]
        for j, i in enumerate(stuck):  # the stick row t^T J_c has a unit tangent: its multiplier is the force
            limit = data[i, 3] * abs(normals[i - first])
            ratios[i] = multipliers[m_now + j] / max(limit, 1e-300)
        if stuck:
            holding.append(A[m_now:].T @ multipliers[m_now:])
        return total

    def _held_indeterminate(self, A, reaction, base, data, modes, normal_rows, m_now, ratios) -> np.ndarray:
        """Sticking contacts whose forces rigid-body statics leaves undetermined: can static friction hold?

        With dependent rows (a ladder held at both ends) only ``A^T lambda``
        is fixed. Linear programming (``scipy.optimize.linprog``) finds the
        largest margin ``t`` such that some multipliers with that sum satisfy
        ``N_i >= 0`` and ``|f_i| <= mu_s N_i - t`` at every sticking contact.
        ``t >= 0``: they hold, and each ratio is ``1 - t / scale`` (at most
        one); else they do not (ratio above one) and :meth:`release` tries the
        sliding modes. The normal forces stay NaN: they are not determined,
        and the package does not pick one; for the same reason the holding
        forces are not split off, and stay in the ideal term.
        """
        from scipy.optimize import linprog

        first = len(modes) - self.n_contacts
        stuck = [i for i, mode in enumerate(modes) if mode == 0]
        rows, cols = A.shape
        scale = max(1.0, float(np.abs(reaction).max()))
        # variables: lambda (rows), then t; maximize t
        upper = []
        for j, i in enumerate(stuck):
            gap, stick = normal_rows[i][0], m_now + j
            for sign in (1.0, -1.0):  # sign f - mu_s N + t <= 0
                row = np.zeros(rows + 1)
                row[stick], row[gap], row[-1] = sign, -data[i, 3], 1.0
                upper.append(row)
        bounds = [(None, None)] * rows + [(None, scale)]
        for i in range(first, len(modes)):
            if modes[i] != OPEN and self.unilateral[i - first]:
                bounds[normal_rows[i][0]] = (0.0, None)
        objective = np.zeros(rows + 1)
        objective[-1] = -1.0
        result = linprog(objective, A_ub=np.array(upper) if upper else None, b_ub=np.zeros(len(upper)) if upper else None,
                         A_eq=np.hstack([A.T, np.zeros((cols, 1))]), b_eq=reaction, bounds=bounds, method="highs")
        margin = result.x[-1] / scale if result.status == 0 else -1.0
        for i in stuck:
            ratios[i] = 1.0 - margin
        return base

    def _sliding_normals(self, a, B, bilateral, contacts, where) -> np.ndarray:
        """The normal forces of sliding contacts from ``N = a + B diag(sigma) N`` (``sigma = sgn N`` if bilateral).

        A unilateral contact presses, ``sigma = 1``; one of them alone has one
        consistent state (sliding with ``N >= 0``, or leaving the surface) for
        every ``a`` only when ``1 - B > 0``, and several of them when every
        principal minor of ``I - B`` is positive (a P-matrix). A bilateral
        contact's friction is ``mu |N|``: every sign pattern is tried and
        exactly one must be consistent. Anything else is Painleve's paradox.
        """
        k = len(a)
        if k == 0:
            return np.zeros(0)
        names = [self.contact_names[c] for c in contacts]
        bil = [j for j in range(k) if bilateral[j]]
        uni = [j for j in range(k) if not bilateral[j]]
        scale = max(1.0, float(np.abs(a).max()))
        found = []
        for signs in itertools.product((1.0, -1.0), repeat=len(bil)):
            sigma = np.ones(k)
            sigma[bil] = signs
            G = np.eye(k) - B * sigma[None, :]
            if uni:
                minors = [np.linalg.det(G[np.ix_(sub, sub)]) for r in range(1, len(uni) + 1)
                          for sub in itertools.combinations(uni, r)]
                if min(minors) <= 1e-12:
                    self._paradox(names, where, float(np.linalg.det(G)), B, a,
                                  "its friction raises its own normal force with a gain of one or more, so "
                                  "sliding admits no normal force N >= 0 or a second motion besides it")
            try:
                N = np.linalg.solve(G, a)
            except np.linalg.LinAlgError:
                continue
            if all(sigma[j] * N[j] >= -1e-12 * scale for j in bil):
                if not any(np.allclose(N, other, rtol=1e-9, atol=1e-12 * scale) for other in found):
                    found.append(N)
        if len(found) != 1:
            G = np.eye(k) - B
            self._paradox(names, where, float(np.linalg.det(G)), B, a,
                          f"the bilateral contact admits {'no' if not found else len(found)} consistent normal "
                          "force(s) with friction mu |N|")
        return found[0]

    def _paradox(self, names, where, determinant, B, a, why) -> None:
        t, q, qd = where
        hint = ""
        if len(names) == 1 and B[0, 0] > 0:  # B is proportional to mu: 1 - B = 0 at mu / B
            hint = f" Sliding is consistent only for mu below {1.0 / B[0, 0]:.4g} times the present mu."
        raise PainleveParadoxError(
            f"Painleve's paradox at contact(s) {', '.join(map(repr, names))}, t = {t:g}, "
            f"q = {np.array2string(np.asarray(q), precision=4)}, q' = {np.array2string(np.asarray(qd), precision=4)}: "
            f"{why} (det(I - B) = {determinant:.4g}). Coulomb friction on rigid bodies has no unique motion "
            f"here; the package does not pick one.{hint} Lower mu or change the state",
            contacts=names, time=float(t), state=np.concatenate([q, qd]), determinant=determinant)

    def _pressed_friction(self, M, Q, A, b, factor, ideal, fixed, data, modes, normals, size, ratios,
                          known=None) -> np.ndarray:
        """The nonideal vector when some contacts name their normal rows (``CoulombFriction.normal``).

        The reaction of the constraints is ``A^T lambda = F^L + F^C - C``
        (``M q'' = Q + A^T lambda + C`` beside Eq. 8 of the 2005 paper); since
        ``F^C`` is linear in ``C`` (Eq. 11), the reaction to a friction force
        ``e`` is ``r(e) = F^C(e) - e``, one more solve of the same equation. A
        sliding contact ``j`` pushes ``C`` by ``N_j e_j`` with
        ``e_j = -mu_j sgn(s_j) ds_j/dq'``, so the multipliers are affine in the
        normal forces, ``lambda = lambda_0 + Lambda N`` (minimum-norm, by
        least squares), and each ``N_i = || A_Ki^T lambda_Ki ||`` over its rows
        ``K_i``: a small fixed point (see :meth:`_normal_sizes`). It has exactly
        one solution when the matrix of gains ``W_ij = || A_Ki^T Lambda_Ki,j ||``
        has spectral radius below one; otherwise friction and normal force
        feed each other (a Painleve-type inconsistency) and a ValueError says
        so. Fills ``ratios`` for sticking contacts; returns ``C``. ``known`` may
        hold the multipliers of ``F^L`` alone and the rank of ``A``, already
        computed (used when there is nothing else to add).
        """
        m = self.m
        sliding_normal = [i for i, mode in enumerate(modes) if mode != 0 and normals[i] is not None]
        stuck = [i for i, mode in enumerate(modes) if mode == 0]

        def reaction(force):  # r(e) = F^C(e) - e for the constraints in force now (stick rows included)
            return solve(M, Q, A, b, force, factor=factor).nonideal - force

        units = [-data[i, 2] * modes[i] * data[i, 4:] for i in sliding_normal]
        if known is not None and not units and not np.any(fixed):
            lam, rank = known[0][:, None], known[1]  # the reaction is F^L alone
        else:
            base = ideal + (reaction(fixed) if np.any(fixed) else 0.0)
            columns = np.column_stack([base] + [reaction(e) for e in units])
            lam, _, rank, _ = np.linalg.lstsq(A.T, columns, rcond=None)  # shape (rows of A, 1 + k)
        if rank < A.shape[0]:
            self._check_normals_determined(A, normals, rank)

        def pieces(i):  # force of contact i's normal rows: a + B @ N
            rows = list(normals[i])
            return A[rows].T @ lam[rows, 0], A[rows].T @ lam[rows, 1:]

        k = len(sliding_normal)
        N = np.zeros(k)
        if k:
            parts = [pieces(i) for i in sliding_normal]
            N = self._normal_sizes(parts)
        total = fixed.copy()
        for j, e in zip(N, units):
            total += j * e
        for j, i in enumerate(stuck):
            slope = data[i, 4:]
            multiplier = lam[m + j, 0] + lam[m + j, 1:] @ N
            if normals[i] is None:
                limit = size
            else:
                a, B = pieces(i)
                force = a + B @ N
                limit = math.sqrt(force @ force)
            ratios[i] = multiplier * math.sqrt(slope @ slope) / max(data[i, 3] * limit, 1e-300)
        return total

    @staticmethod
    def _check_normals_determined(A, normals, rank) -> None:
        """Refuse named normal rows whose reaction dependent rows leave undetermined.

        With dependent rows only the sum ``A^T lambda`` is fixed. The force of
        the named rows ``K`` is still unique when ``rank(A_K) + rank(A_rest)
        = rank(A)`` (the dependence lies within ``K`` or within the rest);
        otherwise any split between them would do, and the minimum-norm one
        would be an arbitrary answer.
        """
        for i, rows in enumerate(normals):
            if rows is None:
                continue
            rest = [r for r in range(A.shape[0]) if r not in rows]
            own = np.linalg.matrix_rank(A[list(rows)])
            others = np.linalg.matrix_rank(A[rest]) if rest else 0
            if own + others > rank:
                raise ValueError(
                    f"friction contact {i}: its `normal` rows {list(rows)} depend on other constraint rows here, "
                    "so the constraints' reaction cannot be split between them and its normal force is not "
                    "determined. Remove the redundant constraint, or name all the rows it depends on in `normal`")

    @staticmethod
    def _normal_sizes(parts) -> np.ndarray:
        """The normal forces ``N_i = || a_i + B_i N ||`` of sliding contacts, given ``(a_i, B_i)`` per contact.

        One contact: ``N^2 = |a + B N|^2`` is a quadratic whose one root
        ``N >= 0`` is taken in closed form when ``|B| < 1``. Several: Newton's
        method from ``N = |a_i|``, after the check that the gains
        ``W_ij = |B_i[:, j]|`` have spectral radius below one (then the map
        is a contraction and the fixed point unique).
        """
        k = len(parts)
        gains = np.array([[math.sqrt(B[:, j] @ B[:, j]) for j in range(k)] for _, B in parts])
        gain = gains[0, 0] if k == 1 else float(max(abs(np.linalg.eigvals(gains))))
        if gain >= 1.0:
            raise ValueError(
                "Coulomb friction with `normal`: the normal force of a sliding contact changes with its own "
                f"friction at a gain of {gain:.3g} >= 1, so no normal force or more than one is consistent "
                "(a Painleve-type inconsistency). Lower the friction coefficient `mu`, or change the geometry")
        if k == 1:
            a, B = parts[0][0], parts[0][1][:, 0]
            ab, aa, bb = a @ B, a @ a, B @ B
            return np.array([(ab + math.sqrt(ab * ab + (1.0 - bb) * aa)) / (1.0 - bb)])
        N = np.array([math.sqrt(a @ a) for a, _ in parts])
        scale = max(1.0, float(N.max()))
        for _ in range(60):
            vectors = [a + B @ N for a, B in parts]
            sizes = np.array([math.sqrt(v @ v) for v in vectors])
            gap = N - sizes
            if np.abs(gap).max() <= 1e-14 * scale:
                break
            jac = np.eye(k) - np.array([v @ B / max(sz, 1e-300) for v, (_, B), sz in zip(vectors, parts, sizes)])
            N = N - np.linalg.solve(jac, gap)
        return np.array([math.sqrt(v @ v) for v in (a + B @ N for a, B in parts)])

    def _fast_contacts(self, t, q, qd, p, modes, correction) -> tuple | None:
        """:meth:`solve_contacts` in Python floats for a small model with a constant diagonal ``M``, or None.

        Three cases: ``CoulombFriction(normal=rows)`` entries, at most one of
        them sliding (a block on a rough floor carrying a pendulum); one
        ``CoulombFriction(normal=None)`` entry (the block on a rough incline),
        sliding only where :attr:`reaction_free` proves ``N = |F^L|`` (elsewhere
        the general route checks it state by state, and may refuse); and
        :class:`~udk_notebooks.contacts.Contact` entries alone, unilateral
        where they slide with friction, at most two of those (a ladder against
        a floor and a wall). With ``W = M^-1`` diagonal, one Cholesky factor of
        the Gram matrix ``G = A W A^T`` (stick rows included, open contacts'
        gap rows left out) gives every multiplier the general route finds by
        least squares; a sliding entry's normal force is the closed-form root
        of :meth:`_normal_sizes` (named rows), ``|F^L|`` less the holding
        force (``normal=None``) or the solution of
        ``(I - B) N = a`` of :meth:`_sliding_normals` (contacts). The code is
        :class:`~udk_notebooks.kernels.ContactKernel`, generated once per set
        of modes.

        None (the general route decides, with its rank tests and messages)
        unless it can vouch for the answer: ``M`` diagonal and positive
        definite, the rows scaled as the general route scales them, the Gram
        matrix's condition number below ``1 / GRAM_RCOND`` by a bound that
        never understates it (so the general route would use the Gram matrix
        too and its rows are independent, see :mod:`udk_notebooks.kernels`),
        a friction gain below one or ``I - B`` a P-matrix (else the general
        route refuses the Painleve-type inconsistency by name), and finite
        numbers. ``tests/test_contact_fast.py`` compares it with the general route.
        """
        if correction is not None and np.shape(correction) != (self.m,):
            return None  # the kernel reads only the rows it knows: the general route names the wrong shape
        kernel = self._contact_kernel(modes)
        if kernel is None:
            return None
        w = self._diagonal_inverse(p)
        if w is None:
            return None
        self._check_translational_normals()  # the general route's refusal, made before any number
        t_list, q_list, qd_list, p_list = t, q.tolist(), qd.tolist(), p.tolist()
        out = kernel(self._entries(t, q_list, qd_list, p_list), self._scalar_friction()(t_list, q_list, qd_list, p_list),
                     w, None if correction is None else correction.tolist())
        if out is None or not math.isfinite(sum(out[:4 * self.n])):
            return None
        rows = np.fromiter(out, float, len(out))
        n, k = self.n, 4 * self.n + len(modes)
        normals = rows[k:] if self.n_contacts else _NO_NORMALS
        return Motion(rows[:n], rows[n:2 * n], rows[2 * n:3 * n], rows[3 * n:4 * n]), rows[4 * n:k], normals

    def _contact_kernel(self, modes):
        """The :class:`~udk_notebooks.kernels.ContactKernel` of these modes, built on first use; None if none fits."""
        cache = self._symbolic.setdefault("contact kernels", {})
        if modes not in cache:
            cache[modes] = self._build_contact_kernel(modes)
        return cache[modes]

    def _build_contact_kernel(self, modes):
        from .kernels import ContactKernel, _Pattern

        n, m, facts = self.n, self.m, self.facts
        normal_rows = self.friction_normals
        # the structurally nonzero entries of ds/dq' of each friction entry, and whether its mu is
        slopes = [list(columns) for columns in facts["friction_slopes"]]
        rough = list(facts["friction_rough"])
        stuck = [i for i, mode in enumerate(modes) if mode == 0]
        sliding = [i for i, mode in enumerate(modes) if mode in (1, -1)]
        if self.n_contacts:  # Contact entries alone: at most two sliding with friction, each unilateral (mu |N| of a
            # bilateral one needs the general route's sign search), every mode stick, slide or open
            pushing = [i for i in sliding if rough[i] and slopes[i]]
            gone = [self.contact_rows[i] for i, mode in enumerate(modes) if mode not in (0, 1, -1)]
            contacts = (self.contact_rows, rough)
            if (facts["n_plain_friction"] or len(pushing) > 2 or any(not self.unilateral[i] for i in pushing)
                    or any(mode not in (0, 1, -1, OPEN) for mode in modes)):
                return None
        else:  # CoulombFriction(normal=rows) entries, at most one sliding; or one entry with N = |F^L|
            gone, contacts = [], None
            if all(rows is None for rows in normal_rows):
                # where sympy did not prove A M^-1 ds/dq' = 0, the general route checks it (and may refuse)
                if len(modes) > 1 or not all(self.reaction_free[i] for i in sliding):
                    return None
            elif any(rows is None for rows in normal_rows) or len(sliding) > 1:
                return None
            if len(stuck) + len(sliding) < len(modes):
                return None
        if self.mass is None or n > SMALL_MAX_N or not 0 < m - len(gone) + len(stuck) <= SMALL_MAX_ROWS:
            return None
        pattern = _Pattern(n, m, self.nonzero)
        if not self.has_nonideal:
            pattern.C = [None] * n
        if not all(pattern.cols) or not all(slopes[i] for i in stuck):  # a zero row: the general route decides
            return None
        return ContactKernel(pattern, slopes, modes, normal_rows, contacts)

    def _scalar_friction(self):
        """:attr:`friction_data` on Python floats, as one flat list (built on first use)."""
        cache = self._symbolic
        if "scalar friction" not in cache:
            from ._kept_code import kept
            from .compiled import _scalar_function

            cache["scalar friction"] = kept(cache.get("sources"), "scalar_friction",
                                            lambda: _scalar_function(cache["args"], cache["friction"]))
        return cache["scalar friction"]

    def _diagonal_inverse(self, p) -> list | None:
        """``1 / diag(M)`` of a constant diagonal, positive definite ``M`` for the parameter vector ``p``, else None.

        Kept per parameter vector beside the Cholesky factor (:meth:`_constant_mass`).
        """
        if self.mass is None:
            return None
        key = (p.tobytes(), "diagonal inverse")
        cache = self._mass_cache
        if key not in cache:
            M, factor = self._constant_mass(p)
            diagonal = np.diagonal(M)
            plain = factor is not None and not np.any(M - np.diag(diagonal))
            cache[key] = (1.0 / diagonal).tolist() if plain else None
        return cache[key]

