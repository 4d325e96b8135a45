"""Airflow DAG: several papermill sweep workers on one PostgreSQL study, then the gate.

An example to copy into your Airflow deployment (it needs `apache-airflow` and
`apache-airflow-providers-papermill`, which contextos-lab does not install; nothing in the kit's
tests imports it). Every worker task runs notebook 02 against the same study: the study's trial
budget is counted in PostgreSQL, so four workers stop together at `n_trials`, a worker killed
mid-trial loses nothing (its trial is marked interrupted and re-run), and the gate task reads
the finished study. Put the workers on as many Airflow workers/machines as you like.

Set `CONTEXTOS_STORAGE_URL` (or pass `storage` below) to your team's server, e.g.
`postgresql://sweeper:PASSWORD@db.internal:5432/studies`.
"""

from __future__ import annotations

import os
from datetime import datetime

from airflow import DAG
from airflow.operators.bash import BashOperator
from airflow.providers.papermill.operators.papermill import PapermillOperator

STORAGE = os.environ.get("CONTEXTOS_STORAGE_URL", "postgresql://sweeper@db.internal/studies")
SPEC = "/srv/contextos/specs/support_refund.yaml"
OUT = "/srv/contextos/runs/{{ ds_nodash }}"
WORKERS = 4

with DAG(
    dag_id="contextos_nightly_sweep",
    start_date=datetime(2026, 1, 1),
    schedule="0 2 * * *",  # nightly at 02:00, like the README's cron line
    catchup=False,
    max_active_runs=1,
) as dag:
    sweep_workers = [
        PapermillOperator(
            task_id=f"sweep_worker_{i}",
            input_nb="/srv/contextos/notebooks/02_autotune_sweep.ipynb",
            output_nb=f"{OUT}/02_autotune_sweep_worker{i}.ipynb",
            parameters={
                "spec_path": SPEC,
                "storage": STORAGE,  # one study, shared by every worker
                "out_dir": OUT,
                "n_trials": 200,  # the study's total budget, not each worker's
                "workers": 1,
            },
        )
        for i in range(WORKERS)
    ]
    gate = BashOperator(
        task_id="gate",
        bash_command=f"contextos-lab gate {SPEC} --storage '{STORAGE}' --out {OUT}/gate",
    )
    sweep_workers >> gate
