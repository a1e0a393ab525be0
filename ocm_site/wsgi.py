import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ocm_site.settings")
application = get_wsgi_application()

# Build the URLconf (with it the API and its schemas) as the worker starts, not in its first
# request: that request took most of a second, and a load test's first seconds showed it.
get_resolver().url_patterns  # noqa: B018
