from django.contrib import admin

from .forms import AdminSignInForm
from .models import ApiToken, Team

# the admin's sign-in says when the sign-in throttle refused an attempt (schedviz/accounts/signin_throttle.py)
admin.site.login_form = AdminSignInForm
admin.site.register(Team)


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("name", "user", "prefix", "created", "expires", "revoked")
    readonly_fields = ("digest", "prefix")
