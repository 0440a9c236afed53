"""Create the demo team and user for the embedded default (idempotent) and say how to log in."""

import os

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from planner.choices import Role
from planner.models import Membership, Team

DEMO_TEAM_SLUG = "demo"


class Command(BaseCommand):
    help = "Create (or keep) the demo team and its owner and print how to log in."

    def add_arguments(self, parser):
        parser.add_argument("--username", default=os.environ.get("DEMO_USERNAME", "demo"))
        parser.add_argument(
            "--password", default=os.environ.get("DEMO_PASSWORD", "demo-planner"),
            help="Password set when the user is created (env DEMO_PASSWORD). An existing user keeps theirs.",
        )

    def handle(self, *args, username, password, **options):
        User = get_user_model()
        with transaction.atomic():
            team, _ = Team.objects.get_or_create(slug=DEMO_TEAM_SLUG, defaults={"name": "Demo team"})
            user = User.objects.filter(username=username).first()
            created = user is None
            if created:
                user = User.objects.create_user(username=username, password=password)
            Membership.objects.update_or_create(team=team, user=user, defaults={"role": Role.OWNER})
        if created:
            self.stdout.write(f"Demo user created. Log in at /accounts/login/ as {username!r} with password {password!r}.")
        else:
            self.stdout.write(f"Demo user {username!r} exists (password unchanged). Log in at /accounts/login/.")
