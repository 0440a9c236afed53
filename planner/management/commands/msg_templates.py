"""List every engine text template (the literal first argument of Msg(...)) with the files it is
in, or --missing: only those without a Russian translation in locale/ru/LC_MESSAGES/django.po.

makemessages does not know Msg, and running it would rewrite the whole .po (see COMMON rules),
so engine texts are found here, by their syntax tree, and new translations are appended by hand.
`--po` prints the missing ones as .po entries (msgstr empty) ready to append.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand

from planner.msg_catalog import engine_templates, missing_translations, po_entry


class Command(BaseCommand):
    help = "List engine Msg templates (optionally only those missing a Russian translation)."

    def add_arguments(self, parser):
        parser.add_argument("--missing", action="store_true")
        parser.add_argument("--po", action="store_true", help="print as .po entries to append")

    def handle(self, *args, **options):
        found = engine_templates()
        templates = missing_translations(found) if options["missing"] else sorted(found)
        for template in templates:
            if options["po"]:
                self.stdout.write(po_entry(template, found[template]))
            else:
                self.stdout.write(f"{template}\t{', '.join(found[template])}")
