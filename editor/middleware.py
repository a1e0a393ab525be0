from django.contrib.auth.middleware import LoginRequiredMiddleware


class LoginRequiredForPagesMiddleware(LoginRequiredMiddleware):
    """Redirect anonymous users to the login page, except on the API.

    The API authenticates each request itself (session or bearer token) and answers 401 in
    JSON: a redirect to an HTML login form would mean nothing to a pipeline.
    """

    api_prefix = "/api/"

    def process_view(self, request, view_func, view_args, view_kwargs):
        if request.path.startswith(self.api_prefix):
            return None
        return super().process_view(request, view_func, view_args, view_kwargs)
