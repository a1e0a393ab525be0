import os

from django.core.wsgi import get_wsgi_application

from ocm_site.warmup import warm

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ocm_site.settings")
application = get_wsgi_application()

# Build the URLconf (with it the API and its schemas) and compile the first pages' templates
# as the worker starts, not in its first request: that request took most of a second, and a
# load test's first seconds showed it.
warm()
