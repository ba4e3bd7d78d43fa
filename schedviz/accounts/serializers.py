"""The API tokens endpoints' JSON shapes, and the team field of the shared objects' forms."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from .models import ApiToken, Team


class TeamField(serializers.IntegerField):
    """A team id; valid only for a team the requesting user belongs to (``context["user"]``)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("allow_null", True)
        kwargs.setdefault("help_text", "Share with this team (its id; you must be a member)")
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> Any:
        team_id = super().to_internal_value(data)
        user = self.context.get("user")
        team = Team.objects.filter(pk=team_id, members=user).first() if user is not None else None
        if team is None:
            # one answer for "no such team" and "not a member": team ids are not disclosed
            raise serializers.ValidationError(f"you are not a member of a team with id {team_id}")
        return team

    def to_representation(self, value: Any) -> Any:
        return getattr(value, "pk", value)


class TokenSerializer(serializers.ModelSerializer[ApiToken]):
    active = serializers.BooleanField(source="is_active", read_only=True)

    class Meta:
        model = ApiToken
        fields = ["id", "name", "prefix", "created", "expires", "last_used", "revoked", "active"]
        read_only_fields = fields


class TokenCreateSerializer(serializers.Serializer[Any]):
    name = serializers.CharField(max_length=100)
    ttl_days = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=3650,
        default=90,
        allow_null=True,
        help_text="Days until the token expires (default 90, at most SCHEDVIZ_TOKEN_MAX_DAYS, 365 "
        "unless set); null for a token that never expires, only where SCHEDVIZ_TOKEN_MAX_DAYS is 0",
    )

    def validate_ttl_days(self, value: int | None) -> int | None:
        from django.conf import settings

        limit = int(getattr(settings, "SCHEDVIZ_TOKEN_MAX_DAYS", 0) or 0)
        if limit and value is None:
            raise serializers.ValidationError(f"tokens expire on this server: at most {limit} days")
        if limit and value is not None and value > limit:
            raise serializers.ValidationError(f"at most {limit} days on this server")
        return value


class TokenCreatedSerializer(TokenSerializer):
    token = serializers.CharField(help_text="The token's value: shown in this answer only, never again")

    class Meta(TokenSerializer.Meta):
        fields = [*TokenSerializer.Meta.fields, "token"]
        read_only_fields = fields
