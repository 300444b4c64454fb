"""The hard vote of every learner that weighs the trees of a forest (RF, SORF, MinCq): the trees' predictions, the
(weighted) vote, its out-of-bag error and its error curves by number of trees, each implemented once here.

The studies vote with class *labels*, not with leaf probabilities: each tree predicts one class and the forest's
decision is the (weighted) majority of those predictions. Two conventions hold everywhere in this module:

- ties go to the class with the lowest index in the sorted ``classes`` (so with labels {-1, +1},
  H(x) = sgn(sum_t w_t h_t(x)) with sgn(0) = -1, as in zirakiza2013 §2.0);
- trees fitted inside a scikit-learn forest predict class *indices* (as floats) into the forest's ``classes_``,
  because the forest encodes ``y`` before fitting them; trees fitted on raw labels predict labels. Both are
  handled by :func:`tree_prediction_indices`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from typing import Any

import numpy as np
from joblib import Parallel, delayed
from sklearn.utils import check_array
from sklearn.utils.validation import check_is_fitted, validate_data

from forestlab.learners._base import check_test_pair
from forestlab.learners._cache import fingerprint

__all__ = ["TIE_RTOL", "TreeVoteMixin", "class_scores", "cumulative_vote_errors", "first_best", "oob_vote_errors",
           "shared_tree_predictions", "tree_prediction_indices", "tree_predictions", "vote_counts", "vote_error_curves",
           "vote_scores", "weighted_vote"]

# (tree ids, input fingerprint, classes) -> (the trees, read-only class indices); None outside the context manager.
_shared: ContextVar[dict[tuple[Any, ...], tuple[tuple[Any, ...], np.ndarray]] | None] = ContextVar(
    "forestlab_shared_tree_predictions", default=None)


@contextlib.contextmanager
def shared_tree_predictions() -> Iterator[None]:
    """Within the block, :func:`tree_prediction_indices` computes each (trees, X) pair once.

    The runner wraps each job in it: RF, SORF and MinCq weigh the same trees and are all evaluated on the same test
    and training points, so the trees' predictions are computed once instead of once per learner and per call
    (predict, decision_function, error curves; the training points' predictions of the fit are reused too). The
    trees are recognised by identity (and kept alive by the memo), the input by its content; the memoised arrays
    are read-only. Results are identical with and without it.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from forestlab.learners import BreimanForestClassifier
    >>> X, y = make_classification(n_samples=60, random_state=0)
    >>> rf = BreimanForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    >>> with shared_tree_predictions():
    ...     a = tree_prediction_indices(rf.estimators_, X.astype("float32"), rf.classes_)
    ...     b = tree_prediction_indices(rf.estimators_, X.astype("float32"), rf.classes_)
    >>> a is b
    True
    """
    token = _shared.set({})
    try:
        yield
    finally:
        _shared.reset(token)


def _check_features(tree: Any, X: np.ndarray) -> None:
    """What ``tree.apply(X, check_input=False)`` checks: a fitted tree with X's number of features."""
    n_features = getattr(tree, "n_features_in_", None)
    if n_features is None:
        check_is_fitted(tree)
    if X.shape[1] != n_features:
        raise ValueError(f"X has {X.shape[1]} features, but {type(tree).__name__} is expecting {n_features} features "
                         "as input.")


def _predict_block(estimators: Sequence[Any], X: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Class indices predicted by each tree of ``estimators``: shape (len(estimators), n_samples)."""
    n_classes = len(classes)
    out = np.empty((len(estimators), X.shape[0]), dtype=np.intp)
    forest_codes = np.arange(n_classes)
    for t, tree in enumerate(estimators):
        # tree.predict(X) is tree.classes_[argmax of the leaf's class weights]; the leaves' lookup + a per-leaf table
        # gives the same without predict's per-call overhead and its (n_samples, n_classes) copy. The lookup is
        # tree.apply(X, check_input=False) less its per-tree check of the feature count (done here once a tree
        # shape, in ``_check_features``), which costs as much as the lookup on small data.
        _check_features(tree, X)
        leaf_class = tree.tree_.value[:, 0, :].argmax(axis=1)
        pred = leaf_class.take(tree.tree_.apply(X))  # indices into tree.classes_
        tree_classes = tree.classes_
        if len(tree_classes) == n_classes and np.array_equal(tree_classes, forest_codes):
            out[t] = pred  # fitted inside a forest: tree.classes_ are the codes 0..K-1 of the forest's classes
        else:  # fitted on raw labels: map its labels to indices into classes
            out[t] = _labels_to_indices(tree_classes.take(pred), classes, who=f"tree {t} predicts")
    return out


def tree_prediction_indices(
    estimators: Sequence[Any], X: np.ndarray, classes: np.ndarray, *, n_jobs: int | None = None
) -> np.ndarray:
    """Predictions of every tree, as indices into ``classes``, one row per tree.

    Parameters
    ----------
    estimators : sequence of fitted ``DecisionTreeClassifier``
        The trees, e.g. a fitted forest's ``estimators_``.
    X : ndarray of shape (n_samples, n_features), dtype float32
        Already validated input (finite, float32, the trees' number of features): it is passed to the trees with
        ``check_input=False``.
    classes : ndarray of shape (n_classes,)
        Sorted class labels (the forest's ``classes_``).
    n_jobs : int or None, default=None
        Threads over blocks of trees (None means 1). The result does not depend on it.

    Returns
    -------
    ndarray of shape (n_estimators, n_samples), dtype intp
        ``out[t, i]`` is the index in ``classes`` of tree ``t``'s prediction for sample ``i``.
    """
    classes = np.asarray(classes)
    memo = _shared.get()
    if memo is None:
        return _tree_prediction_indices(estimators, X, classes, n_jobs)
    trees = tuple(estimators)
    key = (tuple(map(id, trees)), fingerprint(X), fingerprint(classes))
    if key not in memo:
        out = _tree_prediction_indices(trees, X, classes, n_jobs)
        out.flags.writeable = False
        memo[key] = (trees, out)
    return memo[key][1]


def _tree_prediction_indices(estimators: Sequence[Any], X: np.ndarray, classes: np.ndarray,
                             n_jobs: int | None) -> np.ndarray:
    n_jobs = 1 if n_jobs is None else int(n_jobs)
    n_trees = len(estimators)
    if n_jobs == 1 or n_trees < 2:
        return _predict_block(estimators, X, classes)
    n_blocks = min(n_trees, n_jobs if n_jobs > 0 else n_trees)
    bounds = np.linspace(0, n_trees, n_blocks + 1).astype(int)
    blocks = Parallel(n_jobs=n_jobs, prefer="threads")(
        delayed(_predict_block)(estimators[a:b], X, classes) for a, b in zip(bounds[:-1], bounds[1:], strict=True)
    )
    return np.concatenate(blocks, axis=0)


def tree_predictions(forest: Any, X: Any, *, n_jobs: int | None = None) -> np.ndarray:
    """Class labels predicted by every tree of a fitted forest.

    Parameters
    ----------
    forest : fitted forest
        Any object with ``estimators_``, ``classes_`` and ``n_features_in_``: a
        :class:`~forestlab.learners.BreimanForestClassifier` or a scikit-learn ``RandomForestClassifier`` /
        ``ExtraTreesClassifier``.
    X : array-like of shape (n_samples, n_features)
        Input samples (dense, finite).
    n_jobs : int or None, default=None
        Threads over blocks of trees (None means 1).

    Returns
    -------
    ndarray of shape (n_estimators, n_samples)
        ``out[t, i]`` is the label tree ``t`` predicts for sample ``i`` (same dtype as ``forest.classes_``).
    """
    if hasattr(forest, "tree_predictions"):
        return forest.tree_predictions(X)
    X = check_array(X, dtype=np.float32, order="C")
    if X.shape[1] != forest.n_features_in_:
        raise ValueError(f"X has {X.shape[1]} features, but the forest was fitted with {forest.n_features_in_}")
    classes = np.asarray(forest.classes_)
    return classes.take(tree_prediction_indices(forest.estimators_, X, classes, n_jobs=n_jobs))


def vote_counts(pred_idx: np.ndarray, n_classes: int, mask: np.ndarray | None = None) -> np.ndarray:
    """Exact (integer) vote counts per class from class-index predictions.

    Parameters
    ----------
    pred_idx : ndarray of shape (n_estimators, n_samples), integer
        Class indices, as returned by :func:`tree_prediction_indices`.
    n_classes : int
        Number of classes.
    mask : ndarray of shape (n_estimators, n_samples), bool, optional
        Only the votes where ``mask`` is True count (e.g. the out-of-bag mask).

    Returns
    -------
    ndarray of shape (n_samples, n_classes), dtype int64
        ``counts[i, c]`` is the number of (unmasked) trees that predict class ``c`` for sample ``i``.
    """
    n_trees, n_samples = pred_idx.shape
    flat = pred_idx.astype(np.intp, copy=False) + n_classes * np.arange(n_samples, dtype=np.intp)
    if mask is not None:
        flat = flat[mask]
    return np.bincount(flat.ravel(), minlength=n_samples * n_classes).reshape(n_samples, n_classes)


#: Two class scores within TIE_RTOL * (the sum of the |weights| voting) are a tie, so float weights that should
#: sum to the same score (uniform 1/T, say) tie despite rounding.
TIE_RTOL = 1e-9


def first_best(scores: np.ndarray, tol: np.ndarray | float, *, axis: int) -> np.ndarray:
    """Index along ``axis`` of the first class whose score is within ``tol`` of the best: the vote's winner, ties
    (within ``tol``) to the lowest class index. ``tol`` broadcasts against ``scores`` with ``axis`` kept."""
    best = scores.max(axis=axis, keepdims=True)
    return np.argmax(scores >= best - tol, axis=axis)


def class_scores(pred_idx: np.ndarray, n_classes: int, weights: np.ndarray,
                 mask: np.ndarray | None = None) -> np.ndarray:
    """Weighted votes per class for one or several weight vectors at once.

    Parameters
    ----------
    pred_idx : ndarray of shape (n_trees, n_samples), integer
        Class index predicted by each tree.
    n_classes : int
        Number of classes K.
    weights : ndarray of shape (n_trees,) or (n_trees, G)
        One or G weight vectors (any sign).
    mask : ndarray of shape (n_trees, n_samples), optional
        Boolean: only the votes where True count (the out-of-bag mask). Float: each tree's vote on each sample
        is multiplied by it (per-sample weights).

    Returns
    -------
    ndarray of shape (K, n_samples, G)
        ``out[p, k, g] = sum_t weights[t, g] 1{pred_idx[t, k] = p} (mask[t, k])``. Integer weights give exact sums.
    """
    W = np.asarray(weights, dtype=np.float64)
    W = W[:, None] if W.ndim == 1 else W
    n_trees, n_samples = pred_idx.shape
    out = np.empty((n_classes, n_samples, W.shape[1]))
    for p in range(n_classes):
        votes = pred_idx == p
        if mask is not None:
            votes = votes & mask if mask.dtype == bool else votes * mask
        out[p] = votes.T.astype(np.float64) @ W
    return out


def _labels_to_indices(preds: np.ndarray, classes: np.ndarray, who: str = "predictions contain") -> np.ndarray:
    """The index in the sorted ``classes`` of each label of ``preds``; ValueError (``who`` says whose labels, for
    the message) when one is not in ``classes``."""
    classes = np.asarray(classes)
    pos = np.searchsorted(classes, preds)
    clipped = np.minimum(pos, len(classes) - 1)
    if np.any(pos >= len(classes)) or np.any(classes[clipped] != preds):
        raise ValueError(f"{who} labels outside classes {classes.tolist()}")
    return pos


def vote_scores(preds: np.ndarray, weights: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Weighted votes per class: ``scores[i, c] = sum_t w[t(, i)] * 1{preds[t, i] == classes[c]}``
    (:func:`class_scores` on labels).

    Parameters
    ----------
    preds : ndarray of shape (n_estimators, n_samples)
        Class labels predicted by each tree (:func:`tree_predictions`).
    weights : ndarray of shape (n_estimators,) or (n_estimators, n_samples)
        One weight per tree, or one per tree and sample (e.g. ``w[:, None] * oob_mask``). Any real values.
    classes : ndarray of shape (n_classes,)
        Sorted class labels.

    Returns
    -------
    ndarray of shape (n_samples, n_classes), dtype float64
    """
    idx = _labels_to_indices(np.asarray(preds), classes)
    n_trees, n_samples = idx.shape
    w = np.asarray(weights, dtype=np.float64)
    if w.shape == (n_trees,):
        scores = class_scores(idx, len(classes), w)
    elif w.shape == (n_trees, n_samples):
        scores = class_scores(idx, len(classes), np.ones(n_trees), mask=w)
    else:
        raise ValueError(f"weights must have shape ({n_trees},) or ({n_trees}, {n_samples}), got {w.shape}")
    return scores[:, :, 0].T


def weighted_vote(preds: np.ndarray, weights: np.ndarray, classes: np.ndarray, *,
                  rtol: float = TIE_RTOL) -> np.ndarray:
    """Weighted majority vote ``H(x) = argmax_c sum_t w_t 1{h_t(x) = c}``, ties to the lowest class index.

    With labels {-1, +1} this is ``sgn(sum_t w_t h_t(x))`` with sgn(0) = -1. Two classes whose scores differ by at
    most ``rtol * sum_t |w_t|`` count as tied, so uniform float weights (e.g. 1/T) give back the exact unweighted
    vote of :class:`~forestlab.learners.BreimanForestClassifier` despite rounding.

    Parameters
    ----------
    preds : ndarray of shape (n_estimators, n_samples)
        Class labels predicted by each tree.
    weights : ndarray of shape (n_estimators,) or (n_estimators, n_samples)
        Tree weights (per sample if 2-D).
    classes : ndarray of shape (n_classes,)
        Sorted class labels.
    rtol : float, default=1e-9
        Relative tolerance for ties.

    Returns
    -------
    ndarray of shape (n_samples,)
        The voted labels, taken from ``classes``.
    """
    classes = np.asarray(classes)
    scores = vote_scores(preds, weights, classes)
    w = np.abs(np.asarray(weights, dtype=np.float64))
    total = w.sum(axis=0)
    tol = rtol * (total if np.ndim(total) else np.full(scores.shape[0], total))
    return classes.take(first_best(scores, tol[:, None], axis=1))


def oob_vote_errors(pred_idx: np.ndarray, y_idx: np.ndarray, n_classes: int, oob_mask: np.ndarray,
                    weights: np.ndarray) -> np.ndarray:
    """Out-of-bag error of the weighted vote, for one or several weight vectors.

    Each training sample is voted on by its out-of-bag trees only, with their weights. A sample is counted as an
    **error** when it has no out-of-bag tree of nonzero weight (the rule of ``BreimanForestClassifier.oob_error_``
    for samples without out-of-bag trees, extended to zero weights); ties go to the lowest class index.

    Returns
    -------
    ndarray of shape (G,)
        The error of each weight vector (a fraction of the training samples).
    """
    W = np.asarray(weights, dtype=np.float64)
    W = W[:, None] if W.ndim == 1 else W
    y_idx = np.asarray(y_idx)
    voting = oob_mask.T.astype(np.float64) @ np.abs(W)  # (m, G): sum of |w| over each sample's OOB trees
    tol = TIE_RTOL * voting
    if n_classes == 2:  # one product: f = s1 - s0, and class 1 wins iff f > tol (the rule of first_best)
        signed = np.where(oob_mask, 2 * pred_idx.astype(np.int8) - 1, 0).T.astype(np.float64)
        pred = (signed @ W > tol).astype(np.intp)
    else:
        pred = first_best(class_scores(pred_idx, n_classes, W, oob_mask), tol, axis=0)
    wrong = (pred != y_idx[:, None]) | ~(voting > 0)
    return wrong.mean(axis=0)


def cumulative_vote_errors(pred_idx: np.ndarray, y_idx: np.ndarray, n_classes: int,
                           weights: np.ndarray | None = None,
                           mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Errors of the vote of the first t trees, for every t.

    Parameters
    ----------
    pred_idx : ndarray of shape (n_trees, n_samples), integer
        Class index predicted by each tree.
    y_idx : ndarray of shape (n_samples,)
        True class indices (-1 for a label outside the classes: always an error).
    n_classes : int
        Number of classes K.
    weights : ndarray of shape (n_trees,), optional
        The trees' weights (any sign), ties within ``TIE_RTOL`` of the voting weight going to the lowest class
        index. None: Breiman's unweighted vote, counted exactly in integers (the same votes as unit weights,
        faster).
    mask : ndarray of shape (n_trees, n_samples), bool, optional
        Only the votes where True count (the out-of-bag mask).

    Returns
    -------
    wrong, covered : ndarray of shape (n_trees,)
        Among the ``covered[t-1]`` samples with at least one voting tree (of nonzero weight) among trees 0..t-1
        (all samples when ``mask`` is None), ``wrong[t-1]`` are misvoted. Samples are processed in blocks of about
        4 M (tree, sample, class) entries.
    """
    n_trees, n_samples = pred_idx.shape
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    wrong = np.zeros(n_trees, dtype=np.int64)
    covered = np.zeros(n_trees, dtype=np.int64)
    block = max(1, (1 << 22) // max(1, n_trees * n_classes))
    classes = np.arange(n_classes)
    for start in range(0, n_samples, block):
        sl = slice(start, start + block)
        onehot = pred_idx[:, sl, None] == classes  # (T, b, K)
        if w is None:
            voters = None if mask is None else mask[:, sl]
            if voters is not None:
                onehot &= voters[:, :, None]
            pred = np.cumsum(onehot, axis=0, dtype=np.int32).argmax(axis=2)  # ties -> lowest class index
        else:
            tree_w = np.broadcast_to(w[:, None], onehot.shape[:2]) if mask is None else w[:, None] * mask[:, sl]
            voters = None if mask is None else mask[:, sl] & (w != 0)[:, None]
            scores = np.cumsum(onehot * tree_w[:, :, None], axis=0)
            voting = np.cumsum(np.abs(tree_w), axis=0)
            pred = first_best(scores, TIE_RTOL * voting[:, :, None], axis=2)
        miss = pred != y_idx[sl]
        if voters is None:
            covered += miss.shape[1]
        else:
            has_vote = np.cumsum(voters, axis=0, dtype=np.int32) > 0
            miss &= has_vote
            covered += has_vote.sum(axis=1)
        wrong += miss.sum(axis=1)
    return wrong, covered


def vote_error_curves(
    train_pred_idx: np.ndarray,
    train_y_idx: np.ndarray,
    classes: np.ndarray,
    oob_mask: np.ndarray | None,
    test_pred_idx: Callable[[Any], np.ndarray],
    X_test: Any = None,
    y_test: Any = None,
    *,
    weights: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Train, out-of-bag and test error of the vote of the first k trees, k = 1..n_trees (see
    ``BreimanForestClassifier.error_curves`` for the conventions), shared by every learner that votes with trees.

    Parameters
    ----------
    train_pred_idx, train_y_idx : ndarray
        Class indices predicted by each tree on the training set, shape (n_trees, n_train), and the true ones.
    classes : ndarray
        Sorted class labels.
    oob_mask : ndarray of bool of shape (n_trees, n_train), or None
        True where a sample is out of a tree's bootstrap; None for no ``oob_error`` curve.
    test_pred_idx : callable
        ``test_pred_idx(X) -> (n_trees, n_test)`` class indices predicted by each tree.
    X_test, y_test : optional
        Test data; both or neither. Test labels absent from ``classes`` count as errors.
    weights : ndarray of shape (n_trees,), optional
        The trees' weights (:func:`cumulative_vote_errors`); None for Breiman's unweighted vote.
    """
    n_trees = train_pred_idx.shape[0]
    n_classes = len(classes)

    def errors(pred_idx: np.ndarray, y_idx: np.ndarray, mask: np.ndarray | None = None) -> tuple[Any, Any]:
        return cumulative_vote_errors(pred_idx, y_idx, n_classes, weights, mask=mask)

    out: dict[str, np.ndarray] = {"n_trees": np.arange(1, n_trees + 1)}
    wrong, covered = errors(train_pred_idx, train_y_idx)
    out["train_error"] = wrong / covered
    if oob_mask is not None:
        wrong, covered = errors(train_pred_idx, train_y_idx, mask=oob_mask)
        with np.errstate(invalid="ignore", divide="ignore"):
            out["oob_error"] = np.where(covered > 0, wrong / np.maximum(covered, 1), np.nan)
        out["oob_coverage"] = covered / train_pred_idx.shape[1]
    check_test_pair(X_test, y_test)
    if X_test is not None:
        y_test = np.asarray(y_test)
        test_idx = test_pred_idx(X_test)
        if test_idx.shape[1] != y_test.shape[0]:
            raise ValueError(f"X_test has {test_idx.shape[1]} samples but y_test has {y_test.shape[0]}")
        pos = np.searchsorted(classes, y_test)
        known = (pos < n_classes) & (classes[np.minimum(pos, n_classes - 1)] == y_test)
        y_test_idx = np.where(known, pos, -1)  # unknown labels never match a vote
        wrong, covered = errors(test_idx, y_test_idx)
        out["test_error"] = wrong / np.maximum(covered, 1)
    return out


class TreeVoteMixin:
    """The trees' predictions for an estimator that votes with the fitted trees in ``estimators_`` (labels
    ``classes_``, threads ``n_jobs``): RF and its PAC-Bayes reweightings."""

    estimators_: Sequence[Any]
    classes_: np.ndarray
    n_jobs: int | None

    def _n_jobs(self) -> int:
        return 1 if self.n_jobs is None else int(self.n_jobs)

    def _tree_indices(self, X: Any) -> np.ndarray:
        """Class indices predicted by each tree, shape (n_trees, n_samples); checks that the estimator is fitted."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float32, order="C")
        return tree_prediction_indices(self.estimators_, X, np.arange(len(self.classes_)), n_jobs=self._n_jobs())

    def tree_predictions(self, X: Any) -> np.ndarray:
        """Labels predicted by each tree on the samples ``X``: an array of shape (n_estimators, n_samples) whose
        ``[t, i]`` is tree t's label for sample i (dtype of ``classes_``), trees in vote order."""
        return self.classes_.take(self._tree_indices(X))
