"""Alembic's environment: online migrations against the database shop/db.py names."""
import os
import sys

from alembic import context

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from shop.db import engine  # noqa: E402
from shop.models import Base  # noqa: E402

with engine().connect() as connection:
    context.configure(connection=connection, target_metadata=Base.metadata)
    with context.begin_transaction():
        context.run_migrations()
