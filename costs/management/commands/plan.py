"""python manage.py plan FILE|- : size and cost a WorkloadSpec (with an optional "costs" section).

Prints {"sizing": ..., "costs": ...} as JSON (the same schema the API serves), or the cost tables
with --format table; --xlsx PATH also writes the procurement workbook. Bad input: exit status 2
and one line per problem, each naming its field path.
"""

import datetime as dt
import json
import sys
from dataclasses import asdict
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.core.serializers.json import DjangoJSONEncoder
from django.utils import timezone

from costs.adapters import parse_options
from costs.engine.errors import CostValidationError

BAD_INPUT = 2


def _bad(lines: list[str]) -> CommandError:
    return CommandError("invalid input:\n" + "\n".join(f"  {line}" for line in lines), returncode=BAD_INPUT)


class Command(BaseCommand):
    help = "Size and cost a workload spec (JSON file or - for stdin) with an optional 'costs' section."

    def add_arguments(self, parser):
        parser.add_argument("file", help="WorkloadSpec JSON file, or - to read stdin")
        parser.add_argument("--format", choices=("json", "table"), default="json")
        parser.add_argument("--xlsx", default=None, help="also write the cost workbook to this path")
        parser.add_argument("--as-of", default=None, help="price date YYYY-MM-DD (default: today)")
        parser.add_argument(
            "--data-residency", default=None,
            help="comma-separated jurisdictions to keep, e.g. RU (sets costs.data_residency)",
        )
        parser.add_argument("--team", default=None, help="team slug: use that team's valid supplier quotes")

    def handle(self, *args, file, format, xlsx, as_of, data_residency=None, team=None, **options):
        from catalog.selectors import accelerator_specs
        from catalog.snapshots import price_snapshot
        from costs.adapters import price_sizing_result
        from costs.selectors import rate_card_snapshot
        from planner.engine import size_workload
        from planner.engine.errors import SpecValidationError
        from planner.engine.spec import parse_workload_spec

        try:
            text = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
        except OSError as exc:
            raise _bad([f"file: cannot read {file}: {exc.strerror}"]) from None
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise _bad([f"input: not valid JSON ({exc})"]) from None
        if not isinstance(data, dict):
            raise _bad(["input: must be a JSON object (a WorkloadSpec)"])
        costs = data.pop("costs", None)
        if data_residency is not None:
            costs = dict(costs) if isinstance(costs, dict) else ({} if costs is None else costs)
            if isinstance(costs, dict):
                costs["data_residency"] = [c.strip() for c in data_residency.split(",") if c.strip()]
        try:
            day = dt.date.fromisoformat(as_of) if as_of else None
        except ValueError:
            raise _bad(["--as-of: must be a date YYYY-MM-DD"]) from None
        # one plan date: costs.as_of and --as-of must agree (prices, FX and VAT of the same day)
        costs_day = costs.get("as_of") if isinstance(costs, dict) else None
        if costs_day and day and str(costs_day) != day.isoformat():
            raise _bad([f"costs.as_of: {costs_day} differs from --as-of {day.isoformat()}; give one plan date"])
        if day is None:
            try:
                day = dt.date.fromisoformat(str(costs_day)) if costs_day else timezone.localdate()
            except ValueError:
                raise _bad(["costs.as_of: must be a date YYYY-MM-DD"]) from None
        errors = []
        spec = None
        try:
            spec = parse_workload_spec(data)
        except SpecValidationError as exc:
            errors += [f"{e.field}: {e.message}" for e in exc.errors]
        try:
            parse_options(costs, default_as_of=day)
        except CostValidationError as exc:
            errors += [str(e) for e in exc.errors]
        if errors:
            raise _bad(errors)

        prices = price_snapshot(as_of=day)
        if team is not None:
            from catalog.snapshots import supplier_quotes_snapshot
            from planner.models import Team

            found = Team.objects.filter(slug=team).first()
            if found is None:
                raise _bad([f"--team: no team with slug {team!r}"])
            prices["supplier_quotes"] = supplier_quotes_snapshot(team_id=found.id, as_of=day)
        specs = accelerator_specs(as_of=day)
        prices.setdefault("accelerators", [asdict(a) for a in specs])
        sizing = size_workload(spec=spec, accelerators=specs).to_dict()
        try:
            result = price_sizing_result(
                sizing=sizing,
                price_snapshot=prices,
                rate_snapshot=rate_card_snapshot(as_of=day),
                options=costs,
                spec=data,
            )
        except CostValidationError as exc:
            raise _bad([str(e) for e in exc.errors]) from None

        if xlsx:
            from costs.exports_xlsx import costs_xlsx

            Path(xlsx).write_bytes(costs_xlsx(result, title=data.get("name") or "GPU Planner costs"))
        if format == "table":
            from costs.tables import text_table

            self.stdout.write(text_table(result), ending="")
        else:
            self.stdout.write(
                json.dumps({"sizing": sizing, "costs": result}, cls=DjangoJSONEncoder, indent=1)
            )
