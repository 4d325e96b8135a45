"""Database URLs as users type them, mapped to the driver the kit pins.

`postgresql://…` and `postgres://…` (the forms libpq, psql and most hosting dashboards print)
mean psycopg 3 here: SQLAlchemy alone would pick psycopg2, which the kit does not install.
An explicit driver (`postgresql+psycopg2://…`) is kept as given.
"""

from __future__ import annotations

#: Environment variables naming shared databases, so every worker of a team uses the same ones.
STORAGE_ENV = "CONTEXTOS_STORAGE_URL"  # Optuna study storage (search, sweep, gate)
STORE_ENV = "CONTEXTOS_STORE_URL"  # experience store
#: The experience store when neither `--store` nor $CONTEXTOS_STORE_URL names one.
DEFAULT_STORE_URL = "sqlite:///.contextos/experience.db"


def sqlalchemy_url(url: str) -> str:
    """`url` with a bare PostgreSQL scheme pointed at psycopg 3; anything else unchanged."""
    for bare in ("postgresql://", "postgres://"):
        if url.startswith(bare):
            return "postgresql+psycopg://" + url.removeprefix(bare)
    return url


def is_postgresql(url: str) -> bool:
    return url.startswith(("postgresql", "postgres://"))
