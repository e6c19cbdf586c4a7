"""The shop's database connection, from the application's own variables (not libpq's PG*)."""
import os

from sqlalchemy import create_engine
from sqlalchemy.engine import URL


def url():
    return URL.create(
        "postgresql+psycopg2",
        username=os.environ["SHOP_DB_USER"],
        password=os.environ.get("SHOP_DB_PASSWORD") or None,
        host=os.environ["SHOP_DB_HOST"],
        port=int(os.environ["SHOP_DB_PORT"]),
        database=os.environ["SHOP_DB_NAME"],
    )


def engine():
    # echo would print every statement on stdout, in front of the JSON the loader prints:
    # SQL logging, when wanted, goes through the logging module to stderr (alembic.ini).
    return create_engine(url(), future=True)
