import numpy as np
import pytest

from forestlab import runner
from forestlab.config import compose
from forestlab.errors import ConfigError
from forestlab.learners._cache import FitCache
from forestlab.runner import execute, execute_group, execute_spec, group_specs, plan
from forestlab.store import Store

QUICK = ["experiment=quickstart", "seeds=2", "limits.max_estimators=15"]


def _metrics(store):
    df = store.records()
    return {k: m for k, m in zip(df["key"], df["metrics"], strict=True)}


def test_results_identical_for_n_jobs_1_and_2(workdir):
    specs = plan(compose(QUICK))
    with Store(workdir / "r1") as s1, Store(workdir / "r2") as s2:
        assert execute(specs, s1, n_jobs=1).done == len(specs)
        assert execute(specs, s2, n_jobs=2).done == len(specs)
        m1, m2 = _metrics(s1), _metrics(s2)
        assert m1.keys() == m2.keys()
        for key in m1:
            a = {k: v for k, v in m1[key].items()}
            b = {k: v for k, v in m2[key].items()}
            assert a == b
            np.testing.assert_array_equal(s1.load_arrays(key)["test_error"], s2.load_arrays(key)["test_error"])


def test_rerun_skips_done_runs_and_force_recomputes(workdir):
    specs = plan(compose(QUICK))
    with Store(workdir / "r") as store:
        first = execute(specs, store)
        assert first.done == len(specs) and first.already_done == 0
        stamp = dict(zip(store.records()["key"], store.records()["finished_at"], strict=True))
        second = execute(specs, store)
        assert second.done == 0 and second.already_done == len(specs)
        assert dict(zip(store.records()["key"], store.records()["finished_at"], strict=True)) == stamp
        forced = execute(specs, store, force=True)
        assert forced.done == len(specs) and store.count() == len(specs)


def test_failing_run_is_stored_with_traceback_and_others_go_on(workdir, failing_env):
    good = plan(compose(QUICK))
    bad = plan(compose(["dataset=ringnorm", "algorithm=failing"]))
    with Store(workdir / "r") as store:
        summary = execute(good[:1] + bad[:1] + good[1:2], store)
        assert summary.done == 2 and summary.failed == 1
        df = store.records().set_index("key")
        err = df.loc[bad[0].key, "error"]
        assert "Traceback" in err and "deliberate failure" in err
        # a failed run is retried on the next run (failures are not cached)
        again = execute(bad[:1], store)
        assert again.failed == 1 and again.already_done == 0


def test_same_seed_same_trees_for_learners_sharing_a_seed_tag(workdir):
    cfg = compose(QUICK)
    spec = plan(cfg)[0]
    a, b = execute_spec(spec.payload), execute_spec(spec.payload)
    assert a["status"] == "done" and a["metrics"] == b["metrics"]


def test_record_has_the_expected_metrics(workdir):
    spec = plan(compose(QUICK))[0]
    rec = execute_spec(spec.payload)
    assert rec["status"] == "done", rec["error"]
    for name in ("test_risk", "train_risk", "oob_risk", "test_accuracy", "test_auc", "max_depth"):
        assert name in rec["metrics"]
    assert rec["metrics"]["test_risk"] == pytest.approx(1 - rec["metrics"]["test_accuracy"])
    curves = rec["arrays"]
    assert curves["test_error"].shape == (15,)
    assert curves["test_error"][-1] == pytest.approx(rec["metrics"]["test_risk"])


def test_runs_sharing_a_split_and_seed_tag_fit_the_forest_once(workdir):
    specs = plan(compose(QUICK + ["seeds=1"]))
    groups = group_specs(specs)
    # rf, sorf and mincq share seed_tag "forest": one job per (dataset, split) with the three of them
    assert [sorted(s.algorithm for s in g) for g in groups] == [["mincq", "rf", "sorf"]] * 2
    cache = FitCache()
    records = execute_group([s.payload for s in groups[0]], cache)
    assert all(r["status"] == "done" for r in records), [r["error"] for r in records]
    assert (cache.misses, cache.hits) == (1, 2)  # the forest is grown once and weighed three ways
    # the same numbers as running each spec on its own, with its own forest
    for spec, rec in zip(groups[0], records, strict=True):
        alone = execute_spec(spec.payload)
        assert alone["metrics"] == rec["metrics"]
        assert alone["selected"] == rec["selected"]
        # the trees' predictions, computed once for the job, give the same curves and scores
        assert alone["arrays"].keys() == rec["arrays"].keys()
        for name, array in alone["arrays"].items():
            np.testing.assert_array_equal(array, rec["arrays"][name])


def test_experiment_params_apply_to_every_algorithm_that_has_them(workdir):
    specs = plan(compose(QUICK + ["+experiment.params={regime: stumps}"]))
    for spec in specs:
        assert spec.identity["learner"]["params"]["regime"] == "stumps"
    # a parameter none of the algorithms has would change nothing: refused, not ignored
    with pytest.raises(ConfigError, match="experiment.params.not_a_param is a parameter of none"):
        compose(QUICK + ["+experiment.params={regime: stumps, not_a_param: 3}"])


def test_a_run_whose_arrays_need_pickle_fails_alone(workdir, monkeypatch):
    specs = plan(compose(QUICK + ["seeds=1"]))
    group = group_specs(specs)[0]
    real = runner.execute_group

    def with_an_object_array(payloads):
        records = real(payloads)
        records[0]["arrays"]["bad"] = np.array([{"a": 1}], dtype=object)
        return records

    monkeypatch.setattr(runner, "execute_group", with_an_object_array)
    records = runner.execute_group_packed([s.payload for s in group])
    assert [r["status"] for r in records] == ["failed", "done", "done"]
    assert "cannot be stored without pickling" in records[0]["error"] and not records[0]["arrays"].names
    assert all(r["arrays"].npz for r in records[1:])


def test_plan_keys_are_the_hash_of_each_identity():
    """plan() assembles each key from pre-serialised parts: it must equal run_key(identity) exactly."""
    from forestlab.runner import run_key

    for overrides in (QUICK, ["experiment=courses_error_estimates", "seeds=2"], ["experiment=single", "dataset=sonar",
                                                                               "algorithm=rf", "protocol=kfold"]):
        specs = plan(compose(overrides))
        assert specs and all(s.key == run_key(s.identity) for s in specs)


def test_a_one_class_training_part_is_a_failed_run_with_its_reason():
    """Two training points of ringnorm, both positive with seed 0: stored as failed, never 'done' with meaningless
    numbers."""
    specs = plan(compose(["dataset=ringnorm", "algorithm=rf", "protocol.train_size=2", "seed=0",
                          "algorithm.params.n_estimators=3"]))
    record = execute_spec(specs[0].payload)
    assert record["status"] == "failed"
    assert record["error"].startswith("DatasetError: the training part of this split (2 points) holds only class")


def test_a_dataset_may_have_its_own_number_of_seeds(workdir):
    from forestlab.config import load_experiment

    base = plan(compose(QUICK + ["seeds=2"]))
    exp = load_experiment(QUICK + ["seeds=2", "+experiment.dataset_seeds={wdbc_sklearn: 3}"])
    specs = plan(exp)
    reps = {}
    for s in specs:
        reps.setdefault(s.dataset, set()).add(s.repetition)
    assert reps["wdbc_sklearn"] == {0, 1, 2} and all(r == {0, 1} for d, r in reps.items() if d != "wdbc_sklearn")
    assert exp.n_runs == len(specs) == len(base) + len(base) // len({s.dataset for s in base}) // 2
    # the runs both plans have keep their keys (a dataset's extra seeds add runs, they change none)
    assert {s.key for s in base} <= {s.key for s in specs}
    assert load_experiment(QUICK + ["seeds=2"]).plan_id != exp.plan_id
    with pytest.raises(ConfigError, match="'wdbc_sklear' is not a dataset of the experiment.*'wdbc_sklearn'"):
        compose(QUICK + ["+experiment.dataset_seeds={wdbc_sklear: 3}"])
    with pytest.raises(ConfigError, match="experiment.dataset_seeds.wdbc_sklearn must be >= 1"):
        compose(QUICK + ["+experiment.dataset_seeds={wdbc_sklearn: 0}"])
    smoke = load_experiment(QUICK + ["debug=smoke", "+experiment.dataset_seeds={wdbc_sklearn: 3}"])
    assert {s.repetition for s in plan(smoke)} == {0, 1} and any("dataset_seeds" in n for n in smoke.notes)


def test_a_two_sample_run_stores_its_p_value_and_the_tests_diagnostics():
    specs = plan(compose(["experiment=depecker2010_table6_1", "seeds=1"]))
    spec = next(s for s in specs if s.algorithm == "treerank_wilcoxon" and s.dataset == "gauss_shift_q10_d020")
    record = execute_spec(spec.payload)
    assert record["status"] == "done", record["error"]
    metrics = record["metrics"]
    assert 0 < metrics["p_value"] <= 1 and metrics["reject"] == float(metrics["p_value"] < 0.05)
    assert 0.4 < metrics["held_out_auc"] < 0.7 and abs(metrics["n_test_a"] + metrics["n_test_b"] - 1000) <= 1
    mmd = next(s for s in specs if s.algorithm == "mmd_boot" and s.dataset == "gauss_shift_q10_d020")
    assert execute_spec(mmd.payload)["metrics"]["bandwidth"] > 0
