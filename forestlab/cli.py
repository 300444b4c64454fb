"""The ``forestlab`` command line (typer). Hydra overrides are plain arguments: ``forestlab run experiment=uci_binary``.

Exit status: 0 when everything asked for is done; 1 when a run failed (after every other run is stored); 2 for an
error in the input or the environment (unknown name, bad override, missing or corrupt file, a store that cannot be
written); 75 when another run holds the store and ``--no-wait`` was given; 130 when interrupted (Ctrl-C) and 143 when
terminated (SIGTERM), what finished being stored either way. Every error is one line on stderr starting with
``forestlab: error:``, usage errors included.

``forestlab run`` also logs to a rotating file, ``paths.log_file`` (default ``results/logs/forestlab.log``) or
``--log-file PATH``: docs/operations.md.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.util
import logging
import logging.handlers
import os
import shlex
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from forestlab._values import is_number
from forestlab._version import __version__
from forestlab.errors import ConfigError, ForestlabError, StoreBusy, StoreError, Terminated, one_line
from forestlab.spec import add_kind_loader

if TYPE_CHECKING:
    import pandas as pd

    from forestlab.config import ExperimentFacts
    from forestlab.experiment import Experiment
    from forestlab.results import ExperimentResults
    from forestlab.runner import Event, Outcome, RunDone, RunFailed, Summary
    from forestlab.store import Store

# The commands import the rest of forestlab inside their functions: config loads Hydra and OmegaConf, the store,
# datasets, runner and report load numpy, pandas, scikit-learn and matplotlib, and `forestlab --help` or a mistyped
# command needs none of them.



def _load_studies() -> None:
    """Load the studies' plug-ins (their figure kinds, claims and published-table readers). The spec calls this the
    first time a figure names a kind it has not registered: the shared code names no study, the top floor does."""
    import forestlab.studies  # noqa: F401  local: the studies load pandas and scikit-learn, most commands need neither


add_kind_loader(_load_studies)

# typer's (vendored) click exceptions, found through a public name so that this works across typer versions
_click_exceptions = importlib.import_module(typer.BadParameter.__module__)


class _Group(TyperGroup):
    """The top-level command group: usage errors (an unknown option or command, a missing argument) become one
    line on stderr, ``forestlab: error: ...``, with exit status 2, like every other error."""

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        if not standalone_mode:
            return super().main(*args, standalone_mode=False, **kwargs)
        no_args = getattr(_click_exceptions, "NoArgsIsHelpError", ())
        try:
            rv = super().main(*args, standalone_mode=False, **kwargs)
        except no_args as exc:  # bare `forestlab`: the help text
            exc.show()
            sys.exit(exc.exit_code)
        except _click_exceptions.UsageError as exc:
            ctx = getattr(exc, "ctx", None)
            where = ctx.command_path if ctx is not None else "forestlab"
            _err(f"{exc.format_message()} (see '{where} --help')")
            sys.exit(EXIT_USAGE)
        except typer.TyperException as exc:
            _err(exc.format_message())
            sys.exit(exc.exit_code)
        except typer.Abort:
            _err("interrupted")
            sys.exit(EXIT_INTERRUPTED)
        sys.exit(rv if isinstance(rv, int) else 0)


app = typer.Typer(cls=_Group, add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="Reproduce and extend tree-ensemble studies. Arguments KEY=VALUE are Hydra overrides, "
                       "e.g. `forestlab run experiment=uci_binary seeds=10 launcher.n_jobs=2`.")


def _print_version(value: bool) -> None:
    if value:
        typer.echo(__version__)
        raise typer.Exit(0)


@app.callback()
def _main(version: Annotated[bool, typer.Option(
        "--version", callback=_print_version, is_eager=True, help="Print forestlab's version and exit.")] = False,
          ) -> None:
    """Reproduce and extend tree-ensemble studies. Arguments KEY=VALUE are Hydra overrides, e.g. `forestlab run
    experiment=uci_binary seeds=10 launcher.n_jobs=2`."""
datasets_app = typer.Typer(add_completion=False, no_args_is_help=True, help="Dataset utilities.")
app.add_typer(datasets_app, name="datasets")

EXIT_FAILED_RUNS = 1
EXIT_USAGE = 2
EXIT_BUSY = 75
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143  # 128 + SIGTERM: what `timeout`, cron daemons and cluster schedulers send


def _exit_status(outcome: Outcome) -> int:
    """The exit status of a run that ended with ``outcome``."""
    from forestlab.runner import Outcome

    return {Outcome.COMPLETE: 0, Outcome.FAILED_RUNS: EXIT_FAILED_RUNS, Outcome.NOT_STARTED: EXIT_USAGE,
            Outcome.INTERRUPTED: EXIT_INTERRUPTED, Outcome.TERMINATED: EXIT_TERMINATED}[outcome]


def _on_sigterm(signum: int, frame: Any) -> None:
    raise Terminated()

log = logging.getLogger("forestlab")
# Lines that go to the log file only (the command line, and what is also echoed to the terminal).
file_log = logging.getLogger("forestlab_logfile")
file_log.addHandler(logging.NullHandler())  # without a log file, these lines go nowhere (not to logging's last resort)
file_log.propagate = False

Overrides = Annotated[list[str] | None, typer.Argument(help="Hydra overrides KEY=VALUE.", show_default=False)]


def _setup_logging(quiet: bool = False) -> None:
    """Log lines on stderr (warnings and errors only with ``quiet``); no log file until :func:`_add_log_file`."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s", "%Y-%m-%d %H:%M:%S"))
    handler.setLevel(logging.WARNING if quiet else logging.INFO)
    root = logging.getLogger("forestlab")
    for old in root.handlers + file_log.handlers:
        old.close()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    root.propagate = False
    file_log.handlers[:] = [logging.NullHandler()]
    file_log.setLevel(logging.INFO)
    file_log.propagate = False


class _LogFile(logging.handlers.RotatingFileHandler):
    """A rotating log file that, when it cannot be written (disk full, permissions), says so once on stderr and
    stops, instead of printing a traceback for every line."""

    failed = False

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging's name
        if not self.failed:
            self.failed = True
            exc = sys.exc_info()[1]
            reason = getattr(exc, "strerror", None) or exc
            typer.echo(f"forestlab: warning: cannot write the log file {self.baseFilename} ({reason}); "
                       "logging to stderr only", err=True)

    def emit(self, record: logging.LogRecord) -> None:
        if not self.failed:
            super().emit(record)


def _add_log_file(path: str | os.PathLike[str] | None, max_bytes: int, backups: int) -> Path | None:
    """Also log (at INFO, whatever ``--quiet``) to ``path``, rotated at ``max_bytes`` with ``backups`` old files
    (``forestlab.log.1`` ... ); None or "" for no file. Returns the file's path, or None."""
    if path is None or str(path) == "":
        return None
    from forestlab.config import resolve_path

    target = resolve_path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handler = _LogFile(target, maxBytes=max(int(max_bytes), 0), backupCount=max(int(backups), 0),
                           encoding="utf-8")
    except OSError as exc:
        typer.echo(f"forestlab: warning: cannot write the log file {target} ({exc.strerror}); logging to stderr "
                   "only", err=True)
        return None
    handler.setFormatter(logging.Formatter("%(asctime)s [%(process)d] %(levelname)s %(message)s",
                                           "%Y-%m-%d %H:%M:%S"))
    handler.setLevel(logging.INFO)
    log.addHandler(handler)
    file_log.addHandler(handler)
    return target


def _err(message: str) -> None:
    typer.echo(f"forestlab: error: {message}", err=True)
    file_log.error(message)


def _say(message: str, *, err: bool = False) -> None:
    """Print a line for the user and copy it to the log file."""
    typer.echo(message, err=err)
    file_log.info(message)


def handle_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """Turn user errors into one line on stderr and exit status 2 (75 for a busy store)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except typer.Exit:
            raise
        except StoreBusy as exc:
            _err(str(exc))
            raise typer.Exit(EXIT_BUSY) from None
        except ForestlabError as exc:
            _err(str(exc))
            raise typer.Exit(EXIT_USAGE) from None
        except Terminated:
            _err("terminated (SIGTERM)")
            raise typer.Exit(EXIT_TERMINATED) from None
        except KeyboardInterrupt:
            _err("interrupted")
            raise typer.Exit(EXIT_INTERRUPTED) from None
        except MemoryError as exc:  # in this process (a worker's is a failed run): one line, finished runs kept
            _err(f"out of memory: {one_line(exc)}; finished runs are kept: lower the sizes asked for, or run on a "
                 "machine with more memory")
            raise typer.Exit(EXIT_USAGE) from None

    return wrapper


def _experiment(overrides: Sequence[str] | None, experiment: str | None = None):
    """The resolved :class:`~forestlab.experiment.Experiment` for the overrides (and experiment name)."""
    from forestlab.config import load_experiment

    return load_experiment(_with_experiment(overrides, experiment))


def _with_experiment(overrides: Sequence[str] | None, experiment: str | None) -> list[str]:
    """The overrides that compose ``experiment`` (a name, or a first override) with ``overrides``."""
    ov = list(overrides or [])
    if experiment:
        if "=" in experiment:  # `forestlab tables seeds=3` without an experiment name
            ov.insert(0, experiment)
        else:
            ov.insert(0, f"experiment={experiment}")
    return ov


# ---------------------------------------------------------------------------------------------------------------
class Progress:
    """Renders a run's events (:data:`forestlab.runner.Event`): a bar (done, failed, left, ETA) on a terminal;
    plain log lines otherwise."""

    def __init__(self, *, quiet: bool, terminal: bool, several: bool = False) -> None:
        self.quiet = quiet
        self.terminal = terminal and not quiet
        self.several = several  # several experiments in one pool: each start line names its experiment
        self.bar: Any = None
        self.task: Any = None
        self.total = 0
        self.started = False
        self.done = self.failed = 0
        self.t0 = time.perf_counter()

    def __call__(self, event: Event) -> None:
        from forestlab import runner as r  # loaded by now: the run imported it

        match event:
            case r.Note(message):
                log.info(f"note: {message}")
            case r.WaitingForStore(holder, results_dir):
                log.warning(f"another forestlab run{holder} is using {results_dir}; waiting for it to finish")
            case r.DatasetSkipped(dataset, message, n_runs):
                _err(f"{message} ({n_runs} runs of '{dataset}' not started)")
            case r.ExperimentStarted(summary, to_run, experiment):
                self._start(summary, to_run, experiment)
            case r.RunDone():
                self._done(event)
            case r.RunFailed():
                self._failed(event)
            case r.ExperimentEnded():
                if self.bar is not None:
                    self.bar.stop()
                    self.bar = None

    def _start(self, summary: Summary, todo: int, experiment: str = "") -> None:
        self.total += todo  # several experiments in one pool: their runs add up
        if not self.started:
            self.t0 = time.perf_counter()
            self.started = True
        named = f"{experiment}: " if self.several and experiment else ""
        msg = (f"{named}{summary.planned} runs planned, {summary.already_done} already done, {todo} to run")
        if self.quiet:
            _say(msg, err=True)
        else:
            log.info(msg)
        if self.bar is not None:
            self.bar.update(self.task, total=self.total)
        elif self.terminal and self.total:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.bar = Progress(TextColumn("[bold]runs"), BarColumn(), MofNCompleteColumn(),
                                TextColumn("{task.fields[failed]} failed"), TextColumn("ETA"),
                                TimeRemainingColumn(), TimeElapsedColumn(), transient=False)
            self.bar.start()
            self.task = self.bar.add_task("runs", total=self.total, failed=0)

    def _line(self, event: RunDone | RunFailed, status: str) -> str:
        spec = event.spec
        fold = f" fold {spec.fold}" if spec.fold is not None else ""
        left = self.total - self.done - self.failed
        elapsed = time.perf_counter() - self.t0
        finished = self.done + self.failed
        eta = elapsed / finished * left if finished else 0.0
        return (f"[{finished}/{self.total}] {status} {spec.algorithm} on {spec.dataset} "
                f"rep {spec.repetition}{fold} ({event.seconds:.2f}s; {left} left, ETA {eta:.0f}s)")

    def _done(self, event: RunDone) -> None:
        self.done += 1
        line = self._line(event, "done")
        if self.bar is not None:
            self.bar.update(self.task, advance=1)
            file_log.info(line)
        elif not self.quiet:
            log.info(line)
        else:
            file_log.info(line)

    def _failed(self, event: RunFailed) -> None:
        spec = event.spec
        self.failed += 1
        if self.bar is not None:
            self.bar.update(self.task, advance=1, failed=self.failed)
        last = event.error.strip().splitlines()[-1:] or ["unknown error"]
        msg = f"run {spec.key[:12]} ({spec.algorithm} on {spec.dataset} rep {spec.repetition}) failed: {last[0]}"
        if self.bar is not None:
            self.bar.console.print(msg, markup=False, highlight=False)
            file_log.error(msg)
        else:
            _err(msg)


# ---------------------------------------------------------------------------------------------------------------
@app.command()
@handle_errors
def run(
    overrides: Overrides = None,
    force: Annotated[bool, typer.Option("--force", help="Recompute runs that are already done.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Plain summary lines only (for cron).")] = False,
    wait: Annotated[bool, typer.Option("--wait/--no-wait",
                                       help="When another run holds the store: wait for it, or exit 75.")] = True,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the plan and exit.")] = False,
    yes: Annotated[bool, typer.Option("--yes", help="Run a plan beyond limits.max_runs or limits.max_trees.")
                   ] = False,
    log_file: Annotated[str | None, typer.Option(
        "--log-file", metavar="PATH", show_default=False,
        help="Also log to this file, rotated (default: paths.log_file, results/logs/forestlab.log; '' for none)."
    )] = None,
) -> None:
    """Run an experiment: plan its runs, skip those already stored, run the rest and store each as it ends."""
    _setup_logging(quiet)
    from forestlab.config import cached_experiment, definition, expand_named, is_registered

    names, rest = _experiment_names(overrides)
    if len(names) > 1:
        _run_several(names, rest, force=force, quiet=quiet, wait=wait, dry_run=dry_run, yes=yes,
                     log_file=log_file, command=list(overrides or []))
        return
    expanded = expand_named(list(overrides or []))  # `experiment=mine`: the definition recorded for it
    if not dry_run:
        _start_workers_before_validating(expanded)
    try:  # workers started early are stopped however this ends (a refusal too)
        # before the runner's imports (scikit-learn): a bad override answers at once; kept as JSON, so that a rerun
        # (cron, `make figures` after `make tables`) does not compose and validate the same experiment again
        exp = cached_experiment(expanded)
        # an experiment named by experiment.name= records what composes it, for the commands reading it by its name
        named = None if is_registered(exp.name) else definition(expanded)
        _check_run([exp], log_file)
        if not dry_run:
            _start_workers_early([exp], force)
        from forestlab.runner import is_terminal, run_experiment

        progress = Progress(quiet=quiet, terminal=is_terminal())
        if dry_run:
            typer.echo(_dry_run_line(exp, run_experiment(exp, yes=yes, dry_run=True, on_event=progress)))
            return
        log_path = _open_run_log(exp.paths, log_file, list(overrides or []))
        single = exp.prints_runs  # a single run's result is what the user came for
        summary = run_experiment(exp, force=force, wait=wait, yes=yes, keep_records=single, on_event=progress,
                                 definition=named)
    finally:
        _stop_workers()
    store_path = summary.results_dir / "runs.sqlite"
    if single and not summary.skipped:
        for line in _single_run_lines(summary.records, summary.keys):
            typer.echo(line, err=quiet)  # --quiet keeps stdout empty (cron)
    _say(_counts_line(exp.name, summary) + f" ({summary.elapsed:.1f}s); store: {store_path}"
         + (f"; log: {log_path}" if log_path else ""), err=quiet)
    if summary.interrupted:
        _err(_interrupted_line(summary, f"the {summary.done + summary.failed} runs that finished", overrides))
    elif summary.failed and not summary.skipped:
        _err(_failed_line(exp.name, summary, [o for o in overrides or [] if not o.startswith("experiment=")]))
    code = _exit_status(summary.outcome)
    if code:
        raise typer.Exit(code)


def _start_workers_early(exps: Sequence[Experiment], force: bool) -> None:
    """Start the loky workers of a run that will use them before this process imports the learners and plans
    (:func:`forestlab.launchers.start_workers`), so that their start-up (about 1.5 s of imports each) overlaps this
    process's instead of following it. Only for a loky launcher of several workers with at least two runs a worker
    left to do, as the plans recorded in the store tell (a rerun with nothing left starts none). A wrong guess
    costs start-up time, never a result: the runner starts or resizes the pool it needs."""
    launcher = exps[0].launcher
    if any(e.launcher.as_dict() != launcher.as_dict() for e in exps):
        return  # different launchers are refused by the runner
    n_jobs = int(launcher.n_jobs)
    workers = _early_workers(str(launcher.backend), n_jobs)
    if not workers:
        return
    from forestlab.config import resolve_path
    from forestlab.launchers import start_workers
    from forestlab.store import Store

    left = 0
    try:
        with Store(resolve_path(exps[0].paths.results_dir), readonly=True) as store:
            for exp in exps:
                recorded = None if force else store.plan_for(exp.name, plan_id=exp.plan_id)
                if recorded is None:  # never run (or --force): every run is left
                    left += exp.n_runs
                    continue
                statuses = store.statuses(recorded.keys)
                left += sum(1 for key in recorded.keys if statuses.get(key) != "done")
    except ForestlabError:
        return  # a store that cannot be read: the run says why, with its own message
    if left >= _RUNS_A_WORKER * workers:
        start_workers(n_jobs)


#: The fewest runs a worker must have left for a run's workers to be started before it plans.
_RUNS_A_WORKER = 2


def _early_workers(backend: str, n_jobs: int) -> int:
    """How many workers a run of this launcher would start before planning: its loky workers when there are at
    least two, else 0 (dask's workers are already running; one worker is this process's own pace)."""
    if backend != "loky" or n_jobs == 0:
        return 0
    from forestlab.launchers import worker_count

    workers = worker_count(n_jobs, n_jobs)
    return workers if workers >= 2 else 0


def _start_workers_before_validating(overrides: Sequence[str]) -> None:
    """Start the loky workers of a first run of an experiment before this process validates it.

    An experiment not kept by an earlier command (:func:`forestlab.config.is_kept`: a first run, changed code or
    config, another results folder) is composed and validated here, which imports scikit-learn to check the
    learners' parameters: about 6 s of one core on a slow 2-core machine, with the other idle, before
    :func:`_start_workers_early` could start the workers. Here they start from its composed, unvalidated config
    (:func:`forestlab.config.run_outline`, about 0.3 s), and import while it validates, when it is a loky launcher
    of several workers, its store has no plan recorded for it (never run there: every run is left; a rerun waits
    for the plan's answer, in :func:`_start_workers_early`) and it has at least two runs a worker
    (datasets x algorithms x seeds). A wrong guess (a typo the validation refuses) costs the workers' start, never a
    result: they are stopped when the command ends, and the runner starts or resizes the pool it needs."""
    from forestlab.config import is_kept, run_outline

    if is_kept(overrides):
        return  # read back in milliseconds: _start_workers_early decides, from the plan
    outline = run_outline(overrides)
    if outline is None:
        return  # the validation says what is wrong
    workers = _early_workers(outline.backend, outline.n_jobs)
    if not workers or outline.min_runs < _RUNS_A_WORKER * workers or _has_plan(outline.results_dir, outline.name):
        return
    from forestlab.launchers import start_workers

    start_workers(outline.n_jobs)


def _has_plan(results_dir: Path, experiment: str) -> bool:
    """Whether the store in ``results_dir`` has a plan recorded for ``experiment`` (True where it cannot be read:
    then nothing is guessed), read with sqlite3 alone: the store's module imports pandas, a second on a slow
    machine that would delay the workers' start."""
    planned = _planned_in(results_dir)
    return planned is None or experiment in planned


def _stop_workers() -> None:
    """End the workers :func:`_start_workers_early` started, if any (idle once the run returns)."""
    from forestlab.launchers import stop_workers

    stop_workers()


def _check_run(exps: Sequence[Experiment], log_file: str | None) -> None:
    """Before a run: say what the limits changed in what was asked (said and logged, never silent; each note named
    by its experiment when there are several), and hold ``--log-file`` to paths.log_file's rules."""
    for exp in exps:
        for note in exp.notes:
            log.info(f"note: {exp.name}: {note}" if len(exps) > 1 else f"note: {note}")
    if log_file:
        from forestlab.config import check_paths

        check_paths({**exps[0].paths.as_dict(), "log_file": log_file})


def _open_run_log(paths: Any, log_file: str | None, command: Sequence[str]) -> str | None:
    """When the runs start: the rotated log file (its path, or None), the command logged in it, and SIGTERM taken
    as an interruption (the finished runs stay stored)."""
    import signal

    log_path = _add_log_file(paths.log_file if log_file is None else log_file, paths.log_max_bytes,
                             paths.log_backup_count)
    file_log.info("forestlab run %s (pid %d, in %s)", " ".join(command), os.getpid(), os.getcwd())
    signal.signal(signal.SIGTERM, _on_sigterm)
    return log_path


def _interrupted_line(summary: Summary, finished: str, command: Sequence[str] | None) -> str:
    """The line of an interrupted run: how it stopped, what is stored, the command that resumes it."""
    how = "terminated (SIGTERM)" if summary.terminated else "interrupted"
    return (f"{how}: {finished} are stored; to resume, run the same command again: "
            f"{shlex.join(['forestlab', 'run', *(command or [])])}")


def _failed_line(name: str, summary: Summary, status_overrides: Sequence[str]) -> str:
    """The line of an experiment with failed runs: how many, the command that shows their errors, and whether a
    rerun retries them (failures from outside the run: a killed worker, lack of memory) or meets them again."""
    fixed = summary.failed - summary.transient
    advice = ("a rerun retries them" if not fixed else
              "a rerun will fail the same way until their cause is fixed" if not summary.transient else
              f"{summary.transient} of them were stopped from outside (a killed worker, lack of memory) and a "
              f"rerun retries them; the other {fixed} fail the same way until their cause is fixed")
    status_cmd = shlex.join(["forestlab", "status", name, *status_overrides, "--failed"])
    return f"{summary.failed} runs failed; their errors: {status_cmd}; {advice}"


def _counts_line(name: str, summary: Summary) -> str:
    """What a run did to an experiment, in one line (its summary's counts)."""
    return (f"experiment {name}: {summary.done} done, {summary.failed} failed, {summary.already_done} already done, "
            f"{summary.skipped} not started"
            + (f", {summary.backfilled} gained metrics computed from their stored outputs" if summary.backfilled
               else ""))


def _name_list(value: str, given: str) -> list[str]:
    """The experiments of ``a,b,c`` (each once, in order); ``given`` is what the user wrote, for the message."""
    names: list[str] = []
    for name in (v.strip() for v in value.split(",")):
        if not name:
            raise ConfigError(f"'{given}': an empty experiment name in the list (a,b,c)")
        if name not in names:
            names.append(name)
    return names


def _experiment_names(overrides: Sequence[str] | None) -> tuple[list[str], list[str]]:
    """The experiments of ``experiment=a,b,c`` (Hydra's list of choices, each name once, in order; [] without an
    ``experiment=`` override) and the other overrides."""
    names: list[str] = []
    rest: list[str] = []
    for override in overrides or []:
        key, sep, value = str(override).partition("=")
        if sep and key.strip() == "experiment" and "," in value:
            names += [n for n in _name_list(value, str(override)) if n not in names]
        else:
            rest.append(str(override))
    return names, rest


def _run_several(names: Sequence[str], rest: Sequence[str], *, force: bool, quiet: bool, wait: bool,
                 dry_run: bool, yes: bool, log_file: str | None, command: list[str]) -> None:
    """``forestlab run experiment=a,b,c``: the experiments' runs in one pool (:func:`forestlab.runner.run_experiments`),
    one summary line each; the exit status is the worst of theirs."""
    from forestlab.config import cached_experiment, definition, expand_named, is_registered

    exps, named = [], []
    for name in names:
        expanded = expand_named([f"experiment={name}", *rest])
        exp = cached_experiment(expanded)
        exps.append(exp)
        named.append(None if is_registered(exp.name) else definition(expanded))
    _check_run(exps, log_file)
    if not dry_run:
        _start_workers_early(exps, force)
    from forestlab.runner import Outcome, is_terminal, run_experiment, run_experiments

    if dry_run:
        for exp in exps:
            typer.echo(_dry_run_line(exp, run_experiment(exp, yes=yes, dry_run=True)))
        return
    progress = Progress(quiet=quiet, terminal=is_terminal(), several=True)
    log_path = _open_run_log(exps[0].paths, log_file, command)
    try:
        summaries = run_experiments(exps, force=force, wait=wait, yes=yes, on_event=progress, definitions=named)
    finally:
        _stop_workers()
    store_path = summaries[0].results_dir / "runs.sqlite"
    for exp, summary in zip(exps, summaries, strict=True):
        _say(_counts_line(exp.name, summary), err=quiet)
    _say(f"{len(exps)} experiments in one pool ({summaries[0].elapsed:.1f}s); store: {store_path}"
         + (f"; log: {log_path}" if log_path else ""), err=quiet)
    if summaries[0].interrupted:
        finished = sum(s.done + s.failed for s in summaries)
        _err(_interrupted_line(summaries[0], f"the runs that finished ({finished} counted over the experiments)",
                               command))
    for exp, summary in zip(exps, summaries, strict=True):
        if summary.failed and not summary.interrupted:
            _err(f"{exp.name}: {_failed_line(exp.name, summary, rest)}")
    severity = [Outcome.COMPLETE, Outcome.FAILED_RUNS, Outcome.NOT_STARTED, Outcome.INTERRUPTED, Outcome.TERMINATED]
    worst = max((s.outcome for s in summaries), key=severity.index)
    code = _exit_status(worst)
    if code:
        raise typer.Exit(code)


def _dry_run_line(exp: Experiment, summary: Summary) -> str:
    """The one line of ``forestlab run --dry-run``: the plan's size, how it is made, what is done."""
    seeds = sum(exp.seeds_of(d) for d in exp.datasets)
    folds = summary.planned // max(1, seeds * len(exp.algorithms))
    own = exp.dataset_seeds
    seeds_text = (f"{exp.seeds} seeds" if not own else
                  f"{exp.seeds} seeds ({', '.join(f'{k}: {v}' for k, v in own.items())})")
    kind = f" ({exp.shrunk.label})" if exp.shrunk is not None else ""  # debug=smoke: "(smoke)"
    return (f"experiment {exp.name}{kind}: {summary.planned} runs "
            f"({len(exp.datasets)} datasets x {len(exp.algorithms)} algorithms x {seeds_text}"
            + (f" x {folds} folds" if folds > 1 else "") + f"), {summary.already_done} done, {summary.to_run} to run")


#: How many single runs ``forestlab run dataset=... algorithm=...`` prints one by one (then their mean only).
_SINGLE_LINES = 12


def _single_run_lines(records: pd.DataFrame, keys: Sequence[str]) -> list[str]:
    """One line per done single run (``records``: the plan's, ``keys`` in plan order) with its test metrics (its
    key's first characters to find it in the store), and their mean when there are several."""
    import math

    records = records[records["status"] == "done"]
    if records.empty:
        return []
    order = {k: i for i, k in enumerate(keys)}
    records = records.assign(_order=[order[k] for k in records["key"]]).sort_values("_order")
    rows: list[dict[str, float]] = []
    lines: list[str] = []
    for r in records.itertuples():
        test = {k: v for k, v in sorted((r.metrics or {}).items()) if k.startswith("test_") and is_number(v)}
        rows.append(test)
        fold = "" if r.fold is None or (isinstance(r.fold, float) and math.isnan(r.fold)) else f" fold {int(r.fold)}"
        if len(lines) < _SINGLE_LINES:
            shown = ", ".join(f"{k} {v:.4g}" for k, v in test.items()) or "no test metric"
            lines.append(f"{r.algorithm} on {r.dataset} rep {r.repetition}{fold}: {shown} (run {r.key[:12]})")
    if len(rows) > 1:
        names = sorted(set().union(*rows))
        means = {n: sum(row[n] for row in rows if n in row) / sum(n in row for row in rows) for n in names}
        lines.append(f"mean over {len(rows)} runs: " + ", ".join(f"{k} {v:.4g}" for k, v in means.items()))
    return lines


def _split_args(experiment: str | None, overrides: Sequence[str] | None) -> tuple[str | None, list[str]]:
    """`forestlab tables seeds=3`: the first argument is an override, not an experiment name."""
    if experiment and "=" in experiment:
        return None, [experiment, *(overrides or [])]
    return experiment, list(overrides or [])


def _experiments_for(experiment: str | None, overrides: Sequence[str] | None = None) -> list[str]:
    """The experiments a report command covers: the one named; the single run when the overrides choose a dataset
    or an algorithm (as `forestlab run dataset=... algorithm=...` does); else every registered one."""
    from forestlab.config import choices_experiment, list_options

    if experiment and "=" not in experiment:
        return _name_list(experiment, experiment)
    chosen = {o.split("=", 1)[0].lstrip("+") for o in overrides or [] if "=" in o}
    if "experiment" in chosen:
        given = next(o for o in overrides or [] if o.lstrip("+").startswith("experiment="))
        return _name_list(given.split("=", 1)[1], given)
    if chosen & {"dataset", "algorithm"}:
        name = choices_experiment()
        if name is not None:
            return [name]
    return list_options("experiments")


def _stored_results(experiment: str | None, overrides: Sequence[str] | None,
                    what: str = "report") -> Iterator[tuple[Any, Any]]:
    """(experiment, its stored results) for the named experiment, or for every registered one that has runs.

    Never silent: an experiment chosen by name or by the overrides (``dataset=``/``algorithm=``: the single runs)
    that has no runs says so; when none of the experiments looked at has runs, one line says that too."""
    from forestlab.config import cached_experiment, override_key, resolve_path
    from forestlab.report import experiment_results
    from forestlab.spec import figure_kinds

    _setup_logging()
    figure_kinds(complete=True)  # the plug-ins' drawings and claims: a kept experiment is not validated again
    experiment, overrides = _split_args(experiment, overrides)
    names = _experiments_for(experiment, overrides)
    every = experiment is None and names == _registered()  # then yours (experiment.name=) too
    # every registered experiment asked: those without a plan in the store have no runs to read, and are not composed
    # (one that may record its plans elsewhere is: see _may_plan_elsewhere; so is every one when the overrides rename)
    renamed = any(override_key(o) == "experiment.name" for o in overrides if "=" in o)
    recorded: set[str] | None = None
    found = 0
    for name in names:
        if recorded is not None and name not in recorded and not _may_plan_elsewhere(name):
            continue
        exp = cached_experiment(_with_experiment(overrides, name))  # kept as JSON: no validation when unchanged
        if every:  # the store is known now: your experiments after the registered ones
            every = False
            recorded = None if renamed else _planned_in(resolve_path(exp.paths.results_dir))
            names = [*names, *_named_in_store(exp)]
        _check_read_size(exp)
        res = experiment_results(exp)
        command = (shlex.join(["forestlab", "run", *overrides]) if exp.from_choices else
                   shlex.join(["forestlab", "run", f"experiment={exp.name}",
                               *(o for o in overrides if not o.startswith("experiment="))]))
        if _has_runs(res, experiment is not None or len(names) == 1, command):
            found += 1
            yield exp, res
    if not found and len(names) > 1:
        _say(f"forestlab: no runs stored for any of the {len(names)} experiments under these overrides: nothing to "
             f"{what}; `forestlab status` shows what is stored, `forestlab run experiment=NAME` runs one", err=True)


def _registered() -> list[str]:
    from forestlab.config import list_options

    return list_options("experiments")


def _planned_in(results_dir: Path) -> set[str] | None:
    """The experiments with a recorded plan in the store in ``results_dir`` (None where it cannot be read), read
    with sqlite3 alone (the store's module imports pandas)."""
    import sqlite3

    path = results_dir / "runs.sqlite"
    if not path.exists():
        return set()
    try:
        with contextlib.closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=1.0)) as conn:
            return {name for (name,) in conn.execute("SELECT DISTINCT experiment FROM plans")}
    except sqlite3.Error:
        return None


def _may_plan_elsewhere(name: str) -> bool:
    """Whether registered experiment ``name`` may record its plans under another name or in another store than the
    others: its file names it otherwise (``experiment.name``) or sets ``paths`` (itself, or through its defaults
    list). Such an experiment is composed to be read, whatever the store's plans."""
    from forestlab.config import experiment_setting, load_group_option

    try:
        if experiment_setting(name, "name", name) != name:
            return True
        node = load_group_option("experiment", name)
    except Exception:  # noqa: BLE001 - composing it says what is wrong
        return True
    return "paths" in node or "paths" in str(node.get("defaults", ""))


def _named_in_store(exp: Experiment) -> list[str]:
    """Your experiments (named by ``experiment.name=``) in the store ``exp`` reads."""
    from forestlab.config import is_registered, resolve_path
    from forestlab.store import Store

    with Store(resolve_path(exp.paths.results_dir), readonly=True) as store:
        return [n for n in store.named_experiments() if not is_registered(n)]


def _output(exp: Experiment, kind: str) -> Path:
    """Where a report's files go: ``paths.reports_dir`` (results/ by default); an unwritable one is an error that
    says how to write elsewhere."""
    from forestlab.report import output_dir

    folder = output_dir(exp, kind)
    if _writable(folder, warn=False) is None:
        raise StoreError(f"cannot write to {folder}: the results folder is read-only here; reports still read it: "
                         "set paths.reports_dir=DIR to write the files elsewhere")
    return folder


@app.command()
@handle_errors
def tables(experiment: Annotated[str | None, typer.Argument(
               help="Experiment, or several as a,b,c (default: all).")] = None,
           overrides: Overrides = None) -> None:
    """Write the tables of an experiment (Markdown, CSV, LaTeX) under results/tables/ from the stored runs."""
    from forestlab.report import render_tables

    for exp, res in _stored_results(experiment, overrides, "tabulate"):
        paths = render_tables(res, _output(exp, "tables"))
        for path in paths:
            typer.echo(str(path))
        if not paths:
            _say(f"forestlab: experiment {exp.name} declares no tables (experiment.tables is empty): nothing written",
                 err=True)


@app.command()
@handle_errors
def figures(experiment: Annotated[str | None, typer.Argument(
                help="Experiment, or several as a,b,c (default: all).")] = None,
            overrides: Overrides = None) -> None:
    """Draw the figures of an experiment (PNG and PDF) under results/figures/ from the stored runs."""
    from forestlab.report import render_figures

    for exp, res in _stored_results(experiment, overrides, "draw"):
        paths = render_figures(res, _output(exp, "figures"))
        for path in paths:
            typer.echo(str(path))
        if not paths:
            _say(f"forestlab: experiment {exp.name} has no figures (experiment.figures is empty); its tables: "
                 f"`{_tables_command(exp, experiment, overrides)}`", err=True)


def _tables_command(exp: Experiment, experiment: str | None, overrides: Sequence[str] | None) -> str:
    """The `forestlab tables` command for the same runs (single runs are chosen by their overrides)."""
    experiment, overrides = _split_args(experiment, overrides)
    if exp.from_choices:
        return shlex.join(["forestlab", "tables", *overrides])
    return shlex.join(["forestlab", "tables", exp.name, *(o for o in overrides if not o.startswith("experiment="))])


@app.command()
@handle_errors
def compare(experiment: Annotated[str | None, typer.Argument(
                help="Experiment, or several as a,b,c (default: all with a study).")] = None,
            overrides: Overrides = None) -> None:
    """Print published and reproduced numbers side by side, their differences, and which claims hold (also
    written beside the tables, when the results folder can be written)."""
    from forestlab.report import compare_experiment, output_dir

    for exp, res in _stored_results(experiment, overrides, "compare"):
        text = compare_experiment(res, _writable(output_dir(exp, "tables")))
        if text:
            typer.echo(text)
        else:
            _say(f"forestlab: experiment {exp.name} has no published table and no claim to compare with "
                 f"({'single runs belong to no study' if exp.from_choices else 'it reproduces no table'}); "
                 f"its tables: `{_tables_command(exp, experiment, overrides)}`", err=True)


@app.command()
@handle_errors
def report(overrides: Overrides = None) -> None:
    """Build the reproduction report, a static site under results/report/ (open index.html), from the stored runs
    of every experiment; the overrides (e.g. seeds=3) apply to every experiment, as they did to its runs."""
    from forestlab.report.site import build_site

    _setup_logging()
    t0 = time.perf_counter()
    index = build_site(overrides or [])
    _say(f"forestlab: report built in {time.perf_counter() - t0:.1f}s: {index}", err=True)
    typer.echo(str(index))


@app.command()
@handle_errors
def export(experiment: Annotated[str, typer.Argument(help="Experiment (registered, or named by experiment.name=).")],
           overrides: Overrides = None,
           out: Annotated[str, typer.Option("--out", "-o", metavar="FILE",
                                            help="FILE.csv, or FILE.parquet (needs pyarrow).")] = "",
           ) -> None:
    """Write an experiment's runs to a CSV or Parquet file, one row per run: its dataset, algorithm, repetition,
    fold and seed, its metrics and chosen hyperparameters, its learner's parameters (param.NAME), its time and what
    produced it (forestlab.read_results(NAME).to_frame() in Python)."""
    if not out:
        raise ConfigError("forestlab export needs --out FILE.csv (or FILE.parquet)")
    target = Path(out).expanduser()
    suffix = target.suffix.lower()
    if suffix not in (".csv", ".parquet"):
        raise ConfigError(f"--out {out}: the file name must end in .csv or .parquet (the format is its suffix)")
    if suffix == ".parquet" and importlib.util.find_spec("pyarrow") is None:
        raise ConfigError(f"--out {out}: writing Parquet needs pyarrow, which is not installed: `pip install "
                          "pyarrow`, or write CSV (--out FILE.csv)")
    if "=" in experiment:
        raise ConfigError(f"forestlab export needs an experiment name first, got '{experiment}'")
    for exp, res in _stored_results(experiment, overrides, "export"):
        frame = res.to_frame()
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            if suffix == ".csv":
                frame.to_csv(target, index=False)
            else:
                _parquet_ready(frame).to_parquet(target, index=False)
        except OSError as exc:
            raise StoreError(f"cannot write {target}: {exc.strerror or exc}") from None
        _say(f"forestlab: wrote {len(frame)} runs of {exp.name} ({len(frame.columns)} columns) to {target}", err=True)
        typer.echo(str(target))


def _parquet_ready(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with each column of mixed Python types (a parameter that is a number for one learner and a word
    for another) written as text, as Parquet needs one type per column (missing values stay missing)."""
    out = frame.copy()
    for col in out.columns:
        if out[col].dtype == object:
            kinds = {type(v) for v in out[col] if v is not None and v == v}
            if len(kinds) > 1 or kinds & {dict, list, tuple}:
                out[col] = [None if v is None or v != v else str(v) for v in out[col]]
    return out


def _check_read_size(exp: Experiment | ExperimentFacts, store: Store | None = None) -> None:
    """The reading commands (status, tables, figures, compare, report) never plan, but a configuration beyond
    ``limits.max_runs`` that was never run is almost surely a typo (seeds=100000000): refuse it in one line rather
    than report billions of pending runs. A plan that was run (with --yes) is read as usual. The store is opened
    only for a plan beyond the bound."""
    from forestlab.config import resolve_path
    from forestlab.store import Store

    max_runs = exp.limits.max_runs
    if max_runs is None or exp.n_runs <= int(max_runs):
        return
    if store is not None:
        if store.plan_for(exp.name, plan_id=exp.plan_id) is not None:
            return
    else:
        with Store(resolve_path(exp.paths.results_dir), readonly=True) as opened:
            if opened.plan_for(exp.name, plan_id=exp.plan_id) is not None:
                return
    raise ConfigError(f"experiment {exp.name} with these overrides plans {exp.n_runs} runs, more than "
                      f"limits.max_runs={max_runs}, and no such plan was ever run: check the overrides (give the "
                      f"ones the runs were given), or raise the bound with limits.max_runs={exp.n_runs}")


def _has_runs(res: ExperimentResults, named: bool, run_command: str | None = None) -> bool:
    """Whether an experiment has a recorded plan to report on; says so when it was named and has none."""
    if res.counts.get("planned"):
        return True
    if named:
        from forestlab.config import shrunk_kind
        from forestlab.store import Store

        with Store(res.results_dir, readonly=True) as store:
            plans = store.plans(res.name)
        kind = shrunk_kind() if res.shrunk is None else None  # the kind stored shrunk plans are named by
        if kind is not None and len(plans) and bool(plans["smoke"].all()):  # the store marks plans shrunk or not
            _say(f"forestlab: only {kind.label} runs ({kind.option}) are stored for {res.name}: {kind.stored_only}; "
                 f"add {kind.option} to see them, or run `forestlab run experiment={res.name}` for the real ones",
                 err=True)
        else:
            given = f" {res.shrunk.option}" if res.shrunk is not None else ""
            command = run_command or f"forestlab run experiment={res.name}{given}"
            _say(f"forestlab: no runs stored for this configuration of {res.name}{given and ' with' + given}: run "
                 f"`{command}` first", err=True)
    return False


def _writable(folder: Path, warn: bool = True) -> Path | None:
    """``folder`` if it can be created and written, else None (a report on a read-only results folder prints
    without writing; set paths.reports_dir to write elsewhere)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / ".write-test"
        probe.write_text("")
        probe.unlink()
        return folder
    except OSError:
        if warn:
            _say(f"forestlab: warning: cannot write to {folder}; printing only (set paths.reports_dir=DIR to "
                 "write the files elsewhere)", err=True)
        return None


@app.command()
@handle_errors
def status(experiment: Annotated[str | None, typer.Argument(
               help="Experiment, or several as a,b,c (default: all).")] = None,
           overrides: Overrides = None,
           failed: Annotated[bool, typer.Option("--failed", help="Show the error of each failed run.")] = False,
           ) -> None:
    """Show, per experiment, how many runs are planned, done, failed, pending, and stale (stored for an older
    configuration), from the store: the plan of the current configuration as `forestlab run` recorded it.

    Shrunk runs (`debug=smoke`) are shown on their own line (NAME[smoke]), never counted as stale runs of the
    experiment. Without
    EXPERIMENT: every registered experiment, then any other experiment found in the store (single runs).
    """
    from forestlab.config import experiment_facts, inputs_signature, resolve_path
    from forestlab.store import Store

    experiment, overrides = _split_args(experiment, overrides)
    rows: list[tuple[str, ...]] = []
    listed: set[str] = set()
    results_dir: Path | None = None
    stores: dict[Path, Store] = {}  # each results folder opened once (the overrides may give each its own)
    inputs = inputs_signature()  # the state of the config tree, code and environment, once for every experiment
    with contextlib.ExitStack() as opened:
        for name in _experiments_for(experiment, overrides):
            # what status reads of the composed experiment, kept between calls while nothing it depends on changes
            exp = experiment_facts(_with_experiment(overrides, name), inputs)
            results_dir = resolve_path(exp.paths.results_dir)
            listed.add(exp.name)
            if results_dir not in stores:
                stores[results_dir] = opened.enter_context(Store(results_dir, readonly=True))
            store = stores[results_dir]
            _check_read_size(exp, store)
            # `status single` without the run's own overrides: the single runs as last recorded
            current = None if exp.from_choices and not overrides else exp
            rows.extend(_status_rows(store, exp.name, current, failed))
        if experiment is None and results_dir is not None:
            store = stores[results_dir]
            for name in store.experiments():
                if name not in listed:
                    rows.extend(_status_rows(store, name, None, failed))
    width = max(len("experiment"), *(len(r[0]) for r in rows)) if rows else 10
    typer.echo(f"{'experiment':<{width}}  planned    done  failed  pending   stale")
    for r in rows:
        typer.echo(f"{r[0]:<{width}}  {r[1]:>7} {r[2]:>7} {r[3]:>7} {r[4]:>8} {r[5]:>7}")


def _status_rows(store: Store, name: str, exp: ExperimentFacts | None, show_failed: bool) -> list[tuple[str, ...]]:
    """Status lines of one experiment: the plan of its current configuration ``exp`` (None: its latest recorded
    plan) and, on a line of its own, its other kind (the latest smoke plan beside a real one, or the other way).
    Stale: stored runs the experiment planned once but neither of these plans holds."""
    from forestlab.config import experiment_setting, shrunk_kind

    current_smoke = bool(exp.smoke) if exp is not None else False
    kind = shrunk_kind(exp)  # names the shrunk plan's line: NAME[smoke]
    loaded = {smoke: store.plan_for(name, plan_id=exp.plan_id) if exp is not None and smoke == current_smoke
              else store.plan_for(name, smoke=smoke) for smoke in (False, True)}
    kept = {k for plan in loaded.values() if plan is not None for k in plan.keys}
    stale = len(store.members(name) - kept)
    stale_counts = (exp.other_choices_stale if exp is not None
                    else bool(experiment_setting(name, "other_choices_stale", True)))
    rows = []
    for smoke in (False, True):
        plan = loaded.get(smoke)
        label = f"{name}[{kind.label if kind is not None else 'shrunk'}]" if smoke else name
        if plan is None:
            if exp is not None and smoke == current_smoke:  # the current configuration has not run yet
                rows.append((label, str(exp.n_runs), "0", "0", str(exp.n_runs), "-" if smoke else str(stale)))
            continue
        keys = plan.keys
        statuses = store.statuses(keys)
        n_done = sum(v == "done" for v in statuses.values())
        n_failed = sum(v == "failed" for v in statuses.values())
        rows.append((label, str(len(keys)), str(n_done), str(n_failed), str(len(keys) - n_done - n_failed),
                     "-" if smoke or not stale_counts else str(stale)))  # e.g. single runs of other choices
        if show_failed and n_failed:
            records = store.records([k for k, v in statuses.items() if v == "failed"])
            for _, r in records.iterrows():
                failure = r["failure"] if isinstance(r["failure"], str) else \
                    "not recorded (stored before forestlab recorded failure kinds)"
                typer.echo(f"--- {label}: {r['algorithm']} on {r['dataset']} rep {r['repetition']} "
                           f"(key {r['key']}; failure: {failure})\n{r['error']}")
    return rows


@app.command("list")
@handle_errors
def list_(kind: Annotated[str | None, typer.Argument(
        help="experiments | datasets | algorithms | protocols | launchers (default: all of them)",
        show_default=False)] = None,
          ) -> None:
    """List the experiments, datasets, algorithms, protocols or launchers that can be named."""
    from forestlab.config import LISTABLE, describe, list_options

    kinds = [kind] if kind is not None else list(LISTABLE)
    for i, one in enumerate(kinds):
        names = list_options(one)
        if kind is None:
            typer.echo(("\n" if i else "") + f"{one}:")
        width = max((len(n) for n in names), default=0)
        indent = "  " if kind is None else ""
        for name in names:
            typer.echo(f"{indent}{name:<{width}}  {describe(one, name)}".rstrip())


@app.command("config")
@handle_errors
def config_(overrides: Overrides = None) -> None:
    """Print the composed configuration (YAML) for the given overrides."""
    from omegaconf import OmegaConf

    typer.echo(OmegaConf.to_yaml(_experiment(overrides).cfg), nl=False)


@datasets_app.command("verify")
@handle_errors
def datasets_verify(
    names: Annotated[list[str] | None, typer.Argument(
        help="Dataset names (default: all), and overrides KEY=VALUE such as paths.data_dir=DIR.")] = None,
    download: Annotated[bool, typer.Option("--download/--no-download",
                                           help="Fetch missing files from the official URLs.")] = False,
) -> None:
    """Check each dataset's files (SHA-256) and shape, from the cache, the mirror or the network."""
    from forestlab.config import compose, group_options, load_group_option, resolve_path, to_container
    from forestlab.datasets import verify_dataset
    from forestlab.datasets._fetch import configured_mirror

    overrides = [n for n in names or [] if "=" in n]
    names = [n for n in names or [] if "=" not in n]
    cfg = compose(overrides)  # every override is checked (and must land) before anything is verified
    for name in names:
        load_group_option("dataset", name)  # an unknown name is refused before anything is verified
    data_dir = resolve_path(cfg.paths.data_dir)
    bad = 0
    for name in names or group_options("dataset"):
        ds_cfg = to_container(load_group_option("dataset", name))
        res = verify_dataset(ds_cfg, data_dir=data_dir, mirror=configured_mirror(cfg.paths), download=download)
        mark = "ok  " if res["ok"] else "FAIL"
        shape = "x".join(str(s) for s in res.get("shape") or ()) or "-"
        typer.echo(f"{mark} {name:<16} {shape:>12}  {res.get('message', '')}".rstrip())
        bad += not res["ok"]
    if bad:
        _err(f"{bad} dataset(s) failed verification")
        raise typer.Exit(EXIT_USAGE)


@app.command()
def version() -> None:
    """Print forestlab's version."""
    typer.echo(__version__)


def main() -> None:  # pragma: no cover
    app(prog_name="forestlab")


if __name__ == "__main__":  # pragma: no cover
    main()

