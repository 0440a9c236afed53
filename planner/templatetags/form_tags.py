"""Template helpers of the workload form (planner/form_layout.py)."""

from django import template

register = template.Library()


@register.filter
def step_groups_of(form, show_errors=False):
    """The form's steps, each with its everyday and its folded "advanced" fields."""
    return form.step_groups(show_errors=bool(show_errors))


@register.filter
def assumption_groups(form):
    """The plan page's cost assumptions: everyday fields, and the folded advanced ones (raw JSON among
    them); the fold opens when one of them has a value or an error."""
    from planner.form_layout import ADVANCED

    main = [bf for bf in form if bf.name not in ADVANCED]
    advanced = [bf for bf in form if bf.name in ADVANCED]
    opened = any(bf.errors for bf in advanced) if form.is_bound else any(
        form.initial.get(bf.name) not in (None, "", False, [], {}) for bf in advanced)
    return {"main": main, "advanced": advanced, "open": opened}
