from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from editor.health import healthz

urlpatterns = [
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/v1/", include("api.urls")),
    path("", include("editor.urls")),
]

handler400 = "editor.views.errors.bad_request"
handler403 = "editor.views.errors.permission_denied"
handler404 = "editor.views.errors.page_not_found"
handler500 = "editor.views.errors.server_error"
