"""The scheduled jobs (`sweep`, `gate`) as library calls: check inputs, run the notebooks under
papermill, emit proposals. The CLI commands and `contextos_lab.api.run_sweep` both call these,
so the library never imports the CLI (`.importlinter`: jobs sits below cli)."""
