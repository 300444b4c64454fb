"""ChReg: the Renault practice baseline of depecker2010 (§2.14; Germain 2007b/2009): LASSO-penalised logistic
regression along its regularisation path, the model chosen by BIC, refitted without penalty on the chosen variables.

**Standardisation.** The variables are standardised on the training data (mean 0, standard deviation 1; a constant
variable keeps scale 1 and never enters the path), so that one L1 penalty weighs every variable alike, as
glmnet / the Park & Hastie path do by default. The fitted coefficients are reported back on the original scale.

**The path.** β̂(C) = argmin_{β, b} C Σ_i logloss(y_i, b + x_iᵀ β) + ‖β‖₁ (scikit-learn's C = 1/λ; the intercept
is not penalised) on ``n_alphas`` values of C log-spaced from C_min to 10⁴ C_min (:data:`PATH_SPAN`, glmnet's
default λ_min / λ_max ratio for n > p). C_min = ``sklearn.svm.l1_min_c`` on the centred variables (without
intercept column), 1 / max_j |Σ_i x_ij (y_i − ȳ)|: the smallest C at which a variable enters (KKT at β = 0 with
the intercept at logit ȳ). The first point of the path, C_min itself, is therefore the intercept-only model (not
fitted); the others are fitted by scikit-learn's ``LogisticRegression`` (L1 penalty, solver ``saga``, warm-started
from the previous point, tolerance :data:`SAGA_TOL`, seeded by ``random_state``). The path stops early at the
first point whose penalised fit separates the training classes (every positive's linear predictor above every
negative's) or, as in glmnet, explains 99.9% of the null deviance (:data:`MAX_DEVIANCE_EXPLAINED`): on separable
data the coefficients only grow beyond it (and saga converges slowly), while no later point can have a lower refit
BIC unless it drops variables. The path may thus hold fewer than ``n_alphas`` points. The thesis's path algorithm
is Park & Hastie's (2007) predictor-corrector; a grid of C values visits the same active sets up to the grid's
resolution.

**BIC** at each point of the path: −2 log L + k log n, k = number of active variables + 1 (the intercept), with
``bic_on``:

- ``"refit"`` (default, the "relaxed" reading): log L of the unpenalised logistic refit on the point's active
  variables — the model that would be kept if that point were chosen; points with the same active set share it;
- ``"penalized"``: log L of the penalised fit β̂(C) itself (Park & Hastie's reading).

The chosen point is the BIC minimiser (ties: the first, i.e. the most penalised, sparsest); the final model is the
refit on its active variables, and the score is that model's linear predictor b + xᵀβ (the same ranking as the
fitted probability, without the probabilities' saturation to exactly 0 or 1, which would tie points). An empty
active set is a legitimate choice: the intercept-only model, a constant score.

**The refit** is ``LogisticRegression`` (Newton–Cholesky solver: exact Newton steps, the active sets are small)
with a negligible L2 penalty, C = :data:`REFIT_C` on the standardised variables, rather than none: on separable data
the unpenalised likelihood has no maximiser (the coefficients diverge), and the tiny ridge keeps them finite (log L
then close to 0) without changing a non-separable fit visibly. Convergence warnings of the path and the refits are
not raised; their count is reported (``diagnostics_["not_converged"]``).
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.svm import l1_min_c
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from forestlab.learners._base import (
    BipartiteRankerMixin,
    IntNotBool,
    RunReportMixin,
    standardisation,
)

__all__ = ["MAX_DEVIANCE_EXPLAINED", "PATH_SPAN", "REFIT_C", "SAGA_TOL", "ChReg", "log_likelihood"]

#: The path's C values span [C_min, PATH_SPAN * C_min] (glmnet's default λ_min / λ_max = 1e-4 for n > p).
PATH_SPAN = 1e4
#: The refit's inverse L2 penalty on the standardised variables (a negligible ridge: finite on separable data).
REFIT_C = 1e4
#: The path stops (is truncated) at the first point whose penalised fit explains this share of the null deviance
#: (glmnet's rule), or separates the classes: on separable data the coefficients would grow without bound.
MAX_DEVIANCE_EXPLAINED = 0.999
#: Stopping tolerance and iteration cap of the saga path fits, and of the Newton refits.
SAGA_TOL = 1e-6
SAGA_MAX_ITER = 1000
REFIT_MAX_ITER = 1000

# scikit-learn 1.8 deprecates ``penalty`` (removed in 1.10) for ``l1_ratio``; before 1.8 l1_ratio defaults to None
# and only applies to the elastic net
_L1 = ({"l1_ratio": 1.0} if LogisticRegression().get_params().get("l1_ratio") is not None
       else {"penalty": "l1"})


def log_likelihood(z: np.ndarray, y01: np.ndarray) -> float:
    """The logistic log-likelihood Σ_i [y_i z_i − log(1 + e^{z_i})] of linear predictors ``z`` and 0/1 labels.

    >>> round(log_likelihood(np.zeros(4), np.array([0, 1, 1, 0])) / float(np.log(0.5)), 12)  # 4 log ½
    4.0
    """
    return float(-np.sum(np.logaddexp(0.0, np.where(y01 == 1, -z, z))))


class ChReg(BipartiteRankerMixin, RunReportMixin, BaseEstimator):
    """LASSO logistic regression, BIC along the path, unpenalised refit (the ChReg baseline); a bipartite ranker.

    See the module docstring for the standardisation, the path grid, the two readings of BIC and the refit.

    Parameters
    ----------
    n_alphas : int, default=50
        Number of points of the path (C log-spaced over [C_min, 10⁴ C_min]; the first is the intercept-only model).
    bic_on : {"refit", "penalized"}, default="refit"
        Whose likelihood enters BIC: the unpenalised refit on each point's active variables, or the penalised fit.
    random_state : int, RandomState instance or None, default=None
        Seeds saga's sampling order along the path (a fixed value gives the same model bit for bit).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels; ``classes_[1]`` (+1) is the positive class.
    n_features_in_ : int
        Number of features seen in ``fit``.
    mean_, scale_ : ndarray of shape (n_features_in_,)
        The standardisation (scale 1 for a constant variable).
    path_C_ : ndarray of shape (n_path,)
        The C values of the path (increasing: decreasing penalty); n_path = n_alphas unless the path stopped early
        (see the module docstring). All inf if no variable can enter (every
        variable constant, or orthogonal to the labels).
    path_coef_ : ndarray of shape (n_path, n_features_in_)
        The penalised coefficients at each point (standardised scale; zeros at C_min).
    path_intercept_ : ndarray of shape (n_path,)
        The penalised fits' intercepts (standardised scale; logit ȳ at C_min).
    path_active_ : ndarray of bool, shape (n_path, n_features_in_)
        The active set of each point.
    bic_ : ndarray of shape (n_path,)
        BIC of each point.
    best_index_ : int
        The chosen point (the first BIC minimiser).
    support_ : ndarray of bool, shape (n_features_in_,)
        The chosen variables.
    entry_order_ : ndarray of int64
        The variables that enter the path, by order of first entry (variables entering at the same point: larger
        |coefficient| first, then lower index).
    coef_ : ndarray of shape (n_features_in_,)
        The refit's coefficients on the original scale (0 off the support); score = X @ coef_ + intercept_.
    intercept_ : float
        Its intercept on the original scale.
    selected_params_ : dict
        ``{"n_selected": number of chosen variables}``.
    n_not_converged_ : int
        Path fits and refits that stopped at their iteration cap (their ConvergenceWarning is not raised).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 6))
    >>> y = np.where(rng.random(400) < 1 / (1 + np.exp(-2 * X[:, 0] + 1.5 * X[:, 3])), 1, -1)
    >>> model = ChReg(random_state=0).fit(X, y)
    >>> np.flatnonzero(model.support_), model.entry_order_[:2]
    (array([0, 3]), array([0, 3]))
    """

    version: ClassVar[int] = 1
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "n_alphas": [IntNotBool(2, None, closed="left")],
        "bic_on": [StrOptions({"refit", "penalized"})],
        "random_state": ["random_state"],
    }

    def __init__(self, *, n_alphas: int = 50, bic_on: str = "refit",
                 random_state: int | np.random.RandomState | None = None) -> None:
        self.n_alphas = n_alphas
        self.bic_on = bic_on
        self.random_state = random_state

    # ------------------------------------------------------------------------------------------------------------
    def fit(self, X: Any, y: Any) -> ChReg:
        """Compute the path, choose its point by BIC and refit on the chosen variables.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples (dense, finite).
        y : array-like of shape (n_samples,)
            Labels in {-1, +1} (+1 = positive), both present. Any two labels are accepted, the greater one being
            the positive class (``classes_[1]``).

        Returns
        -------
        self : ChReg
            The fitted ranker.

        Raises
        ------
        ValueError
            If the labels are not exactly two classes.
        """
        self._validate_params()
        X, classes, codes = self._validate_bipartite(X, y, "ChReg")
        self.classes_ = classes
        n_samples, n_features = X.shape
        seed = int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
        self.mean_, self.scale_ = standardisation(X)
        Xs = (X - self.mean_) / self.scale_
        varies = np.ptp(X, axis=0) > 0
        Xs[:, ~varies] = 0.0

        self.n_not_converged_ = 0
        coefs = np.zeros((self.n_alphas, n_features))
        intercepts = np.full(self.n_alphas, _logit(codes.mean()))
        pos = codes == 1
        c_min = _c_min(Xs[:, varies], codes)
        if c_min is not None:
            self.path_C_ = c_min * PATH_SPAN ** np.linspace(0.0, 1.0, self.n_alphas)
            model = LogisticRegression(C=1.0, solver="saga", tol=SAGA_TOL, max_iter=SAGA_MAX_ITER, warm_start=True,
                                       random_state=seed, **_L1)
            null_deviance = -2.0 * log_likelihood(np.full(n_samples, intercepts[0]), codes)
            for k in range(1, self.n_alphas):
                self._quiet_fit(model.set_params(C=float(self.path_C_[k])), Xs[:, varies], codes)
                coefs[k, varies] = model.coef_[0]
                intercepts[k] = model.intercept_[0]
                z = model.decision_function(Xs[:, varies])
                separates = z[pos].min() > z[~pos].max()
                if separates or -2.0 * log_likelihood(z, codes) <= (1.0 - MAX_DEVIANCE_EXPLAINED) * null_deviance:
                    coefs, intercepts, self.path_C_ = coefs[:k + 1], intercepts[:k + 1], self.path_C_[:k + 1]
                    break
        else:  # no variable can enter (none varies, or none correlates with y): all intercept-only
            self.path_C_ = np.full(self.n_alphas, np.inf)
        self.path_coef_ = coefs
        self.path_intercept_ = intercepts
        self.path_active_ = coefs != 0

        refits: dict[bytes, tuple[np.ndarray, float, float]] = {}  # active set -> (β, b, log L)
        bic = np.empty(len(self.path_C_))
        for k, active in enumerate(self.path_active_):
            key = active.tobytes()
            if key not in refits:
                refits[key] = self._refit(Xs[:, active], codes)
            if self.bic_on == "refit":
                loglik = refits[key][2]
            else:
                loglik = log_likelihood(Xs @ coefs[k] + intercepts[k], codes)
            bic[k] = -2.0 * loglik + (active.sum() + 1) * np.log(n_samples)
        self.bic_ = bic
        self.best_index_ = int(np.argmin(bic))
        self.support_ = self.path_active_[self.best_index_].copy()
        beta, intercept, _ = refits[self.support_.tobytes()]
        coef = np.zeros(n_features)
        coef[self.support_] = beta / self.scale_[self.support_]
        self.coef_ = coef
        self.intercept_ = float(intercept - coef @ self.mean_)
        self.entry_order_ = _entry_order(coefs)
        self.selected_params_ = {"n_selected": int(self.support_.sum())}
        return self

    def _quiet_fit(self, model: LogisticRegression, X: np.ndarray, y: np.ndarray) -> None:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            model.fit(X, y)
        for w in caught:
            if issubclass(w.category, ConvergenceWarning):
                self.n_not_converged_ += 1
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)

    def _refit(self, Xa: np.ndarray, y01: np.ndarray) -> tuple[np.ndarray, float, float]:
        """(β, b, log L) of the near-unpenalised logistic regression on the columns ``Xa`` (intercept only: the
        closed form b = logit ȳ)."""
        if Xa.shape[1] == 0:
            b = _logit(y01.mean())
            return np.empty(0), b, log_likelihood(np.full(len(y01), b), y01)
        model = LogisticRegression(C=REFIT_C, solver="newton-cholesky", tol=1e-8, max_iter=REFIT_MAX_ITER)
        self._quiet_fit(model, Xa, y01)
        return model.coef_[0].copy(), float(model.intercept_[0]), log_likelihood(model.decision_function(Xa), y01)

    # ------------------------------------------------------------------------------------------------------------
    def decision_function(self, X: Any) -> np.ndarray:
        """Ranking scores: the refit's linear predictor b + xᵀβ (higher = more likely positive; the same ranking as
        the fitted probability).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples.

        Returns
        -------
        ndarray of float64, shape (n_samples,)
            The scores (constant if no variable was chosen).
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return X @ self.coef_ + self.intercept_

    def predict_proba(self, X: Any) -> np.ndarray:
        """The refit's probabilities of the two classes.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples.

        Returns
        -------
        ndarray of shape (n_samples, 2)
            Columns in the order of ``classes_`` (the positive class second).
        """
        z = self.decision_function(X)
        p = np.exp(-np.logaddexp(0.0, -z))
        return np.column_stack([1.0 - p, p])

    @property
    def diagnostics_(self) -> dict[str, float]:
        """Values the runner stores: the number of chosen variables, the chosen BIC, and the path and refit fits
        that stopped at their iteration cap."""
        check_is_fitted(self)
        return {"n_selected": float(self.support_.sum()), "bic": float(self.bic_[self.best_index_]),
                "not_converged": float(self.n_not_converged_)}


def _c_min(Xs: np.ndarray, y01: np.ndarray) -> float | None:
    """``l1_min_c`` of the centred variables, or None if no variable can ever enter (none, or all orthogonal to
    y − ȳ)."""
    if Xs.shape[1] == 0:
        return None
    try:
        return float(l1_min_c(Xs, y01, loss="log", fit_intercept=False))
    except ValueError:  # "Ill-posed l1_min_c calculation": max_j |Σ_i x_ij y_i| = 0
        return None


def _logit(p: float) -> float:
    return float(np.log(p) - np.log1p(-p))


def _entry_order(coefs: np.ndarray) -> np.ndarray:
    """Variables by first entry along the path (same point: larger |coefficient| first, then lower index)."""
    seen = np.zeros(coefs.shape[1], dtype=bool)
    order: list[int] = []
    for row in coefs:
        new = np.flatnonzero((row != 0) & ~seen)
        order.extend(int(j) for j in new[np.argsort(-np.abs(row[new]), kind="stable")])
        seen[new] = True
    return np.asarray(order, dtype=np.int64)
