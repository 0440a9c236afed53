"""Price feeds a deployment with network access refreshes on a schedule (docs/CATALOG.md, "Feeds").

Each importer fetches (URL or file), parses everything, and only then writes in one transaction.
A failed fetch or a malformed body writes nothing but a failed FeedImportRun naming the error.
"""
