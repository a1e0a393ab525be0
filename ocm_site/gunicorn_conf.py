"""gunicorn settings shared by ``make serve`` (scripts/serve.sh) and the production-topology
test: ``gunicorn -c python:ocm_site.gunicorn_conf``.

gunicorn writes ``Server: gunicorn`` itself, before the application's headers, and has no
setting to change it; it reads the name from ``gunicorn.http.wsgi.SERVER`` on each response.
Naming the server and its version tells a scanner which advisories to try: the header says
only that something answers.
"""

import gunicorn.http.wsgi

gunicorn.http.wsgi.SERVER = "ocm"
