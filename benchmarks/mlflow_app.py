"""The MLflow tracking server for the agent-task benchmark (issue 31): a single-page app.

MLflow is not a dependency of the project: ``ensure_mlflow()`` creates a virtualenv of its own
on first use (``benchmarks/.cache/mlflow-venv``, git-ignored; ``BENCH_MLFLOW_VENV`` moves it)
and ``pip install``s ``MLFLOW_SPEC`` into it; later runs reuse it. ``start_mlflow(tmp)`` runs
``mlflow server`` on a free loopback port with a fresh SQLite backend store and artifact root
under ``tmp``, in its own process group, and logs the experiments and runs of ``RUNS``
through MLflow's REST API. ``MlflowApp.search_runs`` / ``run_by_name`` read MLflow's own API:
what the tasks are verified against.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.fixtures.apps._process import AppProcess, log_tail, start_server

from benchmarks.common import REPO

MLFLOW_SPEC = "mlflow==3.17.2"
_DEFAULT_VENV = REPO / "benchmarks" / ".cache" / "mlflow-venv"
VENV = Path(os.environ.get("BENCH_MLFLOW_VENV", str(_DEFAULT_VENV)))
INSTALL_TIMEOUT_S = 900.0
EXPERIMENT = "churn-model"
# (run name, params, metrics) of the experiment the tasks read; a second experiment is there
# so that the UI lists more than one.
RUNS: tuple[tuple[str, dict[str, str], dict[str, float]], ...] = (
    ("baseline", {"model": "linear", "max_depth": "0"}, {"rmse": 0.91, "accuracy": 0.71}),
    ("tree-3", {"model": "tree", "max_depth": "3"}, {"rmse": 0.74, "accuracy": 0.78}),
    ("tree-6", {"model": "tree", "max_depth": "6"}, {"rmse": 0.62, "accuracy": 0.83}),
    ("forest-8", {"model": "forest", "max_depth": "8"}, {"rmse": 0.55, "accuracy": 0.86}),
    ("forest-12", {"model": "forest", "max_depth": "12"}, {"rmse": 0.58, "accuracy": 0.85}),
)
OTHER_EXPERIMENT = ("demand-forecast", (("arima", {"order": "2"}, {"mape": 0.12}),))
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback, no proxy


class MlflowUnavailable(RuntimeError):
    """MLflow could not be installed or started: the message says why (pip's or its log)."""


def _venv_python() -> Path:
    return VENV / "bin" / "python"


def mlflow_version() -> str | None:
    py = _venv_python()
    if not py.exists():
        return None
    done = subprocess.run(
        [str(py), "-c", "import mlflow; print(mlflow.__version__)"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done.stdout.strip() or None if done.returncode == 0 else None


def ensure_mlflow() -> str:
    """MLflow's version in its own virtualenv, installing it there first when needed."""
    wanted = MLFLOW_SPEC.split("==")[-1]
    have = mlflow_version()
    if have == wanted:
        return have
    print(f"benchmarks: installing {MLFLOW_SPEC} into {VENV} (once)", file=sys.stderr, flush=True)
    log = VENV.parent / "mlflow-install.log"
    try:
        VENV.parent.mkdir(parents=True, exist_ok=True)
        if not _venv_python().exists():
            subprocess.run(
                [sys.executable, "-m", "venv", str(VENV)], check=True, timeout=300, cwd=VENV.parent
            )
        with log.open("wb") as out:
            subprocess.run(
                [str(_venv_python()), "-m", "pip", "install", "--quiet", MLFLOW_SPEC],
                stdout=out,
                stderr=subprocess.STDOUT,
                check=True,
                timeout=INSTALL_TIMEOUT_S,
            )
    except (OSError, subprocess.SubprocessError) as exc:
        raise MlflowUnavailable(
            f"MLflow could not be installed ({exc}); pip's output:\n{log_tail(log, 2000)}"
        ) from exc
    have = mlflow_version()
    if not have:
        raise MlflowUnavailable(f"MLflow installed but does not import; see {log}")
    return have


@dataclass
class MlflowApp:
    base_url: str
    process: AppProcess
    experiment_id: str
    version: str
    startup_s: float

    def url(self, path: str) -> str:
        return self.base_url + path

    def api(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST to MLflow's REST API (``/api/2.0/mlflow/...``)."""
        req = urllib.request.Request(
            self.base_url + "/api/2.0/mlflow/" + path,
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with _OPENER.open(req, timeout=30) as resp:
            out: dict[str, Any] = json.loads(resp.read() or b"{}")
        return out

    def search_runs(self, filter_string: str = "") -> list[dict[str, Any]]:
        got = self.api(
            "runs/search",
            {"experiment_ids": [self.experiment_id], "filter": filter_string, "max_results": 100},
        )
        runs: list[dict[str, Any]] = got.get("runs", [])
        return runs

    def run_by_name(self, name: str) -> dict[str, Any]:
        runs = self.search_runs(f"attributes.run_name = '{name}'")
        if len(runs) != 1:
            raise MlflowUnavailable(f"{len(runs)} runs named {name!r}")
        return runs[0]

    def stop(self) -> None:
        self.process.stop()


def metric(run: dict[str, Any], key: str) -> float | None:
    for m in run.get("data", {}).get("metrics", []):
        if m.get("key") == key:
            return float(m["value"])
    return None


def param(run: dict[str, Any], key: str) -> str | None:
    for p in run.get("data", {}).get("params", []):
        if p.get("key") == key:
            return str(p["value"])
    return None


def _log_runs(app: MlflowApp, experiment_id: str, runs: Any) -> None:
    now = int(time.time() * 1000)
    for i, (name, params, metrics) in enumerate(runs):
        run = app.api(
            "runs/create",
            {"experiment_id": experiment_id, "run_name": name, "start_time": now + i},
        )
        run_id = run["run"]["info"]["run_id"]
        app.api(
            "runs/log-batch",
            {
                "run_id": run_id,
                "params": [{"key": k, "value": v} for k, v in params.items()],
                "metrics": [
                    {"key": k, "value": v, "timestamp": now, "step": 0} for k, v in metrics.items()
                ],
            },
        )
        app.api("runs/update", {"run_id": run_id, "status": "FINISHED", "end_time": now + 1000})


def start_mlflow(tmp_dir: Path) -> MlflowApp:
    """Install (once), serve and seed MLflow under ``tmp_dir``; raises MlflowUnavailable."""
    began = time.monotonic()
    version = ensure_mlflow()
    tmp_dir.mkdir(parents=True, exist_ok=True)
    store = tmp_dir / "mlflow.db"
    artifacts = tmp_dir / "artifacts"
    env = {**os.environ, "MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "true"}
    try:
        process = start_server(
            "mlflow",
            lambda port: [
                str(VENV / "bin" / "mlflow"),
                "server",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--workers",
                "1",
                "--backend-store-uri",
                f"sqlite:///{store}",
                "--default-artifact-root",
                str(artifacts),
            ],
            env=env,
            cwd=tmp_dir,
            log_dir=tmp_dir,
            probe_path="/health",
            timeout_s=120.0,
        )
    except Exception as exc:
        raise MlflowUnavailable(f"mlflow server did not start: {exc}") from exc
    app = MlflowApp(process.base_url, process, "", version, 0.0)
    try:
        app.experiment_id = app.api("experiments/create", {"name": EXPERIMENT})["experiment_id"]
        _log_runs(app, app.experiment_id, RUNS)
        other = app.api("experiments/create", {"name": OTHER_EXPERIMENT[0]})["experiment_id"]
        _log_runs(app, other, OTHER_EXPERIMENT[1])
    except Exception as exc:
        app.stop()
        raise MlflowUnavailable(f"could not log the runs through MLflow's API: {exc}") from exc
    app.startup_s = round(time.monotonic() - began, 1)
    return app
