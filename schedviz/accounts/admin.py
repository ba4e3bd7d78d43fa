from django.contrib import admin

from .models import ApiToken, Team

admin.site.register(Team)


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("name", "user", "prefix", "created", "expires", "revoked")
    readonly_fields = ("digest", "prefix")
