"""Settings of the shop: one app, its database from the environment."""
import os
from urllib.parse import parse_qs, unquote, urlsplit

SECRET_KEY = "only-for-tests-this-site-serves-nobody"
DEBUG = False
ALLOWED_HOSTS = []
INSTALLED_APPS = ["shop"]
USE_TZ = True
TIME_ZONE = "UTC"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"


def database_from_environment():
    """DATABASE_URL (postgresql://user:password@host:port/name, a socket folder as ?host=),
    else libpq's PGHOST, PGPORT, PGUSER, PGPASSWORD and PGDATABASE."""
    url = os.environ.get("DATABASE_URL")
    if url:
        parts = urlsplit(url)
        query = parse_qs(parts.query)
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": unquote(parts.path.lstrip("/")),
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            "HOST": parts.hostname or query.get("host", [""])[0],
            "PORT": str(parts.port or query.get("port", [""])[0]),
        }
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": os.environ.get("PGDATABASE", "shop"),
        "USER": os.environ.get("PGUSER", ""),
        "PASSWORD": os.environ.get("PGPASSWORD", ""),
        "HOST": os.environ.get("PGHOST", ""),
        "PORT": os.environ.get("PGPORT", ""),
    }


DATABASES = {"default": database_from_environment()}
