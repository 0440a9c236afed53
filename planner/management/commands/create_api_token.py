"""Create an API token for a user without a browser (for an admin on the server).

Only the key's SHA-256 is stored, so an existing key can never be shown again: `--list` shows
the user's tokens (name, prefix, state) and a new run creates a new key, printed once."""

import argparse
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from planner.api.tokens import api_token_create, api_tokens_for_user

MAX_NAME = 100
MAX_DAYS = 36500


def _positive_days(text: str) -> int:
    days = int(text) if text.isascii() and text.isdigit() else 0
    if not 1 <= days <= MAX_DAYS:
        raise argparse.ArgumentTypeError(f"expected a whole number of days, 1-{MAX_DAYS}; got {text!r}")
    return days


class Command(BaseCommand):
    help = "Create an API token for USERNAME and print its key once (or --list the user's tokens)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="created by manage.py create_api_token",
                            help=f"A label for the token (at most {MAX_NAME} characters).")
        parser.add_argument("--expires-days", type=_positive_days, default=None, metavar="DAYS",
                            help=f"Expire the token after DAYS days (1-{MAX_DAYS}); by default it does not expire.")
        parser.add_argument("--list", action="store_true", dest="list_tokens",
                            help="List the user's tokens (keys are never shown again) instead of creating one.")

    def handle(self, *args, username, name, expires_days, list_tokens, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No user named {username!r}; create one first (manage.py createsuperuser).")
        if list_tokens:
            self._list(user)
            return
        if not user.is_active:
            raise CommandError(f"User {username!r} is inactive; a token for them would be refused (401).")
        name = name.strip()
        if not name or len(name) > MAX_NAME:
            raise CommandError(f"--name must be 1-{MAX_NAME} characters.")
        expires_at = timezone.now() + timedelta(days=expires_days) if expires_days else None
        token, key = api_token_create(user=user, name=name, expires_at=expires_at)
        self.stderr.write(
            f"Token {token.name!r} (id {token.id}, prefix {token.prefix}) created for {username!r}"
            + (f", expires {token.expires_at:%Y-%m-%d %H:%M} UTC" if token.expires_at else ", no expiry")
            + ". The key below is shown once; only its SHA-256 is stored."
        )
        # The key alone on stdout, so `KEY=$(manage.py create_api_token alice)` works.
        self.stdout.write(key)

    def _list(self, user):
        now = timezone.now()
        tokens = api_tokens_for_user(user=user)
        if not tokens.exists():
            self.stdout.write(f"{user.username!r} has no API tokens.")
            return
        for t in tokens:
            state = "live" if t.is_live(now=now) else ("revoked" if t.revoked_at else "expired")
            expiry = f"{t.expires_at:%Y-%m-%d}" if t.expires_at else "never"
            self.stdout.write(f"{t.id}\t{t.prefix}…\t{state}\texpires {expiry}\t{t.name}")
