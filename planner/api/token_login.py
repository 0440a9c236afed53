"""`POST /api/v1/tokens/password/`: a token from a username and password, for scripts with no
browser. Counted and locked out exactly like the web login (django-axes: AXES_FAILURE_LIMIT
failures per username and address lock that pair for AXES_COOLOFF_TIME), on top of the
per-address anonymous rate limit every unauthenticated API call has."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import authenticate
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, status
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from planner.services import PlannerError

from .errors import CredentialsRejected, FieldErrors
from .serializers import StrictCharField, TokenCreatedOut, TokenCreateIn
from .tokens import api_token_create
from .views import token_data

MAX_PASSWORD = 4096  # far beyond any real password; stops hashing megabytes


class TokenPasswordIn(TokenCreateIn):
    username = StrictCharField(max_length=150)
    password = StrictCharField(max_length=MAX_PASSWORD, trim_whitespace=False, style={"input_type": "password"})


def _lockout_seconds() -> int:
    return max(1, int(float(settings.AXES_COOLOFF_TIME) * 3600))


class TokenPasswordView(APIView):
    # No session or token authentication here: the body is the credential, and with no
    # session there is no cookie a cross-site form could ride on (so no CSRF check needed).
    authentication_classes: list = []
    permission_classes = [AllowAny]

    @extend_schema(
        summary="Create an API token from a username and password; the key is in this response only",
        description="Wrong credentials (or an inactive user) are a 401 with one error and nothing created. "
                    "Failed attempts are counted like the web login's: after AXES_FAILURE_LIMIT failures "
                    "for one username from one address, that pair gets 429 (with Retry-After) until the "
                    "cool-off ends, even with the right password.",
        request=TokenPasswordIn, responses={201: TokenCreatedOut}, tags=["account"], auth=[],
    )
    def post(self, request):
        ser = TokenPasswordIn(data=request.data)
        ser.is_valid(raise_exception=True)
        data = dict(ser.validated_data)
        django_request = request._request  # axes counts and flags the HttpRequest
        user = authenticate(django_request, username=data.pop("username"), password=data.pop("password"))
        if getattr(django_request, "axes_locked_out", False):
            # Answer in the API's JSON error shape; otherwise AxesMiddleware would swap in its HTML page.
            django_request.axes_locked_out = False
            raise exceptions.Throttled(
                wait=_lockout_seconds(),
                detail=_("Too many failed attempts for this username from this address; try again later."),
            )
        if user is None:
            raise CredentialsRejected([(None, _("Wrong username or password."))])
        try:
            token, key = api_token_create(user=user, **data)
        except PlannerError as exc:
            raise FieldErrors([("expires_at", str(exc))]) from None
        return Response({**token_data(token), "key": key}, status=status.HTTP_201_CREATED)
