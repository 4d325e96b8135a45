"""`python -m contextos_lab.cli`: the `contextos-lab` command."""

from contextos_lab.cli.app import main

raise SystemExit(main())
