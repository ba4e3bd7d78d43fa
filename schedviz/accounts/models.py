"""Teams, API tokens (stored hashed, with expiry) and the owned-object base."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone

TOKEN_PREFIX = "svz_"


class Team(models.Model):
    name = models.CharField(max_length=100, unique=True)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="teams", blank=True)
    created = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name


class Owned(models.Model):
    """Something that belongs to a user and, optionally, is shared with a team."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    team = models.ForeignKey(Team, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")

    class Meta:
        abstract = True

    @classmethod
    def visible_to(cls, user: Any) -> models.QuerySet[Any]:
        """The objects of this kind ``user`` may read: the ownership rule (``ownership.visible``)."""
        from .ownership import visible

        return visible(cls._default_manager.all(), user)


def hash_token(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


class ApiTokenQuerySet(models.QuerySet["ApiToken"]):
    def active(self) -> ApiTokenQuerySet:
        now = timezone.now()
        return self.filter(revoked__isnull=True).filter(models.Q(expires__isnull=True) | models.Q(expires__gt=now))


class ApiToken(models.Model):
    """A token for API clients. Only its SHA-256 is stored; the token is shown once, at creation."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=12, db_index=True)
    digest = models.CharField(max_length=64, unique=True)
    created = models.DateTimeField(auto_now_add=True)
    expires = models.DateTimeField(null=True, blank=True)
    last_used = models.DateTimeField(null=True, blank=True)
    revoked = models.DateTimeField(null=True, blank=True)

    objects = ApiTokenQuerySet.as_manager()

    @classmethod
    def issue(cls, user: Any, name: str, ttl_days: int | None = 90) -> tuple[ApiToken, str]:
        raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
        expires = timezone.now() + timedelta(days=ttl_days) if ttl_days else None
        tok = cls.objects.create(user=user, name=name, prefix=raw[:12], digest=hash_token(raw), expires=expires)
        return tok, raw

    @property
    def is_active(self) -> bool:
        return self.revoked is None and (self.expires is None or self.expires > timezone.now())

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"
