"""Template helpers of the workload form (planner/form_layout.py)."""

from django import template

register = template.Library()


@register.filter
def step_groups_of(form, show_errors=False):
    """The form's steps, each with its everyday and its folded "advanced" fields."""
    return form.step_groups(show_errors=bool(show_errors))
