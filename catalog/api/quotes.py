"""/api/v1/supplier-quotes/: the quotes procurement received, scoped to the caller's teams.

A quote of another team is a 404 (never a 403 that confirms it exists). Writing needs an editing
role in the quote's team. Upload takes a CSV or XLSX quote table (catalog.quotes) all or nothing.
"""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response

from catalog.api.quote_schema import (  # noqa: F401 (re-exported)
    PRICE_PATTERN,
    QUOTE_REQUIRED,
    quote_body_schema,
)
from catalog.models import SupplierQuote
from catalog.quotes import QuoteUploadError, quote_create, quote_data, quotes_upload
from planner.api.base import ApiView, _editable_team, _int_query, _paginate, _require_edit
from planner.api.body_schema import check_body
from planner.api.errors import FieldErrors
from planner.api.parsers import SafeJSONParser

MAX_UPLOAD_BYTES = 5 * 1024 * 1024


def _quotes(user):
    return SupplierQuote.objects.filter(team__memberships__user=user).select_related("accelerator")


def _team_id(request) -> int:
    raw = request.data.get("team")
    try:
        team_id = int(raw)
    except (TypeError, ValueError):
        raise FieldErrors([("team", _("A team id is required."))]) from None
    if not 1 <= team_id <= 2**63 - 1:
        raise FieldErrors([("team", _("No such team among yours."))])
    return team_id


QUOTE_EXAMPLE = {
    "team": 1, "supplier": "ООО Интегратор", "item_kind": "server", "accelerator": "nvidia-h100-sxm5-80gb",
    "gpus_per_server": 8, "quantity": 1, "unit_price": "42000000", "currency": "RUB", "includes_vat": True,
    "quote_date": "2026-11-20", "valid_until": "2027-12-31",
}


class SupplierQuoteListView(ApiView):
    parser_classes = [SafeJSONParser]

    @extend_schema(summary="Supplier quotes of your teams", operation_id="supplier_quotes_list",
                   parameters=[OpenApiParameter("team", int)], responses=OpenApiTypes.OBJECT, tags=["quotes"])
    def get(self, request):
        qs = _quotes(request.user).order_by("-quote_date", "-id")
        team = _int_query(request, "team")
        if team is not None:
            qs = qs.filter(team_id=team)
        return _paginate(self, request, qs, quote_data)

    @extend_schema(summary="Enter a supplier quote", operation_id="supplier_quotes_create",
                   request=OpenApiTypes.OBJECT, responses={201: OpenApiTypes.OBJECT}, tags=["quotes"],
                   examples=[OpenApiExample("A server quote", request_only=True, value=QUOTE_EXAMPLE)])
    def post(self, request):
        if not isinstance(request.data, dict):
            raise FieldErrors([(None, _("The body must be a JSON object."))])
        check_body(quote_body_schema(), request.data)
        team = _editable_team(request.user, request.data["team"])
        data = {"quantity": 1, **{k: v for k, v in request.data.items() if k != "team"}}
        quote, errors = quote_create(team=team, data=data, user=request.user)
        if errors:
            raise FieldErrors([(field if field != "__all__" else None, m) for field, ms in errors.items() for m in ms])
        return Response(quote_data(quote), status=status.HTTP_201_CREATED)


class SupplierQuoteDetailView(ApiView):
    @extend_schema(summary="A supplier quote", responses=OpenApiTypes.OBJECT, tags=["quotes"])
    def get(self, request, pk: int):
        return Response(quote_data(get_object_or_404(_quotes(request.user), pk=pk)))

    @extend_schema(summary="Delete a supplier quote", responses={204: None}, tags=["quotes"])
    def delete(self, request, pk: int):
        quote = get_object_or_404(_quotes(request.user), pk=pk)
        _require_edit(request.user, quote.team_id)
        quote.delete()
        return Response(status=status.HTTP_204_NO_CONTENT)


class SupplierQuoteUploadView(ApiView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(summary="Upload a quote table (.csv or .xlsx)", operation_id="supplier_quotes_upload",
                   request={"multipart/form-data": OpenApiTypes.OBJECT}, responses={201: OpenApiTypes.OBJECT},
                   tags=["quotes"])
    def post(self, request):
        team = _editable_team(request.user, _team_id(request))
        upload = request.FILES.get("file")
        if upload is None:
            raise FieldErrors([("file", _("Attach the quote table as 'file'."))])
        if upload.size > MAX_UPLOAD_BYTES:
            raise FieldErrors([("file", _("The file is larger than 5 MB."))])
        try:
            created = quotes_upload(team=team, filename=upload.name, data=upload.read(), user=request.user)
        except QuoteUploadError as exc:
            raise FieldErrors([("file", e) for e in exc.errors]) from None
        return Response({"created": len(created), "quotes": [quote_data(q) for q in created]},
                        status=status.HTTP_201_CREATED)
