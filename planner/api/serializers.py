"""Input and output serializers. Inputs only validate shapes; the WorkloadSpec and the cost
options are validated by the engines' own parsers (one schema for the form, API and CLI)."""

from django.utils.translation import gettext_lazy as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from planner.choices import Role, VersionStatus, WorkloadKind

MAX_NAME = 200


@extend_schema_field(OpenApiTypes.OBJECT)
class ObjectField(serializers.JSONField):
    """A JSON object (not a list, string or number)."""

    default_error_messages = {"not_object": _("Expected a JSON object.")}

    def to_internal_value(self, data):
        data = super().to_internal_value(data)
        if not isinstance(data, dict):
            self.fail("not_object")
        return data


class StrictCharField(serializers.CharField):
    """A JSON string only: DRF's CharField would turn 5 or 0.5 into "5", which the schema's
    `type: string` does not allow."""

    default_error_messages = {"not_string": _("Must be a string.")}

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("not_string")
        return super().to_internal_value(data)


# --- inputs ----------------------------------------------------------------------------


class TokenCreateIn(serializers.Serializer):
    name = StrictCharField(max_length=100)
    expires_at = serializers.DateTimeField(required=False, allow_null=True)


class WorkloadIn(serializers.Serializer):
    team = serializers.IntegerField(min_value=1, max_value=2**63 - 1)
    name = StrictCharField(max_length=MAX_NAME)
    spec = ObjectField(help_text="A WorkloadSpec (docs/WORKLOADSPEC.md).")


class WorkloadUpdateIn(serializers.Serializer):
    name = StrictCharField(max_length=MAX_NAME, required=False)
    spec = ObjectField(required=False, help_text="A WorkloadSpec (docs/WORKLOADSPEC.md).")


class PlanCreateIn(serializers.Serializer):
    """Either an existing `workload`, or a `team` and an inline `spec` (a workload is saved)."""

    workload = serializers.IntegerField(min_value=1, max_value=2**63 - 1, required=False)
    team = serializers.IntegerField(min_value=1, max_value=2**63 - 1, required=False)
    spec = ObjectField(required=False, help_text="A WorkloadSpec, when no `workload` is given.")
    name = StrictCharField(max_length=MAX_NAME, required=False, allow_blank=True)
    costs = ObjectField(required=False, help_text="Cost options (docs/COSTS.md); defaults apply when omitted.")

    def validate(self, attrs):
        if "workload" in attrs:
            extra = [f for f in ("team", "spec") if f in attrs]
            if extra:
                raise serializers.ValidationError({f: _("Not allowed together with workload.") for f in extra})
        else:
            missing = [f for f in ("team", "spec") if f not in attrs]
            if missing:
                raise serializers.ValidationError(
                    {f: _("Required when no workload is given.") for f in missing}
                )
        return attrs


class RecomputeIn(serializers.Serializer):
    note = StrictCharField(max_length=200, required=False, allow_blank=True)


class ShareLinkCreateIn(serializers.Serializer):
    expires_at = serializers.DateTimeField(required=False, allow_null=True)


class EstimateIn(serializers.Serializer):
    spec = ObjectField(help_text="A WorkloadSpec (docs/WORKLOADSPEC.md).")
    team = serializers.IntegerField(min_value=1, max_value=2**63 - 1, required=False,
                                    help_text="Use this team's active calibrations (docs/CALIBRATION.md).")
    costs = ObjectField(required=False, help_text="Cost options (docs/COSTS.md); defaults apply when omitted.")


# --- outputs (documentation of the shapes the views return) ----------------------------


class MeOut(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()


class ProcurementOut(serializers.Serializer):
    data_residency = serializers.ListField(child=serializers.CharField(), required=False,
                                          help_text="ISO 3166-1 alpha-2 codes of the jurisdictions allowed.")
    providers = serializers.ListField(child=serializers.CharField(), required=False,
                                      help_text="Catalog provider names allowed.")
    options = serializers.ListField(child=serializers.CharField(), required=False,
                                    help_text="Option kinds allowed (as in the cost options' `options`).")


class TeamOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    slug = serializers.CharField()
    role = serializers.ChoiceField(choices=Role.choices)
    procurement = ProcurementOut(help_text=(
        "Where, from whom and how the team may buy; each new plan version is priced under these rules "
        "(its inputs.procurement records them and what they changed). Absent key: no rule."))


class TokenOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    prefix = serializers.CharField(help_text="First characters of the key, to tell tokens apart.")
    created_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField(allow_null=True)
    revoked_at = serializers.DateTimeField(allow_null=True)
    last_used_at = serializers.DateTimeField(allow_null=True)


class TokenCreatedOut(TokenOut):
    key = serializers.CharField(help_text="The secret key. Shown only in this response: store it now.")


class WorkloadOut(serializers.Serializer):
    id = serializers.IntegerField()
    team = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=WorkloadKind.choices)
    spec = ObjectField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    url = serializers.CharField()


class VersionSummaryOut(serializers.Serializer):
    number = serializers.IntegerField()
    status = serializers.ChoiceField(choices=VersionStatus.choices)
    note = serializers.CharField(allow_blank=True)
    as_of = serializers.DateField(help_text="Catalog prices and rates as of this date.")
    engine_version = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    url = serializers.CharField()
    status_url = serializers.CharField()


class VersionStatusOut(serializers.Serializer):
    number = serializers.IntegerField()
    status = serializers.ChoiceField(choices=VersionStatus.choices)
    finished = serializers.BooleanField()
    error = serializers.CharField(allow_blank=True)
    attempts = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    url = serializers.CharField(help_text="The version with its result.")


class VersionOut(VersionSummaryOut):
    plan = serializers.IntegerField()
    error = serializers.CharField(allow_blank=True)
    inputs = ObjectField(help_text='Frozen inputs: {"spec": WorkloadSpec, "costs": cost options}.')
    calibrations = ObjectField(help_text="The team's active calibrations this version used "
                                         "(docs/CALIBRATION.md); empty lists: the presets.")
    result = ObjectField(allow_null=True, help_text='{"decision": the one decided option (hardware, layout, provider, payment mode, budget, targets; docs/API.md), "sizing": ..., "costs": ...}; null until done.')
    exports = serializers.DictField(child=serializers.CharField(), help_text="Download URLs by format.")
    options_url = serializers.CharField(
        allow_null=True, help_text="Every priced and every skipped option of a done version (result.costs.options "
                                   "lists those the plan names); null until done.")


class VersionOptionsOut(serializers.Serializer):
    plan = serializers.IntegerField()
    number = serializers.IntegerField()
    options_listed = serializers.IntegerField(help_text="How many options `options` lists.")
    options = serializers.ListField(child=ObjectField(), help_text="Every priced option, as result.costs.options "
                                                                   "lists them.")
    skipped = serializers.ListField(child=ObjectField(), help_text="Every option not priced, with the reason.")
    prices = serializers.ListField(child=ObjectField(), help_text="Every price the plan used, as "
                                   "result.costs.freshness.prices lists them, with a composed price's parts "
                                   "(`components`: GPU, vCPU, RAM, each with its source).")


class PlanOut(serializers.Serializer):
    id = serializers.IntegerField()
    team = serializers.IntegerField()
    workload = serializers.IntegerField()
    name = serializers.CharField()
    costs = ObjectField()
    created_at = serializers.DateTimeField()
    latest_version = serializers.IntegerField(allow_null=True)
    latest_status = serializers.ChoiceField(choices=VersionStatus.choices, allow_null=True)
    url = serializers.CharField()
    versions_url = serializers.CharField()


class PlanAcceptedOut(serializers.Serializer):
    plan = PlanOut()
    version = VersionStatusOut()
    version_url = serializers.CharField()
    status_url = serializers.CharField()


class ChangeOut(serializers.Serializer):
    path = serializers.CharField()
    before = serializers.JSONField(allow_null=True)
    after = serializers.JSONField(allow_null=True)


class DiffOut(serializers.Serializer):
    plan = serializers.IntegerField()
    from_version = serializers.IntegerField()
    to_version = serializers.IntegerField()
    inputs = ChangeOut(many=True)
    prices = ChangeOut(many=True)
    rates = ChangeOut(many=True)
    result = ChangeOut(many=True, allow_null=True, help_text="null unless both versions are done.")


class ShareLinkOut(serializers.Serializer):
    id = serializers.IntegerField()
    prefix = serializers.CharField()
    created_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField(allow_null=True)
    revoked_at = serializers.DateTimeField(allow_null=True)
    active = serializers.BooleanField()


class ShareLinkCreatedOut(ShareLinkOut):
    token = serializers.CharField(help_text="The secret token. Shown only in this response.")
    api_url = serializers.CharField()


class SharedPlanOut(serializers.Serializer):
    name = serializers.CharField()
    kind = serializers.CharField()
    versions = VersionSummaryOut(many=True)


class EstimateOut(serializers.Serializer):
    as_of = serializers.DateField()
    engine_version = serializers.CharField()
    sizing = ObjectField()
    costs = ObjectField(allow_null=True)


def paginated(item: type[serializers.Serializer]) -> type[serializers.Serializer]:
    """The page envelope of list endpoints (rest_framework PageNumberPagination)."""
    return type(f"Paginated{item.__name__.removesuffix('Out')}List", (serializers.Serializer,), {
        "count": serializers.IntegerField(),
        "next": serializers.CharField(allow_null=True),
        "previous": serializers.CharField(allow_null=True),
        "results": item(many=True),
    })
