"""python manage.py import_runs --team SLUG FILE [--format F] [--accelerator ... --count N ...]

Record a team's measured runs from a benchmark file (vLLM --save-result JSON, SGLang JSONL, serving
or training CSV; docs/CALIBRATION.md), as the upload page does: all rows or none. A bad file exits
with status 2 and one "FILE: line N, field: message" per error.
"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from planner.calibration.formats import PARSERS, RunFileError
from planner.calibration.services import runs_import
from planner.models import Team

CONTEXT = ("model", "accelerator", "count", "tensor_parallel", "precision", "engine", "engine_version", "measured_on")


class Command(BaseCommand):
    help = "Record measured runs of a team from a benchmark result file (all rows or none)."

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--team", required=True, help="team slug")
        parser.add_argument("--format", default="auto", choices=["auto", *PARSERS])
        for name in CONTEXT:
            parser.add_argument(f"--{name.replace('_', '-')}", dest=name, default=None,
                                help="what the file does not say (wins over the file's metadata)")

    def handle(self, *args, **options):
        path = Path(options["file"])
        team = Team.objects.filter(slug=options["team"]).first()
        if team is None:
            raise CommandError(f"--team: no team with slug {options['team']!r}", returncode=2)
        try:
            content = path.read_bytes()
        except OSError as exc:
            raise CommandError(f"{path}: cannot read ({exc.strerror})", returncode=2) from exc
        context = {k: options[k] for k in CONTEXT if options.get(k) not in (None, "")}
        try:
            runs = runs_import(team=team, user=None, content=content, fmt=options["format"], context=context,
                               filename=path.name)
        except RunFileError as exc:
            raise CommandError("\n".join(f"{path}: {e}" for e in exc.errors), returncode=2) from exc
        self.stdout.write(f"{len(runs)} run(s) recorded for {team.slug} from {path}")
