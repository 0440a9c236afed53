"""Page numbers as the schema says: `page` is an integer >= 1 when given.

DRF's PageNumberPagination reads `page=` (empty) as page 1 and `page=abc` as "not found";
here both are a 400 naming `page`, so the schema's `integer` is what the code accepts.
"""

from django.utils.translation import gettext as _
from rest_framework.pagination import PageNumberPagination


class StrictPageNumberPagination(PageNumberPagination):
    def paginate_queryset(self, queryset, request, view=None):
        raw = request.query_params.get(self.page_query_param)
        if raw is not None:
            from planner.api.errors import FieldErrors

            try:
                number = int(raw)
            except ValueError:
                raise FieldErrors([(self.page_query_param, _("Must be an integer."))]) from None
            if number < 1:
                raise FieldErrors([(self.page_query_param, _("Must be 1 or more."))])
        return super().paginate_queryset(queryset, request, view)
